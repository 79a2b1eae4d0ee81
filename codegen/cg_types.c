/*
 * cg_types.c — the runtime structs generated code touches, declared for
 * LLVM in one place. Field order and types mirror exec/exec.h,
 * runtime/rt.h, runtime/store.h, runtime/jointab.h and runtime/tree/tree.h; LLVM lays them out with the host's
 * data layout exactly as the C compiler does (natural alignment, no
 * packing), and tests/unit/test_layout.c checks every field offset against
 * offsetof. Change a field there, change it here.
 */
#include "emit.h"

static LLVMTypeRef cg_struct(LLVMContextRef c, const char *name, LLVMTypeRef *fields, int n) {
  LLVMTypeRef t = LLVMStructCreateNamed(c, name);
  LLVMStructSetBody(t, fields, (unsigned)n, 0);
  return t;
}

void cg_types_init(cg_types *t, LLVMContextRef c) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(c);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c);
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(c);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0);

  /* rt_view { rt_type type; const void *data; const uint64_t *valid;
   *           const uint32_t *sel; int64_t base; } */
  t->view = cg_struct(c, "rt_view", (LLVMTypeRef[]){i32, ptr, ptr, ptr, i64}, 5);
  /* rt_batch { uint32_t n, nactive; uint32_t *active; int ncols; rt_view *cols; } */
  t->batch = cg_struct(c, "rt_batch", (LLVMTypeRef[]){i32, i32, ptr, i32, ptr}, 5);
  /* ex_seg { run, seg, index, buf, nbuf, buf_cols, agg, nlimits, limit_skip,
   *          limit_left, done, vm } */
  t->seg = cg_struct(c, "ex_seg",
                     (LLVMTypeRef[]){ptr, ptr, i32, ptr, i32, ptr, ptr, i32, ptr, ptr, i32, ptr},
                     12);
  /* rt_arena { head; used_total } */
  t->arena = cg_struct(c, "rt_arena", (LLVMTypeRef[]){ptr, i64}, 2);
  /* rt_err { int set; int offset; char msg[512]; } */
  LLVMTypeRef err = cg_struct(c, "rt_err",
                              (LLVMTypeRef[]){i32, i32, LLVMArrayType2(LLVMInt8TypeInContext(c), 512)},
                              3);
  /* ex_run, the prefix up to treeaccs: { plan, arena, strings, db, nparams,
   * params, err, nsegs, segs, bufs, perms, treenums, treeaccs } */
  t->run = cg_struct(c, "ex_run",
                     (LLVMTypeRef[]){ptr, t->arena, ptr, ptr, i32, ptr, err, i32, ptr, ptr, ptr, ptr, ptr},
                     13);
  /* ex_value { rt_type type; int64_t i; double f; uint32_t s; } */
  t->value = cg_struct(c, "ex_value", (LLVMTypeRef[]){i32, i64, f64, i32}, 4);
  /* rt_rowbuf { ncols; types; nrows; cap; data; valid } */
  t->rowbuf = cg_struct(c, "rt_rowbuf", (LLVMTypeRef[]){i32, ptr, i64, i64, ptr, ptr}, 6);
  /* rt_agg { kind; in; out; i; f; n; has; in2; param; x } */
  t->agg = cg_struct(c, "rt_agg", (LLVMTypeRef[]){i32, i32, i32, ptr, ptr, ptr, ptr, i32, f64, ptr}, 10);
  /* rt_aggtab { nkeys; naggs; aggs; ngroups; cap; slots; mask; null_group;
   *             hashes; keys; strings; direct; epoch; morsel; fold } */
  t->aggtab = cg_struct(c, "rt_aggtab",
                        (LLVMTypeRef[]){i32, i32, ptr, i64, i64, ptr, i64, i64, ptr, t->rowbuf, ptr, ptr, ptr, i32, ptr},
                        15);
  /* rt_treenum, the prefix generated code uses: { tier; nrows; limit;
   * nnodes; awaited; str_ids (bool); keys; hasrow; cap; slots; mask;
   * node_out; pnode_out } */
  LLVMTypeRef i8 = LLVMInt8TypeInContext(c);
  t->treenum = cg_struct(c, "rt_treenum",
                         (LLVMTypeRef[]){i32, i32, i64, i32, i32, i8, ptr, ptr, i32, ptr, i64, ptr, ptr},
                         13);
  /* rt_treeagg { kind; in; i; f; has; v } */
  t->treeagg = cg_struct(c, "rt_treeagg", (LLVMTypeRef[]){i32, i32, ptr, ptr, ptr, ptr}, 6);
  /* rt_treeacc, the prefix generated code reads: { up; nnodes; naggs; aggs } */
  t->treeacc = cg_struct(c, "rt_treeacc", (LLVMTypeRef[]){i32, i32, i32, ptr}, 4);
  /* rt_jointab { nkeys; direct; slots; mask; dmin; drange; next; keys;
   *              matched; nrows; buf; kinds; gcache; unique; memo } */
  t->jointab = cg_struct(c, "rt_jointab",
                         (LLVMTypeRef[]){i32, i32, ptr, i64, i64, i64, ptr, ptr, ptr, i64, ptr, ptr, ptr, i32, ptr},
                         15);
}

/* ---- layout queries for tests/unit/test_layout.c ---------------------------- */

#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

int64_t cg_layout_offset(cg_struct_id s, int field) {
  if (LLVMInitializeNativeTarget()) return -1;
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *msg = NULL;
  int64_t off = -1;
  if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
    LLVMDisposeMessage(msg);
    LLVMDisposeMessage(triple);
    return -1;
  }
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, "", "", LLVMCodeGenLevelNone,
                                                    LLVMRelocPIC, LLVMCodeModelJITDefault);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  LLVMContextRef c = LLVMContextCreate();
  cg_types t;
  cg_types_init(&t, c);
  LLVMTypeRef all[] = {t.view,   t.batch,  t.seg,     t.run,     t.value,  t.rowbuf,
                       t.agg,    t.aggtab, t.arena,   t.treenum, t.treeagg, t.treeacc,
                       t.jointab};
  if ((unsigned)s < sizeof all / sizeof all[0]) {
    LLVMTypeRef st = all[s];
    if (field < 0) off = (int64_t)LLVMABISizeOfType(td, st);
    else if ((unsigned)field < LLVMCountStructElementTypes(st))
      off = (int64_t)LLVMOffsetOfElement(td, st, (unsigned)field);
  }
  LLVMContextDispose(c);
  LLVMDisposeTargetData(td);
  LLVMDisposeTargetMachine(tm);
  LLVMDisposeMessage(triple);
  return off;
}
