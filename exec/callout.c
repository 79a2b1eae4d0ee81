/*
 * callout.c — calling the engine's functions from a running plan
 * (IX_CALLOUT, ir/plan.h's ir_callout): the one place both backends go
 * through, one row at a time, so they agree on every value and error.
 */
#include <stdio.h>

#include "exec.h"

int64_t ex_callout(ex_run *run, int32_t idx, const int64_t *argv, int64_t nulls,
                   int32_t *status) {
  const ir_callout *c = &run->plan->callouts[idx];
  if (c->subq) return ex_subq_call(run, c, argv, (uint64_t)nulls, status);
  char msg[400] = "";
  int64_t out = 0;
  int r = c->fn(c->ctx, argv, (uint64_t)nulls, &out, msg, sizeof msg);
  if (r < 0) {
    rt_errorf(&run->err, c->pos, "%s: %s", c->stage ? c->stage : "RUN",
              msg[0] ? msg : "the call failed");
    *status = -1;
    return 0;
  }
  *status = r;   /* 1: NULL */
  return r ? 0 : out;
}
