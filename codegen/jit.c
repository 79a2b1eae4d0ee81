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
 * Optimization levels (pipelines measured in bench/, see README):
 *   0  no IR passes, CodeGenOptLevel None (FastISel)
 *   1  function(sroa,instcombine,simplifycfg), CodeGenOptLevel Less
 *   2  CG_DEFAULT_PIPELINE (the default), CodeGenOptLevel Default
 *   3  default<O3>, CodeGenOptLevel Aggressive
 */
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

/* The cheapest pipeline that gives default<O2>'s loops on our segments:
 * promote allocas, fold, clean the CFG, hoist loop invariants (the batch's
 * view pointers), then a last fold. See bench/README numbers. */
#define CG_DEFAULT_PIPELINE \
  "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(licm),gvn,simplifycfg)"

struct cg_jit {
  LLVMOrcLLJITRef lljit;
  LLVMOrcJITDylibRef jd;
  LLVMTargetRef target;
  char *triple, *cpu, *features, *datalayout;
  LLVMTargetMachineRef tm[4];
  char *passes[4];           /* overrides (cg_jit_set_passes), NULL = built-in */
  uint64_t serial;
};

struct cg_module {
  cg_jit *jit;
  const ir_plan *plan;
  int opt_level;
  char prefix[32];
  LLVMContextRef ctx;
  LLVMModuleRef mod;         /* after optimization */
  LLVMOrcResourceTrackerRef rt;
  int nsegs;
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

static char *cg_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- the engine's JIT ------------------------------------------------------ */

cg_jit *cg_jit_new(rt_err *err) {
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
    rt_errorf(err, -1, "JIT: this machine's target is not available in LLVM");
    return NULL;
  }
  cg_jit *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->lljit, NULL);
  if (e) {
    cg_llvm_fail(err, "cannot create the LLJIT", e);
    free(j);
    return NULL;
  }
  j->jd = LLVMOrcLLJITGetMainJITDylib(j->lljit);
  j->triple = cg_strdup(LLVMOrcLLJITGetTripleString(j->lljit));
  j->datalayout = cg_strdup(LLVMOrcLLJITGetDataLayoutStr(j->lljit));
  char *cpu = LLVMGetHostCPUName(), *feat = LLVMGetHostCPUFeatures();
  j->cpu = cg_strdup(cpu);
  j->features = cg_strdup(feat);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(feat);
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(j->triple, &j->target, &msg)) {
    rt_errorf(err, -1, "JIT: %s", msg ? msg : "no target");
    LLVMDisposeMessage(msg);
    cg_jit_free(j);
    return NULL;
  }

  /* Runtime functions as absolute symbols. */
  LLVMOrcCSymbolMapPair *syms = calloc((size_t)cg_nrtfns, sizeof *syms);
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
    if (j->tm[i]) LLVMDisposeTargetMachine(j->tm[i]);
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
  free(j);
}

void cg_jit_set_passes(cg_jit *j, int level, const char *passes) {
  if (level < 0 || level > 3) return;
  free(j->passes[level]);
  j->passes[level] = passes ? cg_strdup(passes) : NULL;
}

const char *cg_jit_passes(const cg_jit *j, int level) {
  if (level < 0) level = 0;
  if (level > 3) level = 3;
  return j->passes[level] ? j->passes[level] : cg_builtin_passes[level];
}

static LLVMTargetMachineRef cg_tm(cg_jit *j, int level) {
  if (!j->tm[level]) {
    static const LLVMCodeGenOptLevel lv[4] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                               LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive};
    j->tm[level] = LLVMCreateTargetMachine(j->target, j->triple, j->cpu, j->features, lv[level],
                                           LLVMRelocPIC, LLVMCodeModelJITDefault);
  }
  return j->tm[level];
}

/* ---- compiling a plan ------------------------------------------------------ */

/* A new module holding the plan's segment functions, not yet optimized. */
static LLVMModuleRef cg_build_module(cg_jit *j, LLVMContextRef ctx, const ir_plan *p,
                                     const char *prefix, rt_err *err) {
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(prefix, ctx);
  LLVMSetTarget(mod, j->triple);
  LLVMSetDataLayout(mod, j->datalayout);
  cg_ctx cx;
  cg_ctx_init(&cx, ctx, mod, p, err);
  int ok = cx.src && cx.row && cx.have && cx.params && cg_emit_plan(&cx, prefix);
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

cg_module *cg_compile(cg_jit *j, const ir_plan *p, int opt_level, rt_err *err) {
  int64_t t0 = rt_now_ns();
  if (opt_level < 0) opt_level = 0;
  if (opt_level > 3) opt_level = 3;
  cg_module *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->jit = j;
  m->plan = p;
  m->opt_level = opt_level;
  m->nsegs = p->nsegs;
  m->fns = calloc((size_t)p->nsegs + 1, sizeof *m->fns);
  snprintf(m->prefix, sizeof m->prefix, "pj%llu.", (unsigned long long)++j->serial);
  m->ctx = LLVMContextCreate();
  m->mod = cg_build_module(j, m->ctx, p, m->prefix, err);
  if (!m->mod || !m->fns) goto fail;

  int64_t tb = rt_now_ns();
  char *msg = NULL;
  if (LLVMVerifyModule(m->mod, LLVMReturnStatusAction, &msg)) {
    rt_errorf(err, -1, "JIT: generated code is invalid: %.400s", msg ? msg : "");
    LLVMDisposeMessage(msg);
    goto fail;
  }
  LLVMDisposeMessage(msg);

  int64_t tv = rt_now_ns();
  LLVMTargetMachineRef tm = cg_tm(j, opt_level);
  const char *passes = cg_jit_passes(j, opt_level);
  if (passes[0]) {
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, opt_level >= 2);
    LLVMPassBuilderOptionsSetSLPVectorization(po, opt_level >= 2);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, opt_level >= 2);
    LLVMErrorRef e = LLVMRunPasses(m->mod, passes, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
      cg_llvm_fail(err, "optimization failed", e);
      goto fail;
    }
  }

  int64_t tp = rt_now_ns();
  int wanted = 0;
  for (int s = 0; s < p->nsegs; s++) wanted += cg_segment_wanted(&p->segs[s]);
  if (!wanted) {
    /* nothing to compile: every segment is a copy the interpreter does */
    for (int s = 0; s < p->nsegs; s++) m->fns[s] = vm_run_batch;
    m->compile_ns = rt_now_ns() - t0;
    return m;
  }

  /* Code generation changes the IR it runs on: give it a copy. */
  LLVMModuleRef clone = LLVMCloneModule(m->mod);
  LLVMMemoryBufferRef obj = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, clone, LLVMObjectFile, &msg, &obj)) {
    rt_errorf(err, -1, "JIT: code generation failed: %s", msg ? msg : "");
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(clone);
    goto fail;
  }
  LLVMDisposeModule(clone);
  int64_t tc = rt_now_ns();

  m->rt = LLVMOrcJITDylibCreateResourceTracker(j->jd);
  LLVMErrorRef e = LLVMOrcLLJITAddObjectFileWithRT(j->lljit, m->rt, obj);
  if (e) {
    cg_llvm_fail(err, "cannot add the object", e);
    goto fail;
  }
  for (int s = 0; s < p->nsegs; s++) {
    if (!cg_segment_wanted(&p->segs[s])) {
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
  m->compile_ns = rt_now_ns() - t0;
  if (getenv("PJ_CG_TIME")) fprintf(stderr, "build %.3f verify %.3f passes %.3f codegen %.3f link %.3f\n", (tb-t0)/1e6, (tv-tb)/1e6, (tp-tv)/1e6, (tc-tp)/1e6, (rt_now_ns()-tc)/1e6);
  return m;

fail:
  cg_module_free(m);
  return NULL;
}

ex_batch_fn cg_segment_fn(const cg_module *m, int seg) {
  return m && seg >= 0 && seg < m->nsegs ? m->fns[seg] : NULL;
}

int cg_segment_compiled(const cg_module *m, int seg) {
  ex_batch_fn f = cg_segment_fn(m, seg);
  return f && f != vm_run_batch;
}

int64_t cg_compile_ns(const cg_module *m) { return m ? m->compile_ns : 0; }

void cg_module_free(cg_module *m) {
  if (!m) return;
  if (m->rt) {
    LLVMErrorRef e = LLVMOrcResourceTrackerRemove(m->rt);
    if (e) LLVMConsumeError(e);
    LLVMOrcReleaseResourceTracker(m->rt);
  }
  cg_module_dispose_llvm(m);
  free(m->fns);
  free(m->ir_raw);
  free(m->ir_opt);
  free(m->asm_text);
  free(m);
}

/* ---- dumps ----------------------------------------------------------------- */

static char *cg_take_message(char *s) {
  char *d = cg_strdup(s ? s : "");
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
  if (!m->ir_raw) {
    LLVMContextRef ctx = LLVMContextCreate();
    rt_err err = {0};
    LLVMModuleRef mod = cg_build_module(m->jit, ctx, m->plan, m->prefix, &err);
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
  if (LLVMTargetMachineEmitToMemoryBuffer(cg_tm(m->jit, m->opt_level), clone, LLVMAssemblyFile,
                                          &msg, &buf)) {
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(clone);
    return NULL;
  }
  LLVMDisposeModule(clone);
  size_t n = LLVMGetBufferSize(buf);
  m->asm_text = malloc(n + 1);
  if (m->asm_text) {
    memcpy(m->asm_text, LLVMGetBufferStart(buf), n);
    m->asm_text[n] = 0;
  }
  LLVMDisposeMemoryBuffer(buf);
  return m->asm_text;
}
