/*
 * cg_off.c — cg.h in a library built without LLVM (PJ_WITH_LLVM=OFF, in
 * place of every other file of codegen/ but cg_size.c and cg_backend.c,
 * whose backend table is made of these functions): there is no JIT.
 * cg_jit_new fails saying so, which the engine reports for mode jit (the
 * CLI before it runs anything) and mode auto takes as "interpret
 * everything" (api/query.c). No cg_jit is ever made, so no cg_module is
 * either: the functions over modules are given NULL only, and the
 * compiles fail with the same message should anything call them.
 */
#include "cg.h"

#define CG_OFF_MSG "JIT: not built in (pipejit was built with PJ_WITH_LLVM=OFF; use mode interp or auto)"

cg_jit *cg_jit_new(rt_err *err) {
  rt_errorf(err, -1, CG_OFF_MSG);
  return NULL;
}

void cg_jit_free(cg_jit *j) {}

cg_module *cg_compile_begin(cg_jit *j, const ir_plan *p, int opt_level, rt_err *err) {
  if (!err->set) rt_errorf(err, -1, CG_OFF_MSG);
  return NULL;
}

int cg_compile_end(cg_module *m, const atomic_int *cancel, rt_err *err) {
  if (!err->set) rt_errorf(err, -1, CG_OFF_MSG);
  return 0;
}

cg_module *cg_compile_interruptible(cg_jit *j, const ir_plan *p, int opt_level,
                                    const volatile int *interrupt, rt_err *err) {
  return cg_compile_begin(j, p, opt_level, err);
}

cg_module *cg_compile(cg_jit *j, const ir_plan *p, int opt_level, rt_err *err) {
  return cg_compile_begin(j, p, opt_level, err);
}

/* ---- over modules (never given one) ----------------------------------- */

ex_batch_fn cg_segment_fn(const cg_module *m, int seg) { return NULL; }
int cg_segment_compiled(const cg_module *m, int seg) { return 0; }
void cg_module_set_interrupt(cg_module *m, const volatile int *interrupt) {}
cg_module *cg_module_ref(cg_module *m) { return m; }
void cg_module_set_plan(cg_module *m, const ir_plan *p) {}
const char *cg_ir_text(const cg_module *m, int optimized) { return NULL; }
const char *cg_asm_text(cg_module *m) { return NULL; }
int64_t cg_compile_ns(const cg_module *m) { return 0; }
void cg_module_free(cg_module *m) {}
void cg_jit_set_passes(cg_jit *j, int level, const char *passes) {}
const char *cg_jit_passes(const cg_jit *j, int level) { return ""; }
