/*
 * snapshot.c — what INCLUDE PERFETTO MODULE rolls back to when a module
 * fails (defs.h's pj_snapshot): the definitions (with their SQLite
 * registrations), the included modules, the columnar tables with their
 * virtual and eponymous tables, and SQLite's own state through a
 * savepoint.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/sqlite/vtab.h"
#include "defs.h"

/* ---- snapshots -------------------------------------------------------- */

pj_status pj__snapshot_take(pj_engine *e, pj_snapshot *s) {
  memset(s, 0, sizeof *s);
  pj_defs *r = e->defs;
  s->gen = r->gen;
  s->nincluded = r->nincluded;
  s->defs = malloc(sizeof *s->defs * (size_t)(r->n + 1));
  int nt = rt_catalog_count(e->catalog);
  s->tables = malloc(sizeof *s->tables * (size_t)(nt + 1));
  if (!s->defs || !s->tables) {
    free(s->defs);
    free(s->tables);
    return PJ_NOMEM;
  }
  for (int i = 0; i < r->n; i++) s->defs[s->ndefs++] = pj__def_ref(r->v[i]);
  for (int i = 0; i < nt; i++) s->tables[s->ntables++] = rt_table_ref(rt_catalog_at(e->catalog, i));
  /* SQLite's own changes (tables, views, rows, our virtual tables) go
   * back with a savepoint; numbered, since includes nest. */
  char sql[64];
  snprintf(sql, sizeof sql, "SAVEPOINT pj_include_%d", r->include_depth + 1);
  if (sqlite3_exec(e->db, sql, NULL, NULL, NULL) == SQLITE_OK) s->savepoint = r->include_depth + 1;
  return PJ_OK;
}

static void snapshot_free(pj_snapshot *s) {
  for (int i = 0; i < s->ndefs; i++) pj__def_unref(s->defs[i]);
  for (int i = 0; i < s->ntables; i++) rt_table_unref(s->tables[i]);
  free(s->defs);
  free(s->tables);
  memset(s, 0, sizeof *s);
}

static bool has_def(pj_def *const *v, int n, const pj_def *d) {
  for (int i = 0; i < n; i++)
    if (v[i] == d) return true;
  return false;
}

static bool snapshot_has_table(const pj_snapshot *s, const char *name) {
  for (int j = 0; j < s->ntables; j++)
    if (rt_strieq(s->tables[j]->name, name)) return true;
  return false;
}

void pj__snapshot_restore(pj_engine *e, pj_snapshot *s) {
  pj_defs *r = e->defs;
  char sql[96];
  /* Tables made since go from SQL first, inside the savepoint (their
   * eponymous modules are not part of SQLite's transaction). */
  for (int i = rt_catalog_count(e->catalog) - 1; i >= 0; i--) {
    const char *name = rt_catalog_at(e->catalog, i)->name;
    if (snapshot_has_table(s, name)) continue;
    char *msg = NULL;
    if (rt_vtab_unexpose(e->db, name, &msg) != SQLITE_OK) sqlite3_free(msg);
  }
  if (s->savepoint) {
    snprintf(sql, sizeof sql, "ROLLBACK TO pj_include_%d; RELEASE pj_include_%d", s->savepoint,
             s->savepoint);
    sqlite3_exec(e->db, sql, NULL, NULL, NULL);   /* gone already if SQLite rolled back */
  }
  /* Definitions made since go (with their SQLite registrations); the
   * ones they replaced come back. */
  for (int i = r->n - 1; i >= 0; i--) {
    pj_def *d = r->v[i];
    if (has_def(s->defs, s->ndefs, d)) continue;
    pj__def_unregister(e, d);
    pj__def_remove(e, d);
  }
  for (int i = 0; i < s->ndefs; i++) {
    pj_def *d = s->defs[i];
    if (has_def(r->v, r->n, d)) continue;
    char *msg = NULL;
    if (pj__def_register(e, d, &msg) != SQLITE_OK) sqlite3_free(msg);
    pj__def_put(e, pj__def_ref(d));
  }
  r->gen++;
  while (r->nincluded > s->nincluded) free(r->included[--r->nincluded]);
  /* Columnar tables: the catalog as it was. The savepoint brought back
   * their virtual tables' declarations. */
  for (int i = rt_catalog_count(e->catalog) - 1; i >= 0; i--) {
    rt_table *t = rt_catalog_at(e->catalog, i);
    if (!snapshot_has_table(s, t->name)) rt_catalog_remove(e->catalog, t->name);
  }
  /* Neither put below can fail: the tables made since are gone, so the
   * catalog (and the definitions' list) holds no more entries than when
   * the snapshot was taken, and their arrays never shrink: a put replaces
   * in place or uses room the list had then. */
  for (int j = 0; j < s->ntables; j++) {
    if (rt_catalog_get(e->catalog, s->tables[j]->name) == s->tables[j]) continue;
    (void)rt_catalog_put(e->catalog, rt_table_ref(s->tables[j]));
    /* Its declared columns and eponymous module as they were. */
    char *msg = NULL;
    if (rt_vtab_expose(e->db, s->tables[j]->name, &msg) != SQLITE_OK) sqlite3_free(msg);
  }
  snapshot_free(s);
}

void pj__snapshot_release(pj_engine *e, pj_snapshot *s) {
  if (s->savepoint) {
    char sql[64];
    snprintf(sql, sizeof sql, "RELEASE pj_include_%d", s->savepoint);
    sqlite3_exec(e->db, sql, NULL, NULL, NULL);
  }
  snapshot_free(s);
}
