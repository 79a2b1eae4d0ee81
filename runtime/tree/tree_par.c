/*
 * tree_par.c — the morsels of a segment that accumulates a finished tree
 * order (TREE ACCUMULATE's running values, tree.h): ranges of positions
 * that hold whole subtrees, so that exec/driver_treepar.c can run them on
 * several threads as any parallel scan runs a table's morsels.
 *
 * Why a morsel run on another thread gives one thread's values, bit for
 * bit. One thread folds the rows in position order; a row of node n with
 * parent p reads and writes only the slots of n and p (UP: reads n, adds
 * into p; DOWN: reads p, writes n). A morsel that holds whole subtrees
 * has no edge leaving it, so the slots its rows touch belong to nodes
 * whose rows are all in the morsel, and no other morsel touches them
 * (the JIT's dummy update of a root's own slot included: that is the
 * root's node). Inside a morsel the rows run in position order, which is
 * one thread's order restricted to those nodes. So every slot sees the
 * same operations on the same operands in the same order as on one
 * thread, whichever morsel finishes first: the same totals, double sums
 * included, and the same first failing row of a morsel (an integer
 * overflow) — the earliest failing morsel's error wins, as for any
 * parallel scan. One thread is fed the same morsels (driver_treepar.c),
 * so what follows the step (an AGGREGATE's per-morsel sums) is the same.
 *
 * Which positions are cuts. An edge between the rows at positions a < b
 * forbids every cut c with a < c <= b. For a walk's order (depth first
 * from each root, tree_order.c) every root's subtree is one run of
 * positions, so the cuts are the roots' starts (parent-first) or the
 * places just after the roots (child-first: the walk reversed). For an
 * order kept or reversed from the input, the parent's position comes from
 * its node number, which is its row index when the rows were numbered in
 * arrival order (a table's rows, the dense tier): a running maximum of the
 * parents' positions from the left (child-first: parents come later) or a
 * running minimum from the right (parent-first). Any other numbering gives
 * no cut at all, and the segment is fed plain batches as before.
 *
 * When one root holds most rows there is little to cut: its subtree is one
 * morsel, run by one thread while the others take the morsels after it
 * (and wait for it before merging theirs).
 */
#include <stdlib.h>

#include "runtime/par.h"
#include "tree.h"

enum { BLK = 1024 };

/* Rows, node and parent-node numbers of a block of positions. */
typedef struct blk {
  int64_t r[BLK], nd[BLK], pd[BLK];
} blk;

/* A node column at the block's rows, as int64, with a loop per storage
 * type (no per-value dispatch). */
static void gather(const rt_view *v, const int64_t *r, int m, int64_t *oi) {
  switch (v->type) {
  case RT_ID:
    for (int i = 0; i < m; i++) oi[i] = v->base + r[i];
    break;
  case RT_U32:
    for (int i = 0; i < m; i++) oi[i] = ((const uint32_t *)v->data)[r[i]];
    break;
  case RT_I64: case RT_BOOL:
    for (int i = 0; i < m; i++) oi[i] = ((const int64_t *)v->data)[r[i]];
    break;
  default:
    for (int i = 0; i < m; i++) oi[i] = rt_view_i64(v, (uint32_t)r[i]);
    break;
  }
}

/* Positions at..at+m-1: their rows and node numbers. */
static void block_rows(const rt_treesrc *s, int64_t at, int m, blk *b) {
  if (s->perm) {
    for (int i = 0; i < m; i++) b->r[i] = s->perm[at + i];
  } else if (s->reversed) {
    for (int i = 0; i < m; i++) b->r[i] = s->n - 1 - (at + i);
  } else {
    for (int i = 0; i < m; i++) b->r[i] = at + i;
  }
  gather(&s->node, b->r, m, b->nd);
  gather(&s->pnode, b->r, m, b->pd);
}

/* Sets bit c of cut for every cut 0 < c < n (see the banner). false when
 * the parents' positions are not known. */
static bool find_cuts(const rt_treesrc *s, bool up, blk *b, uint64_t *cut) {
  int64_t n = s->n;
  bool walked = s->path == RT_TREE_ORDER_WALKED;
  /* kept or reversed: the position of the row (= node) x is x or n-1-x */
  bool rev = s->reversed || s->path == RT_TREE_ORDER_REVERSED;
  if (up) {
    /* c is a cut when every row before it has its parent before it */
    int64_t maxj = -1;
    for (int64_t at = 0; at < n; at += BLK) {
      int m = n - at < BLK ? (int)(n - at) : BLK;
      block_rows(s, at, m, b);
      for (int i = 0; i < m; i++) {
        int64_t k = at + i;
        uint64_t p = (uint64_t)b->pd[i];
        if (walked) {
          maxj = p == RT_TREE_NONE ? k : n;   /* a root ends its subtree's run */
        } else {
          if ((uint64_t)b->nd[i] != (uint64_t)b->r[i] || (p != RT_TREE_NONE && p >= (uint64_t)n))
            return false;
          int64_t j = p == RT_TREE_NONE ? -1 : rev ? n - 1 - (int64_t)p : (int64_t)p;
          if (j > maxj) maxj = j;
        }
        if (maxj <= k && k + 1 < n) rt_bit_set(cut, (uint32_t)(k + 1));
      }
    }
    return true;
  }
  /* c is a cut when every row from c on has its parent from c on */
  int64_t minj = n;
  for (int64_t end = n; end > 0; end -= BLK) {
    int64_t at = end > BLK ? end - BLK : 0;
    int m = (int)(end - at);
    block_rows(s, at, m, b);
    for (int i = m - 1; i >= 0; i--) {
      int64_t k = at + i;
      uint64_t p = (uint64_t)b->pd[i];
      if (walked) {
        minj = p == RT_TREE_NONE ? k : -1;   /* a root starts its subtree's run */
      } else {
        if ((uint64_t)b->nd[i] != (uint64_t)b->r[i] || (p != RT_TREE_NONE && p >= (uint64_t)n))
          return false;
        int64_t j = p == RT_TREE_NONE ? n : rev ? n - 1 - (int64_t)p : (int64_t)p;
        if (j < minj) minj = j;
      }
      if (minj >= k && k > 0) rt_bit_set(cut, (uint32_t)k);
    }
  }
  return true;
}

/* ---- the greedy cut, asking only near each morsel's end ------------------ */

/* Whether position c (0 < c < n) is a cut. Three ways to know:
 *   WALK   a walk's order: the row at c starts a root's run (parent-first)
 *          or the row at c-1 ends one (child-first); O(1).
 *   TABLE  an in-place table's order (node = row index, parents a uint32
 *          array, kept or reversed), in row space: the cut between rows
 *          c-1 and c is position c (kept) or n-c (reversed). Parent-first
 *          rows (kept DOWN, reversed UP): row c is a root and every row
 *          from c on has its parent from c on; child-first rows: row c-1 is
 *          a root and every row before c has its parent before c. The rest
 *          of c's 64-row block is read, the other blocks through their
 *          minimum (or maximum) parent, suffix minima (prefix maxima).
 *   BITS   any other order: the bitmap find_cuts made. */
typedef struct cutter {
  const rt_treesrc *s;
  bool up, parent_first;
  enum { WALK, TABLE, BITS } how;
  const uint64_t *bits;
  uint64_t *blk;       /* TABLE: per block, suffix minimum / prefix maximum */
} cutter;

static bool is_cut(const cutter *k, int64_t c) {
  const rt_treesrc *s = k->s;
  int64_t n = s->n;
  if (k->how == BITS) return rt_bit(k->bits, (uint32_t)c);
  if (k->how == WALK) {
    uint64_t p = (uint64_t)rt_view_i64(&s->pnode, (uint32_t)rt_treesrc_row(s, k->up ? c - 1 : c));
    return p == RT_TREE_NONE;
  }
  const uint32_t *pn = s->pnode.data;
  int64_t r = s->reversed ? n - c : c;   /* the cut lies between rows r-1 and r */
  if (k->parent_first) {
    if (pn[r] != RT_TREE_NONE) return false;
    int64_t end = (r / 64 + 1) * 64 < n ? (r / 64 + 1) * 64 : n;
    uint64_t m = k->blk[r / 64 + 1];
    for (int64_t i = r; i < end; i++) m = pn[i] < m ? pn[i] : m;
    return m >= (uint64_t)r;
  }
  if (pn[r - 1] != RT_TREE_NONE) return false;
  int64_t m = (int64_t)k->blk[(r - 1) / 64] - 1;   /* stored + 1: 0 = none */
  for (int64_t i = (r - 1) / 64 * 64; i < r; i++) {
    int64_t p = pn[i] == RT_TREE_NONE ? -1 : (int64_t)pn[i];
    m = p > m ? p : m;
  }
  return m < r;
}

/* TABLE: the per-block bounds is_cut reads. Each block's own least
 * (parent-first) or greatest parent + 1 (child-first; 0: none) comes from
 * pieces of 4,096 blocks on par's workers, then one pass over the blocks
 * makes them suffix minima or prefix maxima. */
typedef struct block_job {
  const uint32_t *pn;
  int64_t n, nb;
  bool parent_first;
  uint64_t *own;
} block_job;

enum { BLOCK_PIECE = 4096 };

static void block_piece(void *ctx, int64_t i) {
  block_job *j = ctx;
  int64_t hi = (i + 1) * BLOCK_PIECE < j->nb ? (i + 1) * BLOCK_PIECE : j->nb;
  for (int64_t b = i * BLOCK_PIECE; b < hi; b++) {
    int64_t end = (b + 1) * 64 < j->n ? (b + 1) * 64 : j->n;
    uint64_t m = j->parent_first ? RT_TREE_NONE : 0;
    for (int64_t r = b * 64; r < end; r++) {
      uint64_t p = j->pn[r];
      if (j->parent_first) m = p < m ? p : m;   /* a root's NONE never lowers it */
      else m = p != RT_TREE_NONE && p + 1 > m ? p + 1 : m;
    }
    j->own[b] = m;
  }
}

static uint64_t *table_blocks(const rt_treesrc *s, bool parent_first, const rt_par *par) {
  int64_t n = s->n, nb = (n + 63) / 64;
  uint64_t *bounds = malloc(sizeof(uint64_t) * (size_t)(nb + 2));
  if (!bounds) return NULL;
  const uint64_t *known = parent_first ? s->bmin : s->bmax;   /* the table check's */
  if (known) {
    memcpy(bounds, known, sizeof(uint64_t) * (size_t)nb);
  } else {
    block_job j = {.pn = s->pnode.data, .n = n, .nb = nb, .parent_first = parent_first, .own = bounds};
    rt_par_for(par, (nb + BLOCK_PIECE - 1) / BLOCK_PIECE, block_piece, &j);
  }
  if (parent_first) {
    /* bounds[b]: the least parent of the rows of blocks b.. (NONE: none) */
    bounds[nb] = bounds[nb + 1] = RT_TREE_NONE;
    for (int64_t b = nb - 1; b >= 0; b--) bounds[b] = bounds[b] < bounds[b + 1] ? bounds[b] : bounds[b + 1];
  } else {
    /* bounds[b]: 1 + the greatest parent of the rows of blocks before b */
    uint64_t m = 0;
    for (int64_t b = 0; b <= nb; b++) {
      uint64_t own = b < nb ? bounds[b] : 0;
      bounds[b] = m;
      m = own > m ? own : m;
    }
  }
  return bounds;
}

int64_t rt_tree_morsels(const rt_treesrc *s, bool up, int64_t target, int64_t **bounds,
                        const rt_par *par) {
  int64_t n = s->n;
  *bounds = NULL;
  if (n <= 0 || n >= RT_TREE_NONE || target < 1) return 0;
  cutter k = {.s = s, .up = up};
  uint64_t *bits = NULL;
  if (s->path == RT_TREE_ORDER_WALKED) {
    k.how = WALK;
  } else if (s->node_is_row && !s->perm && s->pnode.type == RT_U32) {
    k.how = TABLE;
    k.parent_first = up == s->reversed;
    if (!(k.blk = table_blocks(s, k.parent_first, par))) return -1;
  } else {
    k.how = BITS;
    blk *b = malloc(sizeof *b);
    bits = calloc(RT_BITWORDS((uint64_t)n) + 1, 8);
    bool known = b && bits && find_cuts(s, up, b, bits);
    free(b);
    if (!known) {
      bool oom = !bits;
      free(bits);
      return oom ? -1 : 0;
    }
    k.bits = bits;
  }
  /* two morsels in a row span more than target positions (the first ends
   * before target only because the next cut lies beyond it) */
  int64_t cap = 2 * (n / target) + 4, count = 0;
  int64_t *out = malloc(sizeof(int64_t) * (size_t)cap);
  if (out) {
    out[0] = 0;
    for (int64_t start = 0; start < n;) {
      int64_t c = start + target;
      if (c >= n) {
        c = n;
      } else {
        while (c > start && !is_cut(&k, c)) c--;   /* the last cut within target */
        if (c == start)
          for (c = start + target + 1; c < n && !is_cut(&k, c);) c++;   /* else the first after */
      }
      out[++count] = start = c;
    }
  }
  free(bits);
  free(k.blk);
  if (!out) return -1;
  *bounds = out;
  return count;
}
