/*
 * emit.c — the small LLVM helpers declared in emit.h. Nothing here knows
 * about query operators; operator files compose these.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"

/* ---- constants and types ------------------------------------------------ */

LLVMValueRef cg_i1(cg_ctx *cx, int v) { return LLVMConstInt(cx->t_i1, v != 0, 0); }
LLVMValueRef cg_i32(cg_ctx *cx, int64_t v) { return LLVMConstInt(cx->t_i32, (uint64_t)v, 1); }
LLVMValueRef cg_i64(cg_ctx *cx, int64_t v) { return LLVMConstInt(cx->t_i64, (uint64_t)v, 1); }
LLVMValueRef cg_f64(cg_ctx *cx, double v) { return LLVMConstReal(cx->t_f64, v); }

LLVMTypeRef cg_llty(cg_ctx *cx, rt_type t) {
  return t == RT_F64 ? cx->t_f64 : t == RT_STR ? cx->t_i32 : cx->t_i64;
}

cg_val cg_notnull(LLVMValueRef v, rt_type t) {
  return (cg_val){v, LLVMConstInt(LLVMInt1TypeInContext(LLVMGetTypeContext(LLVMTypeOf(v))), 0, 0),
                  t};
}

cg_val cg_nullval(cg_ctx *cx, rt_type t) {
  return (cg_val){LLVMConstNull(cg_llty(cx, t)), cg_i1(cx, 1), t};
}

bool cg_is_false(LLVMValueRef v) {
  return LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0;
}

/* ---- memory ------------------------------------------------------------- */

LLVMValueRef cg_field_ptr(cg_ctx *cx, LLVMTypeRef sty, LLVMValueRef p, int idx,
                          const char *name) {
  return LLVMBuildStructGEP2(cx->b, sty, p, (unsigned)idx, name);
}

LLVMValueRef cg_load_field(cg_ctx *cx, LLVMTypeRef sty, LLVMValueRef p, int idx,
                           LLVMTypeRef fty, const char *name) {
  LLVMValueRef fp = cg_field_ptr(cx, sty, p, idx, "");
  return LLVMBuildLoad2(cx->b, fty, fp, name);
}

LLVMValueRef cg_elem_ptr(cg_ctx *cx, LLVMTypeRef ety, LLVMValueRef base, LLVMValueRef i,
                         const char *name) {
  return LLVMBuildInBoundsGEP2(cx->b, ety, base, &i, 1, name);
}

LLVMValueRef cg_load_elem(cg_ctx *cx, LLVMTypeRef ety, LLVMValueRef base, LLVMValueRef i,
                          const char *name) {
  return LLVMBuildLoad2(cx->b, ety, cg_elem_ptr(cx, ety, base, i, ""), name);
}

LLVMValueRef cg_slot(cg_ctx *cx, LLVMTypeRef t, const char *name) {
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(cx->fn);
  LLVMBuilderRef tmp = LLVMCreateBuilderInContext(cx->c);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first) LLVMPositionBuilderBefore(tmp, first);
  else LLVMPositionBuilderAtEnd(tmp, entry);
  LLVMValueRef a = LLVMBuildAlloca(tmp, t, name);
  LLVMDisposeBuilder(tmp);
  return a;
}

/* ---- control flow ------------------------------------------------------- */

LLVMBasicBlockRef cg_block(cg_ctx *cx, const char *name) {
  return LLVMAppendBasicBlockInContext(cx->c, cx->fn, name);
}

void *cg_alloc(cg_ctx *cx, size_t n) {
  void *p = rt_arena_alloc(&cx->arena, n);
  if (!p) rt_errorf(cx->err, -1, "JIT: out of memory");
  return p;
}

void cg_at(cg_ctx *cx, LLVMBasicBlockRef bb) { LLVMPositionBuilderAtEnd(cx->b, bb); }
LLVMBasicBlockRef cg_here(cg_ctx *cx) { return LLVMGetInsertBlock(cx->b); }

void cg_drop_row_if(cg_ctx *cx, LLVMValueRef cond, const char *keep_name) {
  if (cg_is_false(cond)) return;
  if (cx->vmode) {
    cx->vpass = LLVMBuildAnd(cx->b, cx->vpass, LLVMBuildNot(cx->b, cond, ""), keep_name);
    return;
  }
  LLVMBasicBlockRef keep = cg_block(cx, keep_name);
  LLVMBuildCondBr(cx->b, cond, cx->next_row, keep);
  cg_at(cx, keep);
}

/* The shared failure block: remembers the smallest error code of the batch
 * and goes on with the next row. */
static LLVMBasicBlockRef cg_err_block(cg_ctx *cx) {
  if (cx->err_block) return cx->err_block;
  LLVMBasicBlockRef here = cg_here(cx);
  cx->err_block = cg_block(cx, "row.fail");
  cg_at(cx, cx->err_block);
  cx->err_phi = LLVMBuildPhi(cx->b, cx->t_i32, "fail.code");
  LLVMValueRef cur = LLVMBuildLoad2(cx->b, cx->t_i32, cx->err_slot, "fail.min");
  LLVMValueRef lower = LLVMBuildICmp(cx->b, LLVMIntULT, cx->err_phi, cur, "");
  LLVMBuildStore(cx->b, LLVMBuildSelect(cx->b, lower, cx->err_phi, cur, ""), cx->err_slot);
  LLVMBuildBr(cx->b, cx->next_row);
  cg_at(cx, here);
  return cx->err_block;
}

void cg_fail_if(cg_ctx *cx, LLVMValueRef cond, int kind, const char *ok_name) {
  if (cg_is_false(cond)) return;
  if (cx->vmode) {
    /* the batch is redone by the row loop, which reports the error */
    LLVMValueRef f = LLVMBuildAnd(cx->b, cond, cx->vpass, "");
    LLVMValueRef old = LLVMBuildLoad2(cx->b, cx->t_i1, cx->vfail, "");
    LLVMBuildStore(cx->b, LLVMBuildOr(cx->b, old, f, ok_name), cx->vfail);
    return;
  }
  LLVMBasicBlockRef fail = cg_err_block(cx);
  LLVMBasicBlockRef ok = cg_block(cx, ok_name);
  LLVMValueRef code = cg_i32(cx, cx->step * CG_ERR_KINDS + kind);
  LLVMBasicBlockRef from = cg_here(cx);
  LLVMAddIncoming(cx->err_phi, &code, &from, 1);
  LLVMBuildCondBr(cx->b, cond, fail, ok);
  cg_at(cx, ok);
}

LLVMValueRef cg_phi2_raw(cg_ctx *cx, LLVMTypeRef ty, LLVMValueRef va, LLVMBasicBlockRef a,
                        LLVMValueRef vb, LLVMBasicBlockRef b, const char *name) {
  LLVMValueRef phi = LLVMBuildPhi(cx->b, ty, name);
  LLVMValueRef vs[2] = {va, vb};
  LLVMBasicBlockRef bs[2] = {a, b};
  LLVMAddIncoming(phi, vs, bs, 2);
  return phi;
}

cg_val cg_phi2(cg_ctx *cx, cg_val va, LLVMBasicBlockRef a, cg_val vb, LLVMBasicBlockRef b,
               rt_type t, const char *name) {
  char nn[128];
  snprintf(nn, sizeof nn, "%s.null", name);
  LLVMValueRef pv = LLVMBuildPhi(cx->b, cg_llty(cx, t), name);
  LLVMValueRef pn = LLVMBuildPhi(cx->b, cx->t_i1, nn);
  LLVMValueRef vs[2] = {va.v, vb.v}, ns[2] = {va.null, vb.null};
  LLVMBasicBlockRef bs[2] = {a, b};
  LLVMAddIncoming(pv, vs, bs, 2);
  LLVMAddIncoming(pn, ns, bs, 2);
  return (cg_val){pv, pn, t};
}

/* ---- arithmetic --------------------------------------------------------- */

LLVMValueRef cg_intrinsic(cg_ctx *cx, const char *name, LLVMTypeRef *tys, int ntys,
                          LLVMValueRef *args, int nargs, const char *vname) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cx->m, id, tys, (size_t)ntys);
  LLVMTypeRef fty = LLVMIntrinsicGetType(cx->c, id, tys, (size_t)ntys);
  return LLVMBuildCall2(cx->b, fty, fn, args, (unsigned)nargs, vname);
}

LLVMValueRef cg_checked(cg_ctx *cx, char op, LLVMValueRef a, LLVMValueRef b,
                        LLVMValueRef isnull, const char *name) {
  const char *in = op == 'a' ? "llvm.sadd.with.overflow"
                   : op == 's' ? "llvm.ssub.with.overflow" : "llvm.smul.with.overflow";
  LLVMValueRef args[2] = {a, b};
  LLVMValueRef r = cg_intrinsic(cx, in, &cx->t_i64, 1, args, 2, "");
  LLVMValueRef v = LLVMBuildExtractValue(cx->b, r, 0, name);
  LLVMValueRef ovf = LLVMBuildExtractValue(cx->b, r, 1, "");
  /* A folded constant pair has a constant flag: no branch at all. */
  if (!cg_is_false(ovf)) {
    if (!cg_is_false(isnull)) ovf = LLVMBuildAnd(cx->b, ovf, LLVMBuildNot(cx->b, isnull, ""), "");
    char ok[96];
    snprintf(ok, sizeof ok, "%s.ok", name[0] ? name : "arith");
    cg_fail_if(cx, ovf, CG_ERR_OVERFLOW, ok);
  }
  return v;
}

cg_val cg_coerce(cg_ctx *cx, cg_val v, rt_type t) {
  if (v.type == RT_NULLT) return cg_nullval(cx, t == RT_NULLT ? RT_I64 : t);
  if (t == RT_NULLT) return v;
  bool vf = v.type == RT_F64, tf = t == RT_F64;
  if (tf && !vf && v.type != RT_STR)
    return (cg_val){LLVMBuildSIToFP(cx->b, v.v, cx->t_f64, ""), v.null, RT_F64};
  if (!tf && vf && t != RT_STR) {
    LLVMValueRef a = v.v;
    return (cg_val){cg_call(cx, "rt_fn_f64_to_i64", &a, 1, ""), v.null, t};
  }
  v.type = t;
  return v;
}

LLVMValueRef cg_truth(cg_ctx *cx, cg_val v, const char *name) {
  LLVMValueRef nz;
  if (v.type == RT_NULLT) return cg_i1(cx, 0);
  if (v.type == RT_F64) nz = LLVMBuildFCmp(cx->b, LLVMRealUNE, v.v, cg_f64(cx, 0), "");
  else nz = LLVMBuildICmp(cx->b, LLVMIntNE, v.v, LLVMConstNull(LLVMTypeOf(v.v)), "");
  if (cg_is_false(v.null)) {
    if (name[0]) LLVMSetValueName2(nz, name, strlen(name));
    return nz;
  }
  return LLVMBuildAnd(cx->b, nz, LLVMBuildNot(cx->b, v.null, ""), name);
}

/* ---- runtime calls ------------------------------------------------------ */

static LLVMTypeRef cg_sigty(cg_ctx *cx, char ch) {
  switch (ch) {
  case 'v': return cx->t_void;
  case 'i': return cx->t_i32;
  case 'l': return cx->t_i64;
  case 'd': return cx->t_f64;
  default: return cx->t_ptr;
  }
}

LLVMValueRef cg_call(cg_ctx *cx, const char *fn, LLVMValueRef *args, int nargs,
                     const char *name) {
  const cg_rtfn *f = NULL;
  for (int i = 0; i < cg_nrtfns; i++)
    if (strcmp(cg_rtfns[i].name, fn) == 0) f = &cg_rtfns[i];
  if (!f) {
    rt_errorf(cx->err, -1, "JIT: no runtime function '%s'", fn);
    return LLVMGetUndef(cx->t_i64);
  }
  LLVMTypeRef params[16];
  int np = 0;
  for (const char *p = f->sig + 2; *p && np < 16; p++) params[np++] = cg_sigty(cx, *p);
  LLVMTypeRef ret = cg_sigty(cx, f->sig[0]);
  LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)np, 0);
  LLVMValueRef callee = LLVMGetNamedFunction(cx->m, fn);
  if (!callee) callee = LLVMAddFunction(cx->m, fn, fty);
  return LLVMBuildCall2(cx->b, fty, callee, args, (unsigned)nargs, f->sig[0] == 'v' ? "" : name);
}

/* ---- names -------------------------------------------------------------- */

const char *cg_colname(cg_ctx *cx, int col, char *buf, size_t n) {
  const char *nm = col >= 0 && col < cx->plan->ncols ? cx->plan->cols[col].name : NULL;
  if (!nm || !nm[0]) snprintf(buf, n, "c%d", col);
  else snprintf(buf, n, "%s", nm);
  return buf;
}
