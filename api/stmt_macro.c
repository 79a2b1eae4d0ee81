/*
 * stmt_macro.c — CREATE [OR REPLACE] PERFETTO MACRO (LANGUAGE.md §7.3).
 *
 * A macro is only its argument list and the text of its body; expansion
 * (frontend/macro.c) happens when a later statement invokes it, so a body
 * may invoke macros defined after it. Nothing reaches SQLite.
 */
#include "defs.h"

#define STAGE "CREATE PERFETTO MACRO"

pj_status pj__exec_macro(pj_engine *e, const char *script, const fe_stmt *st) {
  rt_err err = {.offset = -1};
  const char *name = st->table.name;
  pj_def *old = pj__def_find(e, PJ_DEF_MACRO, name);
  if (old && !st->or_replace) {
    rt_errorf(&err, st->table.pos,
              STAGE ": macro '%s' already exists (use CREATE OR REPLACE PERFETTO MACRO)", name);
    return pj__fail(e, &err, script);
  }
  for (int i = 0; i < st->nargs; i++)
    for (int j = 0; j < i; j++)
      if (rt_strieq(st->args[i].name.name, st->args[j].name.name)) {
        rt_errorf(&err, st->args[i].name.pos, STAGE ": argument '%s' is listed twice",
                  st->args[i].name.name);
        return pj__fail(e, &err, script);
      }
  pj_def *d = pj__def_new(e, PJ_DEF_MACRO, name);
  if (!d) return pj__failf(e, STAGE ": out of memory");
  fe_macro *m = &d->macro;
  m->name = d->name;
  m->nargs = st->nargs;
  m->argnames = rt_arena_alloc(&d->arena, sizeof(char *) * (size_t)(st->nargs + 1));
  m->argtypes = rt_arena_alloc(&d->arena, sizeof(fe_mtype) * (size_t)(st->nargs + 1));
  bool ok = m->argnames && m->argtypes;
  for (int i = 0; ok && i < st->nargs; i++) {
    ok = (m->argnames[i] = rt_arena_strdup(&d->arena, st->args[i].name.name)) != NULL;
    fe_mtype_parse(st->args[i].type, &m->argtypes[i]);   /* the parser checked it */
  }
  fe_mtype_parse(st->returns, &m->ret);
  m->body = ok ? rt_arena_strndup(&d->arena, script + st->bodypos, (size_t)st->bodylen) : NULL;
  m->bodylen = st->bodylen;
  if (!m->body || !pj__defs_reserve(e)) {
    pj__def_unref(d);
    return pj__failf(e, STAGE ": out of memory");
  }
  pj__def_put(e, d);
  return PJ_OK;
}
