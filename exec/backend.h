/*
 * backend.h — what the driver and adaptive execution ask of a backend.
 *
 * Two backends implement it: the interpreter (interp/vm_backend.c:
 * vm_backend) runs every segment straight from the plan and compiles
 * nothing; the JIT (codegen/cg_backend.c: cg_backend) compiles a plan into
 * code whose segments run as machine code. exec/ reaches either only
 * through this table, so it includes no header of theirs; the public API
 * (api/) hands it the backends (ex_picker, ex_adapt_new).
 *
 * A backend's compiled plan is an ex_code (opaque, reference counted: the
 * compile cache and query handles share them); its compiler, one per
 * engine, an ex_compiler. The JIT's are cg_module and cg_jit
 * (codegen/cg.h), which are these same types.
 */
#ifndef PJ_BACKEND_H
#define PJ_BACKEND_H

#include <stdatomic.h>

#include "exec.h"

typedef struct ex_code ex_code;
typedef struct ex_compiler ex_compiler;

typedef struct ex_backend {
  const char *name;   /* "interp", "jit" */
  /* Compiles plan p at opt level 0..3, in two phases so that the long one
   * can run on another thread: compile_begin reads the plan (which the
   * caller may free once it returns: the code keeps no pointer to it);
   * compile_end does the rest without it, giving up at its next step once
   * *cancel (may be NULL) is set. begin returns NULL, end 0, with err set
   * on failure (the caller then releases the code). NULL for a backend
   * that runs plans as they are (the interpreter). */
  ex_code *(*compile_begin)(ex_compiler *c, const ir_plan *p, int opt_level, rt_err *err);
  int (*compile_end)(ex_code *code, const atomic_int *cancel, rt_err *err);
  /* The batch function of segment seg of the plan `code` was compiled
   * from (code is NULL for the interpreter, which needs none). */
  ex_batch_fn (*run_batch)(const ex_code *code, int seg);
  /* References: ref adds one, release drops one (and frees the code with
   * the last; NULL is ignored). */
  ex_code *(*ref)(ex_code *code);
  void (*release)(ex_code *code);
  /* Time compile_begin + compile_end took, ns. */
  int64_t (*compile_ns)(const ex_code *code);
} ex_backend;

#endif
