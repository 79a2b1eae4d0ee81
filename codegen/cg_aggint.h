/*
 * cg_aggint.h — the AGGREGATE sink's emit-time state, shared by the row
 * loop's updates (cg_agg.c) and the vector loop of an AGGREGATE without
 * GROUP BY (cg_vagg.c). Internal to codegen/.
 */
#ifndef PJ_CG_AGGINT_H
#define PJ_CG_AGGINT_H

#include "emit.h"

typedef struct cg_aggslot {
  const ir_agg *ag;
  rt_aggkind kind;
  rt_type in;                         /* stored argument type */
  int j;                              /* index in t->aggs */
} cg_aggslot;

struct cg_aggstate {
  LLVMValueRef t;                     /* rt_aggtab * */
  int naggs;
  cg_aggslot *aggs;
  bool inline_probe;                  /* one key */
  bool inline_tuple;                  /* several, see cg_aggkey.c */
  rt_type keytype;                    /* stored type of the single key */
  /* Loaded once per batch: what the table keeps from its creation on
   * (rt_aggtab_new) or changes between batches only. */
  LLVMValueRef aggs_ptr;              /* t->aggs (its arrays move: cg_agg_array) */
  LLVMValueRef direct;                /* t->direct, NULL without one */
  LLVMValueRef lazy;                  /* i1: t->epoch != NULL */
};

/* Array `field` (CG_AGG_I, _F, _N, _HAS) of slot s, through a->aggs_ptr. */
LLVMValueRef cg_agg_array(cg_ctx *cx, cg_aggstate *a, const cg_aggslot *s, int field);

#endif
