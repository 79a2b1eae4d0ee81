/*
 * main.c — the pipejit command-line tool.
 *
 *   pipejit [--db PATH] [--mode auto|jit|interp] [--opt 0-3]
 *           [--format table|csv|json] [--dump plan|llvm|llvm-raw|asm]
 *           [--timing] [--compare] [--sample-trace[=N]] [--trace TRACE]
 *           [--replace-trace] [--export OUT.db]
 *           [--load TABLE,…] [--max-memory SIZE] [--timeout SECONDS]
 *           [-c TEXT] [FILE ...]
 *
 * Runs the statements of every -c TEXT and FILE in the order given (`-`
 * is standard input); with neither, standard input — or, on a terminal,
 * the interactive shell (shell.c). Results go to standard output, one
 * blank line between result sets; errors, timings and comparisons go to
 * standard error. The first error stops the tool with exit status 1.
 *
 * --dump, --timing and --compare watch the engine through its internal
 * hooks (api/engine.h), so they also see the pipelines inside CREATE
 * PERFETTO TABLE.
 *
 * Cancelling: Ctrl-C (SIGINT) and --timeout (SIGALRM) call
 * pj_engine_interrupt while a script runs, which stops the running
 * statement with "error: interrupted". In the interactive shell that
 * returns to the prompt; otherwise the tool exits with status 1 like after
 * any error. Ctrl-C while no statement runs exits a non-interactive run
 * at once (the default action) and is left to the line editor in the
 * shell.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"
#include "api/engine.h"

static void usage(FILE *out) {
  fputs("usage: pipejit [options] [-c TEXT] [FILE ...]\n"
        "\n"
        "Runs pipe queries (FROM t |> WHERE … |> AGGREGATE …), PerfettoSQL statements\n"
        "and SQLite SQL. Statements come from -c TEXT and FILEs in order ('-' is\n"
        "standard input); with neither, from standard input, or an interactive shell\n"
        "on a terminal.\n"
        "\n"
        "options:\n"
        "  --db PATH              SQLite database file (default: in memory)\n"
        "  --mode auto|jit|interp backend: auto starts on the interpreter and, for large\n"
        "                         inputs, switches to code compiled in the background\n"
        "  --opt 0-3              LLVM optimization level (default 2)\n"
        "  --format table|csv|json  result format (default table)\n"
        "  --dump plan|llvm|llvm-raw|asm  print each pipeline's plan, LLVM IR\n"
        "                         (optimized or raw) or machine code before its rows\n"
        "  --timing               per-statement parse/bind/compile/run times on stderr\n"
        "  --compare              run each pipeline with both backends, print both times\n"
        "  --sample-trace[=N]     load the sample trace with N slices (default 1000000)\n"
        "  --trace FILE           import a trace (Chrome JSON, plain or .gz) as\n"
        "                         trace_processor's tables (slice, thread, sched, …);\n"
        "                         a FILE argument that is a trace does the same\n"
        "  --replace-trace        allow several traces: each replaces the one before\n"
        "  --export OUT.db        write the imported trace into a SQLite file, as\n"
        "                         trace_processor_shell's export does\n"
        "  --load TABLE,...       copy these tables of the --db database into columnar\n"
        "                         tables (the fast path for pipelines)\n"
        "  --max-memory SIZE      stop a pipeline whose sort, aggregation, tree or result\n"
        "                         state would pass SIZE bytes (suffix K, M or G)\n"
        "  --timeout SECONDS      interrupt a script (each -c TEXT, FILE or shell\n"
        "                         entry) still running after SECONDS\n"
        "  -c TEXT                run TEXT\n"
        "  -h, --help             this help\n",
        out);
}

static void separate(struct cli *c) {
  if (c->printed++) fputc('\n', stdout);
}

/* ---- errors ------------------------------------------------------------- */

/* "error: <message>", then the script line and a caret under the column
 * (tabs kept so the caret lines up). */
static void print_error(struct cli *c, const char *script) {
  fflush(stdout);
  fprintf(stderr, "error: %s\n", pj_engine_errmsg(c->e));
  int line = pj_engine_errline(c->e), col = pj_engine_errcol(c->e);
  if (!script || line <= 0) return;
  const char *p = script;
  for (int l = 1; l < line && *p; p++)
    if (*p == '\n') l++;
  size_t len = strcspn(p, "\n");
  fprintf(stderr, "at line %d, column %d:\n%.*s\n", line, col, (int)len, p);
  for (int i = 0; i + 1 < col && (size_t)i < len; i++)
    if (((unsigned char)p[i] & 0xC0) != 0x80) fputc(p[i] == '\t' ? '\t' : ' ', stderr);
  fputs("^\n", stderr);
}

/* ---- hooks -------------------------------------------------------------- */

static double ms(int64_t ns) { return (double)ns / 1e6; }

static void skip_comments(const char **text, size_t *len) {
  const char *t = *text;
  size_t n = *len;
  for (;;) {
    while (n && (*t == ' ' || *t == '\n' || *t == '\t' || *t == '\r')) t++, n--;
    if (n >= 2 && t[0] == '-' && t[1] == '-') {
      while (n && *t != '\n') t++, n--;
    } else if (n >= 2 && t[0] == '/' && t[1] == '*') {
      t += 2, n -= 2;
      while (n >= 2 && !(t[0] == '*' && t[1] == '/')) t++, n--;
      size_t skip = n < 2 ? n : 2;
      t += skip, n -= skip;
    } else {
      break;
    }
  }
  *text = t;
  *len = n;
}

/* The start of a statement on one line, for labels: leading comments are
 * skipped, runs of blanks become one space. */
static void snippet(const char *text, size_t len, char *out, size_t cap) {
  skip_comments(&text, &len);
  size_t n = 0;
  int space = 0;
  for (size_t i = 0; i < len && n + 4 < cap; i++) {
    char ch = text[i];
    if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
      space = n > 0;
      continue;
    }
    if (space) out[n++] = ' ';
    space = 0;
    out[n++] = ch;
    if (n + 4 >= cap && i + 1 < len) {
      memcpy(out + n, "...", 3);
      n += 3;
    }
  }
  out[n] = 0;
}

static int dump_query(struct cli *c, pj_query *q) {
  const char *txt;
  if (!strcmp(c->dump, "plan")) txt = pj_query_plan(q);
  else if (!strcmp(c->dump, "llvm")) txt = pj_query_llvm_ir(q, 1);
  else if (!strcmp(c->dump, "llvm-raw")) txt = pj_query_llvm_ir(q, 0);
  else txt = pj_query_asm(q);
  if (!txt) {
    fflush(stdout);
    fprintf(stderr, "error: --dump %s needs the JIT, which could not compile this query: %s\n",
            c->dump, pj_engine_errmsg(c->e));
    c->reported = 1;
    return 1;
  }
  separate(c);
  size_t n = strlen(txt);
  fputs(txt, stdout);
  if (n && txt[n - 1] != '\n') fputc('\n', stdout);
  return 0;
}

/* Runs q with the interpreter and with the JIT and prints both times; the
 * engine then runs it once more for the rows it prints. */
static int compare_query(struct cli *c, pj_query *q, const char *label) {
  pj_mode saved = pj_engine_mode(c->e);
  pj_result *ri = NULL, *rj = NULL;
  pj_timing ti, tj;
  int rc = 0;
  pj_engine_set_mode(c->e, PJ_MODE_INTERP);
  if (pj_query_run(q, &ri) != PJ_OK) {
    rc = 1;   /* the engine reports the error */
    goto done;
  }
  pj_engine_last_timing(c->e, &ti);
  pj_engine_set_mode(c->e, PJ_MODE_JIT);
  fflush(stdout);
  if (pj_query_run(q, &rj) != PJ_OK) {
    fprintf(stderr, "compare: %s\n  interp %.3f ms; the JIT could not run it: %s\n", label,
            ms(ti.run_ns), pj_engine_errmsg(c->e));
    goto done;
  }
  pj_engine_last_timing(c->e, &tj);
  fprintf(stderr, "compare: %s\n  interp %.3f ms, jit %.3f ms (+ %.3f ms compile): %.1fx\n",
          label, ms(ti.run_ns), ms(tj.run_ns), ms(tj.compile_ns),
          tj.run_ns > 0 ? (double)ti.run_ns / (double)tj.run_ns : 0.0);
  if (pj_result_row_count(ri) != pj_result_row_count(rj))
    fprintf(stderr, "compare: the backends disagree: %lld rows (interp) vs %lld (jit)\n",
            (long long)pj_result_row_count(ri), (long long)pj_result_row_count(rj));
done:
  pj_result_free(ri);
  pj_result_free(rj);
  pj_engine_set_mode(c->e, saved);
  return rc;
}

static int before_run(void *ctx, pj_query *q, const char *text, size_t len, size_t off) {
  struct cli *c = ctx;
  if (c->dump && dump_query(c, q)) return 1;
  if (c->compare) {
    char label[72];
    snippet(text, len, label, sizeof label);
    if (compare_query(c, q, label)) return 1;
  }
  return 0;
}

static void after_stmt(void *ctx, const char *text, size_t len, size_t off, const pj_timing *t,
                       int pipeline) {
  struct cli *c = ctx;
  if (!c->timing) return;
  char label[72];
  snippet(text, len, label, sizeof label);
  /* Which backend ran: both when mode auto switched to the compiled code
   * of its background compile (whose time is then the compile time). */
  char backend[96];
  if (!pipeline) snprintf(backend, sizeof backend, "sqlite");
  else if (!t->used_jit) snprintf(backend, sizeof backend, "interp");
  else if (t->jit_batches < t->batches)
    snprintf(backend, sizeof backend, "interp, then jit for %lld of %lld batches",
             (long long)t->jit_batches, (long long)t->batches);
  else snprintf(backend, sizeof backend, "jit");
  const char *how = t->cache_hit ? " (cached)"
                    : t->used_jit && t->jit_batches < t->batches ? " (background)" : "";
  fflush(stdout);
  fprintf(stderr,
          "timing: parse %.3f ms, bind %.3f ms, compile %.3f ms%s, run %.3f ms"
          " (%s, %lld rows in, %lld out): %s\n",
          ms(t->parse_ns), ms(t->bind_ns), ms(t->compile_ns), how, ms(t->run_ns), backend,
          (long long)t->rows_in, (long long)t->rows_out, label);
}

/* ---- cancelling ---------------------------------------------------------- */

/* State the signal handlers read: only lock-free atomics and the engine
 * pointer (set before any handler is installed). */
static pj_engine *g_engine;
static volatile sig_atomic_t g_running;      /* a script is in pj_engine_exec */
static volatile sig_atomic_t g_interactive;  /* the shell owns Ctrl-C at its prompt */
static volatile sig_atomic_t g_timed_out;
static volatile sig_atomic_t g_cancel;       /* the running script must stop,
                                                printing included */
static volatile sig_atomic_t g_prompt_sigint;  /* Ctrl-C at the shell's prompt */
static double g_timeout;                     /* seconds, 0 = none */

static void on_sigint(int sig) {
  if (g_running) {
    g_cancel = 1;
    pj_engine_interrupt(g_engine);
  } else if (!g_interactive) {
    signal(sig, SIG_DFL);
    raise(sig);
  } else {
    g_prompt_sigint = 1;   /* the shell discards its pending input */
  }
}

int cli_take_interrupt(void) {
  int hit = g_prompt_sigint;
  g_prompt_sigint = 0;
  return hit;
}

static void on_sigalrm(int sig) {
  (void)sig;
  if (!g_running) return;
  g_timed_out = 1;
  g_cancel = 1;
  pj_engine_interrupt(g_engine);
}

static void set_timer(double seconds) {
  struct itimerval it = {0};
  it.it_value.tv_sec = (time_t)seconds;
  it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
  if (seconds > 0 && !it.it_value.tv_sec && !it.it_value.tv_usec) it.it_value.tv_usec = 1;
  setitimer(ITIMER_REAL, &it, NULL);
}

static void install_handlers(pj_engine *e) {
  g_engine = e;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_sigalrm;
  sigaction(SIGALRM, &sa, NULL);
}

/* "512M", "2G", "1048576": bytes, or -1. */
static int64_t parse_size(const char *v) {
  char *end;
  double n = strtod(v, &end);
  if (end == v || n < 0) return -1;
  double mul = 1;
  switch (*end) {
  case 'k': case 'K': mul = 1024.0, end++; break;
  case 'm': case 'M': mul = 1024.0 * 1024, end++; break;
  case 'g': case 'G': mul = 1024.0 * 1024 * 1024, end++; break;
  case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024, end++; break;
  default: break;
  }
  if ((*end == 'b' || *end == 'B') && mul > 1) end++;
  if (*end || n * mul >= 9.2e18) return -1;
  return (int64_t)(n * mul);
}

/* ---- running ------------------------------------------------------------ */

static int on_result(void *ctx, const pj_result *res, const char *text, size_t len,
                     size_t off) {
  struct cli *c = ctx;
  separate(c);
  /* A result of millions of cells takes a while to print: the timeout
   * and Ctrl-C stop it there, and the script with it. */
  if (cli_print_result(stdout, res, c->fmt, &g_cancel)) {
    fputc('\n', stdout);
    return 1;
  }
  return 0;
}

int cli_run_script(struct cli *c, const char *script, size_t len) {
  c->reported = 0;
  g_timed_out = 0;
  g_cancel = 0;
  g_running = 1;
  if (g_timeout > 0) set_timer(g_timeout);
  pj_status s = pj_engine_exec_len(c->e, script, len, on_result, c);
  if (g_timeout > 0) set_timer(0);
  g_running = 0;
  fflush(stdout);
  /* stopped while printing: the script ended through the callback */
  if (s == PJ_OK && g_cancel) s = PJ_INTERRUPTED;
  if (s == PJ_OK) return 0;
  if (s == PJ_INTERRUPTED && g_timed_out && !c->reported)
    fprintf(stderr, "error: interrupted (timeout after %g s)\n", g_timeout);
  else if (s == PJ_INTERRUPTED && !c->reported)
    fprintf(stderr, "error: interrupted\n");
  else if (!c->reported)
    print_error(c, script);
  return 1;
}

/* The whole stream, NUL-terminated, its length (which counts any NUL
 * bytes inside) in *len. */
static char *read_stream(FILE *f, size_t *len) {
  size_t n = 0, cap = 1 << 16;
  char *buf = malloc(cap);
  if (!buf) return NULL;
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        return NULL;
      }
      buf = nb;
      cap *= 2;
    }
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

/* A file that is not a script (a trace, a database): says what to do with
 * it instead of letting SQLite complain about its bytes. 1 when it is one. */
static int not_a_script(const char *path, const char *text, size_t len) {
  pj_format f = pj_detect_format(text, len < 4096 ? len : 4096);
  if (f == PJ_FORMAT_TEXT) return 0;
  const char *name = strcmp(path, "-") ? path : "standard input";
  const char *arg = strcmp(path, "-") ? path : "FILE";
  fprintf(stderr, "error: %s is %s, not a script: ", name, pj_format_name(f));
  if (f == PJ_FORMAT_SQLITE)
    fprintf(stderr, "open it with --db %s\n", arg);
  else
    fprintf(stderr, "load it with --trace %s\n", arg);
  return 1;
}

static int run_file(struct cli *c, const char *path) {
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  if (!f) {
    fprintf(stderr, "error: cannot open '%s'\n", path);
    return 1;
  }
  size_t len = 0;
  char *text = read_stream(f, &len);
  if (f != stdin) fclose(f);
  if (!text) {
    fprintf(stderr, "error: cannot read '%s'\n", path);
    return 1;
  }
  int rc = not_a_script(path, text, len) ? 1 : cli_run_script(c, text, len);
  free(text);
  return rc;
}

/* ---- options ------------------------------------------------------------ */

/* Accepts "--name VALUE" and "--name=VALUE"; advances *i past VALUE. */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n)) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n]) return NULL;
  if (*i + 1 >= argc) {
    fprintf(stderr, "error: %s needs a value\n", name);
    exit(1);
  }
  return argv[++*i];
}

static int one_of(const char *v, const char *const *choices) {
  for (int i = 0; choices[i]; i++)
    if (!strcmp(v, choices[i])) return i;
  return -1;
}

static void bad_value(const char *opt, const char *v) {
  fprintf(stderr, "error: bad value for %s: '%s' (see --help)\n", opt, v);
  exit(1);
}

/* A -c TEXT, a script FILE, or a trace FILE (a positional argument whose
 * content is a trace: gzip, JSON or protobuf). */
enum { IN_FILE, IN_TEXT, IN_TRACE };
typedef struct input { int kind; const char *s; } input;

/* Is the file at path a trace (by content, pj_detect_format)? */
static int is_trace_file(const char *path) {
  if (!strcmp(path, "-")) return 0;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  unsigned char head[4096];
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  pj_format fmt = pj_detect_format(head, n);
  return fmt == PJ_FORMAT_GZIP || fmt == PJ_FORMAT_JSON || fmt == PJ_FORMAT_PROTO;
}

/* ---- --trace and --load --------------------------------------------------- */

/* A progress bar on standard error for tables of 100k rows or more, when
 * standard error is a terminal; redrawn only when the percentage moves. */
static void load_progress(void *ctx, const char *what, int64_t done, int64_t total) {
  int *last = ctx;
  if (total < 100000) return;
  int pct = (int)(done * 100 / total);
  if (pct == *last) return;
  *last = pct;
  char bar[41];
  for (int i = 0; i < 40; i++) bar[i] = i < pct * 40 / 100 ? '#' : '.';
  bar[40] = 0;
  fprintf(stderr, "\rload %s [%s] %3d%% (%lld of %lld rows)", what, bar, pct, (long long)done,
          (long long)total);
  if (done >= total) fputs("\n", stderr);
}

static int load_tables(struct cli *c, const char *list) {
  char *copy = strdup(list);
  if (!copy) return 1;
  int rc = 0;
  for (char *save = NULL, *name = strtok_r(copy, ",", &save); name && !rc;
       name = strtok_r(NULL, ",", &save)) {
    while (*name == ' ') name++;
    if (!*name) continue;
    int64_t t0 = rt_now_ns();
    int last = -1;
    if (pj_engine_load_table_progress(c->e, name, isatty(2) ? load_progress : NULL, &last) !=
        PJ_OK) {
      if (last >= 0 && last < 100) fputc('\n', stderr);
      fprintf(stderr, "error: %s\n", pj_engine_errmsg(c->e));
      rc = 1;
    } else if (c->timing) {
      fprintf(stderr, "timing: table %s loaded in %.3f ms\n", name, ms(rt_now_ns() - t0));
    }
  }
  free(copy);
  return rc;
}

/* A progress bar on standard error while an import that has run for more
 * than a second goes on (standard error a terminal only). */
typedef struct trace_bar { int64_t t0; int last; int shown; } trace_bar;

static void trace_progress(void *ctx, const char *what, int64_t done, int64_t total) {
  trace_bar *b = ctx;
  if (total <= 0 || rt_now_ns() - b->t0 < 1000000000) return;
  int pct = (int)(done * 100 / total);
  if (pct == b->last && b->shown) return;
  b->last = pct;
  b->shown = 1;
  char bar[41];
  for (int i = 0; i < 40; i++) bar[i] = i < pct * 40 / 100 ? '#' : '.';
  bar[40] = 0;
  fprintf(stderr, "\rimport %-6s [%s] %3d%%", what, bar, pct);
}

/* Imports a trace; damage and dropped events are reported on stderr. */
static int load_trace(struct cli *c, const char *path) {
  pj_trace_info info;
  trace_bar bar = {.t0 = rt_now_ns(), .last = -1};
  pj_status s = pj_engine_load_trace_progress(c->e, path, &info, isatty(2) ? trace_progress : NULL,
                                              &bar);
  if (bar.shown) fputs("\r\033[K", stderr);
  if (s != PJ_OK) {
    fprintf(stderr, "error: %s\n", pj_engine_errmsg(c->e));
    return 1;
  }
  if (info.warning[0]) fprintf(stderr, "warning: %s: %s\n", path, info.warning);
  if (info.problems)
    fprintf(stderr,
            "warning: %s: %lld events dropped or repaired (SELECT name, value FROM stats WHERE"
            " value > 0)\n",
            path, (long long)info.problems);
  if (c->timing)
    fprintf(stderr,
            "timing: trace %s loaded: %.1f MB in %.3f s (%.1f MB/s): %lld slices, %lld threads, "
            "%lld processes, %lld counters, %lld sched, %lld args\n",
            path, (double)info.bytes / 1e6, (double)info.import_ns / 1e9,
            info.import_ns ? (double)info.bytes / 1e6 / ((double)info.import_ns / 1e9) : 0.0,
            (long long)info.slices, (long long)info.threads, (long long)info.processes,
            (long long)info.counters, (long long)info.sched, (long long)info.args);
  return 0;
}

int main(int argc, char **argv) {
  struct cli c = {.fmt = CLI_TABLE};
  const char *db = NULL;
  int mode = PJ_MODE_AUTO, opt = 2;
  int64_t sample = -1;
  const char *trace = NULL, *load = NULL, *export_path = NULL;
  int replace_trace = 0;
  int64_t max_memory = 0;
  input *inputs = calloc((size_t)argc + 1, sizeof *inputs);
  int ninputs = 0;
  static const char *const modes[] = {"auto", "interp", "jit", NULL};
  static const char *const formats[] = {"table", "csv", "json", NULL};
  static const char *const dumps[] = {"plan", "llvm", "llvm-raw", "asm", NULL};
  if (!inputs) return 1;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      free(inputs);
      return 0;
    } else if ((v = opt_value(argc, argv, &i, "--db"))) {
      db = v;
    } else if ((v = opt_value(argc, argv, &i, "--mode"))) {
      if ((mode = one_of(v, modes)) < 0) bad_value("--mode", v);
    } else if ((v = opt_value(argc, argv, &i, "--opt"))) {
      if (!(v[0] >= '0' && v[0] <= '3' && !v[1])) bad_value("--opt", v);
      opt = v[0] - '0';
    } else if ((v = opt_value(argc, argv, &i, "--format"))) {
      int f = one_of(v, formats);
      if (f < 0) bad_value("--format", v);
      c.fmt = (cli_format)f;
    } else if ((v = opt_value(argc, argv, &i, "--dump"))) {
      int d = one_of(v, dumps);
      if (d < 0) bad_value("--dump", v);
      c.dump = dumps[d];
    } else if (!strcmp(a, "--timing")) {
      c.timing = 1;
    } else if (!strcmp(a, "--compare")) {
      c.compare = 1;
    } else if (!strcmp(a, "--sample-trace")) {
      sample = 1000000;
    } else if (!strncmp(a, "--sample-trace=", 15)) {
      char *end;
      errno = 0;
      sample = strtoll(a + 15, &end, 10);
      /* out of range is refused, not clamped to LLONG_MAX */
      if (*end || end == a + 15 || sample < 0 || errno == ERANGE)
        bad_value("--sample-trace", a + 15);
    } else if ((v = opt_value(argc, argv, &i, "--trace"))) {
      trace = v;
    } else if ((v = opt_value(argc, argv, &i, "--export"))) {
      export_path = v;
    } else if (!strcmp(a, "--replace-trace")) {
      replace_trace = 1;
    } else if ((v = opt_value(argc, argv, &i, "--load"))) {
      load = v;
    } else if ((v = opt_value(argc, argv, &i, "--max-memory"))) {
      if ((max_memory = parse_size(v)) < 0) bad_value("--max-memory", v);
    } else if ((v = opt_value(argc, argv, &i, "--timeout"))) {
      char *end;
      g_timeout = strtod(v, &end);
      if (*end || end == v || !(g_timeout > 0) || g_timeout > 1e8) bad_value("--timeout", v);
    } else if (!strcmp(a, "-c")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "error: -c needs a value\n");
        return 1;
      }
      inputs[ninputs++] = (input){IN_TEXT, argv[++i]};
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "error: unknown option '%s' (see --help)\n", a);
      return 1;
    } else {
      inputs[ninputs++] = (input){is_trace_file(a) ? IN_TRACE : IN_FILE, a};
    }
  }
  /* One trace, unless asked to replace it: a second one is most likely a
   * mistake (trace_processor takes one). */
  int ntraces = trace != NULL, nscripts = 0;
  for (int i = 0; i < ninputs; i++) {
    ntraces += inputs[i].kind == IN_TRACE;
    nscripts += inputs[i].kind != IN_TRACE;
  }
  if (ntraces > 1 && !replace_trace) {
    fprintf(stderr, "error: %d traces given; pipejit loads one (add --replace-trace to load each in"
                    " turn, replacing the one before)\n", ntraces);
    free(inputs);
    return 1;
  }

  if (pj_engine_open(db, &c.e) != PJ_OK) {
    fprintf(stderr, "error: %s\n", c.e ? pj_engine_errmsg(c.e) : "out of memory");
    pj_engine_close(c.e);
    free(inputs);
    return 1;
  }
  pj_engine_set_mode(c.e, (pj_mode)mode);
  pj_engine_set_opt_level(c.e, opt);
  pj_engine_set_max_memory(c.e, max_memory);
  install_handlers(c.e);
  pj__hooks hooks = {.ctx = &c, .before_run = before_run, .after_stmt = after_stmt};
  pj__engine_set_hooks(c.e, &hooks);

  int rc = 0;
  if (sample >= 0) {
    int64_t t0 = rt_now_ns();
    if (pj_engine_load_sample_trace(c.e, sample) != PJ_OK) {
      fprintf(stderr, "error: %s\n", pj_engine_errmsg(c.e));
      rc = 1;
    } else if (c.timing) {
      fprintf(stderr, "timing: sample trace with %lld slices generated in %.3f ms\n",
              (long long)sample, ms(rt_now_ns() - t0));
    }
  }
  if (trace && !rc) rc = load_trace(&c, trace);
  if (load && !rc) rc = load_tables(&c, load);
  for (int i = 0; i < ninputs && !rc; i++)
    rc = inputs[i].kind == IN_TEXT    ? cli_run_script(&c, inputs[i].s, strlen(inputs[i].s))
         : inputs[i].kind == IN_TRACE ? load_trace(&c, inputs[i].s)
                                      : run_file(&c, inputs[i].s);
  if (export_path && !rc) {
    if (pj_engine_export(c.e, export_path) != PJ_OK) {
      fprintf(stderr, "error: %s\n", pj_engine_errmsg(c.e));
      rc = 1;
    }
  }
  /* No script: the shell (or standard input) — except after --export,
   * which was the point of the run. */
  if (!nscripts && !rc && !export_path && isatty(0)) {
    g_interactive = 1;   /* Ctrl-C at the prompt belongs to the line editor */
    rc = cli_shell(&c);
  } else if (!nscripts && !rc && !export_path) {
    rc = run_file(&c, "-");
  }

  pj_engine_close(c.e);
  free(inputs);
  return rc;
}
