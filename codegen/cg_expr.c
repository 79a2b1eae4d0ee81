/*
 * cg_expr.c — scalar expressions (ir/exprs.def) for one row, as LLVM values.
 *
 * Semantics are SQLite's, as LANGUAGE.md §5 and the interpreter
 * (interp/vm_expr.c) implement them: NULL propagates through operators;
 * integer + - * and negation are checked (llvm.s*.with.overflow → the row
 * fails with "integer overflow"); division and modulo by zero give NULL and
 * INT64_MIN / -1 overflows; AND/OR are three-valued and short-circuit;
 * CASE and COALESCE evaluate lazily; IN and scalar MIN/MAX evaluate every
 * argument. String work calls the same runtime/strfn.h helpers the
 * interpreter calls, and only for non-NULL arguments.
 *
 * Pure arithmetic is emitted branch-free (selects), so a NULL row costs the
 * same as any other and loops stay easy for LLVM to optimize.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/strfn.h"
#include "emit.h"

/* ---- columns and parameters --------------------------------------------- */

/* Row index of the current position in a column: through its selection
 * when the segment may see selections. */
static LLVMValueRef cg_row_index(cg_ctx *cx, cg_colsrc *cs) {
  if (cs->rowidx) return cs->rowidx;
  if (!cx->general_sel) return cx->pos;
  LLVMBasicBlockRef from = cg_here(cx);
  LLVMBasicBlockRef via = cg_block(cx, "sel.load"), join = cg_block(cx, "sel.join");
  LLVMValueRef has = LLVMBuildIsNotNull(cx->b, cs->sel, "");
  LLVMBuildCondBr(cx->b, has, via, join);
  cg_at(cx, via);
  LLVMValueRef r = cg_load_elem(cx, cx->t_i32, cs->sel, LLVMBuildZExt(cx->b, cx->pos, cx->t_i64, ""), "");
  LLVMBuildBr(cx->b, join);
  cg_at(cx, join);
  LLVMValueRef phi = cg_phi2_raw(cx, cx->t_i32, cx->pos, from, r, via, "row");
  return phi;
}

cg_val cg_column(cg_ctx *cx, int c) {
  if (cx->have[c]) return cx->row[c];
  cg_colsrc *cs = &cx->src[c];
  char nm[96], nn[112];
  cg_colname(cx, c, nm, sizeof nm);
  snprintf(nn, sizeof nn, "%s.null", nm);
  LLVMValueRef r = cg_row_index(cx, cs);
  LLVMValueRef r64 = LLVMBuildZExt(cx->b, r, cx->t_i64, "");
  LLVMValueRef v;
  rt_type t = cs->vtype;
  switch (t) {
  case RT_ID: v = LLVMBuildAdd(cx->b, cs->base, r64, nm); break;
  case RT_U32: v = LLVMBuildZExt(cx->b, cg_load_elem(cx, cx->t_i32, cs->data, r64, ""), cx->t_i64, nm); break;
  case RT_I32: v = LLVMBuildSExt(cx->b, cg_load_elem(cx, cx->t_i32, cs->data, r64, ""), cx->t_i64, nm); break;
  case RT_F64: v = cg_load_elem(cx, cx->t_f64, cs->data, r64, nm); break;
  case RT_STR: v = cg_load_elem(cx, cx->t_i32, cs->data, r64, nm); break;
  default: v = cg_load_elem(cx, cx->t_i64, cs->data, r64, nm); break;
  }
  LLVMValueRef null = cg_i1(cx, 0);
  if (cs->nullable) {
    /* cs->valid points at a word of ones when the view has no bits, and
     * the word index is masked to 0 then, so this is one load either way. */
    LLVMValueRef w = LLVMBuildAnd(cx->b, LLVMBuildLShr(cx->b, r64, cg_i64(cx, 6), ""), cs->wmask, "");
    LLVMValueRef word = cg_load_elem(cx, cx->t_i64, cs->valid, w, "");
    LLVMValueRef bit = LLVMBuildLShr(cx->b, word, LLVMBuildAnd(cx->b, r64, cg_i64(cx, 63), ""), "");
    null = LLVMBuildNot(cx->b, LLVMBuildTrunc(cx->b, bit, cx->t_i1, ""), nn);
    /* The value stored under a NULL is unspecified; string ids must be
     * valid before they reach the pool. */
    if (t == RT_STR) v = LLVMBuildSelect(cx->b, null, cg_i32(cx, 0), v, "");
  }
  cg_val out = {v, null, t == RT_F64 ? RT_F64 : t == RT_STR ? RT_STR : cx->plan->cols[c].type};
  if (out.type != RT_F64 && out.type != RT_STR && out.type != RT_BOOL) out.type = RT_I64;
  cx->row[c] = out;
  cx->have[c] = true;
  return out;
}

void cg_preload(cg_ctx *cx, const ir_expr *e) {
  if (!e) return;
  if (e->kind == IX_COL && !cx->have[e->col]) cg_column(cx, e->col);
  for (int i = 0; i < e->nargs; i++) cg_preload(cx, e->args[i]);
}

/* ---- helpers ------------------------------------------------------------ */

static LLVMValueRef cg_or(cg_ctx *cx, LLVMValueRef a, LLVMValueRef b) {
  if (cg_is_false(a)) return b;
  if (cg_is_false(b)) return a;
  return LLVMBuildOr(cx->b, a, b, "");
}

static LLVMValueRef cg_not(cg_ctx *cx, LLVMValueRef a) { return LLVMBuildNot(cx->b, a, ""); }

static LLVMValueRef cg_bool64(cg_ctx *cx, LLVMValueRef i1, const char *name) {
  return LLVMBuildZExt(cx->b, i1, cx->t_i64, name);
}

/* An integer against a double (exactly one of a, b is RT_F64, neither a
 * string): they compare by value, never through a double. */
static bool cg_mixed(cg_val a, cg_val b) {
  return (a.type == RT_F64) != (b.type == RT_F64) && a.type != RT_STR && b.type != RT_STR &&
         a.type != RT_NULLT && b.type != RT_NULLT;
}

/* sign(i - r) by value as i32 -1/0/1: rt_cmp_i64_f64's steps, branch-free.
 * r outside [-2^63, 2^63) decides alone; else the truncated r against i;
 * when those are equal, (double)i against r is exact. */
static LLVMValueRef cg_cmp_i64_f64(cg_ctx *cx, LLVMValueRef i, LLVMValueRef r) {
  LLVMTypeRef tys[2] = {cx->t_i64, cx->t_f64};
  LLVMValueRef y = cg_intrinsic(cx, "llvm.fptosi.sat", tys, 2, &r, 1, "");
  LLVMValueRef di = LLVMBuildSIToFP(cx->b, i, cx->t_f64, "");
  LLVMValueRef one = cg_i32(cx, 1), m1 = cg_i32(cx, -1), zero = cg_i32(cx, 0);
  LLVMValueRef c = LLVMBuildSelect(cx->b, LLVMBuildFCmp(cx->b, LLVMRealOLT, di, r, ""), m1,
                                   LLVMBuildSelect(cx->b, LLVMBuildFCmp(cx->b, LLVMRealOGT, di, r, ""),
                                                   one, zero, ""), "");
  c = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGT, i, y, ""), one, c, "");
  c = LLVMBuildSelect(cx->b, LLVMBuildICmp(cx->b, LLVMIntSLT, i, y, ""), m1, c, "");
  c = LLVMBuildSelect(cx->b, LLVMBuildFCmp(cx->b, LLVMRealOGE, r, cg_f64(cx, 9223372036854775808.0), ""),
                      m1, c, "");
  /* ULT: a NaN (never here: it is NULL) ranks below every integer. */
  c = LLVMBuildSelect(cx->b, LLVMBuildFCmp(cx->b, LLVMRealULT, r, cg_f64(cx, -9223372036854775808.0), ""),
                      one, c, "intcmpf");
  return c;
}

/* Comparison of two non-NULL values of the same kind, or an integer
 * against a double; i1. */
static LLVMValueRef cg_compare(cg_ctx *cx, ir_exkind k, cg_val a, cg_val b) {
  if (cg_mixed(a, b)) {
    bool swap = a.type == RT_F64;   /* sign(r - i) = -sign(i - r) */
    LLVMValueRef c = swap ? cg_cmp_i64_f64(cx, b.v, a.v) : cg_cmp_i64_f64(cx, a.v, b.v);
    LLVMIntPredicate p = k == IX_EQ ? LLVMIntEQ : k == IX_NE ? LLVMIntNE
                       : k == IX_LT ? (swap ? LLVMIntSGT : LLVMIntSLT)
                       : k == IX_LE ? (swap ? LLVMIntSGE : LLVMIntSLE)
                       : k == IX_GT ? (swap ? LLVMIntSLT : LLVMIntSGT)
                       : (swap ? LLVMIntSLE : LLVMIntSGE);
    return LLVMBuildICmp(cx->b, p, c, cg_i32(cx, 0), "");
  }
  if (a.type == RT_F64) {
    LLVMRealPredicate p = k == IX_EQ ? LLVMRealOEQ : k == IX_NE ? LLVMRealUNE
                        : k == IX_LT ? LLVMRealOLT : k == IX_LE ? LLVMRealOLE
                        : k == IX_GT ? LLVMRealOGT : LLVMRealOGE;
    return LLVMBuildFCmp(cx->b, p, a.v, b.v, "");
  }
  LLVMValueRef x = a.v, y = b.v;
  if (a.type == RT_STR && k != IX_EQ && k != IX_NE) {
    /* Ids are equal exactly when the bytes are; order needs the pool. */
    LLVMValueRef args[3] = {cx->strings, a.v, b.v};
    x = cg_call(cx, "rt_str_cmp", args, 3, "strcmp");
    y = cg_i32(cx, 0);
  }
  LLVMIntPredicate p = k == IX_EQ ? LLVMIntEQ : k == IX_NE ? LLVMIntNE
                     : k == IX_LT ? LLVMIntSLT : k == IX_LE ? LLVMIntSLE
                     : k == IX_GT ? LLVMIntSGT : LLVMIntSGE;
  return LLVMBuildICmp(cx->b, p, x, y, "");
}

/* Calls a runtime function only when `null` is false; the result is 0 of
 * `rt` otherwise. Keeps NULL rows away from the string pool. */
static LLVMValueRef cg_call_notnull(cg_ctx *cx, LLVMValueRef null, const char *fn,
                                    LLVMValueRef *args, int nargs, rt_type rt,
                                    const char *name) {
  if (cg_is_false(null)) return cg_call(cx, fn, args, nargs, name);
  LLVMBasicBlockRef from = cg_here(cx);
  LLVMBasicBlockRef call = cg_block(cx, "str.call"), join = cg_block(cx, "str.join");
  LLVMBuildCondBr(cx->b, null, join, call);
  cg_at(cx, call);
  LLVMValueRef r = cg_call(cx, fn, args, nargs, "");
  LLVMBasicBlockRef callend = cg_here(cx);
  LLVMBuildBr(cx->b, join);
  cg_at(cx, join);
  LLVMValueRef phi = cg_phi2_raw(cx, cg_llty(cx, rt), LLVMConstNull(cg_llty(cx, rt)), from, r,
                                 callend, name);
  return phi;
}

static cg_val cg_sub(cg_ctx *cx, const ir_expr *e, int i) {
  return cg_expr(cx, e->args[i], "");
}

/* ---- operator groups ---------------------------------------------------- */

static cg_val cg_arith(cg_ctx *cx, const ir_expr *e, const char *name) {
  cg_val a = cg_sub(cx, e, 0), b = cg_sub(cx, e, 1);
  LLVMValueRef null = cg_or(cx, a.null, b.null);
  if (e->type == RT_F64) {
    a = cg_coerce(cx, a, RT_F64);
    b = cg_coerce(cx, b, RT_F64);
    LLVMValueRef v;
    switch (e->kind) {
    case IX_ADD: v = LLVMBuildFAdd(cx->b, a.v, b.v, name); break;
    case IX_SUB: v = LLVMBuildFSub(cx->b, a.v, b.v, name); break;
    case IX_MUL: v = LLVMBuildFMul(cx->b, a.v, b.v, name); break;
    default: {  /* DIV (the binder lowers a real % to integers) */
      LLVMValueRef zero = LLVMBuildFCmp(cx->b, LLVMRealOEQ, b.v, cg_f64(cx, 0), "");
      v = LLVMBuildFDiv(cx->b, a.v, b.v, name);
      null = cg_or(cx, null, zero);
      break;
    }
    }
    /* SQLite turns a NaN result (inf - inf, 0 * inf) into NULL, and a NULL
     * slot holds 0 as in the interpreter. */
    LLVMValueRef nan = LLVMBuildFCmp(cx->b, LLVMRealUNO, v, v, "");
    v = LLVMBuildSelect(cx->b, nan, cg_f64(cx, 0), v, "");
    return (cg_val){v, cg_or(cx, null, nan), RT_F64};
  }
  switch (e->kind) {
  case IX_ADD: return (cg_val){cg_checked(cx, 'a', a.v, b.v, null, name), null, RT_I64};
  case IX_SUB: return (cg_val){cg_checked(cx, 's', a.v, b.v, null, name), null, RT_I64};
  case IX_MUL: return (cg_val){cg_checked(cx, 'm', a.v, b.v, null, name), null, RT_I64};
  default: break;
  }
  /* DIV / MOD: by zero → NULL; x / -1 is -x (INT64_MIN / -1 overflows);
   * x % -1 is 0. The divisor the hardware sees is never 0 or -1. */
  LLVMValueRef zero = LLVMBuildICmp(cx->b, LLVMIntEQ, b.v, cg_i64(cx, 0), "");
  LLVMValueRef m1 = LLVMBuildICmp(cx->b, LLVMIntEQ, b.v, cg_i64(cx, -1), "");
  LLVMValueRef safe = LLVMBuildSelect(cx->b, LLVMBuildOr(cx->b, zero, m1, ""), cg_i64(cx, 1), b.v, "");
  null = cg_or(cx, null, zero);
  LLVMValueRef v;
  if (e->kind == IX_DIV) {
    LLVMValueRef q = LLVMBuildSDiv(cx->b, a.v, safe, "");
    LLVMValueRef ovf = LLVMBuildAnd(cx->b, m1, LLVMBuildICmp(cx->b, LLVMIntEQ, a.v, cg_i64(cx, INT64_MIN), ""), "");
    if (!cg_is_false(null)) ovf = LLVMBuildAnd(cx->b, ovf, cg_not(cx, null), "");
    cg_fail_if(cx, ovf, CG_ERR_OVERFLOW, "div.ok");
    v = LLVMBuildSelect(cx->b, m1, LLVMBuildSub(cx->b, cg_i64(cx, 0), a.v, ""), q, name);
  } else {
    LLVMValueRef r = LLVMBuildSRem(cx->b, a.v, safe, "");
    v = LLVMBuildSelect(cx->b, m1, cg_i64(cx, 0), r, name);
  }
  return (cg_val){v, null, RT_I64};
}

static cg_val cg_cmp(cg_ctx *cx, const ir_expr *e, const char *name) {
  cg_val a = cg_sub(cx, e, 0), b = cg_sub(cx, e, 1);
  if (!cg_mixed(a, b)) {
    rt_type t = a.type == RT_NULLT ? b.type : a.type;
    a = cg_coerce(cx, a, t);
    b = cg_coerce(cx, b, t);
  }
  if (e->kind == IX_IS || e->kind == IX_ISNOT) {
    /* Null-safe: equal when both are NULL, or neither is and the values are. */
    LLVMValueRef eq = cg_compare(cx, IX_EQ, a, b);
    LLVMValueRef both = LLVMBuildAnd(cx->b, a.null, b.null, "");
    LLVMValueRef none = LLVMBuildAnd(cx->b, cg_not(cx, a.null), cg_not(cx, b.null), "");
    LLVMValueRef is = LLVMBuildOr(cx->b, both, LLVMBuildAnd(cx->b, none, eq, ""), "");
    if (e->kind == IX_ISNOT) is = cg_not(cx, is);
    return cg_notnull(cg_bool64(cx, is, name), RT_BOOL);
  }
  LLVMValueRef c = cg_compare(cx, e->kind, a, b);
  return (cg_val){cg_bool64(cx, c, name), cg_or(cx, a.null, b.null), RT_BOOL};
}

/* "Definitely false" and "definitely true" of a boolean. */
static LLVMValueRef cg_is_val(cg_ctx *cx, cg_val v, bool want) {
  LLVMValueRef nz = v.type == RT_F64 ? LLVMBuildFCmp(cx->b, LLVMRealUNE, v.v, cg_f64(cx, 0), "")
                                     : LLVMBuildICmp(cx->b, LLVMIntNE, v.v, LLVMConstNull(LLVMTypeOf(v.v)), "");
  LLVMValueRef hit = want ? nz : cg_not(cx, nz);
  if (cg_is_false(v.null)) return hit;
  return LLVMBuildAnd(cx->b, hit, cg_not(cx, v.null), "");
}

/* AND / OR, three-valued, with the right side evaluated only when the left
 * does not decide: `a AND b` is false when a is false whatever b is. */
static cg_val cg_logic(cg_ctx *cx, const ir_expr *e, const char *name) {
  bool is_and = e->kind == IX_AND;
  cg_val a = cg_coerce(cx, cg_sub(cx, e, 0), RT_BOOL);
  LLVMValueRef decided = cg_is_val(cx, a, !is_and);
  if (cx->vmode) {
    /* straight-line: both sides, the same three-valued answer */
    cg_val b = cg_coerce(cx, cg_sub(cx, e, 1), RT_BOOL);
    LLVMValueRef bdec = cg_is_val(cx, b, !is_and);
    LLVMValueRef null = LLVMBuildAnd(cx->b, cg_not(cx, bdec), cg_or(cx, a.null, b.null), "");
    LLVMValueRef v = is_and ? LLVMBuildAnd(cx->b, cg_not(cx, bdec), cg_not(cx, null), "") : bdec;
    v = LLVMBuildSelect(cx->b, decided, cg_i1(cx, !is_and), v, "");
    null = LLVMBuildAnd(cx->b, cg_not(cx, decided), null, "");
    return (cg_val){cg_bool64(cx, v, name[0] ? name : is_and ? "and" : "or"), null, RT_BOOL};
  }
  LLVMBasicBlockRef from = cg_here(cx);
  LLVMBasicBlockRef rhs = cg_block(cx, is_and ? "and.rhs" : "or.rhs");
  LLVMBasicBlockRef join = cg_block(cx, is_and ? "and.join" : "or.join");
  LLVMBuildCondBr(cx->b, decided, join, rhs);
  cg_at(cx, rhs);
  cg_val b = cg_coerce(cx, cg_sub(cx, e, 1), RT_BOOL);
  LLVMValueRef bdec = cg_is_val(cx, b, !is_and);
  /* Not decided by a: a is NULL or the neutral value. */
  LLVMValueRef null = LLVMBuildAnd(cx->b, cg_not(cx, bdec), cg_or(cx, a.null, b.null), "");
  LLVMValueRef v;
  if (is_and) v = LLVMBuildAnd(cx->b, cg_not(cx, bdec), cg_not(cx, null), "");
  else v = bdec;
  v = cg_bool64(cx, v, "");
  LLVMBasicBlockRef rhsend = cg_here(cx);
  LLVMBuildBr(cx->b, join);
  cg_at(cx, join);
  cg_val left = cg_notnull(cg_i64(cx, is_and ? 0 : 1), RT_BOOL);
  return cg_phi2(cx, left, from, (cg_val){v, null, RT_BOOL}, rhsend, RT_BOOL,
                 name[0] ? name : is_and ? "and" : "or");
}

static cg_val cg_in(cg_ctx *cx, const ir_expr *e, const char *name) {
  cg_val x = cg_sub(cx, e, 0);
  LLVMValueRef any = cg_i1(cx, 0), anynull = x.null;
  for (int i = 1; i < e->nargs; i++) {
    cg_val y = cg_sub(cx, e, i);
    if (!cg_mixed(x, y)) y = cg_coerce(cx, y, x.type);
    LLVMValueRef eq = cg_compare(cx, IX_EQ, x, y);
    if (!cg_is_false(y.null)) eq = LLVMBuildAnd(cx->b, eq, cg_not(cx, y.null), "");
    any = cg_or(cx, any, eq);
    anynull = cg_or(cx, anynull, y.null);
  }
  /* x NULL → NULL; a match → true; no match but a NULL in the list → NULL. */
  LLVMValueRef hit = cg_is_false(x.null) ? any : LLVMBuildAnd(cx->b, any, cg_not(cx, x.null), "");
  LLVMValueRef null = LLVMBuildAnd(cx->b, cg_not(cx, hit), anynull, "");
  return (cg_val){cg_bool64(cx, hit, name), null, RT_BOOL};
}

/* The value and NULL phis of a join block, made before its predecessors
 * are emitted so that each branch adds its incoming pair as it ends (no
 * array of branches to allocate: a CASE may have 20,000 of them). */
static void cg_join_phis(cg_ctx *cx, LLVMBasicBlockRef join, rt_type t, const char *name,
                         const char *dflt, LLVMValueRef *pv, LLVMValueRef *pn) {
  LLVMBasicBlockRef here = cg_here(cx);
  cg_at(cx, join);
  char nn[112];
  snprintf(nn, sizeof nn, "%s.null", name[0] ? name : dflt);
  *pv = LLVMBuildPhi(cx->b, cg_llty(cx, t), name[0] ? name : dflt);
  *pn = LLVMBuildPhi(cx->b, cx->t_i1, nn);
  cg_at(cx, here);
}

/* Ends the current block with a branch to join, v flowing into its phis. */
static void cg_join_add(cg_ctx *cx, LLVMBasicBlockRef join, LLVMValueRef pv, LLVMValueRef pn,
                        cg_val v) {
  LLVMBasicBlockRef from = cg_here(cx);
  LLVMAddIncoming(pv, &v.v, &from, 1);
  LLVMAddIncoming(pn, &v.null, &from, 1);
  LLVMBuildBr(cx->b, join);
}

/* CASE when0 then0 … else: conditions in order, only the chosen branch runs. */
static cg_val cg_case(cg_ctx *cx, const ir_expr *e, const char *name) {
  rt_type t = e->type == RT_NULLT ? RT_I64 : e->type;
  int n = (e->nargs - 1) / 2;
  LLVMBasicBlockRef join = cg_block(cx, "case.end");
  LLVMValueRef pv, pn;
  cg_join_phis(cx, join, t, name, "case", &pv, &pn);
  for (int i = 0; i < n; i++) {
    cg_val c = cg_sub(cx, e, 2 * i);
    LLVMValueRef yes = cg_truth(cx, c, "");
    LLVMBasicBlockRef then = cg_block(cx, "case.then"), next = cg_block(cx, "case.next");
    LLVMBuildCondBr(cx->b, yes, then, next);
    cg_at(cx, then);
    cg_join_add(cx, join, pv, pn, cg_coerce(cx, cg_sub(cx, e, 2 * i + 1), t));
    cg_at(cx, next);
  }
  cg_join_add(cx, join, pv, pn, cg_coerce(cx, cg_sub(cx, e, 2 * n), t));
  cg_at(cx, join);
  return (cg_val){pv, pn, t};
}

/* COALESCE: the first non-NULL argument; later ones are not evaluated. */
static cg_val cg_coalesce(cg_ctx *cx, const ir_expr *e, const char *name) {
  rt_type t = e->type == RT_NULLT ? RT_I64 : e->type;
  int n = e->nargs;
  LLVMBasicBlockRef join = cg_block(cx, "coalesce.end");
  LLVMValueRef pv, pn;
  cg_join_phis(cx, join, t, name, "coalesce", &pv, &pn);
  for (int i = 0; i < n; i++) {
    cg_val v = cg_coerce(cx, cg_sub(cx, e, i), t);
    LLVMBasicBlockRef from = cg_here(cx);
    LLVMAddIncoming(pv, &v.v, &from, 1);
    LLVMAddIncoming(pn, &v.null, &from, 1);
    if (i == n - 1 || cg_is_false(v.null)) {
      LLVMBuildBr(cx->b, join);
      break;
    }
    LLVMBasicBlockRef next = cg_block(cx, "coalesce.next");
    LLVMBuildCondBr(cx->b, v.null, next, join);
    cg_at(cx, next);
  }
  cg_at(cx, join);
  return (cg_val){pv, pn, t};
}

/* Scalar MIN/MAX: NULL when any argument is NULL (SQLite), else the least
 * or greatest. */
static cg_val cg_minmax(cg_ctx *cx, const ir_expr *e, const char *name) {
  rt_type t = e->type == RT_NULLT ? RT_I64 : e->type;
  cg_val acc = cg_coerce(cx, cg_sub(cx, e, 0), t);
  for (int i = 1; i < e->nargs; i++) {
    cg_val v = cg_coerce(cx, cg_sub(cx, e, i), t);
    LLVMValueRef better = cg_compare(cx, e->kind == IX_MIN ? IX_LT : IX_GT, v, acc);
    acc.v = LLVMBuildSelect(cx->b, better, v.v, acc.v, i == e->nargs - 1 ? name : "");
    acc.null = cg_or(cx, acc.null, v.null);
  }
  return acc;
}

/* ---- string functions and casts ----------------------------------------- */

static cg_val cg_strfn(cg_ctx *cx, const ir_expr *e, const char *name) {
  cg_val a[3];
  LLVMValueRef null = cg_i1(cx, 0);
  int n = e->nargs < 3 ? e->nargs : 3;
  for (int i = 0; i < n; i++) {
    a[i] = cg_sub(cx, e, i);
    null = cg_or(cx, null, a[i].null);
  }
  LLVMValueRef p = cx->strings;
  const char *fn;
  LLVMValueRef args[4];
  int na;
  rt_type rt = e->type;
  switch (e->kind) {
  case IX_CONCAT: fn = "rt_fn_concat"; args[0] = p; args[1] = a[0].v; args[2] = a[1].v; na = 3; break;
  case IX_LIKE:
  case IX_GLOB:
    /* x LIKE pattern → like(pattern, x); ESCAPE's character is ival */
    fn = e->kind == IX_LIKE ? "rt_fn_like" : "rt_fn_glob";
    args[0] = p; args[1] = a[1].v; args[2] = a[0].v; na = 3;
    if (e->kind == IX_LIKE && e->ival) {
      fn = "rt_fn_like_esc";
      args[3] = cg_i32(cx, (uint32_t)e->ival);
      na = 4;
    }
    break;
  case IX_LENGTH: fn = "rt_fn_length"; args[0] = p; args[1] = a[0].v; na = 2; break;
  case IX_LOWER: fn = "rt_fn_lower"; args[0] = p; args[1] = a[0].v; na = 2; break;
  case IX_UPPER: fn = "rt_fn_upper"; args[0] = p; args[1] = a[0].v; na = 2; break;
  case IX_INSTR: fn = "rt_fn_instr"; args[0] = p; args[1] = a[0].v; args[2] = a[1].v; na = 3; break;
  case IX_SUBSTR:
    fn = n == 3 ? "rt_fn_substr3" : "rt_fn_substr2";
    args[0] = p; args[1] = a[0].v; args[2] = cg_coerce(cx, a[1], RT_I64).v;
    if (n == 3) args[3] = cg_coerce(cx, a[2], RT_I64).v;
    na = n + 1;
    break;
  case IX_TRIM:
  case IX_LTRIM:
  case IX_RTRIM: {
    int mode = e->kind == IX_TRIM ? 3 : e->kind == IX_LTRIM ? 1 : 2;
    args[0] = p; args[1] = a[0].v;
    if (n == 2) { fn = "rt_fn_trim_set"; args[2] = a[1].v; args[3] = cg_i32(cx, mode); na = 4; }
    else { fn = "rt_fn_trim"; args[2] = cg_i32(cx, mode); na = 3; }
    break;
  }
  case IX_TOSTR:
    if (a[0].type == RT_STR) return a[0];
    fn = a[0].type == RT_F64 ? "rt_fn_f64_to_str" : "rt_fn_i64_to_str";
    args[0] = p; args[1] = a[0].v; na = 2;
    break;
  case IX_STRTOF64: fn = "rt_fn_str_to_f64"; args[0] = p; args[1] = a[0].v; na = 2; break;
  case IX_ROUND:
    fn = "rt_fn_round";
    args[0] = cg_coerce(cx, a[0], RT_F64).v;
    args[1] = n == 2 ? cg_coerce(cx, a[1], RT_I64).v : cg_i64(cx, 0);
    na = 2;
    break;
  case IX_SIGN: fn = "rt_fn_sign"; args[0] = cg_coerce(cx, a[0], RT_F64).v; na = 1; break;
  case IX_REPLACE:
    fn = "rt_fn_replace"; args[0] = p; args[1] = a[0].v; args[2] = a[1].v; args[3] = a[2].v; na = 4;
    break;
  case IX_HEX: fn = "rt_fn_hex"; args[0] = p; args[1] = a[0].v; na = 2; break;
  case IX_UNICODE: fn = "rt_fn_unicode"; args[0] = p; args[1] = a[0].v; na = 2; break;
  case IX_CHAR: fn = "rt_fn_char"; args[0] = p; args[1] = cg_coerce(cx, a[0], RT_I64).v; na = 2; break;
  default: /* IX_TOINT from a string */
    fn = "rt_fn_str_to_i64"; args[0] = p; args[1] = a[0].v; na = 2; rt = RT_I64;
    break;
  }
  LLVMTypeRef want = cg_llty(cx, rt == RT_BOOL ? RT_I64 : rt);
  LLVMValueRef r = cg_call_notnull(cx, null, fn, args, na,
                                   (e->kind == IX_LIKE || e->kind == IX_GLOB) ? RT_STR : rt, name);
  /* A string the pool refused (too long, out of memory) stops the row,
   * with the pool's reason: never an empty string. */
  if (rt == RT_STR)
    cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntEQ, r, cg_i32(cx, (int32_t)RT_STR_FAILED), ""),
               CG_ERR_STRING, "str.ok");
  /* like/glob return an int (i32): widen to the boolean i64 */
  if (LLVMTypeOf(r) != want) r = LLVMBuildZExt(cx->b, r, want, name);
  return (cg_val){r, null, rt};
}

/* printf(fmt, …): the arguments as (kind, bits) pairs in a stack array
 * (rt_fn_printf's form); RT_STR_NULL back is SQLite's NULL result. */
static cg_val cg_printf(cg_ctx *cx, const ir_expr *e, const char *name) {
  cg_val fmt = cg_sub(cx, e, 0);
  int n = e->nargs - 1;
  LLVMTypeRef arr = LLVMArrayType(cx->t_i64, (unsigned)(2 * (n > 0 ? n : 1)));
  LLVMValueRef slot = cg_slot(cx, arr, "pf.args");
  for (int i = 0; i < n; i++) {
    cg_val v = cg_sub(cx, e, i + 1);
    int kind = v.type == RT_F64 ? RT_PF_F64 : v.type == RT_STR ? RT_PF_STR : RT_PF_INT;
    LLVMValueRef bits = v.type == RT_F64   ? LLVMBuildBitCast(cx->b, v.v, cx->t_i64, "")
                        : v.type == RT_STR ? LLVMBuildZExt(cx->b, v.v, cx->t_i64, "")
                                           : cg_coerce(cx, v, RT_I64).v;
    LLVMValueRef k = cg_i64(cx, kind);
    if (!cg_is_false(v.null)) k = LLVMBuildSelect(cx->b, v.null, cg_i64(cx, RT_PF_NULL), k, "");
    LLVMValueRef at = cg_elem_ptr(cx, cx->t_i64, slot, cg_i32(cx, 2 * i), "");
    LLVMBuildStore(cx->b, k, at);
    LLVMBuildStore(cx->b, bits, cg_elem_ptr(cx, cx->t_i64, slot, cg_i32(cx, 2 * i + 1), ""));
  }
  LLVMValueRef args[4] = {cx->strings, fmt.v, slot, cg_i32(cx, n)};
  LLVMValueRef r = cg_call_notnull(cx, fmt.null, "rt_fn_printf", args, 4, RT_STR, name);
  cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntEQ, r, cg_i32(cx, (int32_t)RT_STR_FAILED), ""),
             CG_ERR_STRING, "str.ok");
  LLVMValueRef isnull = LLVMBuildICmp(cx->b, LLVMIntEQ, r, cg_i32(cx, (int32_t)RT_STR_NULL), "");
  r = LLVMBuildSelect(cx->b, isnull, cg_i32(cx, 0), r, name);
  return (cg_val){r, cg_or(cx, fmt.null, isnull), RT_STR};
}

/* ---- the engine's functions ------------------------------------------- */

/* IX_CALLOUT: ex_callout(run, idx, argv, nulls, &status) with every
 * argument as a 64-bit word, the call the interpreter makes too
 * (interp/vm_callout.c). The function and its context come from the
 * run's plan, not from constants, so cached code stays valid. */
static cg_val cg_callout(cg_ctx *cx, const ir_expr *e, const char *name) {
  const ir_callout *c = &cx->plan->callouts[e->ival];
  int n = e->nargs;
  LLVMTypeRef arr = LLVMArrayType2(cx->t_i64, (uint64_t)(n ? n : 1));
  LLVMValueRef argv = cg_slot(cx, arr, "callout.argv");
  LLVMValueRef nulls = cg_i64(cx, 0);
  for (int i = 0; i < n; i++) {
    cg_val a = cg_coerce(cx, cg_sub(cx, e, i), c->argtypes[i]);
    LLVMValueRef w = a.v;
    if (a.type == RT_F64) w = LLVMBuildBitCast(cx->b, w, cx->t_i64, "");
    else if (LLVMTypeOf(w) != cx->t_i64) w = LLVMBuildZExt(cx->b, w, cx->t_i64, "");
    LLVMBuildStore(cx->b, w, cg_elem_ptr(cx, cx->t_i64, argv, cg_i64(cx, i), ""));
    if (!cg_is_false(a.null)) {
      LLVMValueRef bit = LLVMBuildShl(cx->b, LLVMBuildZExt(cx->b, a.null, cx->t_i64, ""),
                                      cg_i64(cx, i), "");
      nulls = LLVMBuildOr(cx->b, nulls, bit, "");
    }
  }
  LLVMValueRef status = cg_slot(cx, cx->t_i32, "callout.status");
  LLVMValueRef args[5] = {cx->run, cg_i32(cx, e->ival), argv, nulls, status};
  LLVMValueRef w = cg_call(cx, "ex_callout", args, 5, "");
  LLVMValueRef st = LLVMBuildLoad2(cx->b, cx->t_i32, status, "");
  cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntSLT, st, cg_i32(cx, 0), ""), CG_ERR_RUNTIME,
             "callout.ok");
  LLVMValueRef isnull = LLVMBuildICmp(cx->b, LLVMIntEQ, st, cg_i32(cx, 1), "");
  rt_type t = c->ret;
  LLVMValueRef v = w;
  if (t == RT_F64) v = LLVMBuildBitCast(cx->b, w, cx->t_f64, name);
  else if (t == RT_STR) v = LLVMBuildTrunc(cx->b, w, cx->t_i32, name);
  return (cg_val){v, isnull, t};
}

/* ---- the dispatcher ----------------------------------------------------- */

cg_val cg_expr(cg_ctx *cx, const ir_expr *e, const char *name) {
  switch (e->kind) {
  case IX_CONST: {
    rt_type t = e->type;
    if (e->is_null || t == RT_NULLT) return cg_nullval(cx, t == RT_NULLT ? RT_NULLT : t);
    if (t == RT_F64) return cg_notnull(cg_f64(cx, e->fval), t);
    if (t == RT_STR) return cg_notnull(cg_i32(cx, e->sval), t);
    return cg_notnull(cg_i64(cx, e->ival), t == RT_BOOL ? RT_BOOL : RT_I64);
  }
  case IX_COL: return cg_column(cx, e->col);
  case IX_PARAM:
    if (e->param >= 1 && e->param <= cx->plan->nparams) return cx->params[e->param];
    return cg_nullval(cx, e->type);
  case IX_TOF64: {
    cg_val a = cg_sub(cx, e, 0);
    if (a.type == RT_F64) return a;
    return (cg_val){LLVMBuildSIToFP(cx->b, cg_coerce(cx, a, RT_I64).v, cx->t_f64, name), a.null, RT_F64};
  }
  case IX_NEG: {
    cg_val a = cg_sub(cx, e, 0);
    if (a.type == RT_F64) return (cg_val){LLVMBuildFNeg(cx->b, a.v, name), a.null, RT_F64};
    a = cg_coerce(cx, a, RT_I64);
    return (cg_val){cg_checked(cx, 's', cg_i64(cx, 0), a.v, a.null, name), a.null, RT_I64};
  }
  case IX_BITNOT: {
    cg_val a = cg_coerce(cx, cg_sub(cx, e, 0), RT_I64);
    return (cg_val){LLVMBuildNot(cx->b, a.v, name), a.null, RT_I64};
  }
  case IX_NOT: {
    cg_val a = cg_coerce(cx, cg_sub(cx, e, 0), RT_BOOL);
    return (cg_val){cg_bool64(cx, cg_is_val(cx, (cg_val){a.v, cg_i1(cx, 0), a.type}, false), name),
                    a.null, RT_BOOL};
  }
  case IX_ADD: case IX_SUB: case IX_MUL: case IX_DIV: case IX_MOD:
    return cg_arith(cx, e, name);
  case IX_BITAND: case IX_BITOR: {
    cg_val a = cg_coerce(cx, cg_sub(cx, e, 0), RT_I64), b = cg_coerce(cx, cg_sub(cx, e, 1), RT_I64);
    LLVMValueRef v = e->kind == IX_BITAND ? LLVMBuildAnd(cx->b, a.v, b.v, name)
                                          : LLVMBuildOr(cx->b, a.v, b.v, name);
    return (cg_val){v, cg_or(cx, a.null, b.null), RT_I64};
  }
  case IX_SHL: case IX_SHR: {
    cg_val a = cg_coerce(cx, cg_sub(cx, e, 0), RT_I64), b = cg_coerce(cx, cg_sub(cx, e, 1), RT_I64);
    LLVMValueRef args[2] = {a.v, b.v};
    LLVMValueRef v = cg_call(cx, e->kind == IX_SHL ? "rt_fn_shl" : "rt_fn_shr", args, 2, name);
    return (cg_val){v, cg_or(cx, a.null, b.null), RT_I64};
  }
  case IX_EQ: case IX_NE: case IX_LT: case IX_LE: case IX_GT: case IX_GE:
  case IX_IS: case IX_ISNOT:
    return cg_cmp(cx, e, name);
  case IX_AND: case IX_OR: return cg_logic(cx, e, name);
  case IX_ISNULL: case IX_NOTNULL: {
    cg_val a = cg_sub(cx, e, 0);
    LLVMValueRef n = e->kind == IX_ISNULL ? a.null : cg_not(cx, a.null);
    return cg_notnull(cg_bool64(cx, n, name), RT_BOOL);
  }
  case IX_IN: return cg_in(cx, e, name);
  case IX_CASE: return cg_case(cx, e, name);
  case IX_COALESCE: return cg_coalesce(cx, e, name);
  case IX_NULLIF: {
    rt_type t = e->type == RT_NULLT ? RT_I64 : e->type;
    cg_val a = cg_coerce(cx, cg_sub(cx, e, 0), t), b = cg_coerce(cx, cg_sub(cx, e, 1), t);
    LLVMValueRef same = LLVMBuildAnd(cx->b, cg_compare(cx, IX_EQ, a, b), cg_not(cx, b.null), "");
    return (cg_val){a.v, cg_or(cx, a.null, same), t};
  }
  case IX_MIN: case IX_MAX: return cg_minmax(cx, e, name);
  case IX_ABS: {
    cg_val a = cg_sub(cx, e, 0);
    if (a.type == RT_F64) {
      LLVMValueRef v = cg_intrinsic(cx, "llvm.fabs", &cx->t_f64, 1, &a.v, 1, name);
      return (cg_val){v, a.null, RT_F64};
    }
    a = cg_coerce(cx, a, RT_I64);
    LLVMValueRef neg = LLVMBuildICmp(cx->b, LLVMIntSLT, a.v, cg_i64(cx, 0), "");
    LLVMValueRef ovf = LLVMBuildICmp(cx->b, LLVMIntEQ, a.v, cg_i64(cx, INT64_MIN), "");
    if (!cg_is_false(a.null)) ovf = LLVMBuildAnd(cx->b, ovf, cg_not(cx, a.null), "");
    cg_fail_if(cx, ovf, CG_ERR_OVERFLOW, "abs.ok");
    LLVMValueRef v = LLVMBuildSelect(cx->b, neg, LLVMBuildSub(cx->b, cg_i64(cx, 0), a.v, ""), a.v, name);
    return (cg_val){v, a.null, RT_I64};
  }
  case IX_TOINT: {
    cg_val a = cg_sub(cx, e, 0);
    if (a.type == RT_F64) {
      /* fptosi.sat: truncates, saturates, NaN → 0 — rt_fn_f64_to_i64 exactly */
      LLVMTypeRef tys[2] = {cx->t_i64, cx->t_f64};
      LLVMValueRef v = cg_intrinsic(cx, "llvm.fptosi.sat", tys, 2, &a.v, 1, name);
      return (cg_val){v, a.null, RT_I64};
    }
    if (a.type != RT_STR) return cg_coerce(cx, a, RT_I64);
    return cg_strfn(cx, e, name);
  }
  case IX_CONCAT: case IX_LIKE: case IX_GLOB: case IX_TOSTR: case IX_STRTOF64: case IX_LENGTH:
  case IX_LOWER: case IX_UPPER: case IX_SUBSTR: case IX_INSTR: case IX_TRIM: case IX_LTRIM:
  case IX_RTRIM: case IX_ROUND: case IX_SIGN: case IX_REPLACE: case IX_HEX: case IX_UNICODE:
  case IX_CHAR:
    return cg_strfn(cx, e, name);
  case IX_PRINTF: return cg_printf(cx, e, name);
  case IX_CALLOUT: return cg_callout(cx, e, name);
  case IX__COUNT: break;
  }
  rt_errorf(cx->err, e->pos, "JIT: unexpected expression kind %d", (int)e->kind);
  return cg_nullval(cx, e->type);
}
