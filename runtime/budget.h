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

typedef struct rt_budget {
  int64_t limit;       /* bytes; 0 = no limit (usage is still tracked) */
  int64_t used;        /* bytes charged and not yet credited */
  int64_t peak;        /* highest `used` seen */
  int64_t refused;     /* size of the first growth refused, 0 if none */
  int exceeded;        /* 1 once a growth was refused */
} rt_budget;

/* Installs b (may be NULL) as the calling thread's budget; returns the
 * previous one so runs can nest. */
rt_budget *rt_budget_use(rt_budget *b);
/* Charges `bytes` more to the thread's budget: false (and the budget
 * marked exceeded) when that would pass the limit, in which case the
 * caller must not allocate. */
bool rt_budget_charge(int64_t bytes);
/* Gives back bytes charged earlier (clamped at zero: frees of memory
 * allocated outside the run are not counted twice). */
void rt_budget_credit(int64_t bytes);

#endif
