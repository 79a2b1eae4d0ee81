/*
 * report.c — the benchmark report of `make bench`: bench/REPORT.md (date,
 * machine, command, a summary of the issue targets, one table per
 * workload) and bench/report.svg (ns per input row against size on
 * log-log axes, one panel per workload, one line per mode), both written
 * from the rows the harness measured. The SVG is written by hand so the
 * report needs no plotting tool.
 *
 * Workloads are whatever the rows contain, in the order they ran; the
 * targets name the workloads of the issues and read "not measured" when
 * a run did not include them (--quick, --workload).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* llvm-c/Core.h; declared here because the harness is not built with
 * LLVM's include path (the library links LLVM). */
void LLVMGetVersion(unsigned *major, unsigned *minor, unsigned *patch);

#define MAX_WL 64

/* ---- looking rows up ------------------------------------------------ */

static const bench_row *find(const bench_row *r, int n, const char *wl, int64_t size,
                             const char *mode) {
  for (int i = 0; i < n; i++)
    if (r[i].size == size && !strcmp(r[i].workload, wl) && !strcmp(r[i].mode, mode)) return &r[i];
  return NULL;
}

/* The distinct workloads of the rows, in the order they first ran. */
static int workloads(const bench_row *r, int n, const char **out) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    int seen = 0;
    for (int j = 0; j < k && !seen; j++) seen = !strcmp(out[j], r[i].workload);
    if (!seen && k < MAX_WL) out[k++] = r[i].workload;
  }
  return k;
}

/* Sorted distinct sizes at which workload wl ran. */
static int sizes_of(const bench_row *r, int n, const char *wl, int64_t *out, int cap) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (strcmp(r[i].workload, wl)) continue;
    int seen = 0;
    for (int j = 0; j < k && !seen; j++) seen = out[j] == r[i].size;
    if (!seen && k < cap) out[k++] = r[i].size;
  }
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
      int64_t t = out[j];
      out[j] = out[j - 1], out[j - 1] = t;
    }
  return k;
}

/* The plain-SQL row that workload wl at size compares with: its own
 * "sqlite" row, else the one of workload "<wl>_sql". */
static const bench_row *sql_ref(const bench_row *r, int n, const char *wl, int64_t size) {
  const bench_row *s = find(r, n, wl, size, "sqlite");
  if (s) return s;
  char name[96];
  snprintf(name, sizeof name, "%s_sql", wl);
  return find(r, n, name, size, "sqlite");
}

static const char *text_of(const bench_report_info *in, const char *wl) {
  for (int i = 0; i < in->nworkloads; i++)
    if (!strcmp(in->names[i], wl)) return in->texts[i];
  return NULL;
}

/* auto's first-run time (text to result, compile included) over the
 * faster of interp and jit at the same size; < 0 when not all three ran. */
static double auto_vs_best(const bench_row *r, int n, const char *wl, int64_t size) {
  const bench_row *a = find(r, n, wl, size, "auto"), *i = find(r, n, wl, size, "interp"),
                  *j = find(r, n, wl, size, "jit");
  if (!a || !i || !j) return -1;
  double best = i->first_ms < j->first_ms ? i->first_ms : j->first_ms;
  return best > 0 ? a->first_ms / best : -1;
}

/* ---- formatting ----------------------------------------------------- */

static const char *fmt_size(char *b, size_t cap, int64_t n) {
  if (n >= 1000000 && n % 1000000 == 0) snprintf(b, cap, "%lldM", (long long)(n / 1000000));
  else if (n >= 1000 && n % 1000 == 0) snprintf(b, cap, "%lldk", (long long)(n / 1000));
  else snprintf(b, cap, "%lld", (long long)n);
  return b;
}

/* Three significant digits without exponents: 1234, 123, 12.3, 1.23. */
static const char *fmt_num(char *b, size_t cap, double v) {
  double a = fabs(v);
  snprintf(b, cap, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f", v);
  return b;
}

static const char *fmt_ratio(char *b, size_t cap, double v) {
  if (v > 0 && v < 0.1) snprintf(b, cap, "%.2gx", v);
  else snprintf(b, cap, v >= 100 ? "%.0fx" : v >= 10 ? "%.1fx" : "%.2fx", v);
  return b;
}

/* ---- machine -------------------------------------------------------- */

/* The value of the first "key : value" line of a /proc file. */
static int proc_field(const char *path, const char *key, char *out, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[512];
  int found = 0;
  size_t kl = strlen(key);
  while (!found && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, kl)) continue;
    char *v = strchr(line, ':');
    if (!v) continue;
    for (v++; *v == ' ' || *v == '\t'; v++) {}
    v[strcspn(v, "\n")] = 0;
    snprintf(out, cap, "%s", v);
    found = 1;
  }
  fclose(f);
  return found;
}

static void write_machine(FILE *f) {
  char cpu[256] = "unknown", mem[64] = "", mhz[64] = "";
  proc_field("/proc/cpuinfo", "model name", cpu, sizeof cpu);
  proc_field("/proc/cpuinfo", "cpu MHz", mhz, sizeof mhz);
  proc_field("/proc/meminfo", "MemTotal", mem, sizeof mem);
  struct utsname u;
  int have_u = uname(&u) == 0;
  unsigned lmaj = 0, lmin = 0, lpat = 0;
  LLVMGetVersion(&lmaj, &lmin, &lpat);
  fprintf(f, "| | |\n|---|---|\n");
  fprintf(f, "| CPU | %s%s%s%s |\n", cpu, *mhz ? " (" : "", mhz, *mhz ? " MHz)" : "");
  fprintf(f, "| Cores | %ld online, %ld configured |\n", sysconf(_SC_NPROCESSORS_ONLN),
          sysconf(_SC_NPROCESSORS_CONF));
  fprintf(f, "| Memory | %.1f GiB |\n", strtod(mem, NULL) / (1024.0 * 1024.0));
  if (have_u) fprintf(f, "| Kernel | %s %s %s |\n", u.sysname, u.release, u.machine);
#ifdef __clang__
  fprintf(f, "| Compiler | clang %s |\n", __clang_version__);
#elif defined(__GNUC__)
  fprintf(f, "| Compiler | gcc %s |\n", __VERSION__);
#endif
  fprintf(f, "| LLVM | %u.%u.%u |\n", lmaj, lmin, lpat);
  fprintf(f, "| SQLite | %s |\n", sqlite3_libversion());
}

/* ---- targets -------------------------------------------------------- */

typedef struct target {
  const char *what, *goal;
  char value[96];
  int met;      /* 1 met, 0 missed, -1 not measured */
} target;

/* A value measured at the target's size, or why there is none. */
static void tval(target *t, int have, double v, const char *unit, int met) {
  if (!have) {
    snprintf(t->value, sizeof t->value, "not measured");
    t->met = -1;
    return;
  }
  char b[32];
  snprintf(t->value, sizeof t->value, "%s%s", fmt_num(b, sizeof b, v), unit);
  t->met = met;
}

static void ns_target(const bench_row *r, int n, target *t, const char *wl, int64_t size,
                     double limit) {
  const bench_row *j = find(r, n, wl, size, "jit");
  tval(t, j != NULL, j ? j->ns_per_row : 0, " ns/row", j && j->ns_per_row <= limit);
}

/* Times faster than plain SQL (a lower bound when SQLite hit its cap). */
static void sql_target(const bench_row *r, int n, target *t, const char *wl, int64_t size,
                       double want) {
  const bench_row *s = sql_ref(r, n, wl, size);
  /* compare like with like: the pipejit rows of the workload that ran the
   * SQL version, else the workload itself */
  const bench_row *j = s ? find(r, n, s->workload, size, "jit") : NULL;
  if (!j) j = find(r, n, wl, size, "jit");
  if (!s || !j || j->ns_per_row <= 0) {
    tval(t, 0, 0, "", 0);
    return;
  }
  double x = s->ns_per_row / j->ns_per_row;
  char b[32];
  snprintf(t->value, sizeof t->value, "%s%s", s->same < 0 ? "> " : "", fmt_ratio(b, sizeof b, x));
  t->met = x >= want;
}

static int make_targets(const bench_row *r, int n, const bench_report_info *in, target *t) {
  int k = 0;
  const bench_row *fj = find(r, n, "fused", 10000000, "jit");
  const bench_row *fc = find(r, n, "fused", 10000000, "c-ref");
  t[k] = (target){"`fused` 10M: JIT speed-up over interp", ">= 2x", "", 0};
  tval(&t[k], fj != NULL, fj ? fj->speedup : 0, "x", fj && fj->speedup >= 2);
  k++;
  t[k] = (target){"`fused` 10M: JIT time / C reference", "<= 1.25x", "", 0};
  double cr = fj && fc && fc->ns_per_row > 0 ? fj->ns_per_row / fc->ns_per_row : 0;
  tval(&t[k], fj && fc, cr, "x", cr <= 1.25);
  k++;
  /* compile latency does not depend on the size: median over sizes */
  double c[16];
  int nc = 0;
  for (int i = 0; i < n && nc < 16; i++)
    if (!strcmp(r[i].workload, "fused") && !strcmp(r[i].mode, "jit")) c[nc++] = r[i].compile_ms;
  for (int i = 1; i < nc; i++)
    for (int j = i; j > 0 && c[j - 1] > c[j]; j--) {
      double x = c[j];
      c[j] = c[j - 1], c[j - 1] = x;
    }
  double cm = nc ? (nc % 2 ? c[nc / 2] : (c[nc / 2 - 1] + c[nc / 2]) / 2) : 0;
  t[k] = (target){"`fused` compile latency (text to callable loop), default opt", "<= 10 ms", "", 0};
  if (in->opt != 2) t[k].what = "`fused` compile latency (text to callable loop), --opt of this run";
  tval(&t[k], nc > 0, cm, " ms", cm <= 10);
  k++;
  t[k] = (target){"`fused` compile latency at --opt 0", "<= 2 ms", "", 0};
  tval(&t[k], in->fused_opt0_compile_ms >= 0, in->fused_opt0_compile_ms, " ms",
       in->fused_opt0_compile_ms <= 2);
  k++;
  const bench_row *ta = find(r, n, "tiny", 1000, "auto"), *ti = find(r, n, "tiny", 1000, "interp");
  double tr = ta && ti && ti->first_ms > 0 ? ta->first_ms / ti->first_ms : 0;
  t[k] = (target){"`tiny`: auto / interp, text to result", "<= 1.2x", "", 0};
  tval(&t[k], ta && ti, tr, "x", tr <= 1.2);
  k++;
  t[k] = (target){"`tiny`: auto text to result", "< 1 ms", "", 0};
  tval(&t[k], ta != NULL, ta ? ta->first_ms : 0, " ms", ta && ta->first_ms < 1);
  k++;
  t[k] = (target){"`tree_up` 1M, JIT", "<= 10 ns/row", "", 0};
  ns_target(r, n, &t[k++], "tree_up", 1000000, 10);
  t[k] = (target){"`tree_down` 1M, JIT", "<= 10 ns/row", "", 0};
  ns_target(r, n, &t[k++], "tree_down", 1000000, 10);
  t[k] = (target){"`tree_up_shuffled` 1M, JIT", "<= 150 ns/row", "", 0};
  ns_target(r, n, &t[k++], "tree_up_shuffled", 1000000, 150);
  t[k] = (target){"`tree_sql` 100k: JIT vs SQLite recursive CTE", ">= 500x", "", 0};
  sql_target(r, n, &t[k++], "tree_sql", 100000, 500);
  t[k] = (target){"`intersect` 1M, JIT", "<= 25 ns/row", "", 0};
  ns_target(r, n, &t[k++], "intersect", 1000000, 25);
  t[k] = (target){"`intersect` 1M: JIT vs best plain SQL", ">= 100x", "", 0};
  sql_target(r, n, &t[k++], "intersect", 1000000, 100);
  t[k] = (target){"`flatten` 1M, JIT", "<= 150 ns/row", "", 0};
  ns_target(r, n, &t[k++], "flatten", 1000000, 150);
  /* auto against the faster of interp and jit, every workload and size */
  int cells = 0, ok = 0;
  double worst = 0;
  for (int i = 0; i < n; i++) {
    if (strcmp(r[i].mode, "auto")) continue;
    double x = auto_vs_best(r, n, r[i].workload, r[i].size);
    if (x < 0) continue;
    cells++;
    ok += x <= 1.1;
    if (x > worst) worst = x;
  }
  t[k] = (target){"auto / faster of interp and jit, text to result, every workload and size",
                  "<= 1.1x", "", 0};
  if (cells) {
    char b[32];
    snprintf(t[k].value, sizeof t[k].value, "%d of %d within; worst %s", ok, cells,
             fmt_ratio(b, sizeof b, worst));
    t[k].met = ok == cells;
  } else {
    tval(&t[k], 0, 0, "", 0);
  }
  k++;
  return k;
}

/* ---- REPORT.md ------------------------------------------------------ */

static void md_workload(FILE *f, const bench_row *r, int n, const char *wl,
                        const bench_report_info *in) {
  fprintf(f, "\n### %s\n\n", wl);
  const char *text = text_of(in, wl);
  if (text) fprintf(f, "```\n%s\n```\n\n", text);
  int64_t sz[32];
  int ns = sizes_of(r, n, wl, sz, 32);
  int has_sql = 0;
  for (int s = 0; s < ns; s++) has_sql |= sql_ref(r, n, wl, sz[s]) != NULL;
  fprintf(f, "| size | mode | compile ms | first run ms | ns/row | rows out | vs interp |%s"
             " auto / best | same |\n",
          has_sql ? " vs SQLite |" : "");
  fprintf(f, "|---:|---|---:|---:|---:|---:|---:|%s---:|---|\n", has_sql ? "---:|" : "");
  for (int s = 0; s < ns; s++) {
    const bench_row *sq = sql_ref(r, n, wl, sz[s]);
    for (int i = 0; i < n; i++) {
      const bench_row *x = &r[i];
      if (x->size != sz[s] || strcmp(x->workload, wl)) continue;
      int engine = !strcmp(x->mode, "interp") || !strcmp(x->mode, "jit") || !strcmp(x->mode, "auto");
      char a[32], b[32], c[32], d[32], e[32], g[32], h[32];
      fprintf(f, "| %s | %s | %s | %s | %s%s | %lld | %s |", fmt_size(a, sizeof a, x->size),
              x->mode, x->compile_ms > 0 ? fmt_num(b, sizeof b, x->compile_ms) : "–",
              engine ? fmt_num(c, sizeof c, x->first_ms) : "–", x->same < 0 ? "> " : "",
              fmt_num(d, sizeof d, x->ns_per_row), (long long)x->rows_out,
              x->speedup > 0 ? fmt_ratio(e, sizeof e, x->speedup) : "–");
      if (has_sql) {
        if (sq && engine && x->ns_per_row > 0)
          fprintf(f, " %s%s |", sq->same < 0 ? "> " : "",
                  fmt_ratio(g, sizeof g, sq->ns_per_row / x->ns_per_row));
        else
          fprintf(f, " – |");
      }
      double ab = !strcmp(x->mode, "auto") ? auto_vs_best(r, n, wl, x->size) : -1;
      fprintf(f, " %s%s | %s |\n", ab >= 0 ? fmt_ratio(h, sizeof h, ab) : "–",
              ab > 1.1 ? " (miss)" : "", x->same < 0 ? "capped" : x->same ? "yes" : "**NO**");
    }
  }
}

/* ---- sections other runs keep in the report --------------------------- */

#define SECTION_BEGIN "<!-- bench-section "
#define SECTION_END "<!-- /bench-section "

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long len = ftell(f);
    rewind(f);
    text = calloc((size_t)(len > 0 ? len : 0) + 1, 1);
    if (text && len > 0 && fread(text, 1, (size_t)len, f) != (size_t)len) text[0] = 0;
  }
  fclose(f);
  return text;
}

/* The end of the section whose begin marker is at b (past its end
 * marker's line), or NULL. */
static const char *section_end(const char *b) {
  const char *name = b + strlen(SECTION_BEGIN), *sp = strchr(name, ' ');
  if (!sp) return NULL;
  char marker[128];
  snprintf(marker, sizeof marker, SECTION_END "%.*s -->", (int)(sp - name), name);
  const char *e = strstr(b, marker);
  if (!e) return NULL;
  e += strlen(marker);
  return *e == '\n' ? e + 1 : e;
}

int bench_report_section(const char *path, const char *name, const char *text) {
  char *old = read_all(path), begin[128], *b = NULL;
  snprintf(begin, sizeof begin, SECTION_BEGIN "%s -->", name);
  if (old) b = strstr(old, begin);
  const char *e = b ? section_end(b) : NULL;
  FILE *f = fopen(path, "wb");
  if (!f) return free(old), -1;
  if (old) fwrite(old, 1, b && e ? (size_t)(b - old) : strlen(old), f);
  if (old && !(b && e)) fputs(*old && old[strlen(old) - 1] != '\n' ? "\n\n" : "\n", f);
  fprintf(f, "%s\n%s%s" SECTION_END "%s -->\n", begin, text,
          *text && text[strlen(text) - 1] == '\n' ? "" : "\n", name);
  if (b && e) fputs(e, f);
  free(old);
  return fclose(f) == 0 ? 0 : -1;
}

/* Every section of the report at path (written by bench_report_section),
 * to write again after the rewritten report; NULL when none. */
static char *kept_sections(const char *path) {
  char *old = read_all(path);
  if (!old) return NULL;
  size_t n = 0;
  char *out = calloc(strlen(old) + 1, 1);
  for (const char *b = strstr(old, SECTION_BEGIN); out && b; b = strstr(b, SECTION_BEGIN)) {
    const char *e = section_end(b);
    if (!e) break;
    n += (size_t)snprintf(out + n, strlen(old) + 1 - n, "\n%.*s", (int)(e - b), b);
    b = e;
  }
  free(old);
  if (out && !n) {
    free(out);
    out = NULL;
  }
  return out;
}

int bench_report_md(const char *path, const bench_row *r, int n, const bench_report_info *in) {
  char *kept = kept_sections(path);   /* make bench-peers' and the like */
  FILE *f = fopen(path, "w");
  if (!f) return free(kept), -1;
  char date[64], cap[32];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&now));
  fprintf(f, "# pipejit benchmark report\n\n");
  fprintf(f, "Measured on %s%s; the run took %.0f s.\n\n", date,
          in->quick ? " with `--quick` (sizes up to 100k, one repeat: a smoke check, not "
                      "numbers to quote)"
                    : "",
          in->elapsed_s);
  fprintf(f, "## Machine\n\n");
  write_machine(f);
  fprintf(f, "\n## Command\n\n```\n%s\n```\n\n", in->command);
  fprintf(f, "`make bench` runs exactly this after building (RelWithDebInfo, `-O2 -g`; the C "
             "reference of `fused` is built `-O3 -march=native`). Optimization level %d. "
             "Medians of %s. One query thread; in mode `auto` the compile runs on the engine's "
             "background thread. The compile cache is off, so every first run compiles. "
             "Workloads named `*_sql` run up to %s rows; SQLite stops after %.0f s (then its "
             "value is a bound, marked `>`).\n\n",
          in->opt, in->repeats, in->sql_max_size > 0 ? fmt_size(cap, sizeof cap, in->sql_max_size) : "any",
          in->sql_cap_s);
  fprintf(f, "Columns: **compile ms** text to callable loop (parse, bind, LLVM), **first run ms** "
             "a fresh handle's first run, text to result, compile included; **ns/row** a "
             "compiled handle run again, per input row; **vs interp** / **vs SQLite** how many "
             "times faster than the interpreter / the plain-SQL version at the same size; "
             "**auto / best** auto's first run over the faster first run of interp and jit; "
             "**same** the answer equals the interpreter's (and the reference's).\n\n");

  target t[32];
  int nt = make_targets(r, n, in, t);
  fprintf(f, "## Targets\n\n| target | measured | goal | met |\n|---|---:|---:|---|\n");
  for (int i = 0; i < nt; i++)
    fprintf(f, "| %s | %s | %s | %s |\n", t[i].what, t[i].value, t[i].goal,
            t[i].met < 0 ? "not measured" : t[i].met ? "yes" : "**no**");
  /* which cells miss the auto target, and by how much */
  int misses = 0;
  for (int i = 0; i < n; i++) {
    if (strcmp(r[i].mode, "auto")) continue;
    double x = auto_vs_best(r, n, r[i].workload, r[i].size);
    if (x <= 1.1) continue;
    const bench_row *ip = find(r, n, r[i].workload, r[i].size, "interp");
    const bench_row *jt = find(r, n, r[i].workload, r[i].size, "jit");
    char a[32], b[32], c[32], d[32], e[32];
    if (!misses++) fprintf(f, "\nWhere `auto` misses 1.1x of the faster mode (first run, ms):\n\n");
    fprintf(f, "- `%s` %s: auto %s, interp %s, jit %s (%s)\n", r[i].workload,
            fmt_size(a, sizeof a, r[i].size), fmt_num(b, sizeof b, r[i].first_ms),
            fmt_num(c, sizeof c, ip->first_ms), fmt_num(d, sizeof d, jt->first_ms),
            fmt_ratio(e, sizeof e, x));
  }

  fprintf(f, "\n## Results per workload\n\n![ns per row against size](report.svg)\n");
  const char *wl[MAX_WL];
  int nw = workloads(r, n, wl);
  for (int i = 0; i < nw; i++) md_workload(f, r, n, wl[i], in);
  if (kept) fputs(kept, f);
  free(kept);
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}

/* ---- report.svg ----------------------------------------------------- */

typedef struct series_style {
  const char *mode, *color, *dash;
} series_style;

static const series_style STYLES[] = {
    {"interp", "#1f77b4", ""},        {"jit", "#d62728", ""},
    {"auto", "#2ca02c", "6 3"},       {"c-ref", "#555555", "2 3"},
    {"sqlite", "#9467bd", "8 3 2 3"},
};
#define NSTYLES (int)(sizeof STYLES / sizeof STYLES[0])

static void xml_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else if (*s == '"') fputs("&quot;", f);
    else fputc(*s, f);
  }
}

/* Axis labels: 1, 10, 100, 1k, 10k, … (and 0.1, 0.01 below one). */
static const char *fmt_tick(char *b, size_t cap, double v) {
  if (v >= 1e6) snprintf(b, cap, "%gM", v / 1e6);
  else if (v >= 1e3) snprintf(b, cap, "%gk", v / 1e3);
  else snprintf(b, cap, "%g", v);
  return b;
}

enum { PW = 380, PH = 270, PAD = 20, HEAD = 78, ML = 58, MR = 16, MT = 30, MB = 44 };

typedef struct axes {
  double x0, x1, y0, y1;        /* plot area in pixels (y0 top) */
  double xlo, xhi, ylo, yhi;    /* log10 ranges */
} axes;

static double px(const axes *a, double v) {
  return a->x0 + (log10(v) - a->xlo) / (a->xhi - a->xlo) * (a->x1 - a->x0);
}
static double py(const axes *a, double v) {
  return a->y1 - (log10(v) - a->ylo) / (a->yhi - a->ylo) * (a->y1 - a->y0);
}

static void svg_panel(FILE *f, const bench_row *r, int n, const char *wl, double ox, double oy,
                      double xlo, double xhi) {
  axes a = {ox + ML, ox + PW - MR, oy + MT, oy + PH - MB, xlo, xhi, 0, 0};
  double mn = INFINITY, mx = 0;
  for (int i = 0; i < n; i++)
    if (!strcmp(r[i].workload, wl) && r[i].ns_per_row > 0) {
      if (r[i].ns_per_row < mn) mn = r[i].ns_per_row;
      if (r[i].ns_per_row > mx) mx = r[i].ns_per_row;
    }
  if (mx <= 0) mn = mx = 1;
  a.ylo = floor(log10(mn));
  a.yhi = ceil(log10(mx));
  if (a.yhi <= a.ylo) a.yhi = a.ylo + 1;
  fprintf(f, "<g>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\" "
             "font-size=\"14\">",
          ox + PW / 2.0, oy + 18);
  xml_text(f, wl);
  fprintf(f, "</text>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" "
             "stroke=\"#888\"/>\n",
          a.x0, a.y0, a.x1 - a.x0, a.y1 - a.y0);
  char b[32];
  /* x: one tick per decade of rows */
  for (double d = xlo; d <= xhi + 1e-9; d++) {
    double x = px(&a, pow(10, d));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>"
               "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
            x, a.y0, x, a.y1, x, a.y1 + 15, fmt_tick(b, sizeof b, pow(10, d)));
  }
  /* y: decades, and 2 and 5 in between when the range is short */
  int minor = a.yhi - a.ylo <= 2;
  for (double d = a.ylo; d <= a.yhi + 1e-9; d++)
    for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
      if (m > 1 && (!minor || d >= a.yhi)) continue;
      double v = m * pow(10, d), y = py(&a, v);
      fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>"
                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
              a.x0, y, a.x1, y, m == 1 ? "#e4e4e4" : "#f2f2f2", a.x0 - 5, y + 4,
              fmt_tick(b, sizeof b, v));
    }
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\">input rows</text>\n",
          (a.x0 + a.x1) / 2, a.y1 + 32);
  fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"middle\" "
             "fill=\"#444\">ns / row</text>\n",
          ox + 16, (a.y0 + a.y1) / 2);
  /* one line per mode: the styled modes first, then any other */
  const char *modes[16];
  int nm = 0;
  for (int s = 0; s < NSTYLES; s++)
    for (int i = 0; i < n; i++)
      if (!strcmp(r[i].workload, wl) && !strcmp(r[i].mode, STYLES[s].mode)) {
        modes[nm++] = STYLES[s].mode;
        break;
      }
  for (int i = 0; i < n && nm < 16; i++) {
    int seen = strcmp(r[i].workload, wl) != 0;
    for (int j = 0; j < nm && !seen; j++) seen = !strcmp(modes[j], r[i].mode);
    if (!seen) modes[nm++] = r[i].mode;
  }
  int64_t sz[32];
  int ns = sizes_of(r, n, wl, sz, 32);
  for (int m = 0; m < nm; m++) {
    const char *color = "#ff7f0e", *dash = "";
    for (int s = 0; s < NSTYLES; s++)
      if (!strcmp(STYLES[s].mode, modes[m])) color = STYLES[s].color, dash = STYLES[s].dash;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s points=\"", color,
            *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "");
    for (int s = 0; s < ns; s++) {
      const bench_row *x = find(r, n, wl, sz[s], modes[m]);
      if (x && x->ns_per_row > 0)
        fprintf(f, "%.1f,%.1f ", px(&a, (double)x->size), py(&a, x->ns_per_row));
    }
    fprintf(f, "\"/>\n");
    for (int s = 0; s < ns; s++) {
      const bench_row *x = find(r, n, wl, sz[s], modes[m]);
      if (!x || x->ns_per_row <= 0) continue;
      /* hollow: SQLite hit its cap, the value is a lower bound */
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" stroke=\"%s\" "
                 "stroke-width=\"1.5\"><title>",
              px(&a, (double)x->size), py(&a, x->ns_per_row), x->same < 0 ? "#fff" : color, color);
      xml_text(f, modes[m]);
      char v[32];
      fprintf(f, " at %s rows: %s%s ns/row</title></circle>\n", fmt_size(b, sizeof b, x->size),
              x->same < 0 ? "> " : "", fmt_num(v, sizeof v, x->ns_per_row));
    }
  }
  fprintf(f, "</g>\n");
}

int bench_report_svg(const char *path, const bench_row *r, int n, const bench_report_info *in) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  const char *wl[MAX_WL];
  int nw = workloads(r, n, wl);
  int cols = nw < 3 ? (nw ? nw : 1) : 3, rows = (nw + cols - 1) / cols;
  if (rows < 1) rows = 1;
  int w = 2 * PAD + cols * PW, h = HEAD + rows * PH + PAD;
  /* one x range for every panel, so the panels line up */
  int64_t lo = INT64_MAX, hi = 0;
  for (int i = 0; i < n; i++) {
    if (r[i].size > 0 && r[i].size < lo) lo = r[i].size;
    if (r[i].size > hi) hi = r[i].size;
  }
  double xlo = hi ? floor(log10((double)lo)) : 3, xhi = hi ? ceil(log10((double)hi)) : 4;
  if (xhi <= xlo) xhi = xlo + 1;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
             "viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
             "font-size=\"11\">\n"
             "<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n",
          w, h, w, h);
  fprintf(f, "<text x=\"%d\" y=\"26\" font-size=\"17\" font-weight=\"bold\">pipejit-bench: ns per "
             "input row against input size (log-log, medians, lower is faster)%s</text>\n",
          PAD, in->quick ? " [--quick]" : "");
  /* legend: every mode that appears */
  double lx = PAD;
  for (int s = 0; s < NSTYLES; s++) {
    int used = 0;
    for (int i = 0; i < n && !used; i++) used = !strcmp(r[i].mode, STYLES[s].mode);
    if (!used) continue;
    const char *label = !strcmp(STYLES[s].mode, "c-ref")    ? "C reference (-O3)"
                        : !strcmp(STYLES[s].mode, "sqlite") ? "SQLite (plain SQL)"
                                                            : STYLES[s].mode;
    fprintf(f, "<line x1=\"%.1f\" y1=\"50\" x2=\"%.1f\" y2=\"50\" stroke=\"%s\" stroke-width=\"2\"%s%s%s/>"
               "<circle cx=\"%.1f\" cy=\"50\" r=\"3.5\" fill=\"%s\"/>"
               "<text x=\"%.1f\" y=\"54\" font-size=\"12\">%s</text>\n",
            lx, lx + 30, STYLES[s].color, *STYLES[s].dash ? " stroke-dasharray=\"" : "",
            STYLES[s].dash, *STYLES[s].dash ? "\"" : "", lx + 15, STYLES[s].color, lx + 36, label);
    lx += 44 + 7.0 * (double)strlen(label);
  }
  int capped = 0;
  for (int i = 0; i < n; i++) capped |= r[i].same < 0;
  if (capped)
    fprintf(f, "<text x=\"%.1f\" y=\"54\" font-size=\"12\" fill=\"#555\">hollow marker: SQLite "
               "hit its time cap (a lower bound)</text>\n",
            lx + 10);
  for (int i = 0; i < nw; i++)
    svg_panel(f, r, n, wl[i], PAD + (i % cols) * PW, HEAD + (i / cols) * PH, xlo, xhi);
  fprintf(f, "</svg>\n");
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}
