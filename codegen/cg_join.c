/*
 * cg_join.c — JOIN_PROBE inside the fused row loop (LANGUAGE.md §8; the
 * table is runtime/jointab.h, built by the driver before this segment).
 *
 * Per input row, after the steps before it:
 *
 *   key:        the input key's word (a NULL or NaN key matches nothing);
 *               when every key is a column an earlier probe serves (a
 *               second join keyed by the first one's relation), the head
 *               found is kept per row of that relation and read back
 *               for every later input row that matched the same row;
 *               one key is looked up inline — direct tables index
 *               slots[key - dmin], the others probe slots linearly from
 *               rt_hash_i64(key) & mask comparing keys[0][row] — several
 *               call rt_jointab_find; no key (a nested loop) starts at
 *               slots[0]
 *   join.chain: r = the next row of the chain (RT_JOIN_END: done); with a
 *               residual, the relation's columns are read at r and the
 *               rest of ON decides (false: next row of the chain)
 *   join.end:   LEFT / FULL without a match goes on once with the
 *               relation's NULL row (index nrows)
 *   join.body:  the rest of the segment and the sink, with the
 *               relation's columns read from its buffer at the match;
 *               a dropped row (cx->next_row) goes to join.next, the next
 *               row of the chain
 *
 * so a later probe nests its loop inside this one's body. RIGHT and FULL
 * mark matched[r]; the driver sends the unmatched rows through the
 * interpreter after the input ends. The relation's columns are read like
 * batch columns (cg_column), at cs->rowidx instead of the batch position.
 */
#include <stdio.h>
#include <stdlib.h>

#include "emit.h"

typedef struct cg_jprobe {
  const ir_op *op;
  LLVMValueRef tab, slots, mask, next, direct, dmin, drange, keys0, matched, nrows32, unique;
  LLVMValueRef nrows;
  /* Every key is a column an earlier probe serves: the chain's head is
   * kept per row of that probe's relation (rt_jointab_memo). */
  LLVMValueRef memo;
} cg_jprobe;

struct cg_joinstate {
  int n;
  cg_jprobe *p;
};

static bool served(const ir_op *bld, int c) {
  for (int j = 0; j < bld->join.ncarry; j++)
    if (bld->join.carry[j] == c) return true;
  return false;
}

/* The earlier probe of js whose relation serves every key of op, if any. */
static const cg_jprobe *keys_from(const cg_joinstate *js, const ir_op *op) {
  for (int i = 0; op->join.nkeys > 0 && i < js->n; i++) {
    bool all = true;
    for (int k = 0; k < op->join.nkeys && all; k++) all = served(js->p[i].op->join.build, op->join.in_keys[k]);
    if (all) return &js->p[i];
  }
  return NULL;
}

static int op_index(const ir_plan *p, const ir_op *op) {
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i] == op) return i;
  return -1;
}

cg_joinstate *cg_join_prologue(cg_ctx *cx, LLVMBasicBlockRef fallback) {
  const ir_segment *seg = cx->seg;
  cg_joinstate *js = cg_alloc(cx, sizeof *js);
  if (!js || !(js->p = cg_alloc(cx, ((size_t)seg->nsteps + 1) * sizeof *js->p))) return NULL;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead || op->kind != IR_JOIN_PROBE) continue;
    cg_jprobe *jp = &js->p[js->n++];
    jp->op = op;
    const ir_op *bld = op->join.build;
    LLVMValueRef args[2] = {cx->s, cg_i32(cx, op_index(cx->plan, bld))};
    LLVMValueRef t = cg_call(cx, "cg_rt_join_tab", args, 2, "join.tab");
    LLVMBasicBlockRef ok = cg_block(cx, "join.ready");
    LLVMBuildCondBr(cx->b, LLVMBuildIsNull(cx->b, t, ""), fallback, ok);
    cg_at(cx, ok);
    LLVMTypeRef jt = cx->st.jointab;
    jp->tab = t;
    jp->slots = cg_load_field(cx, jt, t, CG_JOINTAB_SLOTS, cx->t_ptr, "join.slots");
    jp->mask = cg_load_field(cx, jt, t, CG_JOINTAB_MASK, cx->t_i64, "join.mask");
    jp->next = cg_load_field(cx, jt, t, CG_JOINTAB_NEXT, cx->t_ptr, "join.next");
    jp->direct = LLVMBuildICmp(cx->b, LLVMIntNE, cg_load_field(cx, jt, t, CG_JOINTAB_DIRECT, cx->t_i32, ""),
                               cg_i32(cx, 0), "join.direct");
    jp->dmin = cg_load_field(cx, jt, t, CG_JOINTAB_DMIN, cx->t_i64, "join.dmin");
    jp->drange = cg_load_field(cx, jt, t, CG_JOINTAB_DRANGE, cx->t_i64, "join.drange");
    LLVMValueRef keys = cg_load_field(cx, jt, t, CG_JOINTAB_KEYS, cx->t_ptr, "");
    jp->keys0 = op->join.nkeys ? LLVMBuildLoad2(cx->b, cx->t_ptr, keys, "join.keys") : NULL;
    jp->matched = cg_load_field(cx, jt, t, CG_JOINTAB_MATCHED, cx->t_ptr, "join.matched");
    jp->unique = LLVMBuildICmp(cx->b, LLVMIntNE, cg_load_field(cx, jt, t, CG_JOINTAB_UNIQUE, cx->t_i32, ""),
                               cg_i32(cx, 0), "join.unique");
    LLVMValueRef nrows = cg_load_field(cx, jt, t, CG_JOINTAB_NROWS, cx->t_i64, "join.nrows");
    jp->nrows = nrows;
    jp->nrows32 = LLVMBuildTrunc(cx->b, nrows, cx->t_i32, "");
    const cg_jprobe *from = keys_from(js, op);
    if (from) {   /* its relation's rows and the NULL row after them */
      LLVMValueRef margs[2] = {t, from->nrows};
      jp->memo = cg_call(cx, "rt_jointab_memo", margs, 2, "join.memo");
      LLVMBasicBlockRef have = cg_block(cx, "join.memo.ok");
      LLVMBuildCondBr(cx->b, LLVMBuildIsNull(cx->b, jp->memo, ""), fallback, have);
      cg_at(cx, have);
    }
    /* The relation's columns: buffer column j is carry[j]. */
    LLVMValueRef buf = cg_load_field(cx, jt, t, CG_JOINTAB_BUF, cx->t_ptr, "join.buf");
    LLVMValueRef datas = cg_load_field(cx, cx->st.rowbuf, buf, CG_ROWBUF_DATA, cx->t_ptr, "");
    LLVMValueRef valids = cg_load_field(cx, cx->st.rowbuf, buf, CG_ROWBUF_VALID, cx->t_ptr, "");
    /* the aggregate's single key, when it is one of these columns */
    const ir_op *sink = seg->sink;
    int gkey = sink->kind == IR_AGGREGATE && sink->agg.ngroup == 1 ? sink->agg.group_cols[0] : -1;
    for (int j = 0; j < bld->join.ncarry; j++) {
      int c = bld->join.carry[j];
      cg_colsrc *cs = &cx->src[c];
      if (c == gkey) {
        cs->gcache = cg_call(cx, "rt_jointab_gcache", &t, 1, "join.gcache");
        LLVMBasicBlockRef have = cg_block(cx, "join.gcache.ok");
        LLVMBuildCondBr(cx->b, LLVMBuildIsNull(cx->b, cs->gcache, ""), fallback, have);
        cg_at(cx, have);
      }
      char nm[96], buf2[128];
      cg_colname(cx, c, nm, sizeof nm);
      snprintf(buf2, sizeof buf2, "%s.data", nm);
      cs->data = cg_load_elem(cx, cx->t_ptr, datas, cg_i64(cx, j), buf2);
      snprintf(buf2, sizeof buf2, "%s.valid", nm);
      cs->valid = cg_load_elem(cx, cx->t_ptr, valids, cg_i64(cx, j), buf2);
      cs->wmask = cg_i64(cx, -1);
      cs->vtype = rt_store_type(cx->plan->cols[c].type);
      cs->nullable = cx->plan->cols[c].nullable;
    }
  }
  return js;
}

/* The key word of a value: integers as they are, a string's id, a
 * double's bits with -0.0 as 0.0 (NaN: no match, added to *null). */
static LLVMValueRef key_word(cg_ctx *cx, cg_val v, LLVMValueRef *null) {
  if (v.type == RT_STR) return LLVMBuildZExt(cx->b, v.v, cx->t_i64, "");
  if (v.type != RT_F64) return v.v;
  LLVMValueRef nan = LLVMBuildFCmp(cx->b, LLVMRealUNO, v.v, v.v, "");
  *null = cg_is_false(*null) ? nan : LLVMBuildOr(cx->b, *null, nan, "");
  LLVMValueRef z = LLVMBuildFAdd(cx->b, v.v, cg_f64(cx, 0.0), "");
  return LLVMBuildBitCast(cx->b, z, cx->t_i64, "");
}

static LLVMValueRef hash64(cg_ctx *cx, LLVMValueRef h) {
  static const uint64_t mul[2] = {0xff51afd7ed558ccdull, 0xc4ceb9fe1a85ec53ull};
  for (int r = 0; r < 2; r++) {
    h = LLVMBuildXor(cx->b, h, LLVMBuildLShr(cx->b, h, cg_i64(cx, 33), ""), "");
    h = LLVMBuildMul(cx->b, h, LLVMConstInt(cx->t_i64, mul[r], 0), "");
  }
  return LLVMBuildXor(cx->b, h, LLVMBuildLShr(cx->b, h, cg_i64(cx, 33), ""), "join.hash");
}

/* The head row of key word w's chain (one key), RT_JOIN_END when none:
 * a slot entry is row + 1, so entry - 1 is the row and 0 - 1 the end. */
static LLVMValueRef lookup1(cg_ctx *cx, const cg_jprobe *jp, LLVMValueRef w) {
  LLVMBasicBlockRef done = cg_block(cx, "join.found");
  LLVMBasicBlockRef dir = cg_block(cx, "join.direct"), hash = cg_block(cx, "join.hash");
  LLVMBuildCondBr(cx->b, jp->direct, dir, hash);
  LLVMValueRef es[2];
  LLVMBasicBlockRef from[2];
  /* direct: slots[w - dmin] when in range */
  cg_at(cx, dir);
  LLVMValueRef i = LLVMBuildSub(cx->b, w, jp->dmin, "");
  LLVMBasicBlockRef din = cg_block(cx, "join.direct.in");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntULT, i, jp->drange, ""), din, done);
  es[0] = cg_i32(cx, 0);
  from[0] = dir;
  cg_at(cx, din);
  es[1] = cg_load_elem(cx, cx->t_i32, jp->slots, i, "join.entry");
  from[1] = din;
  LLVMBuildBr(cx->b, done);
  /* hashed: linear probing */
  cg_at(cx, hash);
  LLVMValueRef start = LLVMBuildAnd(cx->b, hash64(cx, w), jp->mask, "");
  LLVMBasicBlockRef probe = cg_block(cx, "join.probe"), cmp = cg_block(cx, "join.cmp");
  LLVMBasicBlockRef step = cg_block(cx, "join.step");
  LLVMBuildBr(cx->b, probe);
  cg_at(cx, probe);
  LLVMValueRef slot = LLVMBuildPhi(cx->b, cx->t_i64, "join.slot");
  LLVMValueRef e = cg_load_elem(cx, cx->t_i32, jp->slots, slot, "join.entry");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, e, cg_i32(cx, 0), ""), done, cmp);
  cg_at(cx, cmp);
  LLVMValueRef row = LLVMBuildZExt(cx->b, LLVMBuildSub(cx->b, e, cg_i32(cx, 1), ""), cx->t_i64, "");
  LLVMValueRef have = cg_load_elem(cx, cx->t_i64, jp->keys0, row, "join.key");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, have, w, ""), done, step);
  cg_at(cx, step);
  LLVMValueRef nslot = LLVMBuildAnd(cx->b, LLVMBuildAdd(cx->b, slot, cg_i64(cx, 1), ""), jp->mask, "");
  LLVMBuildBr(cx->b, probe);
  {
    LLVMValueRef vs[2] = {start, nslot};
    LLVMBasicBlockRef bs[2] = {hash, step};
    LLVMAddIncoming(slot, vs, bs, 2);
  }
  cg_at(cx, done);
  LLVMValueRef phi = LLVMBuildPhi(cx->b, cx->t_i32, "join.head1");
  LLVMValueRef vs[4] = {es[0], es[1], e, e};
  LLVMBasicBlockRef bs[4] = {from[0], from[1], probe, cmp};
  LLVMAddIncoming(phi, vs, bs, 4);
  return LLVMBuildSub(cx->b, phi, cg_i32(cx, 1), "join.head");
}

/* Points the relation's columns at row r (forgetting values read at
 * another row). */
static void at_row(cg_ctx *cx, const ir_op *bld, LLVMValueRef r) {
  for (int j = 0; j < bld->join.ncarry; j++) {
    cx->src[bld->join.carry[j]].rowidx = r;
    cx->have[bld->join.carry[j]] = false;
  }
}

/* Loads the input columns e reads (so they dominate every match). */
static void preload_input(cg_ctx *cx, const ir_op *bld, const ir_expr *e) {
  if (!e) return;
  if (e->kind == IX_COL && !served(bld, e->col)) cg_column(cx, e->col);
  for (int i = 0; i < e->nargs; i++) preload_input(cx, bld, e->args[i]);
}

void cg_join_step(cg_ctx *cx, cg_joinstate *js, const ir_op *op) {
  cg_jprobe *jp = NULL;
  for (int i = 0; i < js->n && !jp; i++)
    if (js->p[i].op == op) jp = &js->p[i];
  if (!jp) {
    rt_errorf(cx->err, op->pos, "JIT: a join without its table");
    return;
  }
  const ir_op *bld = op->join.build;
  int nk = op->join.nkeys;
  bool left = op->join.kind == RT_JOIN_LEFT || op->join.kind == RT_JOIN_FULL;
  bool mark = op->join.kind == RT_JOIN_RIGHT || op->join.kind == RT_JOIN_FULL;
  LLVMBasicBlockRef outer = cx->next_row;
  LLVMValueRef rslot = cg_slot(cx, cx->t_i32, "join.r.slot");
  LLVMValueRef bslot = cg_slot(cx, cx->t_i32, "join.rb.slot");
  LLVMValueRef mslot = left ? cg_slot(cx, cx->t_i1, "join.matched.slot") : NULL;
  if (mslot) LLVMBuildStore(cx->b, cg_i1(cx, 0), mslot);
  preload_input(cx, bld, op->join.residual);

  /* the chain's head */
  LLVMValueRef head;
  LLVMBasicBlockRef chain = cg_block(cx, "join.chain");
  if (nk == 0) {
    LLVMValueRef e = cg_load_elem(cx, cx->t_i32, jp->slots, cg_i64(cx, 0), "join.entry");
    head = LLVMBuildSub(cx->b, e, cg_i32(cx, 1), "join.head");
    LLVMBuildStore(cx->b, head, rslot);
    LLVMBuildBr(cx->b, chain);
  } else {
    /* The keys are read before the memo's branch: cg_column keeps what it
     * loads for later steps, so a load made only on the memo's miss path
     * would not dominate those uses (invalid IR). */
    LLVMValueRef null = cg_i1(cx, 0);
    LLVMValueRef words[nk];
    for (int k = 0; k < nk; k++) {
      cg_val v = cg_column(cx, op->join.in_keys[k]);
      if (!cg_is_false(v.null)) null = cg_is_false(null) ? v.null : LLVMBuildOr(cx->b, null, v.null, "");
      words[k] = key_word(cx, v, &null);
    }
    /* memoized: the head found for this row of the earlier relation */
    LLVMValueRef mp = NULL;
    if (jp->memo) {
      LLVMValueRef r1 = cx->src[op->join.in_keys[0]].rowidx;
      mp = cg_elem_ptr(cx, cx->t_i32, jp->memo, LLVMBuildZExt(cx->b, r1, cx->t_i64, ""), "join.memo.at");
      LLVMValueRef m = LLVMBuildLoad2(cx->b, cx->t_i32, mp, "join.memo.head");
      LLVMBasicBlockRef known = cg_block(cx, "join.memo.known"), fresh = cg_block(cx, "join.memo.fresh");
      LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntNE, m, cg_i32(cx, (int)RT_JOIN_UNKNOWN), ""),
                      known, fresh);
      cg_at(cx, known);
      LLVMBuildStore(cx->b, m, rslot);
      LLVMBuildBr(cx->b, chain);
      cg_at(cx, fresh);
    }
    LLVMBasicBlockRef look = cg_block(cx, "join.lookup"), nokey = cg_block(cx, "join.nokey");
    LLVMBuildCondBr(cx->b, null, nokey, look);
    cg_at(cx, nokey);
    LLVMBuildStore(cx->b, cg_i32(cx, -1), rslot);
    if (mp) LLVMBuildStore(cx->b, cg_i32(cx, -1), mp);
    LLVMBuildBr(cx->b, chain);
    cg_at(cx, look);
    if (nk == 1) {
      head = lookup1(cx, jp, words[0]);
    } else {
      LLVMValueRef arr = cg_slot(cx, LLVMArrayType(cx->t_i64, (unsigned)nk), "join.words");
      for (int k = 0; k < nk; k++)
        LLVMBuildStore(cx->b, words[k], cg_elem_ptr(cx, cx->t_i64, arr, cg_i64(cx, k), ""));
      LLVMValueRef args[2] = {jp->tab, arr};
      head = cg_call(cx, "rt_jointab_find", args, 2, "join.head");
    }
    LLVMBuildStore(cx->b, head, rslot);
    if (mp) LLVMBuildStore(cx->b, head, mp);
    LLVMBuildBr(cx->b, chain);
  }

  /* the chain: one candidate row at a time */
  LLVMBasicBlockRef cand = cg_block(cx, "join.cand"), end = cg_block(cx, "join.end");
  LLVMBasicBlockRef body = cg_block(cx, "join.body"), next = cg_block(cx, "join.next");
  cg_at(cx, chain);
  LLVMValueRef r = LLVMBuildLoad2(cx->b, cx->t_i32, rslot, "join.r");
  LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntEQ, r, cg_i32(cx, -1), ""), end, cand);
  cg_at(cx, cand);
  if (op->join.residual) {
    at_row(cx, bld, r);
    cg_preload(cx, op->join.residual);
    cg_val v = cg_expr(cx, op->join.residual, "join.on");
    LLVMValueRef pass = cg_truth(cx, v, "");
    LLVMBasicBlockRef skip = cg_block(cx, "join.skip"), hit = cg_block(cx, "join.hit");
    LLVMBuildCondBr(cx->b, pass, hit, skip);
    cg_at(cx, skip);
    LLVMValueRef rn = cg_load_elem(cx, cx->t_i32, jp->next, LLVMBuildZExt(cx->b, r, cx->t_i64, ""), "");
    LLVMBuildStore(cx->b, rn, rslot);
    LLVMBuildBr(cx->b, chain);
    cg_at(cx, hit);
  }
  if (mslot) LLVMBuildStore(cx->b, cg_i1(cx, 1), mslot);
  if (mark)
    LLVMBuildStore(cx->b, LLVMConstInt(cx->t_i8, 1, 0),
                   cg_elem_ptr(cx, cx->t_i8, jp->matched, LLVMBuildZExt(cx->b, r, cx->t_i64, ""), ""));
  LLVMBuildStore(cx->b, r, bslot);
  LLVMBuildBr(cx->b, body);

  /* the chain ended: LEFT / FULL without a match reads the NULL row */
  cg_at(cx, end);
  if (mslot) {
    LLVMBasicBlockRef none = cg_block(cx, "join.unmatched");
    LLVMBuildCondBr(cx->b, LLVMBuildLoad2(cx->b, cx->t_i1, mslot, ""), outer, none);
    cg_at(cx, none);
    LLVMBuildStore(cx->b, jp->nrows32, bslot);
    LLVMBuildBr(cx->b, body);
  } else {
    LLVMBuildBr(cx->b, outer);
  }

  /* the next match: none after the NULL row, nor (without a residual to
   * skip rows) when every key has one row */
  cg_at(cx, next);
  LLVMValueRef rb = LLVMBuildLoad2(cx->b, cx->t_i32, bslot, "");
  LLVMBasicBlockRef more = cg_block(cx, "join.more");
  LLVMValueRef last = op->join.residual ? cg_i1(cx, 0) : jp->unique;
  if (left) last = LLVMBuildOr(cx->b, last, LLVMBuildICmp(cx->b, LLVMIntEQ, rb, jp->nrows32, ""), "");
  if (cg_is_false(last)) LLVMBuildBr(cx->b, more);
  else LLVMBuildCondBr(cx->b, last, outer, more);
  cg_at(cx, more);
  LLVMValueRef rn = cg_load_elem(cx, cx->t_i32, jp->next, LLVMBuildZExt(cx->b, rb, cx->t_i64, ""), "");
  LLVMBuildStore(cx->b, rn, rslot);
  LLVMBuildBr(cx->b, chain);

  cg_at(cx, body);
  at_row(cx, bld, LLVMBuildLoad2(cx->b, cx->t_i32, bslot, "join.row"));
  cx->next_row = next;
  cx->joined = true;
}
