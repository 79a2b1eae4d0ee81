/*
 * engine_index.c — CREATE [OR REPLACE] PERFETTO INDEX and DROP PERFETTO
 * INDEX (LANGUAGE.md §7.5): a named sorted index kept with a columnar
 * table (runtime/tabindex.h), which SQL over the table uses for `=` on a
 * prefix of its columns and a range on the next one (vtab_plan.c).
 *
 * Index names belong to their table (DROP … ON table says which). An
 * index goes with its table: CREATE OR REPLACE PERFETTO TABLE makes a new
 * table without indexes, as Perfetto does. Statements prepared before an
 * index existed keep their plans; the next ones see it.
 */
#include <stdio.h>

#include <sqlite3.h>

#include "runtime/sqlite/load.h"
#include "runtime/tabindex.h"
#include "engine.h"

static pj_status fail_at(pj_engine *e, const char *script, int pos, const char *stage,
                         const char *fmt, const char *a, const char *b) {
  rt_err err = {.offset = -1};
  char msg[400];
  snprintf(msg, sizeof msg, fmt, a, b);
  rt_errorf(&err, pos, "%s: %s", stage, msg);
  return pj__fail(e, &err, script);
}

static rt_table *columnar_table(pj_engine *e, const char *script, const fe_stmt *st,
                                const char *stage) {
  rt_table *t = rt_catalog_get(e->catalog, st->table.name);
  if (t) return t;
  if (rt_sqlite_has_table(e->db, st->table.name))   /* to say why it cannot be indexed */
    fail_at(e, script, st->table.pos, stage,
            "'%s' is a SQLite table or view, not a columnar table: index it with CREATE INDEX%s",
            st->table.name, "");
  else
    fail_at(e, script, st->table.pos, stage, "no such columnar table: '%s'%s", st->table.name, "");
  return NULL;
}

pj_status pj__exec_index(pj_engine *e, const char *script, const fe_stmt *st) {
  const char *stage = st->kind == STMT_DROP_INDEX ? "DROP PERFETTO INDEX" : "CREATE PERFETTO INDEX";
  rt_table *t = columnar_table(e, script, st, stage);
  if (!t) return PJ_ERROR;
  const char *name = st->index.name;
  if (st->kind == STMT_DROP_INDEX) {
    if (!rt_table_drop_sindex(t, name))
      return fail_at(e, script, st->index.pos, stage, "no such index '%s' on table '%s'", name,
                     st->table.name);
    return PJ_OK;
  }
  if (rt_table_find_sindex(t, name) && !st->or_replace)
    return fail_at(e, script, st->index.pos, stage,
                   "index '%s' already exists on table '%s' (CREATE OR REPLACE replaces it)", name,
                   st->table.name);
  int n = st->nindexcols;
  int cols[n > 0 ? n : 1];
  for (int i = 0; i < n; i++) {
    const fe_name *c = &st->indexcols[i];
    cols[i] = rt_table_find_col(t, c->name);
    if (cols[i] < 0)
      return fail_at(e, script, c->pos, stage, "no such column: '%s' in table '%s'", c->name,
                     st->table.name);
    for (int j = 0; j < i; j++)
      if (cols[j] == cols[i])
        return fail_at(e, script, c->pos, stage, "column '%s' is listed twice%s", c->name, "");
  }
  int64_t t0 = rt_now_ns();
  if (!rt_table_add_sindex(t, name, n, cols, e->strings))
    return pj__failf(e, "%s: out of memory", stage);
  e->timing.run_ns = rt_now_ns() - t0;
  e->timing.rows_in = t->nrows;
  return PJ_OK;
}
