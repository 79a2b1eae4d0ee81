/*
 * cg_layout.h — field numbers of the runtime structs as declared for LLVM
 * in cg_types.c, and a way to ask LLVM where it puts them, so
 * tests/unit/test_layout.c can compare every field with offsetof without
 * including LLVM headers.
 */
#ifndef PJ_CG_LAYOUT_H
#define PJ_CG_LAYOUT_H

#include <stdint.h>

enum { CG_VIEW_TYPE, CG_VIEW_DATA, CG_VIEW_VALID, CG_VIEW_SEL, CG_VIEW_BASE };
enum { CG_BATCH_N, CG_BATCH_NACTIVE, CG_BATCH_ACTIVE, CG_BATCH_NCOLS, CG_BATCH_COLS };
enum {
  CG_SEG_RUN, CG_SEG_SEG, CG_SEG_INDEX, CG_SEG_BUF, CG_SEG_NBUF, CG_SEG_BUF_COLS,
  CG_SEG_AGG, CG_SEG_NLIMITS, CG_SEG_LIMIT_SKIP, CG_SEG_LIMIT_LEFT, CG_SEG_DONE, CG_SEG_VM
};
/* ex_run: only the prefix generated code reads is declared (up to the
 * TREE ACCUMULATE state arrays). */
enum {
  CG_RUN_PLAN, CG_RUN_ARENA, CG_RUN_STRINGS, CG_RUN_DB, CG_RUN_NPARAMS, CG_RUN_PARAMS,
  CG_RUN_ERR, CG_RUN_NSEGS, CG_RUN_SEGS, CG_RUN_BUFS, CG_RUN_PERMS, CG_RUN_TREENUMS,
  CG_RUN_TREEACCS
};
enum { CG_VALUE_TYPE, CG_VALUE_I, CG_VALUE_F, CG_VALUE_S };
enum {
  CG_ROWBUF_NCOLS, CG_ROWBUF_TYPES, CG_ROWBUF_NROWS, CG_ROWBUF_CAP, CG_ROWBUF_DATA,
  CG_ROWBUF_VALID
};
enum {
  CG_AGG_KIND, CG_AGG_IN, CG_AGG_OUT, CG_AGG_I, CG_AGG_F, CG_AGG_N, CG_AGG_HAS
};
enum {
  CG_AGGTAB_NKEYS, CG_AGGTAB_NAGGS, CG_AGGTAB_AGGS, CG_AGGTAB_NGROUPS, CG_AGGTAB_CAP,
  CG_AGGTAB_SLOTS, CG_AGGTAB_MASK, CG_AGGTAB_NULL_GROUP, CG_AGGTAB_HASHES, CG_AGGTAB_KEYS,
  CG_AGGTAB_STRINGS, CG_AGGTAB_DIRECT, CG_AGGTAB_EPOCH, CG_AGGTAB_MORSEL, CG_AGGTAB_FOLD
};

/* runtime/tree/tree.h. rt_treenum: only the prefix generated code reads is
 * declared (the inlined dense tiers' counters, and node_out / pnode_out,
 * which the batch-numbered hash tier reads per row). */
enum {
  CG_TREENUM_TIER, CG_TREENUM_NROWS, CG_TREENUM_LIMIT, CG_TREENUM_NNODES, CG_TREENUM_AWAITED,
  CG_TREENUM_STR_IDS, CG_TREENUM_KEYS, CG_TREENUM_HASROW, CG_TREENUM_CAP, CG_TREENUM_SLOTS,
  CG_TREENUM_MASK, CG_TREENUM_NODE_OUT, CG_TREENUM_PNODE_OUT
};
enum { CG_TREEAGG_KIND, CG_TREEAGG_IN, CG_TREEAGG_I, CG_TREEAGG_F, CG_TREEAGG_HAS, CG_TREEAGG_V };
enum { CG_TREEACC_UP, CG_TREEACC_NNODES, CG_TREEACC_NAGGS, CG_TREEACC_AGGS };
/* runtime/jointab.h */
enum {
  CG_JOINTAB_NKEYS, CG_JOINTAB_DIRECT, CG_JOINTAB_SLOTS, CG_JOINTAB_MASK, CG_JOINTAB_DMIN,
  CG_JOINTAB_DRANGE, CG_JOINTAB_NEXT, CG_JOINTAB_KEYS, CG_JOINTAB_MATCHED, CG_JOINTAB_NROWS,
  CG_JOINTAB_BUF, CG_JOINTAB_KINDS, CG_JOINTAB_GCACHE, CG_JOINTAB_UNIQUE, CG_JOINTAB_MEMO
};

/* The structs, for cg_layout_offset. */
typedef enum cg_struct_id {
  CG_S_VIEW, CG_S_BATCH, CG_S_SEG, CG_S_RUN, CG_S_VALUE, CG_S_ROWBUF, CG_S_AGG, CG_S_AGGTAB,
  CG_S_ARENA, CG_S_TREENUM, CG_S_TREEAGG, CG_S_TREEACC, CG_S_JOINTAB
} cg_struct_id;

/* Byte offset of field `field` of struct `s` in LLVM's layout for the host
 * (field = -1: the struct's size); -1 when LLVM's native target is
 * unavailable. */
int64_t cg_layout_offset(cg_struct_id s, int field);

#endif
