/*
 * cg_vagg.c — the vector loop of an AGGREGATE without GROUP BY.
 *
 * A segment whose steps are only WHERE and EXTEND over numbers and whose
 * aggregates are COUNT, integer SUM/MIN/MAX, or double SUM/AVG first runs
 * each batch (without an active list) through a straight-line loop
 * (cg_segment.c, cx->vmode): every step for every row, a dropped row only
 * clearing `pass`, a failing row setting `fail`, the aggregates kept in
 * registers:
 *
 *   COUNT          n += pass [and not NULL]
 *   integer SUM    s += pass ? x : 0 (wrapping), and lo/hi = min/max of
 *                  the counted x: the loop has no overflow test per row
 *   MIN / MAX      lo = min(lo, pass ? x : INT64_MAX), hi likewise
 *   double SUM/AVG f = pass ? f + x : f, from the table's own f, in row
 *                  order: the interpreter's additions, so the same bits
 *
 * LLVM's loop vectorizer takes such a loop (jit.c adds it to the pipeline
 * for modules that have one) unless a double sum keeps it in order. After
 * the loop, the batch is committed to the table only when no row failed
 * and no integer SUM can have overflowed at any row: its running sums stay
 * within [S0 + n*min(lo,0), S0 + n*max(hi,0)], checked in 128 bits.
 * Otherwise nothing was written and the batch is run again by the row
 * loop, which reports the error as it always does. So results and errors
 * are the row loop's, bit for bit.
 */
#include <stdlib.h>

#include "cg_aggint.h"

/* An expression the straight-line loop can evaluate: no calls with side
 * effects, no blocks (CASE, COALESCE, strings go through the runtime). */
static bool vx_ok(const ir_expr *e) {
  switch (e->kind) {
  case IX_CONST: case IX_COL: case IX_PARAM: return true;
  case IX_ISNULL: case IX_NOTNULL: return vx_ok(e->args[0]);
  case IX_TOF64: case IX_NEG: case IX_BITNOT: case IX_NOT: case IX_ADD: case IX_SUB: case IX_MUL:
  case IX_DIV: case IX_MOD: case IX_BITAND: case IX_BITOR: case IX_EQ: case IX_NE: case IX_LT:
  case IX_LE: case IX_GT: case IX_GE: case IX_IS: case IX_ISNOT: case IX_AND: case IX_OR: case IX_IN:
    break;
  default: return false;
  }
  for (int i = 0; i < e->nargs; i++)
    if (e->args[i]->type == RT_STR || !vx_ok(e->args[i])) return false;
  return true;
}

bool cg_vagg_wanted(const cg_ctx *cx, const ir_segment *seg) {
  const ir_op *sink = seg->sink;
  if (sink->kind != IR_AGGREGATE || sink->agg.ngroup != 0 || cx->general_sel) return false;
  for (int k = 0; k < seg->nsteps; k++) {
    const ir_op *op = seg->steps[k];
    if (op->dead) continue;
    if (op->kind == IR_FILTER && vx_ok(op->filter.pred)) continue;
    if (op->kind == IR_COMPUTE && vx_ok(op->compute.expr)) continue;
    return false;
  }
  for (int k = 0; k < sink->agg.naggs; k++) {
    const ir_agg *ag = &sink->agg.aggs[k];
    if (!ag->live) continue;
    rt_type in = rt_store_type(ag->arg_type);
    switch (ag->kind) {
    case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: continue;
    case RT_AGG_SUM: case RT_AGG_AVG:
      if (in == RT_STR) return false;
      continue;
    case RT_AGG_MIN: case RT_AGG_MAX:
      if (in == RT_STR || in == RT_F64) return false;   /* double MIN/MAX: ties of ±0 keep the first */
      continue;
    case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN:
    case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST:
    case RT_AGG_LAST:
      return false;
    }
  }
  return true;
}

/* One aggregate's registers (allocas, promoted by sroa). */
typedef struct vacc {
  const cg_aggslot *s;
  bool f;                          /* double sum (SUM of doubles, AVG) */
  LLVMValueRef cnt, sum, lo, hi;   /* i64 counted rows; sum; min/max */
} vacc;

struct cg_vagg {
  cg_aggstate *a;
  vacc *acc;
};

static void add_to(cg_ctx *cx, LLVMValueRef slot, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef old = LLVMBuildLoad2(cx->b, t, slot, "");
  LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, old, x, ""), slot);
}

static LLVMValueRef smin(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, a, b, ""), a, b, "");
}

static LLVMValueRef smax(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGT, a, b, ""), a, b, "");
}

cg_vagg *cg_vagg_begin(cg_ctx *cx, cg_aggstate *a) {
  cg_vagg *v = cg_alloc(cx, sizeof *v);
  if (!v || !(v->acc = cg_alloc(cx, ((size_t)a->naggs + 1) * sizeof *v->acc))) return NULL;
  v->a = a;
  a->aggs_ptr = cg_load_field(cx, cx->st.aggtab, a->t, CG_AGGTAB_AGGS, cx->t_ptr, "agg.aggs");
  for (int j = 0; j < a->naggs; j++) {
    vacc *c = &v->acc[j];
    c->s = &a->aggs[j];
    c->f = c->s->kind == RT_AGG_AVG || (c->s->kind == RT_AGG_SUM && c->s->in == RT_F64);
    c->cnt = cg_slot(cx, cx->t_i64, "v.cnt");
    LLVMBuildStore(cx->b, cg_i64(cx, 0), c->cnt);
    c->sum = cg_slot(cx, c->f ? cx->t_f64 : cx->t_i64, "v.sum");
    if (c->f) {
      /* in order from the table's own sum (group 0 exists: ensure_one) */
      LLVMValueRef f0 = LLVMBuildLoad2(cx->b, cx->t_f64, cg_agg_array(cx, a, c->s, CG_AGG_F), "agg.f0");
      LLVMBuildStore(cx->b, f0, c->sum);
    } else {
      LLVMBuildStore(cx->b, cg_i64(cx, 0), c->sum);
    }
    c->lo = cg_slot(cx, cx->t_i64, "v.lo");
    c->hi = cg_slot(cx, cx->t_i64, "v.hi");
    LLVMBuildStore(cx->b, cg_i64(cx, INT64_MAX), c->lo);
    LLVMBuildStore(cx->b, cg_i64(cx, INT64_MIN), c->hi);
  }
  return v;
}

void cg_vagg_row(cg_ctx *cx, cg_vagg *v) {
  LLVMValueRef pass = cx->vpass;
  for (int j = 0; j < v->a->naggs; j++) {
    vacc *c = &v->acc[j];
    const cg_aggslot *s = c->s;
    if (s->kind == RT_AGG_COUNT_STAR) {
      add_to(cx, c->cnt, LLVMBuildZExt(cx->b, pass, cx->t_i64, ""));
      continue;
    }
    cg_val x = cg_column(cx, s->ag->arg_col);
    LLVMValueRef counted = cg_is_false(x.null) ? pass : LLVMBuildAnd(cx->b, pass, LLVMBuildNot(cx->b, x.null, ""), "");
    add_to(cx, c->cnt, LLVMBuildZExt(cx->b, counted, cx->t_i64, ""));
    if (s->kind == RT_AGG_COUNT) continue;
    if (c->f) {
      /* the row loop adds 0.0 for a NULL (as the interpreter does) */
      x = cg_coerce(cx, x, RT_F64);
      LLVMValueRef xv = cg_is_false(x.null) ? x.v : LLVMBuildSelect(cx->b, x.null, cg_f64(cx, 0), x.v, "");
      LLVMValueRef old = LLVMBuildLoad2(cx->b, cx->t_f64, c->sum, "");
      LLVMValueRef sum = LLVMBuildFAdd(cx->b, old, xv, "");
      LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, pass, sum, old, ""), c->sum);
      continue;
    }
    x = cg_coerce(cx, x, s->in);
    LLVMValueRef xv = x.v;
    if (s->kind == RT_AGG_SUM) add_to(cx, c->sum, LLVMBuildSelect(cx->b, counted, xv, cg_i64(cx, 0), ""));
    if (s->kind != RT_AGG_MAX) {
      LLVMValueRef lo = LLVMBuildLoad2(cx->b, cx->t_i64, c->lo, "");
      LLVMBuildStore(cx->b, smin(cx, lo, LLVMBuildSelect(cx->b, counted, xv, cg_i64(cx, INT64_MAX), "")), c->lo);
    }
    if (s->kind != RT_AGG_MIN) {
      LLVMValueRef hi = LLVMBuildLoad2(cx->b, cx->t_i64, c->hi, "");
      LLVMBuildStore(cx->b, smax(cx, hi, LLVMBuildSelect(cx->b, counted, xv, cg_i64(cx, INT64_MIN), "")), c->hi);
    }
  }
}

/* has[0] |= any */
static void or_has(cg_ctx *cx, cg_aggstate *a, const cg_aggslot *s, LLVMValueRef any) {
  LLVMValueRef hp = cg_agg_array(cx, a, s, CG_AGG_HAS);
  LLVMValueRef old = LLVMBuildLoad2(cx->b, cx->t_i8, hp, "");
  LLVMBuildStore(cx->b, LLVMBuildOr(cx->b, old, LLVMBuildZExt(cx->b, any, cx->t_i8, ""), ""), hp);
}

void cg_vagg_end(cg_ctx *cx, cg_vagg *v, LLVMBasicBlockRef rows) {
  cg_aggstate *a = v->a;
  LLVMTypeRef i128 = LLVMInt128TypeInContext(cx->c);
  LLVMValueRef ok = LLVMBuildNot(cx->b, LLVMBuildLoad2(cx->b, cx->t_i1, cx->vfail, "v.fail"), "");
  LLVMValueRef lim_lo = LLVMConstInt(i128, (unsigned long long)INT64_MIN, 1);
  LLVMValueRef lim_hi = LLVMConstInt(i128, (unsigned long long)INT64_MAX, 1);
  LLVMValueRef *s0 = cg_alloc(cx, ((size_t)a->naggs + 1) * sizeof *s0);
  if (!s0) return;   /* out of memory: error set */
  for (int j = 0; j < a->naggs; j++) {
    vacc *c = &v->acc[j];
    if (c->s->kind != RT_AGG_SUM || c->f) continue;
    /* every running sum of the batch lies in [S0 + n*min(lo,0), S0 + n*max(hi,0)] */
    s0[j] = LLVMBuildLoad2(cx->b, cx->t_i64, cg_agg_array(cx, a, c->s, CG_AGG_I), "agg.s0");
    LLVMValueRef n = LLVMBuildZExt(cx->b, LLVMBuildLoad2(cx->b, cx->t_i64, c->cnt, ""), i128, "");
    LLVMValueRef base = LLVMBuildSExt(cx->b, s0[j], i128, "");
    LLVMValueRef lo = smin(cx, LLVMBuildLoad2(cx->b, cx->t_i64, c->lo, ""), cg_i64(cx, 0));
    LLVMValueRef hi = smax(cx, LLVMBuildLoad2(cx->b, cx->t_i64, c->hi, ""), cg_i64(cx, 0));
    LLVMValueRef low = LLVMBuildAdd(cx->b, base, LLVMBuildMul(cx->b, n, LLVMBuildSExt(cx->b, lo, i128, ""), ""), "");
    LLVMValueRef high = LLVMBuildAdd(cx->b, base, LLVMBuildMul(cx->b, n, LLVMBuildSExt(cx->b, hi, i128, ""), ""), "");
    ok = LLVMBuildAnd(cx->b, ok, LLVMBuildICmp(cx->b, LLVMIntSGE, low, lim_lo, ""), "");
    ok = LLVMBuildAnd(cx->b, ok, LLVMBuildICmp(cx->b, LLVMIntSLE, high, lim_hi, ""), "v.exact");
  }
  LLVMBasicBlockRef commit = cg_block(cx, "vec.commit");
  LLVMBuildCondBr(cx->b, ok, commit, rows);
  cg_at(cx, commit);
  for (int j = 0; j < a->naggs; j++) {
    vacc *c = &v->acc[j];
    const cg_aggslot *s = c->s;
    LLVMValueRef cnt = LLVMBuildLoad2(cx->b, cx->t_i64, c->cnt, "");
    LLVMValueRef any = LLVMBuildICmp(cx->b, LLVMIntNE, cnt, cg_i64(cx, 0), "");
    LLVMValueRef ip = s->kind == RT_AGG_AVG || c->f ? NULL : cg_agg_array(cx, a, s, CG_AGG_I);
    switch (s->kind) {
    case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: {
      LLVMValueRef old = LLVMBuildLoad2(cx->b, cx->t_i64, ip, "");
      LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, old, cnt, ""), ip);
      break;
    }
    case RT_AGG_SUM: case RT_AGG_AVG:
      if (c->f) {
        LLVMBuildStore(cx->b, LLVMBuildLoad2(cx->b, cx->t_f64, c->sum, ""), cg_agg_array(cx, a, s, CG_AGG_F));
        if (s->kind == RT_AGG_AVG) {
          LLVMValueRef np = cg_agg_array(cx, a, s, CG_AGG_N);
          LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, LLVMBuildLoad2(cx->b, cx->t_i64, np, ""), cnt, ""), np);
        }
      } else {
        LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, s0[j], LLVMBuildLoad2(cx->b, cx->t_i64, c->sum, ""), ""), ip);
      }
      or_has(cx, a, s, any);
      break;
    case RT_AGG_MIN: case RT_AGG_MAX: {
      bool mn = s->kind == RT_AGG_MIN;
      LLVMValueRef got = LLVMBuildLoad2(cx->b, cx->t_i64, mn ? c->lo : c->hi, "");
      LLVMValueRef cur = LLVMBuildLoad2(cx->b, cx->t_i64, ip, "");
      LLVMValueRef hp = cg_agg_array(cx, a, s, CG_AGG_HAS);
      LLVMValueRef has = LLVMBuildICmp(cx->b, LLVMIntNE, LLVMBuildLoad2(cx->b, cx->t_i8, hp, ""),
                                       LLVMConstInt(cx->t_i8, 0, 0), "");
      LLVMValueRef best = mn ? smin(cx, cur, got) : smax(cx, cur, got);
      LLVMValueRef nv = LLVMBuildSelect(cx->b, has, best, got, "");
      LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, any, nv, cur, ""), ip);
      or_has(cx, a, s, any);
      break;
    }
    case RT_AGG_ANY_VALUE: case RT_AGG_COUNT_DISTINCT: case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN:
    case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN: case RT_AGG_PERCENTILE: case RT_AGG_FIRST:
    case RT_AGG_LAST:
      break;   /* not taken (cg_vagg_wanted) */
    }
  }
}
