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

#include <stdatomic.h>

#include "exec/backend.h"

/* The JIT's compiler and compiled plans are exec/'s ex_compiler and
 * ex_code (backend.h); cg_backend is the JIT as an exec/ backend. */
typedef struct ex_compiler cg_jit;
typedef struct ex_code cg_module;
extern const ex_backend cg_backend;

cg_jit *cg_jit_new(rt_err *err);
void cg_jit_free(cg_jit *j);

/* Compiles every segment of the plan at opt level 0..3. Returns NULL and
 * sets err on failure. */
cg_module *cg_compile(cg_jit *j, const ir_plan *p, int opt_level, rt_err *err);
/* The same, giving up at its next step once *interrupt (may be NULL: the
 * engine's interrupt flag, set from another thread or a signal handler)
 * is non-zero, with "JIT: the compile was interrupted". */
cg_module *cg_compile_interruptible(cg_jit *j, const ir_plan *p, int opt_level,
                                    const volatile int *interrupt, rt_err *err);

/* The size of what a plan compiles to, in expression nodes (every
 * expression node, plus one per column a sink stores and per aggregate):
 * what compile time grows with. */
int64_t cg_plan_size(const ir_plan *p);
/* Plans larger than this compile at opt level 0 whatever the level asked
 * (workload fused is about 40 nodes; 1,000 nodes took 50-300 ms at
 * level 2)
 * (FastISel, no IR passes): LLVM's instruction scheduler and register
 * allocator at the other levels grow faster than linearly with the size
 * of a basic block (a 4,000-column EXTEND took 19.6 s at level 2), while
 * level 0 stays near 10-50 us per node. A loop that large is bound by its
 * stores and calls, which the optimizations hardly speed up. */
#define CG_BIG_PLAN 400
/* Estimated compile time of a plan at opt level 0 and 2, in ns (for mode
 * auto: see api/query.c), from its size. */
int64_t cg_compile_estimate_ns(const ir_plan *p, int opt_level);
ex_batch_fn cg_segment_fn(const cg_module *m, int seg);
/* 1 when segment `seg` runs machine code; 0 when cg_segment_fn gives the
 * interpreter because the segment only copies rows into a buffer (no
 * steps, OUTPUT or SORT sink: memcpy beats a compiled loop, and compiling
 * it would cost more than it saves). */
int cg_segment_compiled(const cg_module *m, int seg);
/* cg_compile in two phases, for a compile on another thread (see jit.c's
 * banner). cg_compile_begin reads the plan: it emits the IR into a fresh
 * context and copies the pass pipeline of the level; the plan must stay
 * alive and unchanged until it returns, and no longer (except for the raw
 * IR dump: see cg_module_set_plan). cg_compile_end verifies, optimizes,
 * emits and links without the plan; when *cancel (may be NULL) is set it
 * gives up at its next step ("JIT: the compile was cancelled"). Returns 1
 * on success, 0 with err set (the caller frees the module). Different
 * modules may be compiled on different threads at the same time. */
cg_module *cg_compile_begin(cg_jit *j, const ir_plan *p, int opt_level, rt_err *err);
int cg_compile_end(cg_module *m, const atomic_int *cancel, rt_err *err);
/* The engine's interrupt flag for cg_compile_end to watch besides cancel
 * (NULL: none). */
void cg_module_set_interrupt(cg_module *m, const volatile int *interrupt);

/* Modules are reference counted (the compile cache shares them between
 * handles): cg_compile gives one reference, cg_module_ref adds one,
 * cg_module_free drops one and frees the code with the last. */
cg_module *cg_module_ref(cg_module *m);
/* The plan cg_ir_text(m, 0) rebuilds the raw IR from (the module does
 * not own it): an equal plan kept alive by the caller, or NULL (no raw
 * dump). The generated code itself never reads the plan it was compiled
 * from: it reads the running plan through ex_seg. */
void cg_module_set_plan(cg_module *m, const ir_plan *p);

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
