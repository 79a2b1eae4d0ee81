/*
 * report_threads.c — the section "threads" of bench/REPORT.md
 * (`pipejit-bench ... --threads 1,2 --threads-report bench/REPORT.md`):
 * for every workload and size of the run, the JIT on one thread and on
 * two, the speed-up against issue 18's target (at least 1.8x with two
 * threads on two cores), and beside it, from the same run, the
 * hand-written C reference on one thread and on two (the agg_* workloads:
 * bench_ref_agg_par, the ceiling this machine gives a plain two-phase
 * aggregation) and DuckDB on one thread and on two (agg_*, with
 * $PJ_DUCKDB_LIB), with the second target: at most 0.5x DuckDB's time on
 * two threads. Written from the rows the harness measured; the load
 * average before and after the run says how quiet the machine was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static const bench_row *find(const bench_row *r, int n, const char *wl, int64_t size, const char *mode) {
  for (int i = 0; i < n; i++)
    if (r[i].size == size && !strcmp(r[i].workload, wl) && !strcmp(r[i].mode, mode)) return &r[i];
  return NULL;
}

static void cell_ns(char *buf, size_t cap, const bench_row *r) {
  if (!r) snprintf(buf, cap, "–");
  else snprintf(buf, cap, "%.*f", r->ns_per_row < 10 ? 2 : r->ns_per_row < 100 ? 1 : 0, r->ns_per_row);
}

static void cell_ratio(char *buf, size_t cap, const bench_row *a, const bench_row *b) {
  if (!a || !b || b->ns_per_row <= 0) snprintf(buf, cap, "–");
  else snprintf(buf, cap, "%.2fx", a->ns_per_row / b->ns_per_row);
}

int bench_report_threads(const char *path, const bench_row *r, int n, int threads, const char *command,
                         const double load[2]) {
  char *text = NULL, date[64], t2[16], c2[24], d2[24];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return -1;
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&now));
  snprintf(t2, sizeof t2, "jit %dt", threads);
  snprintf(c2, sizeof c2, "c-ref %dt", threads);
  snprintf(d2, sizeof d2, "duckdb %dt", threads);
  fprintf(f, "## threads (issue 18)\n\n");
  fprintf(f, "Measured on %s, load average %.1f before and %.1f after the run, %ld cores online:\n\n"
             "```\n%s\n```\n\n",
          date, load[0], load[1], sysconf(_SC_NPROCESSORS_ONLN), command);
  fprintf(f, "Wall-clock ns per input row, medians; the JIT's compiled handle run again on one "
             "thread and on %d (`pj_engine_set_threads`), the hand-written C reference on one and "
             "on %d (agg_*: one piece of rows per thread, the pieces folded in order), DuckDB on "
             "one and on %d (agg_*). Targets: JIT %d threads at least 1.8x its one-thread speed; "
             "at most 0.5x DuckDB's time on %d threads. **same**: every row's answer equals the "
             "interpreter's.\n\n",
          threads, threads, threads, threads, threads);
  fprintf(f, "| workload | rows | jit 1t | jit %dt | speed-up | >= 1.8x | c-ref 1t | c-ref %dt | "
             "c-ref speed-up | duckdb 1t | duckdb %dt | jit %dt / duckdb %dt | same |\n"
             "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n",
          threads, threads, threads, threads, threads);
  for (int i = 0; i < n; i++) {
    if (strcmp(r[i].mode, "jit")) continue;
    const bench_row *j1 = &r[i], *j2 = find(r, n, r[i].workload, r[i].size, t2),
                    *c1 = find(r, n, r[i].workload, r[i].size, "c-ref"),
                    *cn = find(r, n, r[i].workload, r[i].size, c2),
                    *k1 = find(r, n, r[i].workload, r[i].size, "duckdb"),
                    *kn = find(r, n, r[i].workload, r[i].size, d2);
    if (!j2) continue;
    char a[6][24], sp[24], csp[24], dq[24];
    cell_ns(a[0], sizeof a[0], j1);
    cell_ns(a[1], sizeof a[1], j2);
    cell_ns(a[2], sizeof a[2], c1);
    cell_ns(a[3], sizeof a[3], cn);
    cell_ns(a[4], sizeof a[4], k1);
    cell_ns(a[5], sizeof a[5], kn);
    cell_ratio(sp, sizeof sp, j1, j2);
    cell_ratio(csp, sizeof csp, c1, cn);
    cell_ratio(dq, sizeof dq, j2, kn);
    int same = j1->same && j2->same && (!c1 || c1->same) && (!cn || cn->same) && (!k1 || k1->same) &&
               (!kn || kn->same);
    double speed = j2->ns_per_row > 0 ? j1->ns_per_row / j2->ns_per_row : 0;
    fprintf(f, "| `%s` | %lld | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s | %s |\n", r[i].workload,
            (long long)r[i].size, a[0], a[1], sp, speed >= 1.8 ? "yes" : "**no**", a[2], a[3], csp, a[4],
            a[5], dq, kn ? (j2->ns_per_row <= 0.5 * kn->ns_per_row ? " yes" : " **no**") : "",
            same ? "yes" : "**NO**");
  }
  int rc = fclose(f) == 0 ? bench_report_section(path, "threads", text) : -1;
  free(text);
  return rc;
}
