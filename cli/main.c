/*
 * main.c — the pipejit command-line tool.
 *
 *   pipejit [--db PATH] [--mode auto|jit|interp] [--opt 0-3]
 *           [--format MODE] [--dump plan|llvm|llvm-raw|asm]
 *           [--dump-file FILE] [--timing] [--compare] [--echo]
 *           [--param NAME=VALUE]… [--sample-trace[=N]] [--trace TRACE]
 *           [--replace-trace] [--export OUT.db] [-i]
 *           [--load TABLE,…] [--max-memory SIZE] [--threads N] [--timeout SECONDS]
 *           [--module-path DIR]… [-c TEXT] [-q FILE] [TRACE] [FILE ...]
 *   pipejit --batch TRACES [TRACE …] (-c TEXT | -q FILE) --out OUT.db
 *           [--jobs N] [--mode …] [--opt …] [--param …] [--max-memory …]
 *           [--timeout …] [--module-path …]
 *
 * Runs the statements (and dot-commands: input.c) of every -c TEXT, -q
 * FILE and FILE in the order given (`-` is standard input); with none,
 * standard input — or, on a terminal, the interactive shell (shell.c). A
 * TRACE argument (a FILE whose content is a trace) is imported before any
 * script runs, wherever it stands, as trace_processor_shell takes `TRACE
 * -q query.sql`; with --replace-trace several traces load in the order
 * given, between the scripts. Results go to standard output, one blank
 * line between result sets; errors go to standard error, and so do dumps,
 * timings and comparisons (or to --dump-file). The first error stops the
 * tool with exit status 1.
 *
 * With --batch the script runs on every trace in worker processes and
 * the results go into OUT.db (batch.c).
 *
 * Running scripts, printing, the hooks and cancelling are run.c's; typing
 * --param values is param.c's; this file parses the options, reads the
 * inputs and loads traces and tables.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "api/hooks.h"
#include "shell.h"

static void usage(FILE *out) {
  fputs("usage: pipejit [options] [TRACE] [-c TEXT | -q FILE | FILE ...]\n"
        "\n"
        "Runs pipe queries (FROM t |> WHERE … |> AGGREGATE …), PerfettoSQL statements\n"
        "and SQLite SQL. Statements come from -c TEXT, -q FILE and FILEs in order ('-'\n"
        "is standard input); with none, from standard input, or an interactive shell\n"
        "on a terminal. A TRACE argument (Chrome JSON, plain or .gz, or a Perfetto\n"
        "protobuf trace) is imported first. Results go to standard output; errors,\n"
        "dumps and timings to standard error.\n"
        "\n"
        "options:\n"
        "  --db PATH              SQLite database file (default: in memory)\n"
        "  --mode auto|jit|interp backend: auto starts on the interpreter and, for large\n"
        "                         inputs, switches to code compiled in the background\n"
        "  --opt 0-3              LLVM optimization level (default 2)\n",
        out);
  fprintf(out,
          "  --format MODE          result format: %s\n"
          "                         (default table; json: one array per result set,\n"
          "                         jsonl: one object per line)\n",
          cli_format_choices());
  fputs(
        "  --dump plan|llvm|llvm-raw|asm  print each pipeline's plan, LLVM IR\n"
        "                         (optimized or raw) or machine code on stderr\n"
        "  --dump-file FILE       dumps, timings and comparisons into FILE, not stderr\n"
        "  --timing               per-statement parse/bind/compile/run times on stderr\n"
        "  --compare              run each pipeline with both backends, print both times\n"
        "                         (and which wins for a one-off run, compile included)\n"
        "  --echo                 print each statement (with its comments) before its rows\n"
        "  --param NAME=VALUE     bind $NAME, :NAME and @NAME in every statement\n"
        "                         (repeatable); VALUE is typed as sqlite3's .param set\n"
        "                         types it: 42, 1.5, 'text', NULL, or else the text itself\n"
        "  --sample-trace[=N]     load the sample trace with N slices (default 1000000)\n"
        "  --trace FILE           import a trace (Chrome JSON, plain or .gz) as\n"
        "                         trace_processor's tables (slice, thread, sched, …);\n"
        "                         a FILE argument that is a trace does the same\n"
        "  --replace-trace        allow several traces: each replaces the one before\n"
        "  --export OUT.db, -e OUT.db  write the imported trace into a SQLite file, as\n"
        "                         trace_processor_shell's -e does\n"
        "  --load TABLE,...       copy these tables of the --db database into columnar\n"
        "                         tables (the fast path for pipelines)\n"
        "  --max-memory SIZE      stop a pipeline whose sort, aggregation, tree or result\n"
        "                         state would pass SIZE bytes (suffix K, M or G)\n"
        "  --threads N            threads a pipeline may use (default: the machine's\n"
        "                         processors; 1: the calling thread only); results\n"
        "                         and their order are the same for any N\n"
        "  --timeout SECONDS      interrupt a script (each -c TEXT, FILE or shell\n"
        "                         entry) still running after SECONDS\n"
        "  --module-path DIR      look for INCLUDE PERFETTO MODULE a.b (DIR/a/b.sql) in\n"
        "                         DIR (repeatable; before PIPEJIT_MODULE_PATH and\n"
        "                         pipejit's own modules)\n"
        "  --batch TRACES         run the script (-c or -q) on every trace matching\n"
        "                         TRACES (a path or a glob pattern; repeatable; more\n"
        "                         traces may follow as arguments), one worker process\n"
        "                         per trace, and write each statement's rows, with a\n"
        "                         trace column, into a table of --out: result_1, … or\n"
        "                         the NAME of a '-- name: NAME' comment; failed traces\n"
        "                         go to its table batch_errors (exit status 1)\n"
        "  --out FILE.db          --batch's SQLite file (replaced if it exists)\n"
        "  --jobs N               --batch's worker processes at a time (default: cores)\n"
        "  -c TEXT                run TEXT\n"
        "  -q FILE, --query-file FILE  run the statements of FILE (trace_processor_shell's\n"
        "                         spelling: pipejit TRACE -q query.sql)\n"
        "  -i, --interactive      the shell after the scripts (or, when standard input\n"
        "                         is not a terminal, standard input as a script)\n"
        "  -h, --help             this help\n",
        out);
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

/* A file that is not a script (a trace, a database): says what to do with
 * it instead of letting SQLite complain about its bytes. `what` names
 * what was expected ("a script", "a query file" for -q). 1 when it is
 * not a script. */
static int not_a_script(const char *path, const char *what, const char *text, size_t len) {
  pj_format f = pj_detect_format(text, len < 4096 ? len : 4096);
  if (f == PJ_FORMAT_TEXT) return 0;
  const char *name = strcmp(path, "-") ? path : "standard input";
  const char *arg = strcmp(path, "-") ? path : "FILE";
  if (f == PJ_FORMAT_SQLITE)
    fprintf(stderr, "error: %s is a SQLite database, not %s: open it with --db %s\n", name, what,
            arg);
  else
    fprintf(stderr,
            "error: %s is %s, not %s: give the trace as an argument"
            " (pipejit TRACE -q QUERY.sql, or pipejit TRACE for the shell) or with --trace %s\n",
            name, pj_format_name(f), what, arg);
  return 1;
}

static int run_file(struct cli *c, const char *path, const char *what) {
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  if (!f) {
    fprintf(stderr, "error: cannot open '%s'\n", path);
    return 1;
  }
  size_t len = 0;
  char *text = cli_read_file(f, &len);
  if (f != stdin) fclose(f);
  if (!text) {
    fprintf(stderr, "error: cannot read '%s'\n", path);
    return 1;
  }
  int rc = not_a_script(path, what, text, len) ? 1 : cli_run_input(c, text, len, path);
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

/* A -c TEXT, a script FILE, a -q FILE, or a trace FILE (a positional
 * argument whose content is a trace: gzip, JSON or protobuf). */
enum { IN_FILE, IN_TEXT, IN_TRACE, IN_QUERY };
typedef struct input { int kind; const char *s; } input;

/* The format of the file at path by its content (pj_detect_format);
 * PJ_FORMAT_TEXT for '-' and files that cannot be read. */
static pj_format file_format(const char *path) {
  if (!strcmp(path, "-")) return PJ_FORMAT_TEXT;
  FILE *f = fopen(path, "rb");
  if (!f) return PJ_FORMAT_TEXT;
  unsigned char head[4096];
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  return pj_detect_format(head, n);
}

static int is_trace_file(const char *path) {
  pj_format fmt = file_format(path);
  return fmt == PJ_FORMAT_GZIP || fmt == PJ_FORMAT_JSON || fmt == PJ_FORMAT_PROTO;
}

/* -c TEXT that is only the name of a file, a common slip for -q FILE (or
 * for the trace argument): says so instead of a SQL syntax error. */
static int text_is_a_file(const char *text) {
  if (!*text || strpbrk(text, " \t\r\n;") || !strpbrk(text, "./")) return 0;
  if (access(text, R_OK) != 0) return 0;
  if (is_trace_file(text))
    fprintf(stderr,
            "error: -c takes the text of a query, and '%s' is a trace: give the trace as an"
            " argument (pipejit TRACE -c QUERY) or with --trace TRACE\n",
            text);
  else
    fprintf(stderr,
            "error: -c takes the text of a query, and '%s' is a file: run it with -q %s\n", text,
            text);
  return 1;
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
    int64_t t0 = cli_now_ns();
    int last = -1;
    if (pj_engine_load_table_progress(c->e, name, isatty(2) ? load_progress : NULL, &last) !=
        PJ_OK) {
      if (last >= 0 && last < 100) fputc('\n', stderr);
      fprintf(stderr, "error: %s\n", pj_engine_errmsg(c->e));
      rc = 1;
    } else if (c->timing) {
      fprintf(c->diag ? c->diag : stderr, "timing: table %s loaded in %.3f ms\n", name, cli_ms(cli_now_ns() - t0));
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
  if (total <= 0 || cli_now_ns() - b->t0 < 1000000000) return;
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
  trace_bar bar = {.t0 = cli_now_ns(), .last = -1};
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
    fprintf(c->diag ? c->diag : stderr,
            "timing: trace %s loaded: %.1f MB in %.3f s (%.1f MB/s): %lld slices, %lld threads, "
            "%lld processes, %lld counters, %lld sched, %lld args\n",
            path, (double)info.bytes / 1e6, (double)info.import_ns / 1e9,
            info.import_ns ? (double)info.bytes / 1e6 / ((double)info.import_ns / 1e9) : 0.0,
            (long long)info.slices, (long long)info.threads, (long long)info.processes,
            (long long)info.counters, (long long)info.sched, (long long)info.args);
  return 0;
}

/* --batch: the traces (patterns and the positional arguments), the one
 * script (-c TEXT or -q FILE), --out; then batch.c. */
static int run_batch(const cli_engine_opts *eo, const char **batch, int nbatch,
                     const input *inputs, int ninputs, const char *out, int jobs,
                     const char **params, int nparams) {
  const input *script = NULL;
  for (int i = 0; i < ninputs; i++) {
    if (inputs[i].kind == IN_TRACE || inputs[i].kind == IN_FILE) {
      batch[nbatch++] = inputs[i].s;   /* pipejit --batch a.json b.json … */
    } else if (script) {
      fprintf(stderr, "error: --batch runs one script: give one -c TEXT or -q FILE\n");
      return 1;
    } else {
      script = &inputs[i];
    }
  }
  if (!script) {
    fprintf(stderr, "error: --batch needs the script to run: -c TEXT or -q FILE\n");
    return 1;
  }
  if (!out) {
    fprintf(stderr, "error: --batch needs --out FILE.db, the SQLite file the results go into\n");
    return 1;
  }
  char *text = NULL;
  size_t len = 0;
  if (script->kind == IN_QUERY) {
    FILE *f = strcmp(script->s, "-") ? fopen(script->s, "rb") : stdin;
    if (!f) {
      fprintf(stderr, "error: cannot open '%s'\n", script->s);
      return 1;
    }
    text = cli_read_file(f, &len);
    if (f != stdin) fclose(f);
    if (!text) {
      fprintf(stderr, "error: cannot read '%s'\n", script->s);
      return 1;
    }
    if (not_a_script(script->s, "a query file", text, len)) {
      free(text);
      return 1;
    }
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  cli_batch_opts o = {.engine = *eo, .patterns = batch, .npatterns = nbatch,
                      .script = text ? text : script->s,
                      .script_len = text ? len : strlen(script->s), .out = out,
                      .jobs = jobs > 0 ? jobs : cores > 0 ? (int)cores : 1,
                      .params = params, .nparams = nparams};
  int rc = cli_batch(&o);
  free(text);
  return rc;
}

int main(int argc, char **argv) {
  struct cli c = {.fmt = CLI_TABLE};
  const char *db = NULL;
  int mode = PJ_MODE_AUTO, opt = 2;
  int64_t sample = -1;
  const char *trace = NULL, *load = NULL, *export_path = NULL;
  const char *dump_file = NULL;
  int replace_trace = 0, interactive = 0;
  int64_t max_memory = 0;
  int threads = 0;   /* 0: the engine's default */
  const char **params = calloc((size_t)argc + 1, sizeof *params);   /* NAME=VALUE */
  int nparams = 0;
  input *inputs = calloc((size_t)argc + 1, sizeof *inputs);
  int ninputs = 0;
  const char **module_paths = calloc((size_t)argc + 1, sizeof *module_paths);
  int nmodule_paths = 0;
  static const char *const modes[] = {"auto", "interp", "jit", NULL};
  static const char *const dumps[] = {"plan", "llvm", "llvm-raw", "asm", NULL};
  const char **batch = calloc((size_t)argc + 1, sizeof *batch);   /* --batch and traces */
  int nbatch = 0, jobs = 0;
  const char *out = NULL, *not_batch = NULL;   /* an option --batch does not take */
  if (!inputs || !module_paths || !params || !batch) return 1;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      free(inputs);
      free(module_paths);
      free(params);
      return 0;
    } else if ((v = opt_value(argc, argv, &i, "--db"))) {
      not_batch = a;
      db = v;
    } else if ((v = opt_value(argc, argv, &i, "--mode"))) {
      if ((mode = one_of(v, modes)) < 0) bad_value("--mode", v);
    } else if ((v = opt_value(argc, argv, &i, "--opt"))) {
      if (!(v[0] >= '0' && v[0] <= '3' && !v[1])) bad_value("--opt", v);
      opt = v[0] - '0';
    } else if ((v = opt_value(argc, argv, &i, "--format"))) {
      not_batch = a;
      int f = cli_format_find(v);
      if (f < 0) bad_value("--format", v);
      c.fmt = (cli_format)f;
    } else if ((v = opt_value(argc, argv, &i, "--dump"))) {
      not_batch = a;
      int d = one_of(v, dumps);
      if (d < 0) bad_value("--dump", v);
      c.dump = dumps[d];
    } else if ((v = opt_value(argc, argv, &i, "--dump-file"))) {
      not_batch = a;
      dump_file = v;
    } else if ((v = opt_value(argc, argv, &i, "--param"))) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v) {
        fprintf(stderr, "error: --param takes NAME=VALUE, not '%s' (e.g. --param min_dur=1000)\n", v);
        exit(1);
      }
      params[nparams++] = v;
    } else if (!strcmp(a, "--echo")) {
      not_batch = a;
      c.echo = 1;
    } else if (!strcmp(a, "--timing")) {
      not_batch = a;
      c.timing = 1;
    } else if (!strcmp(a, "--compare")) {
      not_batch = a;
      c.compare = 1;
    } else if (!strcmp(a, "--sample-trace")) {
      not_batch = a;
      sample = 1000000;
    } else if (!strncmp(a, "--sample-trace=", 15)) {
      not_batch = a;
      char *end;
      errno = 0;
      sample = strtoll(a + 15, &end, 10);
      /* out of range is refused, not clamped to LLONG_MAX */
      if (*end || end == a + 15 || sample < 0 || errno == ERANGE)
        bad_value("--sample-trace", a + 15);
    } else if ((v = opt_value(argc, argv, &i, "--trace"))) {
      not_batch = a;
      trace = v;
    } else if ((v = opt_value(argc, argv, &i, "--export")) ||
               (v = opt_value(argc, argv, &i, "-e"))) {
      not_batch = a;
      export_path = v;   /* -e: trace_processor_shell's spelling */
    } else if (!strcmp(a, "-i") || !strcmp(a, "--interactive")) {
      not_batch = a;
      interactive = 1;
    } else if (!strcmp(a, "--replace-trace")) {
      not_batch = a;
      replace_trace = 1;
    } else if ((v = opt_value(argc, argv, &i, "--load"))) {
      not_batch = a;
      load = v;
    } else if ((v = opt_value(argc, argv, &i, "--module-path"))) {
      module_paths[nmodule_paths++] = v;
    } else if ((v = opt_value(argc, argv, &i, "--max-memory"))) {
      if ((max_memory = parse_size(v)) < 0) bad_value("--max-memory", v);
    } else if ((v = opt_value(argc, argv, &i, "--threads"))) {
      char *end;
      errno = 0;
      long n = strtol(v, &end, 10);
      if (*end || end == v || n < 1 || n > 256 || errno == ERANGE) bad_value("--threads", v);
      threads = (int)n;
    } else if ((v = opt_value(argc, argv, &i, "--timeout"))) {
      char *end;
      cli_timeout = strtod(v, &end);
      if (*end || end == v || !(cli_timeout > 0) || cli_timeout > 1e8) bad_value("--timeout", v);
    } else if ((v = opt_value(argc, argv, &i, "--batch"))) {
      batch[nbatch++] = v;
    } else if ((v = opt_value(argc, argv, &i, "--out"))) {
      out = v;
    } else if ((v = opt_value(argc, argv, &i, "--jobs"))) {
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || end == v || n < 1 || n > 4096) bad_value("--jobs", v);
      jobs = (int)n;
    } else if (!strcmp(a, "-c")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "error: -c needs a value\n");
        exit(1);
      }
      if (text_is_a_file(argv[i + 1])) exit(1);
      inputs[ninputs++] = (input){IN_TEXT, argv[++i]};
    } else if (!strcmp(a, "-q")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "error: -q needs a file\n");
        exit(1);
      }
      inputs[ninputs++] = (input){IN_QUERY, argv[++i]};
    } else if ((v = opt_value(argc, argv, &i, "--query-file"))) {
      inputs[ninputs++] = (input){IN_QUERY, v};
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "error: unknown option '%s' (see --help)\n", a);
      exit(1);
    } else {
      inputs[ninputs++] = (input){is_trace_file(a) ? IN_TRACE : IN_FILE, a};
    }
  }
  if (nbatch && not_batch) {
    fprintf(stderr, "error: %s does not go with --batch (each trace's results go into --out)\n",
            not_batch);
    exit(1);
  }
  if (!nbatch && (out || jobs)) {
    fprintf(stderr, "error: %s goes with --batch (see --help)\n", out ? "--out" : "--jobs");
    exit(1);
  }
  /* One trace, unless asked to replace it: a second one is most likely a
   * mistake (trace_processor takes one). */
  int ntraces = trace != NULL, nscripts = 0;
  for (int i = 0; i < ninputs; i++) {
    ntraces += inputs[i].kind == IN_TRACE;
    nscripts += inputs[i].kind != IN_TRACE;
  }
  if (ntraces > 1 && !replace_trace && !nbatch) {
    fprintf(stderr, "error: %d traces given; pipejit loads one (add --replace-trace to load each in"
                    " turn, replacing the one before)\n", ntraces);
    exit(1);
  }
  pj_format dbf = db ? file_format(db) : PJ_FORMAT_TEXT;
  if (dbf == PJ_FORMAT_GZIP || dbf == PJ_FORMAT_JSON || dbf == PJ_FORMAT_PROTO) {
    fprintf(stderr, "error: --db %s is %s, not a SQLite database: give the trace as"
                    " an argument (pipejit TRACE) or with --trace TRACE\n",
            db, pj_format_name(dbf));
    exit(1);
  }
  if (dump_file && !(c.diag = fopen(dump_file, "w"))) {
    fprintf(stderr, "error: --dump-file: cannot write '%s': %s\n", dump_file, strerror(errno));
    exit(1);
  }

  cli_engine_opts eo = {.db = db, .mode = mode, .opt = opt, .max_memory = max_memory,
                        .threads = threads, .module_paths = module_paths,
                        .nmodule_paths = nmodule_paths, .timeout = cli_timeout};
  int rc = 1;
  if (nbatch) {
    rc = run_batch(&eo, batch, nbatch, inputs, ninputs, out, jobs, params, nparams);
    goto done;
  }
  char err[1024];
  if (cli_engine_open(&eo, &c.e, err, sizeof err)) {
    fprintf(stderr, "error: %s\n", err);
    goto done;
  }
  cli_install_handlers(c.e);
  cli_watch(&c);

  rc = 0;
  if (sample >= 0) {
    int64_t t0 = cli_now_ns();
    if (pj_engine_load_sample_trace(c.e, sample) != PJ_OK) {
      fprintf(stderr, "error: %s\n", pj_engine_errmsg(c.e));
      rc = 1;
    } else if (c.timing) {
      fprintf(c.diag ? c.diag : stderr, "timing: sample trace with %lld slices generated in %.3f ms\n",
              (long long)sample, cli_ms(cli_now_ns() - t0));
    }
  }
  if (trace && !rc) rc = load_trace(&c, trace);
  /* The one trace loads before any script, wherever it stands
   * (trace_processor_shell's TRACE with -q FILE); several, with
   * --replace-trace, each where it stands. */
  for (int i = 0; i < ninputs && !rc && !replace_trace; i++)
    if (inputs[i].kind == IN_TRACE) rc = load_trace(&c, inputs[i].s);
  if (load && !rc) rc = load_tables(&c, load);
  /* Typed now, once the trace is in: a value may be a subquery of it. */
  for (int i = 0; i < nparams && !rc; i++) {
    const char *eq = strchr(params[i], '=');
    char *name = strndup(params[i], (size_t)(eq - params[i]));
    rc = name ? cli_param_set(c.e, name, eq + 1) : 1;
    if (rc) fprintf(stderr, "error: --param %s\n", params[i]);
    free(name);
  }
  for (int i = 0; i < ninputs && !rc; i++)
    rc = inputs[i].kind == IN_TEXT    ? cli_run_input(&c, inputs[i].s, strlen(inputs[i].s), "-c")
         : inputs[i].kind == IN_TRACE ? (replace_trace ? load_trace(&c, inputs[i].s) : 0)
         : inputs[i].kind == IN_QUERY ? run_file(&c, inputs[i].s, "a query file")
                                      : run_file(&c, inputs[i].s, "a script");
  if (export_path && !rc) {
    if (pj_engine_export(c.e, export_path) != PJ_OK) {
      fprintf(stderr, "error: %s\n", pj_engine_errmsg(c.e));
      rc = 1;
    }
  }
  /* No script: the shell (or standard input) — except after --export,
   * which was the point of the run. -i: the shell after the scripts too,
   * as trace_processor_shell's -i. */
  int shell = interactive || (!nscripts && !export_path);
  if (shell && !rc && isatty(0)) {
    cli_set_interactive(1);   /* Ctrl-C at the prompt belongs to the line editor */
    rc = cli_shell(&c);
  } else if (shell && !rc) {
    rc = run_file(&c, "-", "a script");
  }

  if (c.compare) cli_compare_summary(&c);
  if (rc == 2) rc = 0;   /* .quit or .exit in a script */
done:
  cli_output_reset(&c);
  free(c.style.widths);
  pj_engine_close(c.e);
  if (c.diag && fclose(c.diag) != 0 && !rc) {
    fprintf(stderr, "error: --dump-file: cannot write '%s'\n", dump_file);
    rc = 1;
  }
  free(inputs);
  free(module_paths);
  free(params);
  free(batch);
  return rc;
}
