/*
 * vm_backend.c — the interpreter as an exec/ backend (exec/backend.h):
 * nothing to compile, every segment runs vm_run_batch.
 */
#include "vm.h"

static ex_batch_fn vm_backend_run_batch(const ex_code *code, int seg) {
  (void)code;
  (void)seg;
  return vm_run_batch;
}

const ex_backend vm_backend = {
    .name = "interp",
    .run_batch = vm_backend_run_batch,
};
