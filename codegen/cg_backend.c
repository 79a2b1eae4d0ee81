/*
 * cg_backend.c — the JIT as an exec/ backend (exec/backend.h): the
 * interface's entries are cg.h's functions (cg_module and cg_jit are its
 * ex_code and ex_compiler).
 */
#include "cg.h"

/* A background compile must not keep the plan, which belongs to the
 * handle that asked (the raw IR dump sets it again when needed). */
static cg_module *cg_backend_begin(cg_jit *j, const ir_plan *p, int opt_level, rt_err *err) {
  cg_module *m = cg_compile_begin(j, p, opt_level, err);
  cg_module_set_plan(m, NULL);
  return m;
}

const ex_backend cg_backend = {
    .name = "jit",
    .compile_begin = cg_backend_begin,
    .compile_end = cg_compile_end,
    .run_batch = cg_segment_fn,
    .ref = cg_module_ref,
    .release = cg_module_free,
    .compile_ns = cg_compile_ns,
};
