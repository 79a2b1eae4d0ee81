/*
 * budget.h — the memory budget of one query run (pj_engine_set_max_memory,
 * the CLI's --max-memory).
 *
 * The structures that grow with the data — row buffers (sort inputs,
 * interval operands, tree orderings, results), aggregation tables and the
 * tree runtime's large arrays — charge their growth to the budget of the
 * run executing on the calling thread and credit it back when freed. A
 * growth that would pass the limit is refused: the structure stays at its
 * old size exactly as if malloc had failed, and the budget remembers that
 * it was exceeded so the driver can stop the run with a clear error.
 *
 * The budget is found through a thread-local pointer that the driver sets
 * for the duration of a run (ex_run_plan), so the runtime's signatures and
 * the layouts generated code reads stay as they are, and the adaptive
 * compile thread (which allocates no run state) is never charged. With no
 * budget installed every call is a no-op.
 */
#ifndef PJ_BUDGET_H
#define PJ_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/* Who holds the memory: the stage whose state it is (the operator's
 * stage name), so a refused growth can name the stage that holds the
 * most and what each holds ("TREE ACCUMULATE holds 19 MB"). */
#define RT_BUDGET_HOLDERS 16
typedef struct rt_budget_holder {
  const char *stage;   /* not owned: a plan's stage name (static or the
                          plan's arena, which outlives the run) */
  int64_t bytes;
} rt_budget_holder;

typedef struct rt_budget {
  int64_t limit;       /* bytes; 0 = no limit (usage is still tracked) */
  int64_t used;        /* bytes charged and not yet credited */
  int64_t peak;        /* highest `used` seen */
  int64_t refused;     /* size of the first growth refused, 0 if none */
  int exceeded;        /* 1 once a growth was refused */
  int oom;             /* 1 once an allocation failed (rt_budget_oom) */
  int refused_by;      /* holder index of that growth */
  int nholders;
  rt_budget_holder holders[RT_BUDGET_HOLDERS];
  /* holders[] as they were at the first refusal (the error reports
   * these: by the time it is written the failing stage freed its work) */
  rt_budget_holder at_refusal[RT_BUDGET_HOLDERS];
} rt_budget;

/* Installs b (may be NULL) as the calling thread's budget; returns the
 * previous one so runs can nest. */
rt_budget *rt_budget_use(rt_budget *b);
/* Makes `stage` the holder that the calling thread's charges and credits
 * go to from now on (the driver sets it to the stage whose state grows:
 * a segment's sink, an interval source while it works); returns the
 * previous one, to restore. NULL means "RUN". */
const char *rt_budget_owner(const char *stage);
/* Charges `bytes` more to the thread's budget, held by the current owner:
 * false (and the budget marked exceeded) when that would pass the limit,
 * in which case the caller must not allocate. */
bool rt_budget_charge(int64_t bytes);
/* Records that an allocation of the run failed (malloc said no, not the
 * limit): a structure that cannot grow stays as it was, like a refused
 * growth, and the driver stops the run with "out of memory" at its next
 * check instead of going on with what did not fit. No-op without a
 * budget. */
void rt_budget_oom(void);
/* Gives back bytes charged earlier (clamped at zero: frees of memory
 * allocated outside the run are not counted twice). */
void rt_budget_credit(int64_t bytes);
/* The same for a named holder whatever the current owner (structures
 * that always belong to one stage: the tree runtime's arrays). */
bool rt_budget_charge_as(const char *stage, int64_t bytes);
void rt_budget_credit_as(const char *stage, int64_t bytes);

/* malloc, calloc, realloc and free for working arrays (sort permutations,
 * interval operands, indexes and scratch, join tables, tree orders):
 * each block carries its size in a 16-byte header, so the free credits
 * exactly what the allocation charged. A charge the budget refuses is a
 * NULL return like malloc's, which the caller reports as out of memory
 * and the driver turns into the budget error. A block from these must be
 * freed with rt_mem_free (and only such blocks). rt_mem_big returns a
 * block aligned to and advised for 2 MiB huge pages from 2 MiB up (the
 * first-touch page faults of big sweeps cost more than the sweeps);
 * rt_mem_realloc of it copies. */
void *rt_mem_alloc(size_t bytes);
void *rt_mem_calloc(size_t n, size_t size);
void *rt_mem_realloc(void *p, size_t bytes);
void *rt_mem_big(size_t bytes);
void rt_mem_free(void *p);

#endif
