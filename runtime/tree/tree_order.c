/*
 * tree_order.c — puts TREE ACCUMULATE's buffered rows child-first (UP) or
 * parent-first (DOWN), moving no values: the result is a permutation the
 * next segment reads the buffer through, or none at all.
 *
 * One pass over the parent numbers decides the path (tree.h):
 *   child-first input  — no row's parent was seen before the row;
 *   parent-first input — every non-root row's parent was seen before it.
 * Already in the wanted order: no permutation. In the opposite one: the
 * reversed order (reversing a parent-first order gives a child-first one
 * and back). Otherwise: child lists in compressed-sparse-row form, a walk
 * from the roots with an explicit stack (no recursion, so deep chains
 * cannot overflow the C stack) giving parent-first order, reversed for UP.
 * Rows the walk does not reach hang off a cycle; the error counts the rows
 * on the cycles themselves, found by peeling unreached rows that have no
 * unreached children until only the cycles are left.
 *
 * Neither order needs depth-first order: the accumulators keep a running
 * value per node, so subtrees may interleave.
 */
#include <stdlib.h>

#include "runtime/budget.h"
#include "runtime/par.h"
#include "tree.h"

static uint32_t *order_fail(rt_err *err, int pos, const char *stage, const char *msg, int *path) {
  rt_errorf(err, pos, "%s: %s", stage, msg);
  *path = -1;
  return NULL;
}

/* Rows on cycles among those the walk did not reach. */
static int64_t count_cycle_rows(const int64_t *node, const int64_t *pnode, int64_t n,
                                uint32_t nnodes, const uint64_t *reached) {
  uint32_t *kids = rt_mem_calloc(nnodes ? nnodes : 1, sizeof *kids);
  uint32_t *queue = rt_mem_alloc((size_t)(n ? n : 1) * sizeof *queue);
  uint32_t *row_of = rt_mem_alloc((size_t)(nnodes ? nnodes : 1) * sizeof *row_of);
  int64_t left = -1;
  if (!kids || !queue || !row_of) goto done;
  left = 0;
  for (int64_t r = 0; r < n; r++) {
    row_of[node[r]] = (uint32_t)r;
    if (rt_bit(reached, (uint32_t)node[r])) continue;
    left++;
    kids[pnode[r]]++;   /* an unreached row's parent is unreached too */
  }
  int64_t qh = 0, qt = 0;
  for (int64_t r = 0; r < n; r++)
    if (!rt_bit(reached, (uint32_t)node[r]) && kids[node[r]] == 0) queue[qt++] = (uint32_t)r;
  while (qh < qt) {
    uint32_t r = queue[qh++];
    left--;
    uint32_t p = (uint32_t)pnode[r];
    if (--kids[p] == 0) queue[qt++] = row_of[p];
  }
done:
  rt_mem_free(kids);
  rt_mem_free(queue);
  rt_mem_free(row_of);
  return left;
}

/* A child list entry: the child's node number (high half) and row (low
 * half), so the walk never has to look a row's node up at random. */
#define KID(nd, r) (((uint64_t)(nd) << 32) | (uint32_t)(r))

static uint32_t *walk(const int64_t *node, const int64_t *pnode, int64_t n, uint32_t nnodes,
                      bool up, int *path, rt_err *err, const char *stage, int pos) {
  size_t offs_bytes = ((size_t)nnodes + 2) * sizeof(uint32_t), kid_bytes = (size_t)n * 8;
  uint32_t *offs = rt_tree_big_alloc(offs_bytes);
  uint64_t *kids = rt_tree_big_alloc(kid_bytes);
  uint64_t *stack = rt_tree_big_alloc(kid_bytes);
  uint32_t *out = rt_mem_alloc((size_t)n * sizeof *out);
  uint32_t *perm = NULL;
  if (!offs || !kids || !stack || !out) {
    order_fail(err, pos, stage, "out of memory", path);
    goto done;
  }
  /* CSR: kids[offs[p] .. offs[p+1]) are the children of node p, in input
   * order. Counts go to offs[p + 2] so that after the prefix sum offs[p +
   * 1] is the fill cursor of p's list, and after the fill it is the end
   * of p's list — which is where the next list starts: one array, no
   * separate cursors. */
  for (int64_t r = 0; r < n; r++)
    if (pnode[r] != RT_TREE_NONE) offs[pnode[r] + 2]++;
  for (uint32_t p = 0; p < nnodes; p++) offs[p + 2] += offs[p + 1];
  for (int64_t r = 0; r < n; r++)
    if (pnode[r] != RT_TREE_NONE) kids[offs[pnode[r] + 1]++] = KID(node[r], r);
  /* Pre-order from the roots: roots pushed last-first so the first root
   * comes out first, children likewise. UP fills `out` from the back, so
   * it comes out already reversed (child-first). */
  int64_t sp = 0, k = 0;
  for (int64_t r = n - 1; r >= 0; r--)
    if (pnode[r] == RT_TREE_NONE) stack[sp++] = KID(node[r], r);
  while (sp > 0) {
    uint64_t e = stack[--sp];
    uint32_t nd = (uint32_t)(e >> 32);
    out[up ? n - 1 - k : k] = (uint32_t)e;
    k++;
    for (uint32_t j = offs[nd + 1]; j > offs[nd]; j--) stack[sp++] = kids[j - 1];
  }
  if (k < n) {
    uint64_t *reached = rt_mem_calloc(RT_BITWORDS(nnodes) + 1, 8);
    int64_t cyc = reached ? 0 : -1;
    if (reached) {
      for (int64_t j = 0; j < k; j++) rt_bit_set(reached, (uint32_t)node[out[up ? n - 1 - j : j]]);
      cyc = count_cycle_rows(node, pnode, n, nnodes, reached);
    }
    rt_mem_free(reached);
    if (cyc < 0) {
      order_fail(err, pos, stage, "out of memory", path);
    } else {
      rt_errorf(err, pos, "%s: the rows are not a tree, because %lld of them are in a cycle",
                stage, (long long)cyc);
      *path = -1;
    }
    goto done;
  }
  perm = out;
  out = NULL;
  *path = RT_TREE_ORDER_WALKED;
done:
  rt_tree_big_free(offs, offs_bytes);
  rt_tree_big_free(kids, kid_bytes);
  rt_tree_big_free(stack, kid_bytes);
  rt_mem_free(out);
  return perm;
}

uint32_t *rt_tree_order(const int64_t *node, const int64_t *pnode, int64_t n, uint32_t nnodes,
                        bool up, int *path, rt_err *err, const char *stage, int pos) {
  *path = RT_TREE_ORDER_KEPT;
  if (n <= 0) return NULL;
  /* The numbering gave each of these rows its own node and checked every
   * parent is one of them, so there are exactly n nodes. */
  if ((uint64_t)n != nnodes) return order_fail(err, pos, stage, "internal error: rows and nodes differ", path);
  bool child_first = true, parent_first = true;
  /* Numbered in arrival order (the TABLE and DENSE tiers, or a hash map
   * fed rows in first-sighting order): row r is node r, so "the parent
   * was seen before" is just pnode < r — no bitvector. */
  int64_t r = 0;
  for (; r < n && node[r] == r; r++) {
    uint64_t p = (uint64_t)pnode[r];
    if (p == RT_TREE_NONE) continue;
    if (p >= nnodes) return order_fail(err, pos, stage, "internal error: bad node numbers", path);
    child_first &= p > (uint64_t)r;
    parent_first &= p < (uint64_t)r;
  }
  if (r < n) {
    child_first = parent_first = true;
    uint64_t *seen = rt_mem_calloc(RT_BITWORDS(nnodes) + 1, 8);
    if (!seen) return order_fail(err, pos, stage, "out of memory", path);
    for (r = 0; r < n; r++) {
      uint64_t nd = (uint64_t)node[r], p = (uint64_t)pnode[r];
      if (nd >= nnodes || (p != RT_TREE_NONE && p >= nnodes) || rt_bit(seen, (uint32_t)nd)) {
        rt_mem_free(seen);
        return order_fail(err, pos, stage, "internal error: bad node numbers", path);
      }
      if (p != RT_TREE_NONE) {
        if (rt_bit(seen, (uint32_t)p)) child_first = false;
        else parent_first = false;
      }
      rt_bit_set(seen, (uint32_t)nd);
    }
    rt_mem_free(seen);
  }
  bool wanted = up ? child_first : parent_first;
  bool opposite = up ? parent_first : child_first;
  if (wanted) return NULL;
  if (opposite) {
    uint32_t *perm = rt_mem_alloc((size_t)n * sizeof *perm);
    if (!perm) return order_fail(err, pos, stage, "out of memory", path);
    for (int64_t i = 0; i < n; i++) perm[i] = (uint32_t)(n - 1 - i);
    *path = RT_TREE_ORDER_REVERSED;
    return perm;
  }
  return walk(node, pnode, n, nnodes, up, path, err, stage, pos);
}

/* ---- in place, over a table numbered by row index ------------------------------ */

/* One piece of the table's rows for rt_tree_table_order: each parent
 * checked and written to pn, until the first that is no row or the row
 * itself (bad: its row, or hi). */
typedef struct table_piece {
  const rt_view *parent;
  uint32_t *pn;
  int64_t n, rows;       /* rows per piece (a multiple of 64) */
  int64_t *bad;          /* per piece */
  uint8_t *above, *below;
  uint64_t *bmin, *bmax; /* per 64-row block: rt_treenum.table_bmin / bmax */
} table_piece;

/* The parent bounds of the blocks of rows lo..hi-1 (whole blocks but the
 * table's last), read back from pn while it is in cache. In uint32, so
 * the loops vectorize: a root's NONE never lowers the least, and NONE + 1
 * wraps to 0, which never raises the greatest. */
static void table_bounds(table_piece *t, int64_t lo, int64_t hi) {
  for (int64_t b = lo / 64; b * 64 < hi; b++) {
    int64_t end = (b + 1) * 64 < hi ? (b + 1) * 64 : hi;
    const uint32_t *p = t->pn + b * 64;
    int m = (int)(end - b * 64);
    uint32_t mn = RT_TREE_NONE, mx = 0;
    for (int r = 0; r < m; r++) mn = p[r] < mn ? p[r] : mn;
    for (int r = 0; r < m; r++) mx = (uint32_t)(p[r] + 1) > mx ? (uint32_t)(p[r] + 1) : mx;
    t->bmin[b] = mn;
    t->bmax[b] = mx;
  }
}

/* A whole 64-row block of a plain integer column, rows r..r+63: the
 * parents written to pn as uint32 and checked there. false when the block
 * needs the row-by-row check: a parent that is no row of the table or the
 * row itself, or any value not below 2^32 - 1 (a valid row's would be no
 * row; a NULL slot's only costs the slow check).
 *
 * Each loop has a constant trip count, no branch and no dependence between
 * rows but its OR / min / max, over restrict pointers, so GCC vectorizes
 * it at -O2 even for plain x86-64 (the 64-bit compares and the per-row
 * validity shift of one loop over int64 did not: that check cost ~1.5x
 * the plain row loop of c2ce40a on one thread). NULLs are written as
 * RT_TREE_NONE between the two loops, one per clear validity bit, and the
 * second loop counts NONE as a root: no parent, not above, not below. */
static bool table_block(const int64_t *restrict d, uint64_t w, uint32_t *restrict pn, uint32_t r,
                        uint32_t lim, uint8_t *above, uint8_t *below, uint64_t *bmin,
                        uint64_t *bmax) {
  uint64_t hi = 0;
  for (int k = 0; k < 64; k++) {
    uint64_t p = (uint64_t)d[k];
    hi |= (p >> 32) | ((p + 1) >> 32);   /* p >= 2^32 - 1, or p = -1 */
    pn[k] = (uint32_t)p;
  }
  if (hi) return false;
  for (uint64_t nul = ~w; nul; nul &= nul - 1) pn[__builtin_ctzll(nul)] = RT_TREE_NONE;
  uint32_t bad = 0, ab = 0, be = 0, mn = RT_TREE_NONE, mx = 0;
  for (uint32_t k = 0; k < 64; k++) {
    uint32_t q = pn[k], row = r + k;
    /* unsigned ranges: lim <= q < NONE is no row; row < q < NONE above */
    bad |= (uint32_t)(q == row) | (uint32_t)(q - lim < RT_TREE_NONE - lim);
    ab |= (uint32_t)(q - row - 1 < RT_TREE_NONE - row - 1);
    be |= (uint32_t)(q < row);
    mn = q < mn ? q : mn;
    mx = (uint32_t)(q + 1) > mx ? (uint32_t)(q + 1) : mx;   /* NONE + 1 wraps to 0 */
  }
  if (bad) return false;
  *above |= ab != 0;
  *below |= be != 0;
  *bmin = mn;
  *bmax = mx;
  return true;
}

static void table_check(void *ctx, int64_t i) {
  table_piece *t = ctx;
  const rt_view *parent = t->parent;
  uint32_t *pn = t->pn;
  uint64_t lim = (uint64_t)t->n;
  int64_t lo = i * t->rows, hi = lo + t->rows < t->n ? lo + t->rows : t->n, r = lo;
  uint8_t above = false, below = false;
  bool fast = (parent->type == RT_I64 || parent->type == RT_BOOL) && !parent->sel;
  const int64_t *d = parent->data;
  const uint64_t *valid = parent->valid;
  /* whole blocks first; the rest, and a block table_block turns down, row
   * by row, which stops at the first bad row */
  for (int64_t end = lo; r < hi; r = end) {
    if (fast && hi - r >= 64 &&
        table_block(d + r, valid ? valid[r / 64] : ~(uint64_t)0, pn + r, (uint32_t)r, (uint32_t)lim,
                    &above, &below, &t->bmin[r / 64], &t->bmax[r / 64])) {
      end = r + 64;
      continue;
    }
    int64_t from = r;
    end = fast && hi - r >= 64 ? r + 64 : hi;
    for (; r < end; r++) {
      if (rt_view_is_null(parent, (uint32_t)r)) {
        pn[r] = RT_TREE_NONE;
        continue;
      }
      uint64_t p = (uint64_t)rt_view_i64(parent, (uint32_t)r);
      if (p >= lim || p == (uint64_t)r) break;
      above |= p > (uint64_t)r;
      below |= p < (uint64_t)r;
      pn[r] = (uint32_t)p;
    }
    if (r < end) break;
    table_bounds(t, from, end);
  }
  t->bad[i] = r;
  t->above[i] = above;
  t->below[i] = below;
}

int rt_tree_table_order(rt_treenum *num, const rt_view *parent, int64_t n, bool up,
                        uint32_t **perm) {
  return rt_tree_table_order_par(num, parent, n, up, perm, NULL);
}

int rt_tree_table_order_par(rt_treenum *num, const rt_view *parent, int64_t n, bool up,
                            uint32_t **perm, const rt_par *par) {
  *perm = NULL;
  if (n <= 0) return RT_TREE_ORDER_KEPT;
  if ((uint64_t)n > num->limit || (uint64_t)n >= RT_TREE_NONE) {
    rt_errorf(num->err, num->pos, "%s: internal error: the table is not the one numbered", num->stage);
    return -1;
  }
  size_t bytes = (size_t)n * sizeof(uint32_t);
  /* Written once, sequentially, before anything reads it: no zeroing. */
  uint32_t *pn = rt_tree_big_alloc_any(bytes);
  /* Pieces of 256K rows, on the workers when par has them (each first
   * touches its own part of pn). A parent above its row breaks
   * parent-first order, one below it child-first order; a parent outside
   * the table or equal to its row stops its piece, and the first such row
   * of the earliest piece that has one is the row a single pass would
   * have stopped at: the numbering reports it below. */
  enum { PIECE = 1 << 18 };
  int64_t npieces = (n + PIECE - 1) / PIECE, nb = (n + 63) / 64;
  int64_t *bad = malloc(sizeof(int64_t) * (size_t)npieces);
  uint8_t *flags = malloc(2 * (size_t)npieces);
  uint64_t *bmin = malloc(sizeof(uint64_t) * (size_t)nb), *bmax = malloc(sizeof(uint64_t) * (size_t)nb);
  if (!pn || !bad || !flags || !bmin || !bmax) {
    rt_tree_big_free(pn, bytes);
    free(bad);
    free(flags);
    free(bmin);
    free(bmax);
    rt_errorf(num->err, num->pos, "%s: out of memory", num->stage);
    return -1;
  }
  rt_tree_big_free(num->table_pnode, num->table_pnode_bytes);
  num->table_pnode = pn;
  num->table_pnode_bytes = bytes;
  free(num->table_bmin);
  free(num->table_bmax);
  num->table_bmin = bmin;
  num->table_bmax = bmax;
  table_piece tp = {.parent = parent, .pn = pn, .n = n, .rows = PIECE, .bad = bad, .above = flags,
                    .below = flags + npieces, .bmin = bmin, .bmax = bmax};
  rt_par_for(npieces > 1 ? par : NULL, npieces, table_check, &tp);
  bool above = false, below = false;
  int64_t r = n;
  for (int64_t i = 0; i < npieces && r == n; i++) {
    int64_t hi = (i + 1) * PIECE < n ? (i + 1) * PIECE : n;
    above |= tp.above[i];
    below |= tp.below[i];
    if (bad[i] < hi) r = bad[i];
  }
  free(bad);
  free(flags);
  if (r < n) {
    /* the numbering's message for the row it would have stopped at */
    uint32_t a, b;
    num->nrows = (uint32_t)r;
    if (rt_treenum_row(num, r, false, rt_view_i64(parent, (uint32_t)r), false, &a, &b) < 0) return -1;
    rt_errorf(num->err, num->pos, "%s: internal error: a bad parent passed", num->stage);
    return -1;
  }
  num->nrows = (uint32_t)n;
  bool parent_first = !above, child_first = !below;
  if (up ? child_first : parent_first) return RT_TREE_ORDER_KEPT;
  if (up ? parent_first : child_first) return RT_TREE_ORDER_REVERSED;
  /* Neither: the general walk over node r = row r. Rare for tables (a
   * trace's slices are stored parent-first), so it may copy. */
  int64_t *nd = rt_mem_alloc(sizeof(int64_t) * (size_t)n), *pd = rt_mem_alloc(sizeof(int64_t) * (size_t)n);
  int path = -1;
  if (!nd || !pd) {
    rt_errorf(num->err, num->pos, "%s: out of memory", num->stage);
  } else {
    for (int64_t i = 0; i < n; i++) {
      nd[i] = i;
      pd[i] = pn[i];
    }
    *perm = rt_tree_order(nd, pd, n, (uint32_t)n, up, &path, num->err, num->stage, num->pos);
  }
  rt_mem_free(nd);
  rt_mem_free(pd);
  return path;
}
