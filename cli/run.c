/*
 * run.c — running a script in the tool: results to standard output,
 * errors with a caret under the column, and the observers --dump, --timing
 * and --compare, which watch the engine through its internal hooks
 * (api/hooks.h), so they also see the pipelines inside CREATE PERFETTO
 * TABLE.
 *
 * Cancelling: Ctrl-C (SIGINT) and --timeout (SIGALRM) call
 * pj_engine_interrupt while a script runs, which stops the running
 * statement with "error: interrupted". In the interactive shell that
 * returns to the prompt; otherwise the tool exits with status 1 like after
 * any error. Ctrl-C while no statement runs exits a non-interactive run
 * at once (the default action) and is left to the line editor in the
 * shell.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>

#include "cli.h"
#include "api/hooks.h"

double cli_timeout;

/* A blank line between blocks (not in JSON Lines). */
static void separate(struct cli *c) {
  if (c->printed++ && cli_format_separated(c->fmt)) fputc('\n', stdout);
}

/* The stream of dumps, timings and comparisons (standard error unless
 * --dump-file), flushed after each block; what was printed to standard
 * output goes first, so on a terminal both read in order. */
static FILE *diag_begin(struct cli *c) {
  fflush(stdout);
  return c->diag ? c->diag : stderr;
}

static void diag_end(struct cli *c) { fflush(c->diag ? c->diag : stderr); }

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
  fprintf(stderr, "at line %d, column %d:\n%.*s\n", line + c->line_base, col, (int)len, p);
  for (int i = 0; i + 1 < col && (size_t)i < len; i++)
    if (((unsigned char)p[i] & 0xC0) != 0x80) fputc(p[i] == '\t' ? '\t' : ' ', stderr);
  fputs("^\n", stderr);
}

/* ---- hooks -------------------------------------------------------------- */

double cli_ms(int64_t ns) { return (double)ns / 1e6; }

int64_t cli_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

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

static int dump_query(struct cli *c, pj_query *q, const char *label) {
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
  /* Never into the rows: a CSV or JSON result stays readable. */
  FILE *out = diag_begin(c);
  fprintf(out, "dump %s: %s\n", c->dump, label);
  size_t n = strlen(txt);
  fputs(txt, out);
  if (n && txt[n - 1] != '\n') fputc('\n', out);
  diag_end(c);
  return 0;
}

/* The comparison line's verdict. A one-off query pays for its compile, so
 * the speed-up claimed for it counts the compile; the speed-up of a query
 * run again (its code compiled once, or found in the compile cache) is
 * the runs alone. */
static void verdict(FILE *out, const pj_timing *ti, const pj_timing *tj) {
  double interp = (double)ti->run_ns, jit = (double)tj->run_ns;
  double once = jit + (double)tj->compile_ns;
  if (tj->cache_hit || tj->compile_ns == 0) {
    if (jit < interp)
      fprintf(out, "  jit %.1fx faster\n",
              jit > 0 ? interp / jit : 0.0);
    else
      fprintf(out, "  interp %.1fx faster\n", interp > 0 ? jit / interp : 0.0);
    return;
  }
  if (once < interp)
    fprintf(out, "  once: jit %.1fx faster, compile included; run again: jit %.1fx\n",
            once > 0 ? interp / once : 0.0, jit > 0 ? interp / jit : 0.0);
  else if (jit < interp)
    fprintf(out, "  once: interp %.1fx faster (the compile costs more than it saves);"
                 " run again with the code compiled: jit %.1fx\n",
            interp > 0 ? once / interp : 0.0, jit > 0 ? interp / jit : 0.0);
  else
    fprintf(out, "  interp faster even without the compile (%.1fx)\n",
            interp > 0 ? jit / interp : 0.0);
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
  FILE *out = diag_begin(c);
  if (pj_query_run(q, &rj) != PJ_OK) {
    fprintf(out, "compare: %s\n  interp %.3f ms; the JIT could not run it: %s\n", label,
            cli_ms(ti.run_ns), pj_engine_errmsg(c->e));
    diag_end(c);
    goto done;
  }
  pj_engine_last_timing(c->e, &tj);
  /* with --echo the statement is on the screen already */
  fprintf(out, "compare:%s%s%sinterp %.3f ms | jit %.3f ms", c->echo ? "" : " ",
          c->echo ? "" : label, c->echo ? " " : "\n  ", cli_ms(ti.run_ns), cli_ms(tj.run_ns));
  if (tj.cache_hit) fputs(" (compiled code from the cache)\n", out);
  else if (!tj.compile_ns) fputs(" (compiled before: no compile to count)\n", out);
  else
    fprintf(out, " + %.3f ms compile = %.3f ms\n", cli_ms(tj.compile_ns),
            cli_ms(tj.run_ns + tj.compile_ns));
  verdict(out, &ti, &tj);
  c->cmp.n++;
  c->cmp.interp_ns += ti.run_ns;
  c->cmp.jit_ns += tj.run_ns;
  c->cmp.compile_ns += tj.cache_hit ? 0 : tj.compile_ns;
  c->cmp.interp_wins += ti.run_ns <= tj.run_ns + (tj.cache_hit ? 0 : tj.compile_ns);
  if (pj_result_row_count(ri) != pj_result_row_count(rj))
    fprintf(out, "compare: the backends disagree: %lld rows (interp) vs %lld (jit)\n",
            (long long)pj_result_row_count(ri), (long long)pj_result_row_count(rj));
  diag_end(c);
done:
  pj_result_free(ri);
  pj_result_free(rj);
  pj_engine_set_mode(c->e, saved);
  return rc;
}

static int before_run(void *ctx, pj_query *q, const char *text, size_t len, size_t off) {
  struct cli *c = ctx;
  if (!c->dump && !c->compare) return 0;
  char label[72];
  snippet(text, len, label, sizeof label);
  if (c->dump && dump_query(c, q, label)) return 1;
  if (c->compare && compare_query(c, q, label)) return 1;
  return 0;
}

/* .timer: the clocks where the statement began (wall, user, system). */
static void timer_now(int64_t *real, int64_t cpu[2]) {
  struct rusage ru;
  *real = cli_now_ns();
  getrusage(RUSAGE_SELF, &ru);
  cpu[0] = (int64_t)ru.ru_utime.tv_sec * 1000000000 + (int64_t)ru.ru_utime.tv_usec * 1000;
  cpu[1] = (int64_t)ru.ru_stime.tv_sec * 1000000000 + (int64_t)ru.ru_stime.tv_usec * 1000;
}

/* sqlite3's .timer line, with the other timings (standard error or
 * --dump-file): seconds since the statement began, its printing
 * included. */
static void timer_line(struct cli *c) {
  int64_t real, cpu[2];
  timer_now(&real, cpu);
  FILE *d = diag_begin(c);
  fprintf(d, "Run Time: real %.3f user %.6f sys %.6f\n", (double)(real - c->timer_ns) / 1e9,
          (double)(cpu[0] - c->timer_cpu_ns[0]) / 1e9, (double)(cpu[1] - c->timer_cpu_ns[1]) / 1e9);
  diag_end(c);
}

/* --echo: the statement as written, with the comments before it (which
 * say what it asks), then its rows; as sqlite3's -echo. */
static void before_stmt(void *ctx, const char *text, size_t len, size_t off) {
  struct cli *c = ctx;
  if (c->timer) timer_now(&c->timer_ns, c->timer_cpu_ns);
  if (!c->echo) return;
  separate(c);
  fwrite(text, 1, len, stdout);
  fputs(";\n", stdout);
  fflush(stdout);
  c->echoed = 1;
}

static void after_stmt(void *ctx, const char *text, size_t len, size_t off, const pj_timing *t,
                       int pipeline) {
  struct cli *c = ctx;
  if (c->timer) timer_line(c);
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
  if (pipeline && t->threads > 1) {   /* some segment ran in parallel */
    size_t bl = strlen(backend);
    snprintf(backend + bl, sizeof backend - bl, ", %d threads", t->threads);
  }
  /* Code from the compile cache (an earlier statement of the same text)
   * or compiled before (by --compare, a moment ago) cost no compile now:
   * say so rather than print a compile of 0 ms. */
  char compile[64];
  if (t->cache_hit) snprintf(compile, sizeof compile, "compiled code from the cache");
  else if (!t->used_jit) snprintf(compile, sizeof compile, "no compile");
  else if (!t->compile_ns) snprintf(compile, sizeof compile, "code compiled before");
  else
    snprintf(compile, sizeof compile, "compile %.3f ms%s", cli_ms(t->compile_ns),
             t->jit_batches < t->batches ? " (background)" : "");
  FILE *out = diag_begin(c);
  if (!pipeline)
    fprintf(out, "timing: parse %.3f ms, bind %.3f ms, run %.3f ms (%s, %lld rows in, %lld out): %s\n",
            cli_ms(t->parse_ns), cli_ms(t->bind_ns), cli_ms(t->run_ns), backend,
            (long long)t->rows_in, (long long)t->rows_out, label);
  else
    fprintf(out,
            "timing: parse %.3f ms, bind %.3f ms, %s, run %.3f ms"
            " (%s, %lld rows in, %lld out): %s\n",
            cli_ms(t->parse_ns), cli_ms(t->bind_ns), compile, cli_ms(t->run_ns), backend,
            (long long)t->rows_in, (long long)t->rows_out, label);
  diag_end(c);
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

void cli_install_handlers(pj_engine *e) {
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

/* ---- running ------------------------------------------------------------ */

static int on_result(void *ctx, const pj_result *res, const char *text, size_t len,
                     size_t off) {
  struct cli *c = ctx;
  if (!c->echoed) separate(c);
  c->echoed = 0;
  /* A result of millions of cells takes a while to print: the timeout
   * and Ctrl-C stop it there, and the script with it. */
  if (cli_print_result(stdout, res, c->fmt, &c->style, &g_cancel)) {
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
  if (cli_timeout > 0) set_timer(cli_timeout);
  pj_status s = pj_engine_exec_len(c->e, script, len, on_result, c);
  if (cli_timeout > 0) set_timer(0);
  g_running = 0;
  fflush(stdout);
  /* stopped while printing: the script ended through the callback */
  if (s == PJ_OK && g_cancel) s = PJ_INTERRUPTED;
  if (s == PJ_OK) return 0;
  if (s == PJ_INTERRUPTED && g_timed_out && !c->reported)
    fprintf(stderr, "error: interrupted (timeout after %g s)\n", cli_timeout);
  else if (s == PJ_INTERRUPTED && !c->reported)
    fprintf(stderr, "error: interrupted\n");
  else if (!c->reported)
    print_error(c, script);
  return 1;
}

void cli_set_interactive(int on) { g_interactive = on; }

void cli_compare_summary(struct cli *c) {
  if (!c->cmp.n) return;
  FILE *out = diag_begin(c);
  int64_t once = c->cmp.jit_ns + c->cmp.compile_ns;
  fprintf(out,
          "compare: %d pipeline%s: interp %.3f ms in all | jit %.3f ms + %.3f ms compile = %.3f ms;"
          " run once, the %s wins (interp first for %d of %d)\n",
          c->cmp.n, c->cmp.n == 1 ? "" : "s", cli_ms(c->cmp.interp_ns), cli_ms(c->cmp.jit_ns), cli_ms(c->cmp.compile_ns),
          cli_ms(once), once < c->cmp.interp_ns ? "jit" : "interpreter", c->cmp.interp_wins,
          c->cmp.n);
  diag_end(c);
}

void cli_watch(struct cli *c) {
  pj__hooks hooks = {
      .ctx = c, .before_run = before_run, .after_stmt = after_stmt, .before_stmt = before_stmt};
  pj__engine_set_hooks(c->e, &hooks);
}
