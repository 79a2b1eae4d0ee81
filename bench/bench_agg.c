/*
 * bench_agg.c — the grouped-aggregation workloads' glue: the view of the
 * slice table the C reference (ref_agg.c) reads, and the check that its
 * answer is the engine's, row for row (same groups, same first-seen order);
 * and DuckDB as a peer: the slice table copied into it through a CSV file,
 * the same question in SQL, compared by group count and sums.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine.h"
#include "bench.h"
#include "bench/bench_duck.h"

int bench_agg_view(pj_engine *e, bench_agg_in *in) {
  static const char *const names[BENCH_AGG_NCOLS] = {"track_id", "depth", "parent_id", "name", "category", "ts"};
  static const rt_type types[BENCH_AGG_NCOLS] = {RT_I64, RT_U32, RT_I64, RT_STR, RT_STR, RT_I64};
  rt_table *t = rt_catalog_get(e->catalog, "slice");
  memset(in, 0, sizeof *in);
  if (!t) return -1;
  int d = rt_table_find_col(t, "dur");
  if (d < 0 || t->cols[d].type != RT_I64) return -1;
  in->n = t->nrows;
  in->dur = t->cols[d].data;
  in->vdur = t->cols[d].valid;
  for (int c = 0; c < BENCH_AGG_NCOLS; c++) {
    int i = rt_table_find_col(t, names[c]);
    if (i < 0 || t->cols[i].type != types[c]) return -1;   /* what ref_agg.c reads */
    in->col[c] = t->cols[i].data;
    in->valid[c] = t->cols[i].valid;
  }
  return 0;
}

int bench_agg_matches(const pj_result *r, const bench_agg_out *o) {
  int nk = o->nkeys;
  if (pj_result_row_count(r) != o->ngroups || pj_result_column_count(r) != nk + 3) return 0;
  for (int64_t g = 0; g < o->ngroups; g++) {
    for (int k = 0; k < nk; k++) {
      if (pj_result_is_null(r, g, k) != o->knull[k][g]) return 0;
      if (o->knull[k][g]) continue;
      pj_column col;
      pj_result_column(r, k, &col);
      int64_t v = col.type == PJ_TYPE_STRING ? (int64_t)((const uint32_t *)col.values)[g]
                                             : pj_result_int64(r, g, k);
      if (v != o->key[k][g]) return 0;
    }
    if (pj_result_int64(r, g, nk) != o->n[g] || pj_result_int64(r, g, nk + 1) != o->s[g] ||
        pj_result_int64(r, g, nk + 2) != o->m[g])
      return 0;
  }
  return 1;
}

/* ---- DuckDB on one thread (bench_duck.c), when $PJ_DUCKDB_LIB is set ---- */

int bench_agg_duck_load(pj_engine *e) {
  int rc = bench_duck_open();
  if (rc != 0) return rc;
  bench_agg_in in;
  if (bench_agg_view(e, &in) != 0) return -1;
  char path[] = "/tmp/pj-bench-slice-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) return -1;
  fprintf(f, "ts,track_id,depth,parent_id,dur,name,category\n");
  for (int64_t i = 0; i < in.n; i++) {
    fprintf(f, "%lld,%lld,%u,", (long long)((const int64_t *)in.col[BENCH_AGG_TS])[i],
            (long long)((const int64_t *)in.col[BENCH_AGG_TRACK])[i],
            ((const uint32_t *)in.col[BENCH_AGG_DEPTH])[i]);
    const uint64_t *pv = in.valid[BENCH_AGG_PARENT];
    if (!pv || rt_bit(pv, (uint32_t)i)) fprintf(f, "%lld", (long long)((const int64_t *)in.col[BENCH_AGG_PARENT])[i]);
    fputc(',', f);
    if (!in.vdur || rt_bit(in.vdur, (uint32_t)i)) fprintf(f, "%lld", (long long)in.dur[i]);
    fputc(',', f);
    for (int c = BENCH_AGG_NAME; c <= BENCH_AGG_CATEGORY; c++) {
      if (c > BENCH_AGG_NAME) fputc(',', f);
      const uint64_t *sv = in.valid[c];
      if (sv && !rt_bit(sv, (uint32_t)i)) continue;
      const char *s = rt_str_get(e->strings, ((const uint32_t *)in.col[c])[i], NULL);
      fputc('"', f);
      for (; s && *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
      }
      fputc('"', f);
    }
    fputc('\n', f);
  }
  rc = fclose(f) == 0 ? 0 : -1;
  char sql[512];
  snprintf(sql, sizeof sql,
           "CREATE OR REPLACE TABLE slice AS SELECT * FROM read_csv('%s', header = true, columns = "
           "{'ts': 'BIGINT', 'track_id': 'BIGINT', 'depth': 'INTEGER', 'parent_id': 'BIGINT', 'dur': 'BIGINT', "
           "'name': 'VARCHAR', 'category': 'VARCHAR'})",
           path);
  if (rc == 0) rc = bench_duck_exec(sql, 0, NULL);
  remove(path);
  return rc;
}

int bench_agg_duck_run(const char *keys, int64_t *rows, int64_t sums[3], double *ms) {
  /* One row out (group count and sums), so the time is DuckDB's grouping,
   * not the C API's per-value reads of every group. */
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT COUNT(*), SUM(n), SUM(s), SUM(m) FROM (SELECT COUNT(*) AS n, SUM(dur) AS s, "
           "MAX(dur) AS m FROM slice WHERE dur > 1000%s%s)",
           keys[0] ? " GROUP BY " : "", keys);
  int64_t v[4];
  int64_t t0 = bench_clock_ns();
  int rc = bench_duck_exec(sql, 4, v);
  *ms = (double)(bench_clock_ns() - t0) / 1e6;
  *rows = v[0];
  memcpy(sums, v + 1, 3 * sizeof *sums);
  return rc;
}

int bench_agg_sums(const pj_result *r, int nkeys, int64_t sums[3]) {
  for (int c = 0; c < 3; c++) {
    sums[c] = 0;
    for (int64_t g = 0; g < pj_result_row_count(r); g++) sums[c] += pj_result_int64(r, g, nkeys + c);
  }
  return 0;
}
