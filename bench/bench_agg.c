/*
 * bench_agg.c — the grouped-aggregation workloads' glue: the view of the
 * slice table the C reference (ref_agg.c) reads, and the check that its
 * answer is the engine's, row for row (same groups, same first-seen order).
 */
#include <string.h>

#include "api/engine.h"
#include "bench.h"

int bench_agg_view(pj_engine *e, bench_agg_in *in) {
  static const char *const names[BENCH_AGG_NCOLS] = {"track_id", "depth", "parent_id", "name"};
  static const rt_type types[BENCH_AGG_NCOLS] = {RT_I64, RT_U32, RT_I64, RT_STR};
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
