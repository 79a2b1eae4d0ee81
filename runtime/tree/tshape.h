/*
 * tshape.h — runtime of the §9.4 tree operators (LANGUAGE.md §9.4): TREE
 * KEEP / DROP IF DESCENDANT / ANCESTOR OF, PRUNE, CONTRACT, ABSORB,
 * REPARENT TO NEAREST ANCESTOR IN, MERGE SIBLINGS BY [ORDERED] and MERGE
 * INTO PARENT BY.
 *
 * The executor (exec/driver_tshape.c) hands over the buffered relations
 * as plain columns (rt_tcol); the operator answers with arrays of row
 * indexes: which input rows come out, which row each one's new parent_id
 * is the id of, and which output row every input row's values fold into
 * (for the aggregates, which the executor computes with an rt_aggtab).
 * No value is copied here; no function allocates per row.
 *
 * The tree (the input's, or the OVER relation's) is numbered with TREE
 * ACCUMULATE's rt_treenum, so it has the same errors with the same
 * words: a NULL id, two rows with one id, a row that is its own parent, a
 * parent that is no row, and cycles (rt_tree_order). Errors are
 * "<stage>: …" at offset `pos`.
 */
#ifndef PJ_TSHAPE_H
#define PJ_TSHAPE_H

#include "tree.h"

typedef enum rt_tshape_kind {
  RT_TS_KEEP_DESC,      /* TREE KEEP IF DESCENDANT OF */
  RT_TS_KEEP_ANC,       /* TREE KEEP IF ANCESTOR OF */
  RT_TS_DROP_DESC,      /* TREE DROP IF DESCENDANT OF */
  RT_TS_DROP_ANC,       /* TREE DROP IF ANCESTOR OF */
  RT_TS_PRUNE,          /* TREE PRUNE AT */
  RT_TS_CONTRACT,       /* TREE CONTRACT AT */
  RT_TS_ABSORB,         /* TREE ABSORB AT */
  RT_TS_REPARENT,       /* TREE REPARENT TO NEAREST ANCESTOR IN */
  RT_TS_MERGE_SIBLINGS, /* TREE MERGE SIBLINGS BY */
  RT_TS_MERGE_INTO,     /* TREE MERGE INTO PARENT BY */
} rt_tshape_kind;

/* One buffered column: stored type RT_I64 (any integer), RT_F64 (read as
 * its bits) or RT_STR (uint32 ids of one interning pool), and validity
 * (NULL = no NULLs). */
typedef struct rt_tcol {
  rt_type type;
  const void *data;
  const uint64_t *valid;
} rt_tcol;

static inline bool rt_tcol_null(const rt_tcol *c, uint32_t r) {
  return c->valid && !rt_bit(c->valid, r);
}
static inline int64_t rt_tcol_bits(const rt_tcol *c, uint32_t r) {
  return c->type == RT_STR ? (int64_t)((const uint32_t *)c->data)[r] : ((const int64_t *)c->data)[r];
}

/* The operator's inputs. `over_n` rows of over_id / over_parent give the
 * tree when has_over (the input's rows are then nodes of it, found by
 * id; its parent_id is not read), else the input's id / parent give it.
 * The node set (has_set) is set_n values of set_id: ids of nodes (NULLs
 * and ids of no node are ignored). BY columns for the MERGE forms. */
typedef struct rt_tshape_in {
  rt_tshape_kind kind;
  bool ordered;             /* MERGE SIBLINGS … ORDERED */
  bool str_ids;
  uint32_t n;
  rt_tcol id, parent;
  bool has_over;
  uint32_t over_n;
  rt_tcol over_id, over_parent;
  bool has_set;
  uint32_t set_n;
  rt_tcol set_id;
  int nby;
  const rt_tcol *by;
} rt_tshape_in;

/* Output rows 0..n-1. Every form but MERGE SIBLINGS:
 *   rows[i]  the input row that comes out (input order)
 *   prow[i]  the row of the tree (the OVER relation's when has_over, else
 *            the input's) whose id is its new parent_id; RT_TREE_NONE:
 *            NULL
 * MERGE SIBLINGS: output row i is merged node i (its id), created in the
 * visit order (parents first, siblings in first-seen order):
 *   rows[i]  the first input row merged into it (its BY values)
 *   prow[i]  the output row that is its parent; RT_TREE_NONE: a root
 * group[r], per input row (CONTRACT, ABSORB and both MERGE forms; NULL
 * otherwise): the output row whose aggregates row r's values fold into,
 * RT_TREE_NONE when they are lost (CONTRACT of a root's removed node). */
typedef struct rt_tshape_out {
  uint32_t n;
  uint32_t *rows;
  uint32_t *prow;
  uint32_t *group;
} rt_tshape_out;

/* 0, or -1 with the error set (out of memory included). Order of work:
 * O(n + m) expected, one hash lookup per row for the numbering (none when
 * ids are 0, 1, 2, … with parents first) and per node-set row, and for
 * MERGE SIBLINGS one per row for its (parent, BY values) key. */
int rt_tshape_run(const rt_tshape_in *in, rt_tshape_out *out, rt_err *err, const char *stage,
                  int pos, const rt_strpool *sp);
void rt_tshape_free(rt_tshape_out *out);

#endif
