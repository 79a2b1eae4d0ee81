/*
 * tshape.c — the §9.4 tree operators over buffered columns (tshape.h).
 *
 * Every form is a few passes over the tree in a parent-first visit order:
 * the input order itself when every parent comes before its children
 * (trace tables: a slice starts after its parent), else rt_tree_order's
 * walk from the roots. Per tree row x with parent row p:
 *
 *   DESCENDANT OF S   cond[x] = x in S, or cond[p]             (forwards)
 *   ANCESTOR OF S     cond = S, then cond[p] |= cond[x]         (backwards)
 *   KEEP / DROP       keep = cond / not cond (PRUNE = DROP IF DESCENDANT)
 *   CONTRACT AT S     keep = not in S
 *   ABSORB AT S       top[x] = top[p], else x when x in S; keep = no top
 *                     or top[x] = x
 *   MERGE INTO PARENT tgt[x] = tgt[p] when BY(x) = BY(p), else x; keep =
 *                     tgt[x] = x
 *   REPARENT IN S     every row comes out; "kept" = in S
 * and then the nearest kept strict ancestor, anc[x] = p when p is kept,
 * else anc[p] (forwards), which is every output row's new parent. A
 * removed row folds into: CONTRACT its anc (none for a removed root's
 * subtree top: lost), ABSORB its top, MERGE INTO its tgt.
 *
 * MERGE SIBLINGS is in tshape_sib.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/budget.h"
#include "tshape_int.h"

#define NONE RT_TREE_NONE

/* ---- the tree -------------------------------------------------------------- */

static void forest_free(rt_tforest *f) {
  rt_mem_free(f->par);
  rt_mem_free(f->order);   /* rt_tree_order allocates it so */
  rt_mem_free(f->row_of);
  if (f->num_open) rt_treenum_free(&f->num);
  memset(f, 0, sizeof *f);
}

static rt_view col_view(const rt_tcol *c, uint32_t start) {
  size_t sz = c->type == RT_STR ? 4 : 8;
  return (rt_view){.type = c->type == RT_STR ? RT_STR : RT_I64,
                   .data = (const char *)c->data + (size_t)start * sz,
                   .valid = c->valid ? c->valid + start / 64 : NULL};
}

/* The common input, a trace's slice table: ids 0, 1, 2, … in row order,
 * every parent an earlier row. Node numbers are then rows and the order
 * is kept; the numbering's DENSE tier would check exactly this, in
 * batches and with a copy of each, so one pass here fills f->par instead.
 * False at the first row that breaks it (the caller starts over). */
static bool dense_rows(rt_tforest *f, const rt_tcol *id, const rt_tcol *parent, bool str_ids) {
  if (str_ids || id->type != RT_I64 || parent->type != RT_I64) return false;
  const int64_t *iv = id->data, *pv = parent->data;
  for (uint32_t r = 0; r < f->n; r++) {
    if (rt_tcol_null(id, r) || iv[r] != (int64_t)r) return false;
    if (rt_tcol_null(parent, r)) f->par[r] = NONE;
    else if ((uint64_t)pv[r] < r) f->par[r] = (uint32_t)pv[r];
    else return false;
  }
  return true;
}

/* Numbers the n rows of (id, parent) and puts them in parent-first order. */
static int forest_build(rt_tforest *f, const rt_tcol *id, const rt_tcol *parent, uint32_t n,
                        bool str_ids, rt_err *err, const char *stage, int pos,
                        const rt_strpool *sp) {
  memset(f, 0, sizeof *f);
  f->n = n;
  if (!rt_treenum_init(&f->num, RT_TREE_TIER_DENSE, 0, str_ids, err, stage, pos, sp)) {
    rt_treenum_free(&f->num);
    return rt_ts_fail(err, pos, stage, "out of memory");
  }
  f->num_open = true;
  f->num.keep_map = true;
  f->num.size_hint = n;
  if (!(f->par = rt_mem_big(sizeof(uint32_t) * ((size_t)n + 1))))
    return rt_ts_fail(err, pos, stage, "out of memory");
  if (dense_rows(f, id, parent, str_ids)) {
    f->num.nrows = n;
    return rt_treenum_finish(&f->num) < 0 ? -1 : 0;
  }
  uint32_t *node = rt_mem_big(sizeof(uint32_t) * ((size_t)n + 1));
  if (!node) return rt_ts_fail(err, pos, stage, "out of memory");
  for (uint32_t start = 0; start < n; start += RT_BATCH) {
    uint32_t k = n - start < RT_BATCH ? n - start : RT_BATCH;
    rt_view iv = col_view(id, start), pv = col_view(parent, start);
    if (rt_treenum_batch(&f->num, &iv, &pv, NULL, k) < 0) {
      rt_mem_free(node);
      return -1;
    }
    memcpy(node + start, f->num.node_out, sizeof(uint32_t) * k);
    memcpy(f->par + start, f->num.pnode_out, sizeof(uint32_t) * k);
  }
  if (rt_treenum_finish(&f->num) < 0) {
    rt_mem_free(node);
    return -1;
  }
  /* Node numbers are row numbers unless the map was needed. */
  bool ident = true;
  for (uint32_t r = 0; r < n && ident; r++) ident = node[r] == r;
  if (!ident) {
    f->row_of = rt_mem_big(sizeof(uint32_t) * ((size_t)n + 1));
    if (!f->row_of) {
      rt_mem_free(node);
      return rt_ts_fail(err, pos, stage, "out of memory");
    }
    for (uint32_t r = 0; r < n; r++) f->row_of[node[r]] = r;
    for (uint32_t r = 0; r < n; r++)
      if (f->par[r] != NONE) f->par[r] = f->row_of[f->par[r]];
  }
  rt_mem_free(node);
  bool sorted = true;
  for (uint32_t r = 0; r < n && sorted; r++) sorted = f->par[r] == NONE || f->par[r] < r;
  if (sorted) return 0;   /* parents first already (and so no cycle) */
  int64_t *nd = rt_mem_alloc(sizeof(int64_t) * n), *pn = rt_mem_alloc(sizeof(int64_t) * n);
  int path = 0;
  if (nd && pn) {
    for (uint32_t r = 0; r < n; r++) {
      nd[r] = r;
      pn[r] = f->par[r] == NONE ? (int64_t)RT_TREE_NONE : (int64_t)f->par[r];
    }
    f->order = rt_tree_order(nd, pn, n, n, false, &path, err, stage, pos);
  }
  rt_mem_free(nd);
  rt_mem_free(pn);
  if (!nd || !pn) return rt_ts_fail(err, pos, stage, "out of memory");
  return path < 0 ? -1 : 0;
}

/* The row of the tree with id `id`, or NONE. */
static uint32_t forest_find(const rt_tforest *f, int64_t id) {
  uint32_t node = rt_treenum_find(&f->num, id);
  if (node == NONE || node >= f->n) return NONE;
  return f->row_of ? f->row_of[node] : node;
}

static int id_fail(const rt_tforest *f, rt_err *err, int pos, const char *stage, const char *fmt,
                   int64_t id) {
  char idb[256], msg[400];
  rt_treenum_id_text(&f->num, id, idb, sizeof idb);
  snprintf(msg, sizeof msg, fmt, idb);
  return rt_ts_fail(err, pos, stage, msg);
}

/* ---- the filtering and folding forms ------------------------------------------ */

static bool folds(rt_tshape_kind k) {
  return k == RT_TS_CONTRACT || k == RT_TS_ABSORB || k == RT_TS_MERGE_INTO ||
         k == RT_TS_MERGE_SIBLINGS;
}

/* keep[x] for every tree row (see the banner); aux gets ABSORB's top or
 * MERGE INTO's tgt. */
static void decide(const rt_tshape_in *in, const rt_tforest *f, const uint8_t *mark,
                   const uint32_t *in_of, uint8_t *keep, uint32_t *aux) {
  uint32_t n = f->n;
  rt_tshape_kind k = in->kind;
#define VISIT(i) (f->order ? f->order[i] : (i))
  switch (k) {
  case RT_TS_KEEP_DESC: case RT_TS_DROP_DESC: case RT_TS_PRUNE:
    for (uint32_t i = 0; i < n; i++) {
      uint32_t x = VISIT(i), p = f->par[x];
      keep[x] = mark[x] || (p != NONE && keep[p]);
    }
    break;
  case RT_TS_KEEP_ANC: case RT_TS_DROP_ANC:
    for (uint32_t x = 0; x < n; x++) keep[x] = mark[x];
    for (uint32_t i = n; i-- > 0;) {
      uint32_t x = VISIT(i), p = f->par[x];
      if (keep[x] && p != NONE) keep[p] = 1;
    }
    break;
  case RT_TS_CONTRACT:
    for (uint32_t x = 0; x < n; x++) keep[x] = !mark[x];
    break;
  case RT_TS_REPARENT:
    for (uint32_t x = 0; x < n; x++) keep[x] = mark[x];
    break;
  case RT_TS_ABSORB:
    for (uint32_t i = 0; i < n; i++) {
      uint32_t x = VISIT(i), p = f->par[x];
      aux[x] = p != NONE && aux[p] != NONE ? aux[p] : mark[x] ? x : NONE;
      keep[x] = aux[x] == NONE || aux[x] == x;
    }
    break;
  case RT_TS_MERGE_INTO:
    for (uint32_t i = 0; i < n; i++) {
      uint32_t x = VISIT(i), p = f->par[x];
      aux[x] = p != NONE && rt_ts_by_eq(in, x, p) ? aux[p] : x;
      keep[x] = aux[x] == x;
    }
    break;
  case RT_TS_MERGE_SIBLINGS: break;
  }
  if (k == RT_TS_DROP_DESC || k == RT_TS_DROP_ANC || k == RT_TS_PRUNE)
    for (uint32_t x = 0; x < n; x++) keep[x] = !keep[x];
  if (k <= RT_TS_PRUNE)
    for (uint32_t x = 0; x < n; x++) keep[x] = keep[x] && in_of[x] != NONE;
#undef VISIT
}

static int reshape(const rt_tshape_in *in, const rt_tforest *f, const uint8_t *mark,
                   const uint32_t *in_of, const uint32_t *tree_of, rt_tshape_out *out,
                   rt_err *err, const char *stage, int pos) {
  uint32_t n = f->n;
  uint8_t *keep = rt_mem_calloc((size_t)n + 1, 1);
  uint32_t *aux = rt_mem_big(sizeof(uint32_t) * ((size_t)n + 1));
  uint32_t *anc = rt_mem_big(sizeof(uint32_t) * ((size_t)n + 1));
  uint32_t *outidx = folds(in->kind) ? rt_mem_big(sizeof(uint32_t) * ((size_t)n + 1)) : NULL;
  if (!keep || !aux || !anc || (folds(in->kind) && !outidx)) {
    rt_mem_free(keep);
    rt_mem_free(aux);
    rt_mem_free(anc);
    rt_mem_free(outidx);
    return rt_ts_fail(err, pos, stage, "out of memory");
  }
  decide(in, f, mark, in_of, keep, aux);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t x = f->order ? f->order[i] : i, p = f->par[x];
    anc[x] = p == NONE ? NONE : keep[p] ? p : anc[p];
  }
  uint32_t k = 0;
  for (uint32_t r = 0; r < in->n; r++) {
    uint32_t x = tree_of ? tree_of[r] : r;
    if (in->kind != RT_TS_REPARENT && !keep[x]) continue;
    if (outidx) outidx[x] = k;
    out->rows[k] = r;
    out->prow[k] = anc[x];
    k++;
  }
  out->n = k;
  if (outidx)
    for (uint32_t x = 0; x < n; x++) {
      uint32_t t = keep[x] ? x : in->kind == RT_TS_CONTRACT ? anc[x] : aux[x];
      out->group[x] = t == NONE ? NONE : outidx[t];
    }
  rt_mem_free(keep);
  rt_mem_free(aux);
  rt_mem_free(anc);
  rt_mem_free(outidx);
  return 0;
}

/* ---- entry ---------------------------------------------------------------------- */

void rt_tshape_free(rt_tshape_out *out) {
  rt_mem_free(out->rows);
  rt_mem_free(out->prow);
  rt_mem_free(out->group);
  memset(out, 0, sizeof *out);
}

int rt_tshape_run(const rt_tshape_in *in, rt_tshape_out *out, rt_err *err, const char *stage,
                  int pos, const rt_strpool *sp) {
  memset(out, 0, sizeof *out);
  rt_tforest f;
  const rt_tcol *tid = in->has_over ? &in->over_id : &in->id;
  uint32_t tn = in->has_over ? in->over_n : in->n;
  int rc = forest_build(&f, tid, in->has_over ? &in->over_parent : &in->parent, tn, in->str_ids,
                        err, stage, pos, sp);
  uint8_t *mark = NULL;
  uint32_t *in_of = NULL, *tree_of = NULL;
  size_t nrows = (size_t)(in->n > tn ? in->n : tn) + 1;
  /* MERGE SIBLINGS has no node set and no OVER tree */
  bool sib = in->kind == RT_TS_MERGE_SIBLINGS;
  if (rc == 0) {
    if (!sib) {
      mark = rt_mem_calloc((size_t)tn + 1, 1);
      in_of = rt_mem_alloc(sizeof(uint32_t) * ((size_t)tn + 1));
    }
    out->rows = rt_mem_big(sizeof(uint32_t) * nrows);
    out->prow = rt_mem_big(sizeof(uint32_t) * nrows);
    if (folds(in->kind)) out->group = rt_mem_big(sizeof(uint32_t) * nrows);
    if ((!sib && (!mark || !in_of)) || !out->rows || !out->prow || (folds(in->kind) && !out->group))
      rc = rt_ts_fail(err, pos, stage, "out of memory");
  }
  /* With OVER the input's rows are nodes of that tree, each at most once. */
  if (rc == 0 && in->has_over) {
    memset(in_of, 0xff, sizeof(uint32_t) * ((size_t)tn + 1));
    if (!(tree_of = rt_mem_alloc(sizeof(uint32_t) * ((size_t)in->n + 1))))
      rc = rt_ts_fail(err, pos, stage, "out of memory");
    for (uint32_t r = 0; rc == 0 && r < in->n; r++) {
      if (rt_tcol_null(&in->id, r)) {
        char msg[200];
        snprintf(msg, sizeof msg, "a row has no id: row %u of the input", r + 1);
        rc = rt_ts_fail(err, pos, stage, msg);
        break;
      }
      int64_t id = rt_tcol_bits(&in->id, r);
      uint32_t x = forest_find(&f, id);
      if (x == NONE)
        rc = id_fail(&f, err, pos, stage, "the row with id %s is not a node of the OVER tree", id);
      else if (in_of[x] != NONE)
        rc = id_fail(&f, err, pos, stage, "two rows have the id %s", id);
      else
        in_of[x] = r, tree_of[r] = x;
    }
  } else if (rc == 0 && !sib) {
    for (uint32_t x = 0; x < tn; x++) in_of[x] = x;
  }
  for (uint32_t r = 0; rc == 0 && in->has_set && r < in->set_n; r++) {
    if (rt_tcol_null(&in->set_id, r)) continue;
    uint32_t x = forest_find(&f, rt_tcol_bits(&in->set_id, r));
    if (x != NONE) mark[x] = 1;
  }
  if (rc == 0) {
    if (in->kind == RT_TS_MERGE_SIBLINGS) rc = rt_ts_merge_siblings(in, &f, out, err, stage, pos);
    else rc = reshape(in, &f, mark, in_of, tree_of, out, err, stage, pos);
  }
  rt_mem_free(mark);
  rt_mem_free(in_of);
  rt_mem_free(tree_of);
  forest_free(&f);
  if (rc < 0) rt_tshape_free(out);
  return rc;
}
