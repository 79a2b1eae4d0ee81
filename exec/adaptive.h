/*
 * adaptive.h — adaptive execution and the compile cache of an engine.
 *
 * Mode auto starts a query on the interpreter at once and compiles its
 * plan on the engine's background compile thread; the batch picker
 * (ex_pick) switches to the compiled loops at the first batch after the
 * compile is ready. Compiled modules are kept in a small LRU cache keyed
 * by everything the generated code depends on (ex_cache_key), so running
 * the same pipeline again reuses them.
 *
 * Threads: the engine's thread (the only caller of these functions) and
 * one compile thread per engine, started on the first submitted job. One
 * mutex guards the queue, the jobs' states and the cache; the picker only
 * reads an atomic pointer per batch.
 */
#ifndef PJ_ADAPTIVE_H
#define PJ_ADAPTIVE_H

#include <stdatomic.h>

#include "backend.h"

typedef struct ex_adapt ex_adapt;
typedef struct ex_job ex_job;

/* The compile cache holds this many modules by default (LRU). */
#define EX_CACHE_CAP 64

/* The adaptive state of an engine whose compiles go to backend b (the
 * JIT), which also owns the cached codes. */
ex_adapt *ex_adapt_new(const ex_backend *b);
/* Cancels queued jobs, stops the running one at its next step and waits
 * for it, joins the thread, frees the cache. Every job must have been
 * released (handles are freed before their engine). */
void ex_adapt_free(ex_adapt *a);

/* ---- the cache ---------------------------------------------------------- */

/* The key of a compiled plan: opt level and pass pipeline, the parameter
 * types the plan assumed, the shape (type, nullability, sortedness) of
 * every scanned table column, the pipeline text and the printed plan.
 * Generated code bakes in column types, nullability, column ids, string
 * ids of the engine's pool and constants, but no pointer from the plan:
 * it reads tables, parameters and the plan's ops through the ex_seg of
 * the run. So a table replaced by one of the same shape may reuse the
 * code; one with another shape, or a new parameter type, cannot. Returns
 * a malloc'd string (NULL when out of memory). */
char *ex_cache_key(const char *text, size_t len, const ir_plan *p, const char *plan_text,
                   int opt_level, const char *passes);
/* A new reference to the module cached under key, or NULL. */
ex_code *ex_cache_get(ex_adapt *a, const char *key);
/* Caches m under key (the cache takes its own reference; an existing
 * entry for the key stays). */
void ex_cache_put(ex_adapt *a, const char *key, ex_code *m);
/* Changes whenever a module is added: a key that missed at generation g
 * misses again while the generation is g. */
uint64_t ex_cache_generation(ex_adapt *a);
/* Bounds the cache (0 disables it; entries beyond the bound go now). */
void ex_cache_set_cap(ex_adapt *a, int cap);

/* ---- background compiles ------------------------------------------------ */

/* Queues a compile of plan p, or shares the running compile of the same
 * key. The plan must stay alive until ex_job_release; the compile thread
 * reads it only until the IR is emitted. The result goes to the cache under key (copied) whenever the
 * compile succeeds. Returns the
 * caller's reference, or NULL when no thread could be started. */
ex_job *ex_job_submit(ex_adapt *a, ex_compiler *jit, const ir_plan *p, int opt_level,
                      const char *key);
/* The compiled module once ready (borrowed from the job), else NULL.
 * Cheap: one atomic load. */
ex_code *ex_job_ready(ex_job *j);
/* Waits for the job to end; a new reference to its module, or NULL with
 * err set when it failed. */
ex_code *ex_job_wait(ex_job *j, rt_err *err);
/* Time the compile took (0 until ready). */
int64_t ex_job_compile_ns(const ex_job *j);
/* Drops the caller's reference. A job the thread has not taken yet is
 * cancelled; one it has begun is finished and cached (see adaptive.c).
 * Waits only while the compile thread is reading the plan (emitting IR),
 * never for the LLVM passes or code generation, so the plan can be freed
 * when this returns. */
void ex_job_release(ex_job *j);

/* ---- picking a backend per batch ---------------------------------------- */

/* Segments of a plan the picker can judge (later ones just run the code
 * once ready, as without judging). */
#define EX_PICK_SEGS 32
/* Measured batches of each backend a judged segment compares, and the
 * margin (percent) by which compiled code must be slower to be dropped. */
#define EX_PROBE_BATCHES 3
#define EX_SLOWER_PCT 5

/* What the picker measured of one segment (judge on). */
typedef struct ex_segcost {
  int64_t ns[2];        /* summed batch times: [0] interpreter, [1] compiled */
  int n[2];             /* … of this many measured batches */
  int ran[2];           /* batches run by each backend (measured or not) */
  int8_t seen;          /* picked at least once */
  int8_t decided;       /* 0 undecided, 1 interpreter, 2 compiled code */
} ex_segcost;

/* The state of one run's picker (ex_pick_fn context). Exactly one of the
 * following holds: code set (run compiled code), job set (interpret until
 * the job is ready, then run its code), neither (interpret). force_switch
 * alternates backends at every batch: 1 starts with the interpreter, 2
 * with compiled code (needs code); it overrides judging.
 *
 * judge = 1 (mode auto, when the run starts interpreted and compiles in
 * the background) keeps the faster backend per segment, measured as the
 * run goes: see ex_pick in adaptive.c. clock (NULL: rt_now_ns) lets a
 * test feed fake timings. A zeroed picker does not judge. */
typedef struct ex_picker {
  const ex_backend *interp;  /* runs a batch without code */
  const ex_backend *jit;     /* runs a batch with code (code, job's) */
  ex_code *code;   /* borrowed */
  ex_job *job;              /* borrowed */
  int force_switch;
  int64_t batches, jit_batches;
  int judge;
  int64_t (*clock)(void *clock_ctx);
  void *clock_ctx;
  /* the previous pick: its time, segment and backend (1 compiled) */
  int64_t last_ns;
  int last_seg, last_jit;
  /* segments judged that went back to the interpreter */
  int switched_back;
  ex_segcost cost[EX_PICK_SEGS];
} ex_picker;

ex_batch_fn ex_pick(void *picker, int seg);

/* ---- test hooks and numbers -------------------------------------------- */

/* hold = 1: the compile thread takes no new job until hold = 0 (lets a
 * test see a run end before its compile starts). */
void ex_adapt_hold(ex_adapt *a, int hold);
/* Waits until no job is queued or compiling (and hold is off). */
void ex_adapt_drain(ex_adapt *a);

typedef struct ex_adapt_stats {
  int64_t submitted;   /* background compiles queued */
  int64_t compiled;    /* … that finished and were cached */
  int64_t cancelled;   /* … dropped: their handle let go before they began,
                          or the engine closed */
  int64_t failed;      /* … that failed (the run stays on the interpreter) */
  int64_t hits, misses, evictions;   /* cache lookups */
  int cached;          /* modules in the cache now */
} ex_adapt_stats;
void ex_adapt_get_stats(ex_adapt *a, ex_adapt_stats *out);

#endif
