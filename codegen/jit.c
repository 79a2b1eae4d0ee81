/*
 * jit.c — everything that knows ORC: one LLJIT per engine, one resource
 * tracker per compiled plan, the optimization pipeline, object emission,
 * and the IR / assembly dumps.
 *
 * Compiling a plan: emit every segment into a fresh module (cg_segment.c),
 * verify it, run the pass pipeline of the requested level, emit an object
 * file with a target machine for the host CPU and its features (cached per
 * level, so level 0 really uses the fast instruction selector), and add
 * the object to the LLJIT under the module's own resource tracker. Looking
 * up the segment functions links it. Runtime functions are absolute
 * symbols defined once in the main JITDylib (cg_runtime.c lists them), so
 * nothing is resolved by searching the process.
 *
 * The optimized module is kept (unchanged by code generation, which runs
 * on a clone) for the IR and assembly dumps; the raw IR is produced again
 * on demand from the plan, which the query keeps alive as long as this
 * module, so compiling never pays for a dump nobody asks for.
 *
 * Threads. A compile may run on the engine's background compile thread
 * (exec/adaptive.c) while the caller's thread compiles another plan, runs
 * code or frees modules. Each compile has its own LLVMContext; target
 * machines (not safe to share between concurrent code generations) are
 * checked out of a small per-level pool; the serial number, the pool and
 * the pass overrides are under the cg_jit's mutex; ORC itself is
 * thread-safe. A compile is two phases so that the plan can be let go
 * early: cg_compile_begin reads the plan (emits the IR), cg_compile_end
 * only touches the module (verify, optimize, emit, link) and can be
 * cancelled between its steps.
 *
 * Optimization levels (pipelines measured in bench/, see README):
 *   0  no IR passes, CodeGenOptLevel None (FastISel)
 *   1  function(sroa,instcombine,simplifycfg), CodeGenOptLevel Less
 *   2  CG_DEFAULT_PIPELINE (the default), CodeGenOptLevel Default
 *   3  default<O3>, CodeGenOptLevel Aggressive
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "emit.h"
#include "interp/vm.h"

/* The cheapest pipeline that gives default<O2>'s loops on our segments:
 * promote the allocas, remove redundant loads, fold, clean the CFG.
 * Measured with pipejit-bench (workload fused, 1M rows, this machine):
 *   this list       cg_compile 8.1-9.5 ms   7.6 ns/row (filter_project 7.8)
 *   + licm,gvn      cg_compile 9.3-10.6 ms  7.5 ns/row
 *   default<O2>     cg_compile 16.8-18 ms   7.4 ns/row (filter_project 7.4)
 * i.e. O2 buys ~3% at twice the compile time. Nothing vectorizes either
 * way: the loops are full of row-dependent control flow (filters, probes),
 * and sums must keep the interpreter's order to give identical results. */
#define CG_DEFAULT_PIPELINE "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg)"
/* The same for a module with a straight-line loop (cg_vagg.c), plus what
 * that loop is for: rotated, vectorized, cleaned up. */
#define CG_VECTOR_PIPELINE                                                              \
  "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(loop-rotate)," \
  "loop-vectorize,instcombine<no-verify-fixpoint>,simplifycfg)"

/* Free target machines kept per level: one per thread that compiles at
 * the same time is all that is ever needed (the caller and the background
 * compile thread). */
#define CG_TM_POOL 4

struct ex_compiler {   /* cg_jit */
  LLVMOrcLLJITRef lljit;
  LLVMOrcJITDylibRef jd;
  LLVMTargetRef target;
  char *triple, *cpu, *features, *datalayout;
  pthread_mutex_t mu;        /* guards tm, ntm, passes, serial */
  LLVMTargetMachineRef tm[4][CG_TM_POOL];
  int ntm[4];
  char *passes[4];           /* overrides (cg_jit_set_passes), NULL = built-in */
  uint64_t serial;
};

struct ex_code {   /* cg_module */
  atomic_int refs;           /* cg_module_ref / cg_module_free */
  cg_jit *jit;
  const ir_plan *plan;       /* for the raw IR dump only; may be NULL */
  const volatile int *interrupt;   /* while a foreground compile runs */
  int opt_level;
  char *passes;              /* the pipeline, copied when the compile began */
  char prefix[32];
  LLVMContextRef ctx;
  LLVMModuleRef mod;         /* after optimization */
  LLVMOrcResourceTrackerRef rt;
  int nsegs;
  bool *wanted;              /* by segment: compiled (cg_segment_wanted) */
  int nwanted;
  ex_batch_fn *fns;
  int64_t compile_ns;
  char *ir_raw, *ir_opt, *asm_text;
};

static const char *const cg_builtin_passes[4] = {
    "",
    "function(sroa,instcombine<no-verify-fixpoint>,simplifycfg)",
    CG_DEFAULT_PIPELINE,
    "default<O3>",
};

/* Moves an LLVM error into err ("JIT: <what>: <message>"). */
static int cg_llvm_fail(rt_err *err, const char *what, LLVMErrorRef e) {
  char *msg = LLVMGetErrorMessage(e);
  rt_errorf(err, -1, "JIT: %s: %s", what, msg);
  LLVMDisposeErrorMessage(msg);
  return 0;
}

/* ---- the engine's JIT ------------------------------------------------------ */

/* LLVM's target registry is process-wide and filled without locking:
 * engines opened on several threads at once must not initialize it
 * concurrently, so it is done once for the process. */
static pthread_once_t cg_llvm_once = PTHREAD_ONCE_INIT;
static int cg_llvm_failed;
static void cg_llvm_init(void) {
  cg_llvm_failed = LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter();
}

cg_jit *cg_jit_new(rt_err *err) {
  pthread_once(&cg_llvm_once, cg_llvm_init);
  if (cg_llvm_failed) {
    rt_errorf(err, -1, "JIT: this machine's target is not available in LLVM");
    return NULL;
  }
  cg_jit *j = calloc(1, sizeof *j);
  if (!j) {
    rt_errorf(err, -1, "JIT: out of memory");
    return NULL;
  }
  pthread_mutex_init(&j->mu, NULL);
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->lljit, NULL);
  if (e) {
    cg_llvm_fail(err, "cannot create the LLJIT", e);
    pthread_mutex_destroy(&j->mu);
    free(j);
    return NULL;
  }
  j->jd = LLVMOrcLLJITGetMainJITDylib(j->lljit);
  j->triple = rt_strdup(LLVMOrcLLJITGetTripleString(j->lljit));
  j->datalayout = rt_strdup(LLVMOrcLLJITGetDataLayoutStr(j->lljit));
  char *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
  j->cpu = rt_strdup(cpu);
  j->features = rt_strdup(feat);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(feat);
  if (!j->triple || !j->datalayout || !j->cpu || !j->features) {
    rt_errorf(err, -1, "JIT: out of memory");
    cg_jit_free(j);
    return NULL;
  }
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(j->triple, &j->target, &msg)) {
    rt_errorf(err, -1, "JIT: %s", msg ? msg : "no target");
    LLVMDisposeMessage(msg);
    cg_jit_free(j);
    return NULL;
  }

  /* Runtime functions as absolute symbols. */
  LLVMOrcCSymbolMapPair *syms = calloc((size_t)cg_nrtfns, sizeof *syms);
  if (!syms) {
    rt_errorf(err, -1, "JIT: out of memory");
    cg_jit_free(j);
    return NULL;
  }
  for (int i = 0; i < cg_nrtfns; i++) {
    syms[i].Name = LLVMOrcLLJITMangleAndIntern(j->lljit, cg_rtfns[i].name);
    syms[i].Sym.Address = (LLVMOrcJITTargetAddress)(uintptr_t)cg_rtfns[i].addr;
    syms[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    syms[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(syms, (size_t)cg_nrtfns);
  free(syms);
  e = LLVMOrcJITDylibDefine(j->jd, mu);
  if (e) {
    LLVMOrcDisposeMaterializationUnit(mu);
    cg_llvm_fail(err, "cannot define the runtime symbols", e);
    cg_jit_free(j);
    return NULL;
  }
  return j;
}

void cg_jit_free(cg_jit *j) {
  if (!j) return;
  for (int i = 0; i < 4; i++) {
    for (int k = 0; k < j->ntm[i]; k++) LLVMDisposeTargetMachine(j->tm[i][k]);
    free(j->passes[i]);
  }
  if (j->lljit) {
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->lljit);
    if (e) LLVMConsumeError(e);
  }
  free(j->triple);
  free(j->cpu);
  free(j->features);
  free(j->datalayout);
  pthread_mutex_destroy(&j->mu);
  free(j);
}

void cg_jit_set_passes(cg_jit *j, int level, const char *passes) {
  if (level < 0 || level > 3) return;
  char *copy = passes ? rt_strdup(passes) : NULL;
  pthread_mutex_lock(&j->mu);
  free(j->passes[level]);
  j->passes[level] = copy;
  pthread_mutex_unlock(&j->mu);
}

/* Not for use while another thread may call cg_jit_set_passes (the
 * returned text would go with the override it reads). */
const char *cg_jit_passes(const cg_jit *j, int level) {
  if (level < 0) level = 0;
  if (level > 3) level = 3;
  return j->passes[level] ? j->passes[level] : cg_builtin_passes[level];
}

/* A target machine of the level for this thread's exclusive use until
 * cg_tm_put (code generation mutates it). */
static LLVMTargetMachineRef cg_tm_get(cg_jit *j, int level) {
  LLVMTargetMachineRef tm = NULL;
  pthread_mutex_lock(&j->mu);
  if (j->ntm[level] > 0) tm = j->tm[level][--j->ntm[level]];
  pthread_mutex_unlock(&j->mu);
  if (tm) return tm;
  static const LLVMCodeGenOptLevel lv[4] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                             LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive};
  return LLVMCreateTargetMachine(j->target, j->triple, j->cpu, j->features, lv[level],
                                 LLVMRelocPIC, LLVMCodeModelJITDefault);
}

static void cg_tm_put(cg_jit *j, int level, LLVMTargetMachineRef tm) {
  if (!tm) return;
  pthread_mutex_lock(&j->mu);
  if (j->ntm[level] < CG_TM_POOL) {
    j->tm[level][j->ntm[level]++] = tm;
    tm = NULL;
  }
  pthread_mutex_unlock(&j->mu);
  if (tm) LLVMDisposeTargetMachine(tm);
}

/* ---- compiling a plan ------------------------------------------------------ */

/* A new module holding the plan's segment functions, not yet optimized. */
static LLVMModuleRef cg_build_module(cg_jit *j, LLVMContextRef ctx, const ir_plan *p,
                                     const char *prefix, bool *vector, rt_err *err) {
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(prefix, ctx);
  LLVMSetTarget(mod, j->triple);
  LLVMSetDataLayout(mod, j->datalayout);
  cg_ctx cx;
  cg_ctx_init(&cx, ctx, mod, p, err);
  int ok = cx.src && cx.row && cx.have && cx.params && cg_emit_plan(&cx, prefix);
  *vector = cx.vector_loops;
  cg_ctx_dispose(&cx);
  if (!ok) {
    if (!err->set) rt_errorf(err, -1, "JIT: out of memory");
    LLVMDisposeModule(mod);
    return NULL;
  }
  /* Let the backend and the vectorizer's cost model see the host CPU. */
  LLVMAttributeRef acpu = LLVMCreateStringAttribute(ctx, "target-cpu", 10, j->cpu, (unsigned)strlen(j->cpu));
  LLVMAttributeRef afeat = LLVMCreateStringAttribute(ctx, "target-features", 15, j->features,
                                                     (unsigned)strlen(j->features));
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, acpu);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, afeat);
  }
  return mod;
}

static void cg_module_dispose_llvm(cg_module *m) {
  if (m->mod) LLVMDisposeModule(m->mod);
  if (m->ctx) LLVMContextDispose(m->ctx);
  m->mod = NULL;
  m->ctx = NULL;
}

/* Checked between the steps of cg_compile_end (verify, passes, code
 * generation, linking): an abandoned module is freed by the caller. */
static int cg_cancelled(const cg_module *m, const atomic_int *cancel, rt_err *err) {
  if (m->interrupt && __atomic_load_n(m->interrupt, __ATOMIC_RELAXED)) {
    rt_errorf(err, -1, "JIT: the compile was interrupted");
    return 1;
  }
  if (!cancel || !atomic_load_explicit(cancel, memory_order_relaxed)) return 0;
  rt_errorf(err, -1, "JIT: the compile was cancelled");
  return 1;
}

void cg_module_set_interrupt(cg_module *m, const volatile int *interrupt) {
  if (m) m->interrupt = interrupt;
}

cg_module *cg_compile_begin(cg_jit *j, const ir_plan *p, int opt_level, rt_err *err) {
  int64_t t0 = rt_now_ns();
  if (opt_level < 0) opt_level = 0;
  if (opt_level > 3) opt_level = 3;
  if (cg_plan_size(p) > CG_BIG_PLAN) opt_level = 0;   /* linear: see cg.h */
  cg_module *m = calloc(1, sizeof *m);
  if (!m) {
    rt_errorf(err, -1, "JIT: out of memory");
    return NULL;
  }
  atomic_init(&m->refs, 1);
  m->jit = j;
  m->plan = p;
  m->opt_level = opt_level;
  m->nsegs = p->nsegs;
  m->fns = calloc((size_t)p->nsegs + 1, sizeof *m->fns);
  m->wanted = calloc((size_t)p->nsegs + 1, sizeof *m->wanted);
  pthread_mutex_lock(&j->mu);
  unsigned long long serial = ++j->serial;
  m->passes = rt_strdup(cg_jit_passes(j, opt_level));
  pthread_mutex_unlock(&j->mu);
  snprintf(m->prefix, sizeof m->prefix, "pj%llu.", serial);
  if (!m->fns || !m->wanted || !m->passes) goto fail;
  for (int s = 0; s < p->nsegs; s++) m->nwanted += m->wanted[s] = cg_segment_wanted(&p->segs[s]);
  m->ctx = LLVMContextCreate();
  bool vector = false;
  m->mod = cg_build_module(j, m->ctx, p, m->prefix, &vector, err);
  if (!m->mod) goto fail;
  if (vector && !strcmp(m->passes, CG_DEFAULT_PIPELINE)) {
    char *vp = rt_strdup(CG_VECTOR_PIPELINE);
    if (!vp) goto fail;
    free(m->passes);
    m->passes = vp;
  }
  m->compile_ns = rt_now_ns() - t0;
  return m;

fail:
  if (!err->set) rt_errorf(err, -1, "JIT: out of memory");
  cg_module_free(m);
  return NULL;
}

int cg_compile_end(cg_module *m, const atomic_int *cancel, rt_err *err) {
  int64_t t0 = rt_now_ns();
  cg_jit *j = m->jit;
  LLVMTargetMachineRef tm = NULL;
  LLVMErrorRef e = NULL;
  if (cg_cancelled(m, cancel, err)) goto fail;
  char *msg = NULL;
  if (LLVMVerifyModule(m->mod, LLVMReturnStatusAction, &msg)) {
    rt_errorf(err, -1, "JIT: generated code is invalid: %.400s", msg ? msg : "");
    LLVMDisposeMessage(msg);
    goto fail;
  }
  LLVMDisposeMessage(msg);

  tm = cg_tm_get(j, m->opt_level);
  if (!tm) {
    rt_errorf(err, -1, "JIT: cannot create a target machine");
    goto fail;
  }
  if (m->passes[0]) {
    if (cg_cancelled(m, cancel, err)) goto fail;
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, m->opt_level >= 2);
    LLVMPassBuilderOptionsSetSLPVectorization(po, m->opt_level >= 2);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, m->opt_level >= 2);
    e = LLVMRunPasses(m->mod, m->passes, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
      cg_llvm_fail(err, "optimization failed", e);
      goto fail;
    }
  }

  if (!m->nwanted) {
    /* nothing to compile: every segment is a copy the interpreter does */
    for (int s = 0; s < m->nsegs; s++) m->fns[s] = vm_run_batch;
    cg_tm_put(j, m->opt_level, tm);
    m->compile_ns += rt_now_ns() - t0;
    return 1;
  }

  /* Code generation changes the IR it runs on: give it a copy. */
  if (cg_cancelled(m, cancel, err)) goto fail;
  LLVMModuleRef clone = LLVMCloneModule(m->mod);
  LLVMMemoryBufferRef obj = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, clone, LLVMObjectFile, &msg, &obj)) {
    rt_errorf(err, -1, "JIT: code generation failed: %s", msg ? msg : "");
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(clone);
    goto fail;
  }
  LLVMDisposeModule(clone);
  cg_tm_put(j, m->opt_level, tm);
  tm = NULL;
  if (cg_cancelled(m, cancel, err)) {
    LLVMDisposeMemoryBuffer(obj);
    goto fail;
  }

  m->rt = LLVMOrcJITDylibCreateResourceTracker(j->jd);
  e = LLVMOrcLLJITAddObjectFileWithRT(j->lljit, m->rt, obj);
  if (e) {
    cg_llvm_fail(err, "cannot add the object", e);
    goto fail;
  }
  for (int s = 0; s < m->nsegs; s++) {
    if (!m->wanted[s]) {
      m->fns[s] = vm_run_batch;   /* a plain copy: see cg_segment_wanted */
      continue;
    }
    char name[64];
    snprintf(name, sizeof name, "%sseg%d", m->prefix, s);
    LLVMOrcExecutorAddress addr = 0;
    e = LLVMOrcLLJITLookup(j->lljit, &addr, name);
    if (e) {
      cg_llvm_fail(err, "cannot link the segment", e);
      goto fail;
    }
    m->fns[s] = (ex_batch_fn)(uintptr_t)addr;
  }
  m->compile_ns += rt_now_ns() - t0;
  return 1;

fail:
  if (tm) cg_tm_put(j, m->opt_level, tm);
  return 0;
}

cg_module *cg_compile_interruptible(cg_jit *j, const ir_plan *p, int opt_level,
                                    const volatile int *interrupt, rt_err *err) {
  cg_module *m = cg_compile_begin(j, p, opt_level, err);
  cg_module_set_interrupt(m, interrupt);
  if (m && !cg_compile_end(m, NULL, err)) {
    cg_module_free(m);
    m = NULL;
  }
  if (m) m->interrupt = NULL;
  return m;
}

cg_module *cg_compile(cg_jit *j, const ir_plan *p, int opt_level, rt_err *err) {
  return cg_compile_interruptible(j, p, opt_level, NULL, err);
}

ex_batch_fn cg_segment_fn(const cg_module *m, int seg) {
  return m && seg >= 0 && seg < m->nsegs ? m->fns[seg] : NULL;
}

int cg_segment_compiled(const cg_module *m, int seg) {
  ex_batch_fn f = cg_segment_fn(m, seg);
  return f && f != vm_run_batch;
}

int64_t cg_compile_ns(const cg_module *m) { return m ? m->compile_ns : 0; }

cg_module *cg_module_ref(cg_module *m) {
  if (m) atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
  return m;
}

void cg_module_set_plan(cg_module *m, const ir_plan *p) {
  if (m) m->plan = p;
}

void cg_module_free(cg_module *m) {
  if (!m) return;
  /* acq_rel: the last owner sees every write the others made */
  if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1) return;
  if (m->rt) {
    LLVMErrorRef e = LLVMOrcResourceTrackerRemove(m->rt);
    if (e) LLVMConsumeError(e);
    LLVMOrcReleaseResourceTracker(m->rt);
  }
  cg_module_dispose_llvm(m);
  free(m->passes);
  free(m->wanted);
  free(m->fns);
  free(m->ir_raw);
  free(m->ir_opt);
  free(m->asm_text);
  free(m);
}

/* ---- dumps ----------------------------------------------------------------- */

static char *cg_take_message(char *s) {
  char *d = rt_strdup(s ? s : "");
  LLVMDisposeMessage(s);
  return d;
}

const char *cg_ir_text(const cg_module *cm, int optimized) {
  cg_module *m = (cg_module *)cm;   /* the texts are caches */
  if (!m) return NULL;
  if (optimized) {
    if (!m->ir_opt && m->mod) m->ir_opt = cg_take_message(LLVMPrintModuleToString(m->mod));
    return m->ir_opt;
  }
  if (!m->ir_raw && m->plan) {
    LLVMContextRef ctx = LLVMContextCreate();
    rt_err err = {0};
    bool vector;
    LLVMModuleRef mod = cg_build_module(m->jit, ctx, m->plan, m->prefix, &vector, &err);
    if (mod) {
      m->ir_raw = cg_take_message(LLVMPrintModuleToString(mod));
      LLVMDisposeModule(mod);
    }
    LLVMContextDispose(ctx);
  }
  return m->ir_raw;
}

const char *cg_asm_text(cg_module *m) {
  if (!m || !m->mod) return NULL;
  if (m->asm_text) return m->asm_text;
  LLVMModuleRef clone = LLVMCloneModule(m->mod);
  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  LLVMTargetMachineRef tm = cg_tm_get(m->jit, m->opt_level);
  int bad = !tm || LLVMTargetMachineEmitToMemoryBuffer(tm, clone, LLVMAssemblyFile, &msg, &buf);
  cg_tm_put(m->jit, m->opt_level, tm);
  LLVMDisposeModule(clone);
  if (bad) {
    LLVMDisposeMessage(msg);
    return NULL;
  }
  size_t n = LLVMGetBufferSize(buf);
  m->asm_text = malloc(n + 1);
  if (m->asm_text) {
    memcpy(m->asm_text, LLVMGetBufferStart(buf), n);
    m->asm_text[n] = 0;
  }
  LLVMDisposeMemoryBuffer(buf);
  return m->asm_text;
}
