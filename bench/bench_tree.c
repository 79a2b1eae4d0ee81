/*
 * bench_tree.c — data and references of the TREE ACCUMULATE workloads:
 * the sample trace's slice tree, a shuffled copy of it in SQLite (random
 * row order, ids through a random permutation * 7 + 3, so numbering needs
 * the hash map and ordering the CSR walk), a C reference of the answer,
 * and the same subtree sums in plain SQLite with a recursive CTE under a
 * time cap; and the flamegraph workload's answer in plain SQLite.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/rt.h"
#include "bench.h"

static uint64_t bench_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Reads id, parent_id, dur of the slice table (ids are 0..n-1, parents
 * before children: rt_sample_trace's promise). */
static int tree_read(pj_engine *e, int64_t **par, int64_t **dur, int64_t *n) {
  pj_query *q = NULL;
  pj_result *r = NULL;
  if (pj_query_compile(e, "FROM slice |> SELECT id, parent_id, dur", &q) != PJ_OK) return -1;
  if (pj_query_run(q, &r) != PJ_OK) return pj_query_free(q), -1;
  *n = pj_result_row_count(r);
  *par = malloc(sizeof(int64_t) * (size_t)(*n + 1));
  *dur = malloc(sizeof(int64_t) * (size_t)(*n + 1));
  int rc = 0;
  for (int64_t i = 0; i < *n; i++) {
    if (pj_result_int64(r, i, 0) != i) rc = -1;
    (*par)[i] = pj_result_is_null(r, i, 1) ? -1 : pj_result_int64(r, i, 1);
    (*dur)[i] = pj_result_is_null(r, i, 2) ? 0 : pj_result_int64(r, i, 2);
    if ((*par)[i] >= i) rc = -1;
  }
  pj_result_free(r);
  pj_query_free(q);
  return rc;
}

/* UP: subtree sums, children (higher ids) first. DOWN: path sums. */
static void tree_ref(const int64_t *par, const int64_t *dur, int64_t n, bench_tree_ref *ref) {
  int64_t *acc = calloc((size_t)n + 1, sizeof *acc);
  ref->s_up = ref->s_down = 0;
  ref->m_up = ref->m_down = INT64_MIN;
  for (int64_t i = n - 1; i >= 0; i--) {
    int64_t t = dur[i] + acc[i];
    if (par[i] >= 0) acc[par[i]] += t;
    ref->s_up += t;
    if (t > ref->m_up) ref->m_up = t;
  }
  memset(acc, 0, sizeof *acc * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) {
    int64_t t = dur[i] + (par[i] >= 0 ? acc[par[i]] : 0);
    acc[i] = t;
    ref->s_down += t;
    if (t > ref->m_down) ref->m_down = t;
  }
  free(acc);
}

/* shuffled(id, parent_id, dur): the slice tree in random row order with
 * ids perm[i] * 7 + 3. */
static int tree_shuffle(pj_engine *e, const int64_t *par, const int64_t *dur, int64_t n) {
  sqlite3 *db = pj_engine_sqlite(e);
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  int64_t *perm = malloc(sizeof(int64_t) * (size_t)(n + 1));
  int64_t *order = malloc(sizeof(int64_t) * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) perm[i] = order[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)(bench_rand(&seed) % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
    j = (int64_t)(bench_rand(&seed) % (uint64_t)(i + 1)), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  int rc = sqlite3_exec(db,
                        "DROP TABLE IF EXISTS shuffled;"
                        "CREATE TABLE shuffled(id INTEGER, parent_id INTEGER, dur INTEGER);"
                        "BEGIN",
                        NULL, NULL, NULL);
  sqlite3_stmt *st = NULL;
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "INSERT INTO shuffled VALUES (?, ?, ?)", -1, &st, NULL);
  for (int64_t k = 0; k < n && rc == SQLITE_OK; k++) {
    int64_t i = order[k];
    sqlite3_bind_int64(st, 1, perm[i] * 7 + 3);
    if (par[i] >= 0) sqlite3_bind_int64(st, 2, perm[par[i]] * 7 + 3);
    else sqlite3_bind_null(st, 2);
    sqlite3_bind_int64(st, 3, dur[i]);
    rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  /* the index lets SQLite's recursive CTE find children without a scan:
   * the fair way to run tree_sql */
  if (rc == SQLITE_OK)
    rc = sqlite3_exec(db, "COMMIT; CREATE INDEX shuffled_parent ON shuffled(parent_id)", NULL, NULL, NULL);
  free(perm);
  free(order);
  return rc == SQLITE_OK ? 0 : -1;
}

int bench_tree_setup(pj_engine *e, int64_t n, int shuffled, bench_tree_ref *ref) {
  if (pj_engine_load_sample_trace(e, n) != PJ_OK) return -1;
  int64_t *par = NULL, *dur = NULL, rows = 0;
  int rc = tree_read(e, &par, &dur, &rows);
  if (rc == 0) tree_ref(par, dur, rows, ref);
  if (rc == 0 && shuffled) rc = tree_shuffle(e, par, dur, rows);
  free(par);
  free(dur);
  return rc;
}

int bench_tree_matches(const pj_result *r, const bench_tree_ref *ref, int down) {
  if (pj_result_row_count(r) != 1 || pj_result_column_count(r) != 2) return 0;
  return pj_result_int64(r, 0, 0) == (down ? ref->s_down : ref->s_up) &&
         pj_result_int64(r, 0, 1) == (down ? ref->m_down : ref->m_up);
}

/* Stops SQLite once the deadline has passed. */
static int tree_sql_progress(void *ctx) { return rt_now_ns() > *(int64_t *)ctx; }

/* Every (node, ancestor-or-self) pair of the tree, each carrying the
 * node's dur; summing dur per ancestor gives its subtree sum. */
static const char TREE_SQL[] =
    "WITH RECURSIVE anc(id, top, dur) AS ("
    "  SELECT id, id, COALESCE(dur, 0) FROM shuffled"
    "  UNION ALL"
    "  SELECT c.id, anc.top, COALESCE(c.dur, 0) FROM shuffled c JOIN anc ON c.parent_id = anc.id)"
    "SELECT SUM(t), MAX(t) FROM (SELECT top, SUM(dur) AS t FROM anc GROUP BY top)";

int bench_tree_sql(pj_engine *e, double cap_s, int64_t *s, int64_t *m, double *ms) {
  sqlite3 *db = pj_engine_sqlite(e);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, TREE_SQL, -1, &st, NULL) != SQLITE_OK) return -1;
  int64_t t0 = rt_now_ns();
  int64_t deadline = t0 + (int64_t)(cap_s * 1e9);
  sqlite3_progress_handler(db, 10000, tree_sql_progress, &deadline);
  int rc = sqlite3_step(st);
  *ms = (double)(rt_now_ns() - t0) / 1e6;
  sqlite3_progress_handler(db, 0, NULL, NULL);
  int out = -1;
  if (rc == SQLITE_ROW) {
    *s = sqlite3_column_int64(st, 0);
    *m = sqlite3_column_int64(st, 1);
    out = 1;
  } else if (rc == SQLITE_INTERRUPT) {
    out = 0;
  }
  sqlite3_finalize(st);
  return out;
}

/* ---- flamegraph ------------------------------------------------------------ */

int bench_flame_setup(pj_engine *e) {
  sqlite3 *db = pj_engine_sqlite(e);
  return sqlite3_exec(db,
                      "DROP TABLE IF EXISTS fslice;"
                      "CREATE TABLE fslice AS SELECT id, parent_id, name, dur FROM slice;"
                      "CREATE INDEX fslice_parent ON fslice(parent_id)",
                      NULL, NULL, NULL) == SQLITE_OK
             ? 0
             : -1;
}

/* Name paths from the roots (p); every (node, ancestor-or-self path) pair
 * carrying the node's self time (d); a merged node is a path: its self
 * is the sum over p, its total the sum over d. A NULL name is its own
 * path step, as MERGE SIBLINGS keys NULL with NULL. */
static const char FLAME_SQL[] =
    "WITH RECURSIVE "
    "p(id, path, self) AS ("
    "  SELECT id, COALESCE('s' || name, 'n'), COALESCE(dur, 0) FROM fslice WHERE parent_id IS NULL"
    "  UNION ALL"
    "  SELECT c.id, p.path || char(31) || COALESCE('s' || c.name, 'n'), COALESCE(c.dur, 0)"
    "  FROM fslice c JOIN p ON c.parent_id = p.id),"
    "d(id, top, self) AS ("
    "  SELECT id, path, self FROM p"
    "  UNION ALL"
    "  SELECT c.id, d.top, COALESCE(c.dur, 0) FROM fslice c JOIN d ON c.parent_id = d.id),"
    "m AS (SELECT path, SUM(self) AS self FROM p GROUP BY path),"
    "t AS (SELECT top, SUM(self) AS total FROM d GROUP BY top) "
    "SELECT COUNT(*), SUM(m.self), SUM(t.total), SUM((t.total % 1000003) * (m.self % 1009)) "
    "FROM m JOIN t ON t.top = m.path";

int bench_flame_sql(pj_engine *e, double cap_s, int64_t out[4], double *ms) {
  sqlite3 *db = pj_engine_sqlite(e);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, FLAME_SQL, -1, &st, NULL) != SQLITE_OK) return -1;
  int64_t t0 = rt_now_ns();
  int64_t deadline = t0 + (int64_t)(cap_s * 1e9);
  sqlite3_progress_handler(db, 10000, tree_sql_progress, &deadline);
  int rc = sqlite3_step(st);
  *ms = (double)(rt_now_ns() - t0) / 1e6;
  sqlite3_progress_handler(db, 0, NULL, NULL);
  int res = -1;
  if (rc == SQLITE_ROW) {
    for (int k = 0; k < 4; k++) out[k] = sqlite3_column_int64(st, k);
    res = 1;
  } else if (rc == SQLITE_INTERRUPT) {
    res = 0;
  }
  sqlite3_finalize(st);
  return res;
}
