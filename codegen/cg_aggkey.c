/*
 * cg_aggkey.c — the AGGREGATE group lookup for several keys of any type
 * (and for one double key), inlined into the row loop: the runtime's tuple probe
 * (runtime/aggtab.c, group_tuple) in IR, so both backends find the same
 * groups in the same order and the table stays the runtime's table.
 *
 *   h = tuple_hash(keys)             once per row, branch-free over NULLs
 *   agg.tprobe: e = slots[slot]; e == 0 → agg.tmiss (rt_aggtab_insert_tuple)
 *               hashes[e-1] == h and every key equal → group e-1
 *               else slot = slot+1 & mask
 *
 * A key equals the stored one when both are NULL, or both are not NULL
 * and their bits are equal (a NULL key's stored bits are never read). A
 * double key's bits are folded first as the runtime's key_bits folds them:
 * -0.0 is 0.0 (they compare equal, so they group together, as in SQLite)
 * and every NaN is one pattern. The
 * table's arrays (slots, hashes, key columns, validity) may move on every
 * insert, so they are loaded for each row, after the hash. The linear
 * probe's loop (cg_probe_*) serves the one-key probe of cg_agg.c too.
 */
#include "emit.h"

LLVMValueRef cg_hash_i64(cg_ctx *cx, LLVMValueRef h) {
  /* rt_hash_i64 (runtime/store.h) */
  static const uint64_t mul[2] = {0xff51afd7ed558ccdull, 0xc4ceb9fe1a85ec53ull};
  for (int r = 0; r < 2; r++) {
    h = LLVMBuildXor(cx->b, h, LLVMBuildLShr(cx->b, h, cg_i64(cx, 33), ""), "");
    h = LLVMBuildMul(cx->b, h, LLVMConstInt(cx->t_i64, mul[r], 0), "");
  }
  return LLVMBuildXor(cx->b, h, LLVMBuildLShr(cx->b, h, cg_i64(cx, 33), ""), "hash");
}

void cg_probe_open(cg_ctx *cx, LLVMValueRef slots, LLVMValueRef start, LLVMValueRef mask, cg_probe *p) {
  p->entry = cg_here(cx);
  p->start = start;
  p->mask = mask;
  p->probe = cg_block(cx, "agg.probe");
  p->step = cg_block(cx, "agg.next");
  p->miss = cg_block(cx, "agg.miss");
  LLVMBasicBlockRef used = cg_block(cx, "agg.used");
  LLVMBuildBr(cx->b, p->probe);
  cg_at(cx, p->probe);
  p->slot = LLVMBuildPhi(cx->b, cx->t_i64, "slot");
  LLVMValueRef e = cg_load_elem(cx, cx->t_i32, slots, p->slot, "slot.entry");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, e, cg_i32(cx, 0), ""), p->miss, used);
  cg_at(cx, used);
  p->g = LLVMBuildSub(cx->b, LLVMBuildZExt(cx->b, e, cx->t_i64, ""), cg_i64(cx, 1), "group");
}

void cg_probe_close(cg_ctx *cx, cg_probe *p) {
  cg_at(cx, p->step);
  LLVMValueRef nslot = LLVMBuildAnd(cx->b, LLVMBuildAdd(cx->b, p->slot, cg_i64(cx, 1), ""), p->mask, "");
  LLVMBuildBr(cx->b, p->probe);
  LLVMAddIncoming(p->slot, (LLVMValueRef[]){p->start, nslot}, (LLVMBasicBlockRef[]){p->entry, p->step}, 2);
}

bool cg_agg_tuple_inline(const ir_op *op) {
  return op->agg.ngroup >= 2 && op->agg.ngroup <= CG_AGG_INLINE_KEYS;
}

/* Key k's value bits as tuple_hash sees them (a NULL key's bits are 0). */
static LLVMValueRef key_bits(cg_ctx *cx, cg_val v) {
  LLVMValueRef bits;
  if (v.type == RT_F64) {
    bits = LLVMBuildBitCast(cx->b, v.v, cx->t_i64, "");
    LLVMValueRef zero = LLVMBuildFCmp(cx->b, LLVMRealOEQ, v.v, cg_f64(cx, 0), "");
    LLVMValueRef nan = LLVMBuildFCmp(cx->b, LLVMRealUNO, v.v, v.v, "");
    bits = LLVMBuildSelect(cx->b, zero, cg_i64(cx, 0), bits, "");
    bits = LLVMBuildSelect(cx->b, nan, LLVMConstInt(cx->t_i64, 0x7ff8000000000000ull, 0), bits, "key.bits");
  } else {
    bits = v.type == RT_STR ? LLVMBuildZExt(cx->b, v.v, cx->t_i64, "") : v.v;
  }
  return cg_is_false(v.null) ? bits : LLVMBuildSelect(cx->b, v.null, cg_i64(cx, 0), bits, "");
}

/* Stored key k of group g equals the row's key (see the banner). */
static LLVMValueRef key_eq(cg_ctx *cx, LLVMValueRef data, LLVMValueRef valid, int k, LLVMValueRef g,
                           cg_val v, LLVMValueRef bits) {
  LLVMValueRef col = cg_load_elem(cx, cx->t_ptr, data, cg_i64(cx, k), "");
  LLVMValueRef have = v.type == RT_STR
                          ? LLVMBuildZExt(cx->b, cg_load_elem(cx, cx->t_i32, col, g, ""), cx->t_i64, "")
                          : cg_load_elem(cx, cx->t_i64, col, g, "");
  LLVMValueRef vcol = cg_load_elem(cx, cx->t_ptr, valid, cg_i64(cx, k), "");
  LLVMValueRef word = cg_load_elem(cx, cx->t_i64, vcol, LLVMBuildLShr(cx->b, g, cg_i64(cx, 6), ""), "");
  LLVMValueRef bit = LLVMBuildAnd(cx->b, LLVMBuildLShr(cx->b, word, LLVMBuildAnd(cx->b, g, cg_i64(cx, 63), ""), ""),
                                  cg_i64(cx, 1), "");
  LLVMValueRef stored = LLVMBuildICmp(cx->b, LLVMIntNE, bit, cg_i64(cx, 0), "key.stored");
  LLVMValueRef same = LLVMBuildAnd(cx->b, stored, LLVMBuildICmp(cx->b, LLVMIntEQ, have, bits, ""), "");
  if (cg_is_false(v.null)) return same;
  return LLVMBuildSelect(cx->b, v.null, LLVMBuildNot(cx->b, stored, ""), same, "key.eq");
}

/* tuple_hash, inline; bits[k] gets key k's folded bits. */
static LLVMValueRef tuple_hash(cg_ctx *cx, int nk, const cg_val *v, LLVMValueRef *bits) {
  LLVMValueRef h = LLVMConstInt(cx->t_i64, 0x9e3779b97f4a7c15ull, 0);
  for (int k = 0; k < nk; k++) {
    bits[k] = key_bits(cx, v[k]);
    LLVMValueRef x = LLVMBuildXor(cx->b, h, bits[k], "");
    if (!cg_is_false(v[k].null))
      x = LLVMBuildXor(cx->b, x,
                       LLVMBuildSelect(cx->b, v[k].null, LLVMConstInt(cx->t_i64, 0x5bd1e9955bd1e995ull, 0),
                                       cg_i64(cx, 0), ""), "");
    h = LLVMBuildAdd(cx->b, cg_hash_i64(cx, x), cg_i64(cx, k), "");
  }
  return h;
}

/* Two integer or string keys: the table's direct entry of the pair when
 * both are non-NULL and below RT_AGG_DIRECT2_W (rt_aggtab_direct2); a hit
 * branches to done with its group (*g, from *hit), anything else (out of
 * range, NULL, entry 0: not seen yet) goes on to the tuple probe at the
 * builder's new position. Before the hash, so a hit skips it. */
static void pair_direct(cg_ctx *cx, LLVMValueRef direct, const cg_val *v, LLVMBasicBlockRef done,
                        LLVMValueRef *g, LLVMBasicBlockRef *hit) {
  LLVMValueRef kv[2];
  LLVMValueRef small = LLVMBuildIsNotNull(cx->b, direct, "");
  for (int k = 0; k < 2; k++) {
    kv[k] = v[k].type == RT_STR ? LLVMBuildZExt(cx->b, v[k].v, cx->t_i64, "") : v[k].v;
    small = LLVMBuildAnd(cx->b, small, LLVMBuildICmp(cx->b, LLVMIntULT, kv[k], cg_i64(cx, RT_AGG_DIRECT2_W), ""), "");
    if (!cg_is_false(v[k].null)) small = LLVMBuildAnd(cx->b, small, LLVMBuildNot(cx->b, v[k].null, ""), "");
  }
  LLVMBasicBlockRef look = cg_block(cx, "agg.pair"), dhit = cg_block(cx, "agg.pair.hit"),
                    probe = cg_block(cx, "agg.pair.probe");
  LLVMBuildCondBr(cx->b, small, look, probe);
  cg_at(cx, look);
  LLVMValueRef at = LLVMBuildOr(cx->b, LLVMBuildShl(cx->b, kv[0], cg_i64(cx, RT_AGG_DIRECT2_BITS), ""), kv[1], "pair.at");
  LLVMValueRef e = cg_load_elem(cx, cx->t_i32, direct, at, "pair.entry");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntNE, e, cg_i32(cx, 0), ""), dhit, probe);
  cg_at(cx, dhit);
  *g = LLVMBuildSub(cx->b, LLVMBuildZExt(cx->b, e, cx->t_i64, ""), cg_i64(cx, 1), "pair.group");
  *hit = dhit;
  LLVMBuildBr(cx->b, done);
  cg_at(cx, probe);
}

LLVMValueRef cg_agg_group_tuple(cg_ctx *cx, LLVMValueRef t, LLVMValueRef direct, int nk, const cg_val *v) {
  LLVMBasicBlockRef done = cg_block(cx, "agg.tgroup");
  LLVMValueRef gdirect = NULL;
  LLVMBasicBlockRef fdirect = NULL;
  if (direct) pair_direct(cx, direct, v, done, &gdirect, &fdirect);
  LLVMValueRef bits[CG_AGG_INLINE_KEYS];
  LLVMValueRef h = tuple_hash(cx, nk, v, bits);
  LLVMValueRef slots = cg_load_field(cx, cx->st.aggtab, t, CG_AGGTAB_SLOTS, cx->t_ptr, "agg.slots");
  LLVMValueRef mask = cg_load_field(cx, cx->st.aggtab, t, CG_AGGTAB_MASK, cx->t_i64, "agg.mask");
  LLVMValueRef hashes = cg_load_field(cx, cx->st.aggtab, t, CG_AGGTAB_HASHES, cx->t_ptr, "agg.hashes");
  LLVMValueRef kb = cg_field_ptr(cx, cx->st.aggtab, t, CG_AGGTAB_KEYS, "");
  LLVMValueRef data = cg_load_field(cx, cx->st.rowbuf, kb, CG_ROWBUF_DATA, cx->t_ptr, "agg.keydata");
  LLVMValueRef valid = cg_load_field(cx, cx->st.rowbuf, kb, CG_ROWBUF_VALID, cx->t_ptr, "agg.keyvalid");
  cg_probe pr;
  cg_probe_open(cx, slots, LLVMBuildAnd(cx->b, h, mask, ""), mask, &pr);
  LLVMBasicBlockRef cmpk = cg_block(cx, "agg.tkeys");
  LLVMValueRef g = pr.g;
  LLVMValueRef hg = cg_load_elem(cx, cx->t_i64, hashes, g, "slot.hash");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, hg, h, ""), cmpk, pr.step);
  cg_at(cx, cmpk);
  LLVMValueRef eq = cg_i1(cx, 1);
  for (int k = 0; k < nk; k++) eq = LLVMBuildAnd(cx->b, eq, key_eq(cx, data, valid, k, g, v[k], bits[k]), "");
  LLVMBuildCondBr(cx->b, eq, done, pr.step);
  cg_probe_close(cx, &pr);

  cg_at(cx, pr.miss);
  LLVMValueRef vals = cg_slot(cx, LLVMArrayType(cx->t_i64, (unsigned)nk), "agg.keyvals");
  LLVMValueRef nulls = cg_slot(cx, LLVMArrayType(cx->t_i8, (unsigned)nk), "agg.keynull");
  for (int k = 0; k < nk; k++) {
    LLVMBuildStore(cx->b, bits[k], cg_elem_ptr(cx, cx->t_i64, vals, cg_i64(cx, k), ""));
    LLVMBuildStore(cx->b, LLVMBuildZExt(cx->b, v[k].null, cx->t_i8, ""),
                   cg_elem_ptr(cx, cx->t_i8, nulls, cg_i64(cx, k), ""));
  }
  LLVMValueRef gnew = cg_call(cx, "rt_aggtab_insert_tuple", (LLVMValueRef[]){t, vals, nulls, h}, 4, "group.new");
  cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntSLT, gnew, cg_i64(cx, 0), ""), CG_ERR_NOMEM, "agg.tinserted");
  LLVMBasicBlockRef made = cg_here(cx);
  LLVMBuildBr(cx->b, done);

  cg_at(cx, done);
  LLVMValueRef phi = LLVMBuildPhi(cx->b, cx->t_i64, "group");
  LLVMAddIncoming(phi, (LLVMValueRef[]){g, gnew}, (LLVMBasicBlockRef[]){cmpk, made}, 2);
  if (direct) LLVMAddIncoming(phi, &gdirect, &fdirect, 1);
  return phi;
}
