/*
 * test_layout.c — every runtime struct field that generated code touches
 * sits where LLVM thinks it does (codegen/cg_types.c vs the C headers).
 * A field added to exec.h / rt.h / store.h without the matching change in
 * cg_types.c fails here instead of corrupting memory at run time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "codegen/cg.h"
#include "codegen/cg_layout.h"

#define AT(s, f, type, member) assert_int_equal(cg_layout_offset(s, f), offsetof(type, member))
#define SIZE(s, type) assert_int_equal(cg_layout_offset(s, -1), sizeof(type))

static void test_view_and_batch(void **state) {
  (void)state;
  AT(CG_S_VIEW, CG_VIEW_TYPE, rt_view, type);
  AT(CG_S_VIEW, CG_VIEW_DATA, rt_view, data);
  AT(CG_S_VIEW, CG_VIEW_VALID, rt_view, valid);
  AT(CG_S_VIEW, CG_VIEW_SEL, rt_view, sel);
  AT(CG_S_VIEW, CG_VIEW_BASE, rt_view, base);
  SIZE(CG_S_VIEW, rt_view);   /* b->cols is indexed with this stride */
  AT(CG_S_BATCH, CG_BATCH_N, rt_batch, n);
  AT(CG_S_BATCH, CG_BATCH_NACTIVE, rt_batch, nactive);
  AT(CG_S_BATCH, CG_BATCH_ACTIVE, rt_batch, active);
  AT(CG_S_BATCH, CG_BATCH_NCOLS, rt_batch, ncols);
  AT(CG_S_BATCH, CG_BATCH_COLS, rt_batch, cols);
  SIZE(CG_S_BATCH, rt_batch);
}

static void test_seg_run_value(void **state) {
  (void)state;
  AT(CG_S_SEG, CG_SEG_RUN, ex_seg, run);
  AT(CG_S_SEG, CG_SEG_SEG, ex_seg, seg);
  AT(CG_S_SEG, CG_SEG_INDEX, ex_seg, index);
  AT(CG_S_SEG, CG_SEG_BUF, ex_seg, buf);
  AT(CG_S_SEG, CG_SEG_NBUF, ex_seg, nbuf);
  AT(CG_S_SEG, CG_SEG_BUF_COLS, ex_seg, buf_cols);
  AT(CG_S_SEG, CG_SEG_AGG, ex_seg, agg);
  AT(CG_S_SEG, CG_SEG_NLIMITS, ex_seg, nlimits);
  AT(CG_S_SEG, CG_SEG_LIMIT_SKIP, ex_seg, limit_skip);
  AT(CG_S_SEG, CG_SEG_LIMIT_LEFT, ex_seg, limit_left);
  AT(CG_S_SEG, CG_SEG_DONE, ex_seg, done);
  AT(CG_S_SEG, CG_SEG_VM, ex_seg, vm);
  SIZE(CG_S_SEG, ex_seg);
  AT(CG_S_ARENA, 0, rt_arena, head);
  AT(CG_S_ARENA, 1, rt_arena, used_total);
  SIZE(CG_S_ARENA, rt_arena);
  /* ex_run is declared up to `params` only */
  AT(CG_S_RUN, CG_RUN_PLAN, ex_run, plan);
  AT(CG_S_RUN, CG_RUN_ARENA, ex_run, arena);
  AT(CG_S_RUN, CG_RUN_STRINGS, ex_run, strings);
  AT(CG_S_RUN, CG_RUN_DB, ex_run, db);
  AT(CG_S_RUN, CG_RUN_NPARAMS, ex_run, nparams);
  AT(CG_S_RUN, CG_RUN_PARAMS, ex_run, params);
  AT(CG_S_VALUE, CG_VALUE_TYPE, ex_value, type);
  AT(CG_S_VALUE, CG_VALUE_I, ex_value, i);
  AT(CG_S_VALUE, CG_VALUE_F, ex_value, f);
  AT(CG_S_VALUE, CG_VALUE_S, ex_value, s);
  SIZE(CG_S_VALUE, ex_value);   /* params[] stride */
}

static void test_rowbuf_and_aggtab(void **state) {
  (void)state;
  AT(CG_S_ROWBUF, CG_ROWBUF_NCOLS, rt_rowbuf, ncols);
  AT(CG_S_ROWBUF, CG_ROWBUF_TYPES, rt_rowbuf, types);
  AT(CG_S_ROWBUF, CG_ROWBUF_NROWS, rt_rowbuf, nrows);
  AT(CG_S_ROWBUF, CG_ROWBUF_CAP, rt_rowbuf, cap);
  AT(CG_S_ROWBUF, CG_ROWBUF_DATA, rt_rowbuf, data);
  AT(CG_S_ROWBUF, CG_ROWBUF_VALID, rt_rowbuf, valid);
  SIZE(CG_S_ROWBUF, rt_rowbuf);
  AT(CG_S_AGG, CG_AGG_KIND, rt_agg, kind);
  AT(CG_S_AGG, CG_AGG_IN, rt_agg, in);
  AT(CG_S_AGG, CG_AGG_OUT, rt_agg, out);
  AT(CG_S_AGG, CG_AGG_I, rt_agg, i);
  AT(CG_S_AGG, CG_AGG_F, rt_agg, f);
  AT(CG_S_AGG, CG_AGG_N, rt_agg, n);
  AT(CG_S_AGG, CG_AGG_HAS, rt_agg, has);
  SIZE(CG_S_AGG, rt_agg);   /* t->aggs[] stride */
  AT(CG_S_AGGTAB, CG_AGGTAB_NKEYS, rt_aggtab, nkeys);
  AT(CG_S_AGGTAB, CG_AGGTAB_NAGGS, rt_aggtab, naggs);
  AT(CG_S_AGGTAB, CG_AGGTAB_AGGS, rt_aggtab, aggs);
  AT(CG_S_AGGTAB, CG_AGGTAB_NGROUPS, rt_aggtab, ngroups);
  AT(CG_S_AGGTAB, CG_AGGTAB_CAP, rt_aggtab, cap);
  AT(CG_S_AGGTAB, CG_AGGTAB_SLOTS, rt_aggtab, slots);
  AT(CG_S_AGGTAB, CG_AGGTAB_MASK, rt_aggtab, mask);
  AT(CG_S_AGGTAB, CG_AGGTAB_NULL_GROUP, rt_aggtab, null_group);
  AT(CG_S_AGGTAB, CG_AGGTAB_HASHES, rt_aggtab, hashes);
  AT(CG_S_AGGTAB, CG_AGGTAB_KEYS, rt_aggtab, keys);
  AT(CG_S_AGGTAB, CG_AGGTAB_STRINGS, rt_aggtab, strings);
  AT(CG_S_AGGTAB, CG_AGGTAB_DIRECT, rt_aggtab, direct);
  AT(CG_S_AGGTAB, CG_AGGTAB_EPOCH, rt_aggtab, epoch);
  AT(CG_S_AGGTAB, CG_AGGTAB_MORSEL, rt_aggtab, morsel);
  AT(CG_S_AGGTAB, CG_AGGTAB_FOLD, rt_aggtab, fold);
  SIZE(CG_S_AGGTAB, rt_aggtab);
}

/* TREE ACCUMULATE: the ex_run fields up to the per-op state arrays, the
 * numbering prefix the inlined tiers use, the accumulation state. */
static void test_tree(void **state) {
  (void)state;
  AT(CG_S_RUN, CG_RUN_ERR, ex_run, err);
  AT(CG_S_RUN, CG_RUN_NSEGS, ex_run, nsegs);
  AT(CG_S_RUN, CG_RUN_SEGS, ex_run, segs);
  AT(CG_S_RUN, CG_RUN_BUFS, ex_run, bufs);
  AT(CG_S_RUN, CG_RUN_PERMS, ex_run, perms);
  AT(CG_S_RUN, CG_RUN_TREENUMS, ex_run, treenums);
  AT(CG_S_RUN, CG_RUN_TREEACCS, ex_run, treeaccs);
  AT(CG_S_TREENUM, CG_TREENUM_TIER, rt_treenum, tier);
  AT(CG_S_TREENUM, CG_TREENUM_NROWS, rt_treenum, nrows);
  AT(CG_S_TREENUM, CG_TREENUM_LIMIT, rt_treenum, limit);
  AT(CG_S_TREENUM, CG_TREENUM_NNODES, rt_treenum, nnodes);
  AT(CG_S_TREENUM, CG_TREENUM_AWAITED, rt_treenum, awaited);
  AT(CG_S_TREENUM, CG_TREENUM_STR_IDS, rt_treenum, str_ids);
  AT(CG_S_TREENUM, CG_TREENUM_KEYS, rt_treenum, keys);
  AT(CG_S_TREENUM, CG_TREENUM_HASROW, rt_treenum, hasrow);
  AT(CG_S_TREENUM, CG_TREENUM_CAP, rt_treenum, cap);
  AT(CG_S_TREENUM, CG_TREENUM_SLOTS, rt_treenum, slots);
  AT(CG_S_TREENUM, CG_TREENUM_MASK, rt_treenum, mask);
  AT(CG_S_TREENUM, CG_TREENUM_NODE_OUT, rt_treenum, node_out);
  AT(CG_S_TREENUM, CG_TREENUM_PNODE_OUT, rt_treenum, pnode_out);
  AT(CG_S_TREEAGG, CG_TREEAGG_KIND, rt_treeagg, kind);
  AT(CG_S_TREEAGG, CG_TREEAGG_IN, rt_treeagg, in);
  AT(CG_S_TREEAGG, CG_TREEAGG_I, rt_treeagg, i);
  AT(CG_S_TREEAGG, CG_TREEAGG_F, rt_treeagg, f);
  AT(CG_S_TREEAGG, CG_TREEAGG_HAS, rt_treeagg, has);
  AT(CG_S_TREEAGG, CG_TREEAGG_V, rt_treeagg, v);
  SIZE(CG_S_TREEAGG, rt_treeagg);   /* a->aggs[] stride */
  AT(CG_S_TREEACC, CG_TREEACC_UP, rt_treeacc, up);
  AT(CG_S_TREEACC, CG_TREEACC_NNODES, rt_treeacc, nnodes);
  AT(CG_S_TREEACC, CG_TREEACC_NAGGS, rt_treeacc, naggs);
  AT(CG_S_TREEACC, CG_TREEACC_AGGS, rt_treeacc, aggs);
  /* rt_treeacc is read by field only, never as an array: its tail may grow */
  /* the numbering's fields as the inline rule needs them */
  assert_int_equal(sizeof(((rt_treenum *)0)->nrows), 4);
  assert_int_equal(sizeof(((rt_treenum *)0)->limit), 8);
}

static void test_jointab(void **state) {
  (void)state;
  if (cg_layout_offset(CG_S_VIEW, 0) < 0) skip();
  AT(CG_S_JOINTAB, CG_JOINTAB_NKEYS, rt_jointab, nkeys);
  AT(CG_S_JOINTAB, CG_JOINTAB_DIRECT, rt_jointab, direct);
  AT(CG_S_JOINTAB, CG_JOINTAB_SLOTS, rt_jointab, slots);
  AT(CG_S_JOINTAB, CG_JOINTAB_MASK, rt_jointab, mask);
  AT(CG_S_JOINTAB, CG_JOINTAB_DMIN, rt_jointab, dmin);
  AT(CG_S_JOINTAB, CG_JOINTAB_DRANGE, rt_jointab, drange);
  AT(CG_S_JOINTAB, CG_JOINTAB_NEXT, rt_jointab, next);
  AT(CG_S_JOINTAB, CG_JOINTAB_KEYS, rt_jointab, keys);
  AT(CG_S_JOINTAB, CG_JOINTAB_MATCHED, rt_jointab, matched);
  AT(CG_S_JOINTAB, CG_JOINTAB_NROWS, rt_jointab, nrows);
  AT(CG_S_JOINTAB, CG_JOINTAB_BUF, rt_jointab, buf);
  AT(CG_S_JOINTAB, CG_JOINTAB_KINDS, rt_jointab, kinds);
  AT(CG_S_JOINTAB, CG_JOINTAB_GCACHE, rt_jointab, gcache);
  AT(CG_S_JOINTAB, CG_JOINTAB_UNIQUE, rt_jointab, unique);
  AT(CG_S_JOINTAB, CG_JOINTAB_MEMO, rt_jointab, memo);
  SIZE(CG_S_JOINTAB, rt_jointab);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_view_and_batch),
      cmocka_unit_test(test_seg_run_value),
      cmocka_unit_test(test_rowbuf_and_aggtab),
      cmocka_unit_test(test_tree),
      cmocka_unit_test(test_jointab),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
