/*
 * budget.c — the per-run memory budget (see budget.h): a thread-local
 * pointer to the running query's counter, charged by the growth of
 * breaker state and credited by its frees.
 */
#include <stddef.h>

#include "budget.h"

static _Thread_local rt_budget *rt_budget_cur;

rt_budget *rt_budget_use(rt_budget *b) {
  rt_budget *prev = rt_budget_cur;
  rt_budget_cur = b;
  return prev;
}

bool rt_budget_charge(int64_t bytes) {
  rt_budget *b = rt_budget_cur;
  if (!b || bytes <= 0) return true;
  if (b->limit > 0 && (b->used > b->limit - bytes)) {
    if (!b->exceeded) b->refused = bytes;
    b->exceeded = 1;
    return false;
  }
  b->used += bytes;
  if (b->used > b->peak) b->peak = b->used;
  return true;
}

void rt_budget_credit(int64_t bytes) {
  rt_budget *b = rt_budget_cur;
  if (!b || bytes <= 0) return;
  b->used = b->used > bytes ? b->used - bytes : 0;
}
