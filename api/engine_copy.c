/*
 * engine_copy.c — pj__engine_copy_settings (hooks.h): a new engine takes
 * the settings of another (the shell's .open replaces its engine and
 * keeps the user's options). Above engine.c and stmt_include.c, which own
 * the settings, so no layer calls back.
 */
#include "defs.h"

pj_status pj__engine_copy_settings(pj_engine *to, const pj_engine *from) {
  pj_engine_set_mode(to, pj_engine_mode(from));
  pj_engine_set_opt_level(to, from->opt_level);
  pj_engine_set_max_memory(to, pj_engine_max_memory(from));
  for (int i = 0; i < from->defs->npaths; i++)
    if (pj_engine_add_module_path(to, from->defs->paths[i]) != PJ_OK) return PJ_NOMEM;
  return PJ_OK;
}
