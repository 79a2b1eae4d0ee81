/*
 * cg_agg.c — the AGGREGATE sink inside the row loop.
 *
 * Group lookup for one integer or string key is the runtime's probe
 * (runtime/aggtab.c, layout in store.h) inlined:
 *
 *   h = rt_hash_i64(key); slot = h & mask
 *   agg.probe: e = slots[slot]; e == 0 → agg.miss (rt_aggtab_insert_i64)
 *              keys[e-1] == key → group e-1; else slot = slot+1 & mask
 *
 * A key in [0, RT_AGG_DIRECT) looks in t->direct first (group+1, or 0:
 * not seen, then the probe above). A NULL key is t->null_group
 * (rt_aggtab_group_null the first time).
 * One double key, and several keys of any type, probe inline too, the
 * runtime's tuple probe (cg_aggkey.c); more than CG_AGG_INLINE_KEYS keys
 * go through rt_aggtab_group. Every call into
 * the table may grow its arrays, so the table's pointers are read from the
 * table for each row (see cg_agg_array).
 * Updates follow interp/vm_agg.c exactly, branch-free where the C is:
 * NULL inputs add 0 and leave `has` alone; an integer SUM is checked and
 * fails the row with "AGGREGATE: integer overflow".
 */
#include <stdio.h>
#include <stdlib.h>

#include "cg_aggint.h"

/* The arrays of aggregate j, loaded from the table for this row: the
 * table may have grown them since the last row. Kept in memory rather than
 * registers: the loop has more live values than x86 has registers anyway,
 * and a phi web of a dozen pointers through every block of the row costs
 * the register allocator far more compile time than these L1 hits cost. */
LLVMValueRef cg_agg_array(cg_ctx *cx, cg_aggstate *a, const cg_aggslot *s, int field) {
  LLVMValueRef ap = cg_elem_ptr(cx, cx->st.agg, a->aggs_ptr, cg_i64(cx, s->j), "");
  static const char *const nm[] = {[CG_AGG_I] = "agg.i", [CG_AGG_F] = "agg.f", [CG_AGG_N] = "agg.n", [CG_AGG_HAS] = "agg.has"};
  return cg_load_field(cx, cx->st.agg, ap, field, cx->t_ptr, nm[field]);
}


cg_aggstate *cg_agg_prologue(cg_ctx *cx, const ir_op *op, LLVMBasicBlockRef fallback) {
  cg_aggstate *a = cg_alloc(cx, sizeof *a);
  if (!a || !(a->aggs = cg_alloc(cx, ((size_t)op->agg.naggs + 1) * sizeof *a->aggs))) return NULL;
  for (int k = 0; k < op->agg.naggs; k++) {
    const ir_agg *ag = &op->agg.aggs[k];
    if (!ag->live) continue;
    cg_aggslot *s = &a->aggs[a->naggs++];
    s->ag = ag;
    s->kind = ag->kind;
    s->in = rt_store_type(ag->arg_type);
    s->j = a->naggs - 1;
  }
  if (op->agg.ngroup == 1) {
    a->keytype = rt_store_type(cx->plan->cols[op->agg.group_cols[0]].type);
    a->inline_probe = true;
  }
  a->inline_tuple = cg_agg_tuple_inline(op);
  a->t = cg_load_field(cx, cx->st.seg, cx->s, CG_SEG_AGG, cx->t_ptr, "agg");
  /* The driver must have made the table the plan describes (live
   * aggregates only, in op order); otherwise the interpreter takes the
   * batch. */
  LLVMValueRef t = a->t;
  LLVMValueRef ok = LLVMBuildICmp(cx->b, LLVMIntEQ, cg_load_field(cx, cx->st.aggtab, t, CG_AGGTAB_NKEYS, cx->t_i32, ""),
                                  cg_i32(cx, op->agg.ngroup), "");
  ok = LLVMBuildAnd(cx->b, ok, LLVMBuildICmp(cx->b, LLVMIntEQ, cg_load_field(cx, cx->st.aggtab, t, CG_AGGTAB_NAGGS, cx->t_i32, ""),
                                             cg_i32(cx, a->naggs), ""), "");
  LLVMBasicBlockRef check = cg_block(cx, "agg.check"), ready = cg_block(cx, "agg.ready");
  LLVMBuildCondBr(cx->b, ok, check, fallback);
  cg_at(cx, check);
  ok = cg_i1(cx, 1);
  LLVMValueRef aggs = cg_load_field(cx, cx->st.aggtab, t, CG_AGGTAB_AGGS, cx->t_ptr, "");
  for (int j = 0; j < a->naggs; j++) {
    LLVMValueRef ap = cg_elem_ptr(cx, cx->st.agg, aggs, cg_i64(cx, j), "");
    LLVMValueRef kind = cg_load_field(cx, cx->st.agg, ap, CG_AGG_KIND, cx->t_i32, "");
    ok = LLVMBuildAnd(cx->b, ok, LLVMBuildICmp(cx->b, LLVMIntEQ, kind, cg_i32(cx, a->aggs[j].kind), ""), "");
    if (a->aggs[j].kind == RT_AGG_COUNT_STAR || a->aggs[j].kind == RT_AGG_COUNT) continue;
    LLVMValueRef in = cg_load_field(cx, cx->st.agg, ap, CG_AGG_IN, cx->t_i32, "");
    ok = LLVMBuildAnd(cx->b, ok, LLVMBuildICmp(cx->b, LLVMIntEQ, in, cg_i32(cx, a->aggs[j].in), ""), "");
  }
  if (a->inline_probe) {
    LLVMValueRef kb = cg_field_ptr(cx, cx->st.aggtab, t, CG_AGGTAB_KEYS, "");
    LLVMValueRef types = cg_load_field(cx, cx->st.rowbuf, kb, CG_ROWBUF_TYPES, cx->t_ptr, "");
    LLVMValueRef kt = LLVMBuildLoad2(cx->b, cx->t_i32, types, "");
    ok = LLVMBuildAnd(cx->b, ok, LLVMBuildICmp(cx->b, LLVMIntEQ, kt, cg_i32(cx, a->keytype), ""), "");
  }
  if (a->inline_tuple) {
    /* the inlined probe reads the key columns as the plan types them */
    LLVMValueRef kb = cg_field_ptr(cx, cx->st.aggtab, t, CG_AGGTAB_KEYS, "");
    LLVMValueRef types = cg_load_field(cx, cx->st.rowbuf, kb, CG_ROWBUF_TYPES, cx->t_ptr, "");
    for (int k = 0; k < op->agg.ngroup; k++) {
      LLVMValueRef kt = cg_load_elem(cx, cx->t_i32, types, cg_i64(cx, k), "");
      rt_type want = rt_store_type(cx->plan->cols[op->agg.group_cols[k]].type);
      ok = LLVMBuildAnd(cx->b, ok, LLVMBuildICmp(cx->b, LLVMIntEQ, kt, cg_i32(cx, want), ""), "");
    }
  }
  LLVMBuildCondBr(cx->b, ok, ready, fallback);
  cg_at(cx, ready);
  if (op->agg.ngroup == 0) cg_call(cx, "rt_aggtab_ensure_one", &a->t, 1, "");
  a->aggs_ptr = cg_load_field(cx, cx->st.aggtab, a->t, CG_AGGTAB_AGGS, cx->t_ptr, "agg.aggs");
  a->direct = cg_load_field(cx, cx->st.aggtab, a->t, CG_AGGTAB_DIRECT, cx->t_ptr, "agg.direct");
  /* Epochs (lazy folding, a kept worker table) are switched on and off
   * between batches only (at a morsel's end or start, runtime/aggmerge.c),
   * so the batch decides it once: the rows of a table without epochs pay
   * no load for it. */
  if (op->agg.ngroup > 0)
    a->lazy = LLVMBuildIsNotNull(cx->b, cg_load_field(cx, cx->st.aggtab, a->t, CG_AGGTAB_EPOCH, cx->t_ptr, ""),
                                 "agg.lazy");
  return a;
}

/* The one-key probe of a non-NULL integer or string key (kv: as i64),
 * adding its hits and its insert to the group phi's (gs, from, ng entries
 * so far; returns the new count); all branch to done. A key below
 * RT_AGG_DIRECT (kv as unsigned) looks in the table's direct array first. */
static int cg_agg_probe_one(cg_ctx *cx, cg_aggstate *a, cg_val key, LLVMValueRef kv, LLVMBasicBlockRef done,
                            LLVMValueRef *gs, LLVMBasicBlockRef *from, int ng) {
  bool str = a->keytype == RT_STR;
  LLVMValueRef direct = a->direct;
  LLVMValueRef small = LLVMBuildAnd(cx->b, LLVMBuildIsNotNull(cx->b, direct, ""),
                                    LLVMBuildICmp(cx->b, LLVMIntULT, kv, cg_i64(cx, RT_AGG_DIRECT), ""), "agg.small");
  LLVMBasicBlockRef look = cg_block(cx, "agg.direct"), dhit = cg_block(cx, "agg.dhit"), hashb = cg_block(cx, "agg.probe.hash");
  LLVMBuildCondBr(cx->b, small, look, hashb);
  cg_at(cx, look);
  LLVMValueRef e = cg_load_elem(cx, cx->t_i32, direct, kv, "direct.entry");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntNE, e, cg_i32(cx, 0), ""), dhit, hashb);
  cg_at(cx, dhit);
  gs[ng] = LLVMBuildSub(cx->b, LLVMBuildZExt(cx->b, e, cx->t_i64, ""), cg_i64(cx, 1), "direct.group");
  from[ng++] = dhit;
  LLVMBuildBr(cx->b, done);
  cg_at(cx, hashb);
  LLVMValueRef h = cg_hash_i64(cx, kv);
  LLVMValueRef slots = cg_load_field(cx, cx->st.aggtab, a->t, CG_AGGTAB_SLOTS, cx->t_ptr, "agg.slots");
  LLVMValueRef mask = cg_load_field(cx, cx->st.aggtab, a->t, CG_AGGTAB_MASK, cx->t_i64, "agg.mask");
  LLVMValueRef kb = cg_field_ptr(cx, cx->st.aggtab, a->t, CG_AGGTAB_KEYS, "");
  LLVMValueRef kd = cg_load_field(cx, cx->st.rowbuf, kb, CG_ROWBUF_DATA, cx->t_ptr, "");
  LLVMValueRef keys = LLVMBuildLoad2(cx->b, cx->t_ptr, kd, "agg.keys");
  cg_probe pr;
  cg_probe_open(cx, slots, LLVMBuildAnd(cx->b, h, mask, ""), mask, &pr);
  LLVMBasicBlockRef hit = cg_block(cx, "agg.hit");
  LLVMValueRef g = pr.g;
  LLVMValueRef have = cg_load_elem(cx, str ? cx->t_i32 : cx->t_i64, keys, g, "slot.key");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, have, key.v, ""), hit, pr.step);
  cg_probe_close(cx, &pr);
  cg_at(cx, hit);
  gs[ng] = g;
  from[ng++] = hit;
  LLVMBuildBr(cx->b, done);

  cg_at(cx, pr.miss);
  LLVMValueRef args[3] = {a->t, kv, h};
  LLVMValueRef gnew = cg_call(cx, "rt_aggtab_insert_i64", args, 3, "group.new");
  cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntSLT, gnew, cg_i64(cx, 0), ""), CG_ERR_NOMEM, "agg.inserted");
  gs[ng] = gnew;
  from[ng++] = cg_here(cx);
  LLVMBuildBr(cx->b, done);

  return ng;
}

/* Group number of the current row, leaving the builder where it is known. */
static LLVMValueRef cg_agg_lookup(cg_ctx *cx, cg_aggstate *a, const ir_op *op) {
  if (op->agg.ngroup == 0) return cg_i64(cx, 0);
  LLVMBasicBlockRef done = cg_block(cx, "agg.group");
  LLVMValueRef gs[4];
  LLVMBasicBlockRef from[4];
  int ng = 0;
  if (a->inline_tuple) {
    cg_val v[CG_AGG_INLINE_KEYS];
    for (int k = 0; k < op->agg.ngroup; k++) v[k] = cg_column(cx, op->agg.group_cols[k]);
    bool pair = op->agg.ngroup == 2 && v[0].type != RT_F64 && v[1].type != RT_F64;
    LLVMValueRef g = cg_agg_group_tuple(cx, a->t, pair ? a->direct : NULL, op->agg.ngroup, v);
    LLVMBuildBr(cx->b, done);
    cg_at(cx, done);
    return g;
  }
  if (!a->inline_probe) {
    /* key tuple through the runtime */
    int nk = op->agg.ngroup;
    LLVMValueRef vals = cg_slot(cx, LLVMArrayType(cx->t_i64, (unsigned)nk), "agg.keyvals");
    LLVMValueRef nulls = cg_slot(cx, LLVMArrayType(cx->t_i8, (unsigned)nk), "agg.keynull");
    for (int k = 0; k < nk; k++) {
      cg_val v = cg_column(cx, op->agg.group_cols[k]);
      LLVMValueRef bits;
      if (v.type == RT_F64) bits = LLVMBuildBitCast(cx->b, v.v, cx->t_i64, "");
      else if (v.type == RT_STR) bits = LLVMBuildZExt(cx->b, v.v, cx->t_i64, "");
      else bits = v.v;
      bits = LLVMBuildSelect(cx->b, v.null, cg_i64(cx, 0), bits, "");
      LLVMBuildStore(cx->b, bits, cg_elem_ptr(cx, cx->t_i64, vals, cg_i64(cx, k), ""));
      LLVMBuildStore(cx->b, LLVMBuildZExt(cx->b, v.null, cx->t_i8, ""),
                     cg_elem_ptr(cx, cx->t_i8, nulls, cg_i64(cx, k), ""));
    }
    LLVMValueRef args[3] = {a->t, vals, nulls};
    LLVMValueRef g = cg_call(cx, "rt_aggtab_group", args, 3, "group");
    cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntSLT, g, cg_i64(cx, 0), ""), CG_ERR_NOMEM, "agg.grouped");
    LLVMBuildBr(cx->b, done);
    cg_at(cx, done);
    return g;
  }
  char nm[96];
  cg_colname(cx, op->agg.group_cols[0], nm, sizeof nm);
  cg_val key = cg_column(cx, op->agg.group_cols[0]);
  bool str = a->keytype == RT_STR;
  LLVMValueRef kv = str ? LLVMBuildZExt(cx->b, key.v, cx->t_i64, "") : key.v;

  LLVMBasicBlockRef hash = cg_block(cx, "agg.hash");
  if (!cg_is_false(key.null)) {
    LLVMBasicBlockRef nullkey = cg_block(cx, "agg.nullkey");
    LLVMBuildCondBr(cx->b, key.null, nullkey, hash);
    cg_at(cx, nullkey);
    LLVMValueRef ng0 = cg_load_field(cx, cx->st.aggtab, a->t, CG_AGGTAB_NULL_GROUP, cx->t_i64, "null.group");
    LLVMBasicBlockRef known = cg_here(cx);
    LLVMBasicBlockRef first = cg_block(cx, "agg.nullkey.new");
    LLVMBasicBlockRef nulldone = cg_block(cx, "agg.nullkey.done");
    LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, ng0, cg_i64(cx, 0), ""), first, nulldone);
    cg_at(cx, first);
    LLVMValueRef ng1 = cg_call(cx, "rt_aggtab_group_null", &a->t, 1, "null.group.new");
    cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntSLT, ng1, cg_i64(cx, 0), ""), CG_ERR_NOMEM, "agg.nullkey.made");
    LLVMBasicBlockRef made = cg_here(cx);
    LLVMBuildBr(cx->b, nulldone);
    cg_at(cx, nulldone);
    gs[ng] = cg_phi2_raw(cx, cx->t_i64, ng0, known, ng1, made, "");
    from[ng++] = nulldone;
    LLVMBuildBr(cx->b, done);
  } else {
    LLVMBuildBr(cx->b, hash);
  }

  cg_at(cx, hash);
  if (a->keytype == RT_F64) {
    /* the runtime's one double key is a tuple of one (its NULL is the
     * null group above, as for every single key) */
    cg_val nn = {key.v, cg_i1(cx, 0), RT_F64};
    gs[ng] = cg_agg_group_tuple(cx, a->t, NULL, 1, &nn);
    from[ng++] = cg_here(cx);
    LLVMBuildBr(cx->b, done);
  } else {
    ng = cg_agg_probe_one(cx, a, key, kv, done, gs, from, ng);
  }

  cg_at(cx, done);
  LLVMValueRef phi = LLVMBuildPhi(cx->b, cx->t_i64, "group");
  LLVMAddIncoming(phi, gs, from, (unsigned)ng);
  return phi;
}

/* has[g] |= flag (i1) */
static void cg_or_has(cg_ctx *cx, cg_aggstate *a, cg_aggslot *s, LLVMValueRef g, LLVMValueRef flag) {
  LLVMValueRef hp = cg_elem_ptr(cx, cx->t_i8, cg_agg_array(cx, a, s, CG_AGG_HAS), g, "");
  if (LLVMIsAConstantInt(flag) && LLVMConstIntGetZExtValue(flag)) {
    /* known non-NULL (see cg_refine_notnull): a plain store, no read */
    LLVMBuildStore(cx->b, LLVMConstInt(cx->t_i8, 1, 0), hp);
    return;
  }
  LLVMValueRef old = LLVMBuildLoad2(cx->b, cx->t_i8, hp, "");
  LLVMBuildStore(cx->b, LLVMBuildOr(cx->b, old, LLVMBuildZExt(cx->b, flag, cx->t_i8, ""), ""), hp);
}

/* A value's bits as rt_agg_add takes them (i64). */
static LLVMValueRef cg_agg_bits(cg_ctx *cx, cg_val v, rt_type t) {
  v = cg_coerce(cx, v, t);
  if (t == RT_F64) return LLVMBuildBitCast(cx->b, v.v, cx->t_i64, "");
  if (t == RT_STR) return LLVMBuildZExt(cx->b, v.v, cx->t_i64, "");
  return v.v;
}

/* COUNT(DISTINCT), ARG_MAX/MIN, GROUP_CONCAT, MEDIAN, PERCENTILE: the
 * runtime's per-row update (runtime/aggx.c), as the interpreter calls it. */
static void cg_agg_x(cg_ctx *cx, cg_aggstate *a, cg_aggslot *s, LLVMValueRef g) {
  cg_val v = cg_column(cx, s->ag->arg_col);
  LLVMValueRef args[7] = {a->t, cg_i32(cx, s->j), g, cg_agg_bits(cx, v, s->in),
                          LLVMBuildZExt(cx->b, v.null, cx->t_i32, ""), cg_i64(cx, 0), cg_i32(cx, 1)};
  if (s->ag->arg2_col >= 0) {
    cg_val w = cg_column(cx, s->ag->arg2_col);
    args[5] = cg_agg_bits(cx, w, rt_store_type(s->ag->arg2_type));
    args[6] = LLVMBuildZExt(cx->b, w.null, cx->t_i32, "");
  }
  LLVMValueRef rc = cg_call(cx, "rt_agg_add", args, 7, "");
  cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntNE, rc, cg_i32(cx, 0), ""), CG_ERR_NOMEM, "aggx.ok");
}

static void cg_agg_one(cg_ctx *cx, cg_aggstate *a, cg_aggslot *s, LLVMValueRef g) {
  const char *an = ir_aggs[s->kind].printed;
  char nm[96];
  snprintf(nm, sizeof nm, "agg.%s", an ? an : "x");
  if (s->kind == RT_AGG_COUNT_STAR) {
    LLVMValueRef p = cg_elem_ptr(cx, cx->t_i64, cg_agg_array(cx, a, s, CG_AGG_I), g, "");
    LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, LLVMBuildLoad2(cx->b, cx->t_i64, p, ""), cg_i64(cx, 1), nm), p);
    return;
  }
  switch (s->kind) {
  case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT:
  case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE:
    cg_agg_x(cx, a, s, g);
    return;
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX:
  case RT_AGG_AVG: case RT_AGG_ANY_VALUE: case RT_AGG_FIRST: case RT_AGG_LAST:
    break;
  }
  cg_val v = cg_column(cx, s->ag->arg_col);
  LLVMValueRef ok = LLVMBuildNot(cx->b, v.null, "");
  if (s->kind == RT_AGG_COUNT) {
    LLVMValueRef p = cg_elem_ptr(cx, cx->t_i64, cg_agg_array(cx, a, s, CG_AGG_I), g, "");
    LLVMValueRef inc = LLVMBuildZExt(cx->b, ok, cx->t_i64, "");
    LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, LLVMBuildLoad2(cx->b, cx->t_i64, p, ""), inc, nm), p);
    return;
  }
  v = cg_coerce(cx, v, s->in);
  bool f = s->in == RT_F64;
  switch (s->kind) {
  case RT_AGG_SUM:
  case RT_AGG_AVG: {
    if (s->kind == RT_AGG_AVG && !f) v = cg_coerce(cx, v, RT_F64), f = true;
    LLVMTypeRef ty = f ? cx->t_f64 : cx->t_i64;
    LLVMValueRef x = LLVMBuildSelect(cx->b, v.null, LLVMConstNull(ty), v.v, "");
    LLVMValueRef p = cg_elem_ptr(cx, ty, cg_agg_array(cx, a, s, f ? CG_AGG_F : CG_AGG_I), g, "");
    LLVMValueRef old = LLVMBuildLoad2(cx->b, ty, p, "");
    LLVMValueRef sum = f ? LLVMBuildFAdd(cx->b, old, x, nm) : cg_checked(cx, 'a', old, x, cg_i1(cx, 0), nm);
    LLVMBuildStore(cx->b, sum, p);
    if (s->kind == RT_AGG_AVG) {
      LLVMValueRef np = cg_elem_ptr(cx, cx->t_i64, cg_agg_array(cx, a, s, CG_AGG_N), g, "");
      LLVMValueRef n = LLVMBuildLoad2(cx->b, cx->t_i64, np, "");
      LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, n, LLVMBuildZExt(cx->b, ok, cx->t_i64, ""), ""), np);
    }
    cg_or_has(cx, a, s, g, ok);
    return;
  }
  case RT_AGG_MIN: case RT_AGG_MAX: case RT_AGG_ANY_VALUE: break;   /* below */
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX:
  case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
    return;   /* done above */
  }
  /* MIN / MAX / ANY_VALUE: replace when not NULL and (no value yet or better) */
  LLVMTypeRef ty = f ? cx->t_f64 : cx->t_i64;
  LLVMValueRef p = cg_elem_ptr(cx, ty, cg_agg_array(cx, a, s, f ? CG_AGG_F : CG_AGG_I), g, "");
  LLVMValueRef hp = cg_elem_ptr(cx, cx->t_i8, cg_agg_array(cx, a, s, CG_AGG_HAS), g, "");
  LLVMValueRef cur = LLVMBuildLoad2(cx->b, ty, p, "");
  LLVMValueRef has = LLVMBuildICmp(cx->b, LLVMIntNE, LLVMBuildLoad2(cx->b, cx->t_i8, hp, ""),
                                   LLVMConstInt(cx->t_i8, 0, 0), "");
  LLVMValueRef x = s->in == RT_STR ? LLVMBuildZExt(cx->b, v.v, cx->t_i64, "") : v.v;
  LLVMValueRef take;
  if (s->kind == RT_AGG_ANY_VALUE) {
    take = LLVMBuildAnd(cx->b, ok, LLVMBuildNot(cx->b, has, ""), "");
  } else {
    bool mn = s->kind == RT_AGG_MIN;
    LLVMValueRef better;
    if (s->in == RT_STR) {
      /* only compare strings that will be compared: the pool call is not free */
      LLVMBasicBlockRef from = cg_here(cx);
      LLVMBasicBlockRef call = cg_block(cx, "agg.strcmp"), join = cg_block(cx, "agg.strcmp.done");
      LLVMBuildCondBr(cx->b, LLVMBuildAnd(cx->b, ok, has, ""), call, join);
      cg_at(cx, call);
      LLVMValueRef args[3] = {cx->strings, v.v, LLVMBuildTrunc(cx->b, cur, cx->t_i32, "")};
      LLVMValueRef c = cg_call(cx, "rt_str_cmp", args, 3, "");
      LLVMValueRef b = LLVMBuildICmp(cx->b, mn ? LLVMIntSLT : LLVMIntSGT, c, cg_i32(cx, 0), "");
      LLVMBasicBlockRef callend = cg_here(cx);
      LLVMBuildBr(cx->b, join);
      cg_at(cx, join);
      better = LLVMBuildPhi(cx->b, cx->t_i1, "");
      LLVMValueRef vs[2] = {cg_i1(cx, 0), b};
      LLVMBasicBlockRef bs[2] = {from, callend};
      LLVMAddIncoming(better, vs, bs, 2);
    } else if (f) {
      better = LLVMBuildFCmp(cx->b, mn ? LLVMRealOLT : LLVMRealOGT, x, cur, "");
    } else {
      better = LLVMBuildICmp(cx->b, mn ? LLVMIntSLT : LLVMIntSGT, x, cur, "");
    }
    take = LLVMBuildAnd(cx->b, ok, LLVMBuildOr(cx->b, LLVMBuildNot(cx->b, has, ""), better, ""), "");
  }
  LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, take, x, cur, nm), p);
  LLVMValueRef hv = LLVMBuildSelect(cx->b, take, LLVMConstInt(cx->t_i8, 1, 0),
                                    LLVMBuildZExt(cx->b, has, cx->t_i8, ""), "");
  LLVMBuildStore(cx->b, hv, hp);
}

/* Lazy folding, or a parallel worker's table kept across morsels
 * (runtime/aggmerge.h): when the table keeps epochs and group g's is not
 * the current morsel, rt_aggtab_refold(t, g) first. Any aggregates: a
 * kept table lists the morsel's groups there even without sums. The
 * epochs are read from the table for the row: a new group may have grown
 * them. */
static void cg_agg_refold(cg_ctx *cx, cg_aggstate *a, LLVMValueRef g) {
  LLVMBasicBlockRef look = cg_block(cx, "agg.epoch.look"), call = cg_block(cx, "agg.refold"),
                    done = cg_block(cx, "agg.folded");
  LLVMBuildCondBr(cx->b, a->lazy, look, done);
  cg_at(cx, look);
  LLVMValueRef ep = cg_load_field(cx, cx->st.aggtab, a->t, CG_AGGTAB_EPOCH, cx->t_ptr, "agg.epoch");
  LLVMValueRef e = cg_load_elem(cx, cx->t_i32, ep, g, "group.epoch");
  LLVMValueRef m = cg_load_field(cx, cx->st.aggtab, a->t, CG_AGGTAB_MORSEL, cx->t_i32, "agg.morsel");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, e, m, ""), done, call);
  cg_at(cx, call);
  cg_call(cx, "rt_aggtab_refold", (LLVMValueRef[]){a->t, g}, 2, "");
  LLVMBuildBr(cx->b, done);
  cg_at(cx, done);
}

/* The group of the current row. A single key that a JOIN serves from its
 * relation's buffer is the same for every row that matched the same
 * relation row: its group is looked up once per relation row and kept in
 * the join table's gcache (cg_join.c), -1 until then. */
static LLVMValueRef cg_agg_group(cg_ctx *cx, cg_aggstate *a, const ir_op *op) {
  const cg_colsrc *cs = op->agg.ngroup == 1 ? &cx->src[op->agg.group_cols[0]] : NULL;
  if (!cs || !cs->rowidx || !cs->gcache) return cg_agg_lookup(cx, a, op);
  LLVMValueRef row = LLVMBuildZExt(cx->b, cs->rowidx, cx->t_i64, "");
  LLVMValueRef gp = cg_elem_ptr(cx, cx->t_i64, cs->gcache, row, "");
  LLVMValueRef g0 = LLVMBuildLoad2(cx->b, cx->t_i64, gp, "agg.cached");
  LLVMBasicBlockRef from = cg_here(cx), miss = cg_block(cx, "agg.uncached"), done = cg_block(cx, "agg.known");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGE, g0, cg_i64(cx, 0), ""), done, miss);
  cg_at(cx, miss);
  LLVMValueRef g1 = cg_agg_lookup(cx, a, op);
  LLVMBuildStore(cx->b, g1, gp);
  LLVMBasicBlockRef end = cg_here(cx);
  LLVMBuildBr(cx->b, done);
  cg_at(cx, done);
  return cg_phi2_raw(cx, cx->t_i64, g0, from, g1, end, "group");
}

void cg_agg_update(cg_ctx *cx, cg_aggstate *a, const ir_op *op) {
  /* read every input before branching into the probe */
  for (int k = 0; k < op->agg.ngroup; k++) cg_column(cx, op->agg.group_cols[k]);
  for (int j = 0; j < a->naggs; j++)
    if (a->aggs[j].ag->arg_col >= 0 && a->aggs[j].kind != RT_AGG_COUNT_STAR) {
      cg_column(cx, a->aggs[j].ag->arg_col);
      if (a->aggs[j].ag->arg2_col >= 0) cg_column(cx, a->aggs[j].ag->arg2_col);
    }
  LLVMValueRef g = cg_agg_group(cx, a, op);
  if (op->agg.ngroup > 0) cg_agg_refold(cx, a, g);
  for (int j = 0; j < a->naggs; j++) cg_agg_one(cx, a, &a->aggs[j], g);
}

