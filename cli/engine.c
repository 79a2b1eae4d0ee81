/*
 * engine.c — an engine with the command line's settings (--db, --mode,
 * --opt, --max-memory, --threads, --module-path): the one the tool runs its scripts
 * on, and each --batch worker's.
 */
#include <stdio.h>

#include "cli.h"
#include "api/hooks.h"

int cli_engine_open(const cli_engine_opts *o, pj_engine **e, char *err, size_t cap) {
  if (pj_engine_open(o->db, e) != PJ_OK) {
    snprintf(err, cap, "%s", *e ? pj_engine_errmsg(*e) : "out of memory");
    return 1;
  }
  if (o->mode == PJ_MODE_JIT && pj__engine_jit(*e) != PJ_OK) {
    /* said before a shell or script starts (no LLVM in this build) */
    snprintf(err, cap, "--mode jit: %s", pj_engine_errmsg(*e));
    return 1;
  }
  pj_engine_set_mode(*e, (pj_mode)o->mode);
  pj_engine_set_opt_level(*e, o->opt);
  pj_engine_set_max_memory(*e, o->max_memory);
  if (o->threads > 0) pj_engine_set_threads(*e, o->threads);
  for (int i = 0; i < o->nmodule_paths; i++) {
    if (pj_engine_add_module_path(*e, o->module_paths[i]) != PJ_OK) {
      snprintf(err, cap, "--module-path: %s", pj_engine_errmsg(*e));
      return 1;
    }
  }
  return 0;
}
