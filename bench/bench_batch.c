/*
 * bench_batch.c — workload `batch` of pipejit-bench: `pipejit --batch`
 * over 100 copies of lthi_cats (symlinks in a temporary folder) with one
 * worker per core, against one trace's time run alone (`pipejit TRACE -c
 * SCRIPT`, process start, import, query and output included) x 100 /
 * cores. Issue 18's target: the batch within 1.2x of that.
 *
 * Both are wall-clock times of the CLI next to pipejit-bench in the build
 * folder; the single run is the median of 5, the batch the median of 2
 * (--quick: 10 copies, one batch run). The output is checked: every copy
 * has its rows and batch_errors is empty.
 */
#include <libgen.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../runtime/rt.h"
#include "bench.h"
#include "bench/bench_duck.h"

static const char SCRIPT[] =
    "FROM slice |> AGGREGATE COUNT(*) AS n, SUM(dur) AS total, MAX(dur) AS longest GROUP BY name "
    "|> ORDER BY total DESC |> LIMIT 20";

/* The CPU time (user + system) of every finished child process so far. */
static double children_cpu_ms(void) {
  struct rusage u;
  getrusage(RUSAGE_CHILDREN, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

/* Runs cmd: its wall time, and its processes' CPU time in *cpu. */
static double run_ms(const char *cmd, double *cpu) {
  double c0 = children_cpu_ms();
  int64_t t0 = rt_now_ns();
  int rc = system(cmd);
  double ms = (double)(rt_now_ns() - t0) / 1e6;
  *cpu = children_cpu_ms() - c0;
  return rc == -1 ? -1 : ms;
}

/* The number of traces in the output with rows, and of batch errors. */
static int check_out(const char *db_path, int64_t *traces, int64_t *errors) {
  sqlite3 *db = NULL;
  sqlite3_stmt *q = NULL;
  int ok = sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
           sqlite3_prepare_v2(db, "SELECT (SELECT COUNT(DISTINCT trace) FROM result_1), "
                                  "(SELECT COUNT(*) FROM batch_errors)", -1, &q, NULL) == SQLITE_OK &&
           sqlite3_step(q) == SQLITE_ROW;
  if (ok) *traces = sqlite3_column_int64(q, 0), *errors = sqlite3_column_int64(q, 1);
  sqlite3_finalize(q);
  sqlite3_close(db);
  return ok ? 0 : -1;
}

int bench_batch(int quick, const char *report) {
  static const char *const paths[] = {"../shared/data/traces/lthi_cats.json.gz",
                                      "../../shared/data/traces/lthi_cats.json.gz",
                                      "../../../shared/data/traces/lthi_cats.json.gz"};
  const char *trace = NULL;
  for (int i = 0; i < 3 && !trace; i++)
    if (access(paths[i], R_OK) == 0) trace = paths[i];
  if (!trace) {
    fprintf(stderr, "batch: lthi_cats.json.gz not found beside the checkout: skipped\n");
    return 0;
  }
  char exe[4096], cli[4200], abs_trace[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0 || !realpath(trace, abs_trace)) return -1;
  exe[n] = 0;
  snprintf(cli, sizeof cli, "%s/pipejit", dirname(exe));
  if (access(cli, X_OK) != 0) {
    fprintf(stderr, "batch: %s not found (build the CLI)\n", cli);
    return -1;
  }
  char dir[] = "/tmp/pipejit-bench-batch-XXXXXX";
  if (!mkdtemp(dir)) return -1;
  int copies = quick ? 10 : 100;
  for (int i = 0; i < copies; i++) {
    char link[4200];
    snprintf(link, sizeof link, "%s/copy%03d.json.gz", dir, i);
    if (symlink(abs_trace, link) != 0) return -1;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  char cmd[16384];
  double one[5], many[2], one_cpu[5], many_cpu[2];
  int reps = quick ? 1 : 5, breps = quick ? 1 : 2;
  for (int r = 0; r < reps; r++) {
    snprintf(cmd, sizeof cmd, "'%s' '%s' -c \"%s\" --format csv >/dev/null 2>&1", cli, abs_trace,
             SCRIPT);
    if ((one[r] = run_ms(cmd, &one_cpu[r])) < 0) return -1;
  }
  double t1 = bench_median(one, reps), c1 = bench_median(one_cpu, reps);
  for (int r = 0; r < breps; r++) {
    snprintf(cmd, sizeof cmd, "'%s' --batch '%s/*.json.gz' -c \"%s\" --out '%s/out.db' 2>/dev/null",
             cli, dir, SCRIPT, dir);
    if ((many[r] = run_ms(cmd, &many_cpu[r])) < 0) return -1;
  }
  double tb = bench_median(many, breps), cb = bench_median(many_cpu, breps);
  int64_t traces = -1, errors = -1;
  char out[4200];
  snprintf(out, sizeof out, "%s/out.db", dir);
  int bad = check_out(out, &traces, &errors) != 0 || traces != copies || errors != 0;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "batch: cannot remove %s\n", dir);
  double ideal = t1 * copies / (double)cores, ratio = tb / ideal;
  double cpu_ratio = cb / (c1 * copies);   /* batch mode's own overhead, whatever the load */
  double load[1] = {0};
  if (getloadavg(load, 1) < 1) load[0] = -1;
  printf("batch: %d copies of lthi_cats on %ld cores: one trace alone %.1f ms (median of %d), "
         "batch %.1f ms (median of %d); ideal (one x %d / %ld) %.1f ms; batch / ideal %.2fx "
         "(target <= 1.2x: %s); CPU: one %.1f ms, batch %.1f ms = %.2fx one x %d; output %s; "
         "load average %.1f\n",
         copies, cores, t1, reps, tb, breps, copies, cores, ideal, ratio,
         ratio <= 1.2 ? "met" : "MISSED", c1, cb, cpu_ratio, copies, bad ? "WRONG" : "checked",
         load[0]);
  if (report) {
    char text[4096];
    snprintf(text, sizeof text,
             "## batch\n\n`pipejit --batch` over %d copies of lthi_cats (symlinks) with %ld "
             "workers, against one trace run alone (`pipejit TRACE -c SCRIPT`: process, import, "
             "query, output) x %d / %ld cores. Script: `%s`. Wall clock (and the CPU time of all "
             "the processes: batch / (one x %d) is batch mode's own cost, whatever else runs); "
             "load average %.1f.\n\n"
             "| one trace ms | batch ms | ideal ms | batch / ideal | target | CPU one ms | CPU "
             "batch ms | CPU batch / (one x %d) | output |\n"
             "|---:|---:|---:|---:|---|---:|---:|---:|---|\n"
             "| %.1f | %.1f | %.1f | %.2fx | <= 1.2x %s | %.1f | %.1f | %.2fx | %s |\n",
             copies, cores, copies, cores, SCRIPT, copies, load[0], copies, t1, tb, ideal, ratio,
             ratio <= 1.2 ? "met" : "**missed**", c1, cb, cpu_ratio,
             bad ? "**wrong**" : "every copy's rows, no errors");
    if (bench_report_section(report, "batch", text) != 0) return -1;
  }
  return bad ? -1 : 0;
}
