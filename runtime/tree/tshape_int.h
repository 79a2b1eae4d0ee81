/*
 * tshape_int.h — what the §9.4 operators' files share inside the runtime
 * (tshape.c: the tree, the filtering and folding forms and the entry;
 * tshape_sib.c: MERGE SIBLINGS): the numbered tree, BY value comparison
 * and the error helper. Not for the executor (tshape.h is its interface).
 */
#ifndef PJ_TSHAPE_INT_H
#define PJ_TSHAPE_INT_H

#include "tshape.h"

/* The tree over the rows of the input (or of the OVER relation). */
typedef struct rt_tforest {
  uint32_t n;
  uint32_t *par;      /* parent row, RT_TREE_NONE for roots */
  uint32_t *order;    /* parent-first visit order (rt_mem_*); NULL: rows in order */
  uint32_t *row_of;   /* node → row; NULL when node numbers are rows */
  rt_treenum num;     /* keeps the id → node map */
  bool num_open;
} rt_tforest;

static inline int rt_ts_fail(rt_err *err, int pos, const char *stage, const char *msg) {
  rt_errorf(err, pos, "%s: %s", stage, msg);
  return -1;
}

/* A BY value's bits as PER keys compare them: -0.0 is 0.0, every NaN is
 * one NaN, strings are their interned id. */
static inline uint64_t rt_ts_by_bits(const rt_tcol *c, uint32_t r) {
  uint64_t v = (uint64_t)rt_tcol_bits(c, r);
  if (c->type == RT_F64) {
    double d;
    memcpy(&d, &v, 8);
    if (d == 0) return 0;
    if (d != d) return 0x7ff8000000000000ull;
  }
  return v;
}

/* Rows a and b have equal BY values (NULL equals NULL). */
static inline bool rt_ts_by_eq(const rt_tshape_in *in, uint32_t a, uint32_t b) {
  for (int k = 0; k < in->nby; k++) {
    const rt_tcol *c = &in->by[k];
    bool na = rt_tcol_null(c, a), nb = rt_tcol_null(c, b);
    if (na != nb) return false;
    if (!na && rt_ts_by_bits(c, a) != rt_ts_by_bits(c, b)) return false;
  }
  return true;
}

/* MERGE SIBLINGS over forest f (tshape_sib.c): fills out->rows, prow and
 * group (allocated by the caller for f->n rows) and out->n as tshape.h
 * says. 0, or -1 with the error set (out of memory). */
int rt_ts_merge_siblings(const rt_tshape_in *in, const rt_tforest *f, rt_tshape_out *out,
                         rt_err *err, const char *stage, int pos);

#endif
