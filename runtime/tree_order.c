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

#include "tree.h"

static uint32_t *order_fail(rt_err *err, int pos, const char *stage, const char *msg, int *path) {
  rt_errorf(err, pos, "%s: %s", stage, msg);
  *path = -1;
  return NULL;
}

/* Rows on cycles among those the walk did not reach. */
static int64_t count_cycle_rows(const int64_t *node, const int64_t *pnode, int64_t n,
                                uint32_t nnodes, const uint64_t *reached, const uint32_t *row_of) {
  uint32_t *kids = calloc(nnodes ? nnodes : 1, sizeof *kids);
  uint32_t *queue = malloc((size_t)(n ? n : 1) * sizeof *queue);
  if (!kids || !queue) {
    free(kids);
    free(queue);
    return -1;
  }
  int64_t left = 0;
  for (int64_t r = 0; r < n; r++) {
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
  free(kids);
  free(queue);
  return left;
}

static uint32_t *walk(const int64_t *node, const int64_t *pnode, int64_t n, uint32_t nnodes,
                      bool up, int *path, rt_err *err, const char *stage, int pos) {
  uint32_t *row_of = malloc((size_t)nnodes * sizeof *row_of);   /* nnodes == n >= 1 */
  uint32_t *offs = calloc((size_t)nnodes + 1, sizeof *offs);
  uint32_t *kids = malloc((size_t)n * sizeof *kids);
  uint32_t *stack = malloc((size_t)n * sizeof *stack);
  uint32_t *out = malloc((size_t)n * sizeof *out);
  uint32_t *perm = NULL;
  if (!row_of || !offs || !kids || !stack || !out) {
    order_fail(err, pos, stage, "out of memory", path);
    goto done;
  }
  /* CSR: offs[p] .. offs[p+1] are the rows whose parent is node p, in
   * input order. */
  for (int64_t r = 0; r < n; r++) {
    row_of[node[r]] = (uint32_t)r;
    if (pnode[r] != RT_TREE_NONE) offs[pnode[r] + 1]++;
  }
  for (uint32_t p = 0; p < nnodes; p++) offs[p + 1] += offs[p];
  /* `out` is not written before the walk: borrow it as the fill cursor
   * of each node's child list (n == nnodes entries). */
  memcpy(out, offs, sizeof *out * (size_t)nnodes);
  for (int64_t r = 0; r < n; r++)
    if (pnode[r] != RT_TREE_NONE) kids[out[pnode[r]]++] = (uint32_t)r;
  /* Pre-order from the roots: roots pushed last-first so the first root
   * comes out first, children likewise. */
  int64_t sp = 0, k = 0;
  for (int64_t r = n - 1; r >= 0; r--)
    if (pnode[r] == RT_TREE_NONE) stack[sp++] = (uint32_t)r;
  while (sp > 0) {
    uint32_t r = stack[--sp];
    out[k++] = r;
    uint32_t nd = (uint32_t)node[r];
    for (uint32_t j = offs[nd + 1]; j > offs[nd]; j--) stack[sp++] = kids[j - 1];
  }
  if (k < n) {
    uint64_t *reached = calloc(RT_BITWORDS(nnodes) + 1, 8);
    int64_t cyc = reached ? 0 : -1;
    if (reached) {
      for (int64_t j = 0; j < k; j++) rt_bit_set(reached, (uint32_t)node[out[j]]);
      cyc = count_cycle_rows(node, pnode, n, nnodes, reached, row_of);
    }
    free(reached);
    if (cyc < 0) {
      order_fail(err, pos, stage, "out of memory", path);
    } else {
      rt_errorf(err, pos, "%s: the rows are not a tree, because %lld of them are in a cycle",
                stage, (long long)cyc);
      *path = -1;
    }
    goto done;
  }
  if (up) {
    for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
      uint32_t t = out[i];
      out[i] = out[j];
      out[j] = t;
    }
  }
  perm = out;
  out = NULL;
  *path = RT_TREE_ORDER_WALKED;
done:
  free(row_of);
  free(offs);
  free(kids);
  free(stack);
  free(out);
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
    uint64_t *seen = calloc(RT_BITWORDS(nnodes) + 1, 8);
    if (!seen) return order_fail(err, pos, stage, "out of memory", path);
    for (r = 0; r < n; r++) {
      uint64_t nd = (uint64_t)node[r], p = (uint64_t)pnode[r];
      if (nd >= nnodes || (p != RT_TREE_NONE && p >= nnodes) || rt_bit(seen, (uint32_t)nd)) {
        free(seen);
        return order_fail(err, pos, stage, "internal error: bad node numbers", path);
      }
      if (p != RT_TREE_NONE) {
        if (rt_bit(seen, (uint32_t)p)) child_first = false;
        else parent_first = false;
      }
      rt_bit_set(seen, (uint32_t)nd);
    }
    free(seen);
  }
  bool wanted = up ? child_first : parent_first;
  bool opposite = up ? parent_first : child_first;
  if (wanted) return NULL;
  if (opposite) {
    uint32_t *perm = malloc((size_t)n * sizeof *perm);
    if (!perm) return order_fail(err, pos, stage, "out of memory", path);
    for (int64_t i = 0; i < n; i++) perm[i] = (uint32_t)(n - 1 - i);
    *path = RT_TREE_ORDER_REVERSED;
    return perm;
  }
  return walk(node, pnode, n, nnodes, up, path, err, stage, pos);
}
