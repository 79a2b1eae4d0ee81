/*
 * tree_down.c — TREE ACCUMULATE DOWN's streaming parent-first order
 * (seed notes, "DOWN: TreeParentFirst").
 *
 * Per batch, in input order, a row passes when it is a root or its
 * parent was already emitted; it is then marked emitted and stays where
 * it is (the caller forwards the batch, restricted to the passing
 * positions, or untouched when all pass). A row whose parent was not
 * emitted yet is copied into the side buffer and linked at the tail of
 * its parent's waiting list. After the batch, the waiting lists of the
 * rows that passed are released breadth-first: each released row is
 * marked emitted and releases its own waiting list in turn. The caller
 * emits the released rows after the batch, in the order of `rel`.
 *
 * So a released row always follows its parent (which passed in this
 * batch or was released before it), and parent-first input copies
 * nothing: the side buffer and the waiting lists are only allocated
 * when a row arrives before its parent. A row is not emitted early even
 * when its parent is released by the same batch: marking happens when the
 * released rows are emitted, after the batch.
 */
#include <stdlib.h>

#include "tree.h"

int rt_treedown_init(rt_treedown *d, int ncols, const rt_type *types) {
  memset(d, 0, sizeof *d);
  d->ncols = ncols;
  d->types = malloc(sizeof(rt_type) * (size_t)(ncols > 0 ? ncols : 1));
  d->pass = malloc(RT_BATCH * sizeof *d->pass);
  if (!d->types || !d->pass) return 0;
  memcpy(d->types, types, sizeof(rt_type) * (size_t)ncols);
  return 1;
}

void rt_treedown_free(rt_treedown *d) {
  free(d->emitted);
  free(d->head);
  free(d->tail);
  free(d->snext);
  free(d->snode);
  free(d->spnode);
  free(d->rel);
  free(d->pass);
  free(d->types);
  if (d->side_open) rt_rowbuf_free(&d->side);
  memset(d, 0, sizeof *d);
}

/* Per-node arrays cover node numbers below `need`. */
static int cover_nodes(rt_treedown *d, uint64_t need) {
  if (need <= d->ncap) return 0;
  if (need > RT_TREE_NONE) return -1;
  uint64_t cap = d->ncap ? d->ncap : 1024;
  while (cap < need) cap *= 2;
  if (cap > RT_TREE_NONE) cap = RT_TREE_NONE;
  uint64_t *e = realloc(d->emitted, RT_BITWORDS(cap) * 8);
  if (!e) return -1;
  memset(e + RT_BITWORDS(d->ncap), 0, (RT_BITWORDS(cap) - RT_BITWORDS(d->ncap)) * 8);
  d->emitted = e;
  if (d->head) {
    uint32_t *h = realloc(d->head, cap * 4);
    if (!h) return -1;
    d->head = h;
    uint32_t *t = realloc(d->tail, cap * 4);
    if (!t) return -1;
    d->tail = t;
    memset(d->head + d->ncap, 0, (cap - d->ncap) * 4);
    memset(d->tail + d->ncap, 0, (cap - d->ncap) * 4);
  }
  d->ncap = (uint32_t)cap;
  return 0;
}

/* Room for `extra` more side rows (and the waiting lists, on first use). */
static int side_room(rt_treedown *d, uint32_t extra) {
  if (!d->head) {
    d->head = calloc(d->ncap ? d->ncap : 1, 4);
    d->tail = calloc(d->ncap ? d->ncap : 1, 4);
    if (!d->head || !d->tail) return -1;
  }
  if (!d->side_open) {
    if (!rt_rowbuf_init(&d->side, d->ncols, d->types)) return -1;
    d->side_open = true;
  }
  int64_t need = d->side.nrows + extra;
  if (need > (int64_t)RT_TREE_NONE - 1) return -1;
  if (need > d->scap) {
    int64_t cap = d->scap ? d->scap * 2 : 1024;
    while (cap < need) cap *= 2;
    uint32_t *a = realloc(d->snext, (size_t)cap * 4);
    if (a) d->snext = a;
    uint32_t *b = realloc(d->snode, (size_t)cap * 4);
    if (b) d->snode = b;
    uint32_t *c = realloc(d->spnode, (size_t)cap * 4);
    if (c) d->spnode = c;
    uint32_t *r = realloc(d->rel, (size_t)cap * 4);
    if (r) d->rel = r;
    if (!a || !b || !c || !r) return -1;
    d->scap = cap;
  }
  rt_rowbuf_reserve(&d->side, extra);
  return d->side.cap >= need ? 0 : -1;
}

/* Appends node nd's waiting list to the release queue and empties it. */
static void release(rt_treedown *d, uint32_t nd) {
  uint32_t s1 = d->head[nd];
  while (s1) {
    d->rel[d->nrel++] = s1 - 1;
    s1 = d->snext[s1 - 1];
  }
  d->head[nd] = d->tail[nd] = 0;
}

int rt_treedown_batch(rt_treedown *d, const rt_view *node, const rt_view *pnode,
                      const rt_view *cols, const uint32_t *active, uint32_t nactive) {
  d->npass = 0;
  d->nrel = 0;
  uint64_t maxn = 0;
  for (uint32_t k = 0; k < nactive; k++) {
    uint32_t i = active ? active[k] : k;
    uint64_t nd = (uint64_t)rt_view_i64(node, i), p = (uint64_t)rt_view_i64(pnode, i);
    if (nd >= RT_TREE_NONE || (p != RT_TREE_NONE && p >= RT_TREE_NONE)) return -1;
    if (nd + 1 > maxn) maxn = nd + 1;
    if (p != RT_TREE_NONE && p + 1 > maxn) maxn = p + 1;
  }
  if (cover_nodes(d, maxn) < 0) return -1;
  /* Pass, or collect as early (positions kept in `pass` from the back). */
  uint32_t nearly = 0;
  uint32_t *late = d->pass + nactive;   /* early positions grow downwards */
  for (uint32_t k = 0; k < nactive; k++) {
    uint32_t i = active ? active[k] : k;
    uint32_t nd = (uint32_t)rt_view_i64(node, i), p = (uint32_t)rt_view_i64(pnode, i);
    if (p == RT_TREE_NONE || rt_bit(d->emitted, p)) {
      d->pass[d->npass++] = i;
      rt_bit_set(d->emitted, nd);
    } else {
      *--late = i;
      nearly++;
    }
  }
  if (nearly) {
    /* `late` holds them last-first; put them in input order for the copy. */
    for (uint32_t a = 0, b = nearly - 1; a < b; a++, b--) {
      uint32_t t = late[a];
      late[a] = late[b];
      late[b] = t;
    }
    if (side_room(d, nearly) < 0) return -1;
    uint32_t first = (uint32_t)d->side.nrows;
    for (uint32_t j = 0; j < nearly; j++) {
      uint32_t i = late[j], s = first + j;
      uint32_t nd = (uint32_t)rt_view_i64(node, i), p = (uint32_t)rt_view_i64(pnode, i);
      d->snode[s] = nd;
      d->spnode[s] = p;
      d->snext[s] = 0;
      if (d->tail[p]) d->snext[d->tail[p] - 1] = s + 1;
      else d->head[p] = s + 1;
      d->tail[p] = s + 1;
    }
    rt_rowbuf_append_views(&d->side, cols, late, nearly);
    if (d->side.nrows != (int64_t)first + nearly) return -1;
    d->waiting += nearly;
    d->buffered += nearly;
  }
  /* Release what the passing rows were waited for by, breadth-first. */
  if (d->head && d->waiting) {
    for (uint32_t k = 0; k < d->npass; k++) {
      uint32_t nd = (uint32_t)rt_view_i64(node, d->pass[k]);
      if (d->head[nd]) release(d, nd);
    }
    for (uint32_t q = 0; q < d->nrel; q++) {
      uint32_t nd = d->snode[d->rel[q]];
      rt_bit_set(d->emitted, nd);
      if (d->head[nd]) release(d, nd);
    }
    d->waiting -= d->nrel;
  }
  return 0;
}

int rt_treedown_finish(rt_treedown *d, rt_err *err, const char *stage, int pos) {
  if (!d->waiting) return 0;
  /* Every parent named arrived (the numbering checked), so the rows still
   * waiting are on cycles or hang below one. Peel the waiting rows with
   * no waiting children until only the cycles are left. */
  int64_t ns = d->side.nrows;
  uint32_t *kids = calloc(d->ncap ? d->ncap : 1, 4);
  uint32_t *row_of = malloc((size_t)(d->ncap ? d->ncap : 1) * 4);
  uint32_t *queue = malloc((size_t)(ns ? ns : 1) * 4);
  if (!kids || !row_of || !queue) {
    free(kids);
    free(row_of);
    free(queue);
    return rt_errorf(err, pos, "%s: out of memory", stage), -1;
  }
  memset(row_of, 0xff, (size_t)(d->ncap ? d->ncap : 1) * 4);
  int64_t left = 0, qh = 0, qt = 0;
  for (int64_t s = 0; s < ns; s++) {
    if (rt_bit(d->emitted, d->snode[s])) continue;
    row_of[d->snode[s]] = (uint32_t)s;
    kids[d->spnode[s]]++;
    left++;
  }
  for (int64_t s = 0; s < ns; s++)
    if (!rt_bit(d->emitted, d->snode[s]) && kids[d->snode[s]] == 0) queue[qt++] = (uint32_t)s;
  while (qh < qt) {
    uint32_t s = queue[qh++];
    left--;
    uint32_t p = d->spnode[s];
    if (--kids[p] == 0 && row_of[p] != UINT32_MAX) queue[qt++] = row_of[p];
  }
  free(kids);
  free(row_of);
  free(queue);
  rt_errorf(err, pos, "%s: the rows are not a tree, because %lld of them are in a cycle", stage,
            (long long)left);
  return -1;
}
