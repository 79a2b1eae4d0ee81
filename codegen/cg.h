/*
 * cg.h — the LLVM backend's interface: compile a plan's segments into
 * machine-code batch functions (ex_batch_fn) that do, in one loop over a
 * batch's active rows, every step of the segment and the sink update.
 *
 * Only jit.c knows ORC. One cg_jit (an LLJIT) per engine; one cg_module per
 * compiled plan, owning a resource tracker that frees its code.
 */
#ifndef PJ_CG_H
#define PJ_CG_H

#include "../exec/exec.h"

typedef struct cg_jit cg_jit;
typedef struct cg_module cg_module;

cg_jit *cg_jit_new(rt_err *err);
void cg_jit_free(cg_jit *j);

/* Compiles every segment of the plan at opt level 0..3. Returns NULL and
 * sets err on failure. */
cg_module *cg_compile(cg_jit *j, const ir_plan *p, int opt_level, rt_err *err);
ex_batch_fn cg_segment_fn(const cg_module *m, int seg);
/* 1 when segment `seg` runs machine code; 0 when cg_segment_fn gives the
 * interpreter because the segment only copies rows into a buffer (no
 * steps, OUTPUT or SORT sink: memcpy beats a compiled loop, and compiling
 * it would cost more than it saves). */
int cg_segment_compiled(const cg_module *m, int seg);
/* LLVM IR text after (optimized=1) or before (0) optimization; assembly. */
const char *cg_ir_text(const cg_module *m, int optimized);
const char *cg_asm_text(cg_module *m);
/* Time spent compiling (text in IR → callable), ns. */
int64_t cg_compile_ns(const cg_module *m);
void cg_module_free(cg_module *m);

/* The pass pipeline (LLVMRunPasses syntax) of an opt level; the override
 * lets the benchmark harness measure alternatives (NULL restores the
 * built-in pipeline). */
void cg_jit_set_passes(cg_jit *j, int level, const char *passes);
const char *cg_jit_passes(const cg_jit *j, int level);

#endif
