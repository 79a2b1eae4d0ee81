/*
 * test_queries.c — runs every .test file in tests/queries, each on both
 * backends (interpreter and JIT), and checks rows, errors and plan shape.
 *
 * File format (one or more cases; '#' lines are comments):
 *
 *   setup:              statements run when reached (fresh engine per file
 *   <script>            and backend); a setup error fails the file
 *   query:              a script: the rows of every statement that returns
 *   <script>            rows, one blank line between result sets
 *   expect:             expected rows, header first: cells joined by ','
 *   <rows>              NULL for NULL, doubles as SQLite prints them
 *   expect-unordered:   the same, but the rows (not the header) of the one
 *   <rows>              result set are compared as a sorted list
 *   error: MESSAGE      the query must fail with exactly this message
 *   error-contains: S   … with a message containing S
 *   at: LINE:COL        … at this position of the query script
 *   plan-contains: S    the plan of the query (a single pipeline) shows S
 *   plan-lacks: S       … and does not show S
 *   same-as:            another script (plain SQL, say) that must print
 *   <script>            exactly the same rows as the query
 *   oom-sweep: every    (test_oom) the interpreter's sweep of this case
 *                       fails each of its allocations in turn, not a
 *                       sample (a case that pins a failure to one
 *                       allocation, whatever the counts before it)
 *   sample-trace: N     (outside cases) loads the sample trace, N slices
 *   module-path: DIR    (outside cases) adds DIR (relative to the source
 *                       tree) to the module path (INCLUDE PERFETTO MODULE)
 *   ----                ends a case (optional at the end of the file)
 *
 * Every case also checks that both backends print the same rows. Backends:
 * PJ_TEST_MODES=interp,jit (the default: jit joins when LLVM is there).
 * PJ_QUERY_DIR points at the .test files (default tests/queries).
 *
 * Built with PJ_OOM_SWEEP (the test_oom target, linked with --wrap for
 * malloc, calloc, realloc, strdup, strndup and the arena's allocators, so
 * that every allocation the library's own code makes, each piece of an
 * arena included, goes through the counter below), each block (a case or
 * a setup script) is then run again failing its Nth allocation, as
 * SQLite's and Lua's tests do, from parsing to the last row. A block
 * that changes the engine (CREATE, INSERT, INCLUDE, …) runs each time in a
 * child process forked from the engine as it was before the block (so a
 * CREATE is swept as a first creation); others run in the engine itself,
 * which they leave as it was (a fork is costly under ASan). It must print
 * exactly the rows of the normal run (an allocation the library can do
 * without) or fail with a message (one saying out of memory, or the
 * error the normal run ends with) after printing what the statements
 * before the failed one printed; then the rest of the script, from the
 * failed statement on, must print what it normally prints (the failed
 * statement left the engine as it was; checked on the interpreter, since
 * what a failure leaves is the statement's), and under ASan nothing may
 * leak (one run a block checks, since a check scans the whole heap;
 * PJ_OOM_LEAK_CHECKS=all checks every run).
 * Blocks of many allocations are sampled with a deterministic stride on
 * two budgets: allocations outside running pipelines (parse, bind,
 * PerfettoSQL statements, SQLite's part: PJ_OOM_STMT_STEPS, default 60)
 * and inside them (PJ_OOM_STEPS, default 60); the JIT, which compiles at
 * every run, gets PJ_OOM_JIT_STMT_STEPS and PJ_OOM_JIT_STEPS (default -1,
 * none, and 10: parsing and binding are the interpreter's, and a block
 * that runs no pipeline is not swept for the JIT). 0 tries every N. PJ_OOM_KEEP_GOING=1 goes on after a failure and
 * PJ_OOM_TRACE=1 prints the stack of each failed allocation (to find the
 * place). Allocations inside SQLite and LLVM are not counted (LLVM aborts
 * on out-of-memory by design; SQLite reports SQLITE_NOMEM, covered by its
 * own tests), nor are the test's own.
 */
#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "api/engine.h"   /* pj__engine_set_batch_rows (and the sweep's hooks) */
#include "codegen/cg.h"
#include "pipejit.h"

/* ---- failing the Nth allocation (PJ_OOM_SWEEP) ------------------------------ */

#ifdef PJ_OOM_SWEEP
#include <pthread.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>


void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void *__real_rt_arena_alloc(rt_arena *a, size_t n);
void *__real_rt_arena_memdup(rt_arena *a, const void *p, size_t n);
char *__real_rt_arena_strdup(rt_arena *a, const char *s);
char *__real_rt_arena_strndup(rt_arena *a, const char *s, size_t n);
void *__wrap_rt_arena_alloc(rt_arena *a, size_t n);
void *__wrap_rt_arena_memdup(rt_arena *a, const void *p, size_t n);
char *__wrap_rt_arena_strdup(rt_arena *a, const char *s);
char *__wrap_rt_arena_strndup(rt_arena *a, const char *s, size_t n);
char *__wrap_rt_arena_printf(rt_arena *a, const char *fmt, ...);

/* Armed when fail_at > 0: allocations of the main thread are counted and
 * the fail_at-th returns NULL (once). paused > 0 while the test's own
 * code runs inside the engine (the result callback). */
static long g_oom_count, g_oom_fail_at;
static int g_oom_hit, g_oom_paused;
static pthread_t g_oom_thread;

/* Where the counted allocations fall: 0 while a statement is parsed,
 * bound, compiled or done by SQLite or the definitions' code, 1 while a
 * compiled pipeline runs (from the before_run hook to the statement's
 * end). The counting run records where the phase changes (g_oom_marks),
 * so that the sweep can sample the two on budgets of their own. */
typedef struct oom_mark { long at; int phase; } oom_mark;
#define OOM_MAX_MARKS 4096
static int g_oom_phase, g_oom_nmarks, g_oom_recording;
static oom_mark g_oom_marks[OOM_MAX_MARKS];
/* End (offset past it) of the last statement of the script that
 * succeeded: where the rest of the script starts after a failure. */
static size_t g_oom_last_end;

/* PJ_OOM_TRACE=1: the stack of each allocation made to fail, on stderr,
 * after the block's file and line (g_oom_where). */
static int g_oom_trace;
static char g_oom_where[300];

static int oom_now(void) {
  if (g_oom_fail_at <= 0 || g_oom_paused || !pthread_equal(pthread_self(), g_oom_thread)) return 0;
  if (++g_oom_count != g_oom_fail_at) return 0;
  g_oom_hit = 1;
  if (g_oom_trace) {
    void *frames[24];
    int n = backtrace(frames, 24);
    fprintf(stderr, "oom: allocation %ld of %s fails here:\n", g_oom_count, g_oom_where);
    backtrace_symbols_fd(frames, n, 2);
  }
  return 1;
}
void *__wrap_malloc(size_t n) { return oom_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return oom_now() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return oom_now() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return oom_now() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return oom_now() ? NULL : __real_strndup(s, n); }
/* Arena pieces count one by one (most come from a block that is already
 * there, so failing only malloc would never reach their callers). */
void *__wrap_rt_arena_alloc(rt_arena *a, size_t n) {
  return oom_now() ? NULL : __real_rt_arena_alloc(a, n);
}
void *__wrap_rt_arena_memdup(rt_arena *a, const void *p, size_t n) {
  return oom_now() ? NULL : __real_rt_arena_memdup(a, p, n);
}
char *__wrap_rt_arena_strdup(rt_arena *a, const char *s) {
  return oom_now() ? NULL : __real_rt_arena_strdup(a, s);
}
char *__wrap_rt_arena_strndup(rt_arena *a, const char *s, size_t n) {
  return oom_now() ? NULL : __real_rt_arena_strndup(a, s, n);
}
char *__wrap_rt_arena_printf(rt_arena *a, const char *fmt, ...) {
  if (oom_now()) return NULL;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *d = __real_rt_arena_alloc(a, (size_t)n + 1);
  if (!d) return NULL;
  va_start(ap, fmt);
  vsnprintf(d, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return d;
}

static void oom_arm(long fail_at) {
  g_oom_thread = pthread_self();
  g_oom_count = 0;
  g_oom_hit = 0;
  g_oom_phase = 0;
  g_oom_nmarks = 0;
  g_oom_last_end = 0;
  g_oom_fail_at = fail_at;
}
static void oom_disarm(void) { g_oom_fail_at = 0; }

static void oom_set_phase(int phase) {
  if (phase == g_oom_phase) return;
  g_oom_phase = phase;
  if (g_oom_recording && g_oom_nmarks < OOM_MAX_MARKS)
    g_oom_marks[g_oom_nmarks++] = (oom_mark){g_oom_count, phase};
}
static int oom_before_run(void *ctx, pj_query *q, const char *text, size_t len, size_t off) {
  oom_set_phase(1);
  return 0;
}
static void oom_after_stmt(void *ctx, const char *text, size_t len, size_t off, const pj_timing *t,
                           int pipeline) {
  oom_set_phase(0);
  g_oom_last_end = off + len;
}
/* What the sweep did, printed at the end: blocks swept, failures
 * injected, runs that then failed with a message, runs that printed the
 * normal rows anyway. */
static long g_oom_cases, g_oom_injected, g_oom_errors, g_oom_same;
#define OOM_PAUSE() (g_oom_paused++)
#define OOM_RESUME() (g_oom_paused--)
#else
#define OOM_PAUSE() ((void)0)
#define OOM_RESUME() ((void)0)
#endif

/* ---- growable strings ---------------------------------------------------- */

typedef struct str {
  char *s;
  size_t n, cap;
} str;

static void str_add(str *b, const char *p, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->s = realloc(b->s, b->cap);
    assert_non_null(b->s);
  }
  memcpy(b->s + b->n, p, n);
  b->n += n;
  b->s[b->n] = 0;
}

/* Formats without a length limit (a fixed buffer here once cut long
 * query lines at 512 bytes without a word). */
static void str_addf(str *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  assert_true(n >= 0);
  if ((size_t)n < sizeof tmp) {
    str_add(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  assert_non_null(big);
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  str_add(b, big, (size_t)n);
  free(big);
}

static const char *str_get(const str *b) { return b->s ? b->s : ""; }

/* ---- the file format ------------------------------------------------------ */

typedef enum { B_SETUP, B_CASE } block_kind;

typedef struct block {
  block_kind kind;
  int line;            /* first line of the block in the file */
  str text;            /* setup script or query script */
  int has_expect, unordered;
  str expect;
  str same;            /* same-as: script */
  int64_t sample;      /* B_SETUP from sample-trace: N (else -1) */
  char *modpath;       /* B_SETUP from module-path: DIR (else NULL) */
  str error;           /* exact message */
  str error_part;      /* substring of the message */
  int at_line, at_col;
  int nplan;
  char *plan[16];
  int plan_neg[16];
  int oom_every;       /* oom-sweep: every */
} block;

typedef struct testfile {
  const char *path;
  int nblocks;
  block *blocks;
} testfile;

static block *new_block(testfile *f, block_kind k, int line) {
  f->blocks = realloc(f->blocks, sizeof(block) * (size_t)(f->nblocks + 1));
  assert_non_null(f->blocks);
  block *b = &f->blocks[f->nblocks++];
  memset(b, 0, sizeof *b);
  b->kind = k;
  b->line = line;
  return b;
}

/* Removes trailing newlines and blanks. */
static void rtrim(str *b) {
  while (b->n && (b->s[b->n - 1] == '\n' || b->s[b->n - 1] == ' ' || b->s[b->n - 1] == '\r'))
    b->s[--b->n] = 0;
}

static int starts(const char *line, const char *kw, const char **rest) {
  size_t n = strlen(kw);
  if (strncmp(line, kw, n)) return 0;
  *rest = line + n;
  while (**rest == ' ') (*rest)++;
  return 1;
}

static void parse_file(testfile *f, const char *text) {
  enum { NONE, IN_SETUP, IN_QUERY, IN_EXPECT, IN_SAME } where = NONE;
  block *cur = NULL;   /* the case being filled */
  block *setup = NULL;
  int lineno = 0;
  const char *p = text;
  while (*p) {
    lineno++;
    size_t len = strcspn(p, "\n");
    char *line = strndup(p, len);
    assert_non_null(line);
    if (len && line[len - 1] == '\r') line[len - 1] = 0;
    p += len + (p[len] == '\n');
    const char *rest;
    if (line[0] == '#') {
      /* comment */
    } else if (!strcmp(line, "setup:")) {
      setup = new_block(f, B_SETUP, lineno);
      setup->sample = -1;
      cur = NULL;
      where = IN_SETUP;
    } else if (starts(line, "sample-trace:", &rest)) {
      block *st = new_block(f, B_SETUP, lineno);
      st->sample = strtoll(rest, NULL, 10);
      cur = NULL;
      where = NONE;
    } else if (starts(line, "module-path:", &rest)) {
      block *st = new_block(f, B_SETUP, lineno);
      st->sample = -1;
      st->modpath = strdup(rest);
      cur = NULL;
      where = NONE;
    } else if (!strcmp(line, "same-as:") && cur) {
      where = IN_SAME;
    } else if (!strcmp(line, "query:")) {
      cur = new_block(f, B_CASE, lineno);
      where = IN_QUERY;
    } else if (!strcmp(line, "expect:") || !strcmp(line, "expect-unordered:")) {
      if (!cur) fail_msg("%s:%d: expect: without query:", f->path, lineno);
      cur->has_expect = 1;
      cur->unordered = line[6] == '-';
      where = IN_EXPECT;
    } else if (starts(line, "error:", &rest) && cur) {
      str_add(&cur->error, rest, strlen(rest));
      where = NONE;
    } else if (starts(line, "error-contains:", &rest) && cur) {
      str_add(&cur->error_part, rest, strlen(rest));
      where = NONE;
    } else if (starts(line, "at:", &rest) && cur) {
      if (sscanf(rest, "%d:%d", &cur->at_line, &cur->at_col) != 2)
        fail_msg("%s:%d: expected at: LINE:COL", f->path, lineno);
      where = NONE;
    } else if ((starts(line, "plan-contains:", &rest) || starts(line, "plan-lacks:", &rest)) &&
               cur) {
      if (cur->nplan == 16) fail_msg("%s:%d: too many plan lines", f->path, lineno);
      cur->plan_neg[cur->nplan] = line[5] == 'l';
      cur->plan[cur->nplan++] = strdup(rest);
      where = NONE;
    } else if (starts(line, "oom-sweep:", &rest) && cur) {
      if (strcmp(rest, "every")) fail_msg("%s:%d: expected oom-sweep: every", f->path, lineno);
      cur->oom_every = 1;
      where = NONE;
    } else if (!strcmp(line, "----")) {
      cur = NULL;
      where = NONE;
    } else if (where == IN_SETUP) {
      str_addf(&setup->text, "%s\n", line);
    } else if (where == IN_QUERY) {
      str_addf(&cur->text, "%s\n", line);
    } else if (where == IN_EXPECT) {
      str_addf(&cur->expect, "%s\n", line);
    } else if (where == IN_SAME) {
      str_addf(&cur->same, "%s\n", line);
    } else if (line[strspn(line, " \t")]) {
      fail_msg("%s:%d: unexpected line: %s", f->path, lineno, line);
    }
    free(line);
  }
  for (int i = 0; i < f->nblocks; i++) {
    rtrim(&f->blocks[i].text);
    rtrim(&f->blocks[i].expect);
    rtrim(&f->blocks[i].same);
  }
}

static void free_file(testfile *f) {
  for (int i = 0; i < f->nblocks; i++) {
    block *b = &f->blocks[i];
    free(b->text.s);
    free(b->modpath);
    free(b->expect.s);
    free(b->same.s);
    free(b->error.s);
    free(b->error_part.s);
    for (int k = 0; k < b->nplan; k++) free(b->plan[k]);
  }
  free(f->blocks);
}

/* ---- running ---------------------------------------------------------------- */

static void print_cell(str *out, const pj_result *r, int64_t row, int col) {
  if (pj_result_is_null(r, row, col)) {
    str_add(out, "NULL", 4);
    return;
  }
  char buf[64];
  switch (pj_result_column_type(r, col)) {
  case PJ_TYPE_STRING: {
    size_t len = 0;
    const char *s = pj_result_text(r, row, col, &len);
    str_add(out, s, len);
    return;
  }
  case PJ_TYPE_DOUBLE:
    sqlite3_snprintf(sizeof buf, buf, "%!.15g", pj_result_double(r, row, col));
    break;
  default:
    snprintf(buf, sizeof buf, "%lld", (long long)pj_result_int64(r, row, col));
  }
  str_add(out, buf, strlen(buf));
}

static int collect(void *ctx, const pj_result *r, const char *text, size_t len, size_t off) {
  OOM_PAUSE();   /* the test's own allocations never fail */
  str *out = ctx;
  if (out->n) str_add(out, "\n", 1);   /* blank line between result sets */
  int nc = pj_result_column_count(r);
  for (int c = 0; c < nc; c++) {
    if (c) str_add(out, ",", 1);
    str_addf(out, "%s", pj_result_column_name(r, c));
  }
  str_add(out, "\n", 1);
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    for (int c = 0; c < nc; c++) {
      if (c) str_add(out, ",", 1);
      print_cell(out, r, i, c);
    }
    str_add(out, "\n", 1);
  }
  OOM_RESUME();
  return 0;
}

static int cmp_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The header line, then the other lines sorted. */
static char *sorted_rows(const char *text) {
  char *copy = strdup(text);
  char **lines = NULL;
  int n = 0;
  for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    lines = realloc(lines, sizeof *lines * (size_t)(n + 1));
    lines[n++] = l;
  }
  if (n > 1) qsort(lines + 1, (size_t)n - 1, sizeof *lines, cmp_lines);
  str out = {0};
  for (int i = 0; i < n; i++) str_addf(&out, "%s%s", i ? "\n" : "", lines[i]);
  free(lines);
  free(copy);
  char *r = out.s ? out.s : strdup("");
  return r;
}

/* Runs one case on engine e; appends a description of every mismatch to
 * failures; the rows printed go to *rows. */
static void run_case(pj_engine *e, const char *path, const char *mode, const block *b, str *rows,
                     str *failures) {
  pj_status s = pj_engine_exec(e, b->text.s ? b->text.s : "", collect, rows);
  rtrim(rows);
  const char *where_fmt = "%s:%d [%s]: ";
  if (b->error.n || b->error_part.n) {
    if (s == PJ_OK) {
      str_addf(failures, where_fmt, path, b->line, mode);
      str_addf(failures, "expected an error, but the query succeeded with:\n%s\n", str_get(rows));
      return;
    }
    const char *msg = pj_engine_errmsg(e);
    if ((b->error.n && strcmp(msg, b->error.s)) ||
        (b->error_part.n && !strstr(msg, b->error_part.s))) {
      str_addf(failures, where_fmt, path, b->line, mode);
      str_addf(failures, "expected error\n  %s\nbut got\n  %s\n",
               b->error.n ? b->error.s : b->error_part.s, msg);
    }
    if (b->at_line && (pj_engine_errline(e) != b->at_line || pj_engine_errcol(e) != b->at_col)) {
      str_addf(failures, where_fmt, path, b->line, mode);
      str_addf(failures, "expected the error at %d:%d, but it is at %d:%d (%s)\n", b->at_line,
               b->at_col, pj_engine_errline(e), pj_engine_errcol(e), msg);
    }
    return;
  }
  if (s != PJ_OK) {
    str_addf(failures, where_fmt, path, b->line, mode);
    str_addf(failures, "unexpected error: %s (at %d:%d)\n", pj_engine_errmsg(e),
             pj_engine_errline(e), pj_engine_errcol(e));
    return;
  }
  if (b->has_expect) {
    char *want = b->unordered ? sorted_rows(str_get(&b->expect)) : strdup(str_get(&b->expect));
    char *got = b->unordered ? sorted_rows(str_get(rows)) : strdup(str_get(rows));
    if (strcmp(want, got)) {
      str_addf(failures, where_fmt, path, b->line, mode);
      str_addf(failures, "expected\n%s\n-- but got --\n%s\n", want, got);
    }
    free(want);
    free(got);
  }
  if (b->same.n) {
    str other = {0};
    if (pj_engine_exec(e, b->same.s, collect, &other) != PJ_OK) {
      str_addf(failures, where_fmt, path, b->line, mode);
      str_addf(failures, "same-as: failed: %s\n", pj_engine_errmsg(e));
    } else {
      rtrim(&other);
      if (strcmp(str_get(&other), str_get(rows))) {
        str_addf(failures, where_fmt, path, b->line, mode);
        str_addf(failures, "the query printed\n%s\n-- but same-as printed --\n%s\n",
                 str_get(rows), str_get(&other));
      }
    }
    free(other.s);
  }
  if (b->nplan) {
    pj_query *q = NULL;
    if (pj_query_compile(e, b->text.s, &q) != PJ_OK) {
      str_addf(failures, where_fmt, path, b->line, mode);
      str_addf(failures, "plan: cannot compile: %s\n", pj_engine_errmsg(e));
      return;
    }
    const char *plan = pj_query_plan(q);
    for (int k = 0; k < b->nplan; k++) {
      int has = strstr(plan, b->plan[k]) != NULL;
      if (has == b->plan_neg[k]) {
        str_addf(failures, where_fmt, path, b->line, mode);
        str_addf(failures, "expected the plan %s '%s':\n%s\n",
                 b->plan_neg[k] ? "not to show" : "to show", b->plan[k], plan);
      }
    }
    pj_query_free(q);
  }
}

#ifdef PJ_OOM_SWEEP
/* ---- the sweep ---------------------------------------------------------- */

/* A run of the sweep of a block that changes the engine (changes_state)
 * happens in a child process forked from the scratch engine as it stands
 * before the block (a case or a setup), so each run starts from exactly
 * that state: a statement that creates a view is swept as a first
 * creation, not as a failing "already exists". Other blocks run in the
 * scratch engine itself.
 * Where the Nth allocation failed and the script stopped with an error
 * at statement k, the child then runs the rest of the script from
 * statement k on, without failures, and it must print what the normal
 * run printed from there: the failed statement left the engine (its
 * tables, views, functions, macros, modules) as it was. Under ASan the
 * child also checks that nothing leaked. The child reports through a
 * shared page; a child that dies (a NULL dereference) is a failure. */

#if defined(__SANITIZE_ADDRESS__)
#define OOM_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_LSAN 1
#endif
#endif
#ifdef OOM_LSAN
int __lsan_do_recoverable_leak_check(void);
#endif

/* A run's outcome: each result set as "\1OFFSET\2ROWS", then
 * "\3error: MESSAGE" or "\3ok". */
static int collect_at(void *ctx, const pj_result *r, const char *text, size_t len, size_t off) {
  OOM_PAUSE();
  str *out = ctx;
  str_addf(out, "\1%zu\2", off);
  str rows = {0};
  collect(&rows, r, text, len, off);
  str_add(out, str_get(&rows), rows.n);
  free(rows.s);
  OOM_RESUME();
  return 0;
}

/* With fail_at > 0 the library's allocations are counted (and the
 * fail_at-th fails) while the script runs, the test's own not. */
static void run_outcome(pj_engine *e, const char *text, long fail_at, str *out) {
  out->n = 0;
  str_add(out, "", 0);
  if (fail_at > 0) oom_arm(fail_at);
  pj_status s = pj_engine_exec(e, text, collect_at, out);
  oom_disarm();
  OOM_PAUSE();
  if (s == PJ_OK) str_addf(out, "\3ok");
  else str_addf(out, "\3error: %s", pj_engine_errmsg(e));
  OOM_RESUME();
}

/* The outcome's result sets of statements at offsets [lo, hi), without
 * their offsets, then its end when `end`. */
static void canon(const char *o, size_t lo, size_t hi, int end, str *out) {
  out->n = 0;
  str_add(out, "", 0);
  const char *p = o;
  while (*p == '\1') {
    size_t off = strtoull(p + 1, (char **)&p, 10);
    p++;   /* \2 */
    const char *q = p;
    while (*q && *q != '\1' && *q != '\3') q++;
    if (off >= lo && off < hi) {
      str_add(out, "[", 1);
      str_add(out, p, (size_t)(q - p));
      str_add(out, "]", 1);
    }
    p = q;
  }
  if (end && *p == '\3') str_add(out, p + 1, strlen(p + 1));
}

/* Shared with the children: what one run found. */
typedef struct oom_report {
  long total, injected, errors, same;
  int nmarks;
  oom_mark marks[OOM_MAX_MARKS];
  size_t len;   /* of text */
  char text[];  /* the normal outcome (counting run), or failures */
} oom_report;
#define OOM_REPORT_SIZE ((size_t)8 << 20)
static oom_report *g_report;

static void report_text(const char *s) {
  size_t room = OOM_REPORT_SIZE - sizeof *g_report - 1;
  size_t n = strlen(s);
  if (g_report->len + n > room) n = room - g_report->len;
  memcpy(g_report->text + g_report->len, s, n);
  g_report->len += n;
  g_report->text[g_report->len] = 0;
}

/* The child's death: where, on stderr (the parent names the allocation). */
static void oom_died(int sig) {
  void *frames[32];
  int n = backtrace(frames, 32);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* The block with allocation n failing (n = 0: counting only), into
 * g_report. */
static void oom_try(pj_engine *e, const char *path, const char *mode, int line,
                    const char *text, const char *normal, long n, int leaks) {
  snprintf(g_oom_where, sizeof g_oom_where, "%s:%d [%s]", path, line, mode);
  str got = {0}, a = {0}, b = {0}, fails = {0};
  g_oom_recording = n == 0;
  run_outcome(e, text, n == 0 ? LONG_MAX : n, &got);
  g_oom_recording = 0;
  if (n == 0) {
    g_report->total = g_oom_count;
    g_report->nmarks = g_oom_nmarks;
    memcpy(g_report->marks, g_oom_marks, sizeof(oom_mark) * (size_t)g_oom_nmarks);
    report_text(str_get(&got));
    free(got.s);
    return;
  }
  int hit = g_oom_hit;
  const char *end = strrchr(str_get(&got), '\3');
  int err = hit && end && !strncmp(end + 1, "error: ", 7);
  g_report->injected = hit;
  g_report->errors = err;
  g_report->same = hit && !err;
  const char *where = "%s:%d [%s] oom: allocation %ld failed";
  if (err) {
    size_t last = g_oom_last_end;
    if (strlen(end + 1) <= 7) {
      str_addf(&fails, where, path, line, mode, n);
      str_addf(&fails, " with an empty message (%s)\n", str_get(&got));
    }
    /* the error says so, or is the one the normal run ends with: any
     * other is a different answer (a check the failure made fire, say) */
    const char *nend = strrchr(normal, '\3');
    if (!strstr(end + 1, "out of memory") && !(nend && !strcmp(nend, end))) {
      str_addf(&fails, where, path, line, mode, n);
      str_addf(&fails, " with an error that is not out of memory: %s\n", end + 8);
    }
    /* what it printed before the failing statement is what the normal
     * run printed there */
    canon(str_get(&got), 0, SIZE_MAX, 0, &a);
    canon(normal, 0, last, 0, &b);
    if (strcmp(str_get(&a), str_get(&b))) {
      str_addf(&fails, where, path, line, mode, n);
      str_addf(&fails, " (%s), and the statements before printed\n%s\n-- instead of --\n%s\n",
               end + 1, str_get(&a), str_get(&b));
    }
    /* the rest of the script, from the failed statement on, as normal
     * (the interpreter's sweep says it for both: what a failure leaves
     * is the statement's, not the backend's) */
    if (!strcmp(mode, "jit")) goto checked;
    run_outcome(e, text + last, 0, &got);
    canon(str_get(&got), 0, SIZE_MAX, 1, &a);
    canon(normal, last, SIZE_MAX, 1, &b);
    if (strcmp(str_get(&a), str_get(&b))) {
      str_addf(&fails, where, path, line, mode, n);
      str_addf(&fails, " (%s); from that statement on, the script then printed\n%s\n"
                       "-- instead of --\n%s\n", end + 1, str_get(&a), str_get(&b));
    }
  } else {
    canon(str_get(&got), 0, SIZE_MAX, 1, &a);
    canon(normal, 0, SIZE_MAX, 1, &b);
    if (strcmp(str_get(&a), str_get(&b))) {
      str_addf(&fails, "%s:%d [%s] oom: ", path, line, mode);
      if (hit) str_addf(&fails, "allocation %ld failed and the script printed", n);
      else str_addf(&fails, "with no allocation failing (n = %ld) the script printed", n);
      str_addf(&fails, "\n%s\n-- instead of --\n%s\n", str_get(&a), str_get(&b));
    }
  }
checked:
#ifdef OOM_LSAN
  if (leaks && __lsan_do_recoverable_leak_check()) {
    str_addf(&fails, where, path, line, mode, n);
    str_addf(&fails, " and memory leaked (see the report above)\n");
  }
#endif
  report_text(str_get(&fails));
  free(got.s);
  free(a.s);
  free(b.s);
  free(fails.s);
}

/* Statements that change what the engine holds (or may): a block with
 * one of these words is swept in children forked from the state before
 * it; any other block (pipelines, SELECTs) in the engine itself, which it
 * leaves as it was (fork is costly, above all under ASan). */
static int changes_state(const char *text) {
  static const char *const words[] = {
      "CREATE", "INSERT", "UPDATE", "DELETE", "DROP", "ALTER", "INCLUDE", "REPLACE", "ATTACH",
      "DETACH", "PRAGMA", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "VACUUM",
      "ANALYZE", "REINDEX", "END"};
  for (const char *p = text; *p;) {
    if (!((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')) {
      p++;
      continue;
    }
    const char *q = p;
    while (((*q | 0x20) >= 'a' && (*q | 0x20) <= 'z') || (*q >= '0' && *q <= '9') || *q == '_') q++;
    for (size_t w = 0; w < sizeof words / sizeof *words; w++)
      if ((size_t)(q - p) == strlen(words[w]) && !strncasecmp(p, words[w], (size_t)(q - p)))
        return 1;
    p = q;
  }
  return 0;
}

/* Runs oom_try(n) in a child (forked) or here; the report is in g_report.
 * 0 when the child died, with the reason in `why`. */
static int oom_run(pj_engine *e, const char *path, const char *mode, int line, const char *text,
                   const char *normal, long n, int forked, int leaks, char *why, size_t whylen) {
  memset(g_report, 0, sizeof *g_report);
  if (!forked) {
    oom_try(e, path, mode, line, text, normal, n, 0);   /* LSan checks at exit */
    return 1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(why, whylen, "fork failed");
    return 0;
  }
  if (pid == 0) {
    /* cmocka catches these to go on with the next test: the child must
     * die of them instead, for the parent to see */
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], oom_died);
    alarm(120);   /* a hang is a failure too (the parent sees SIGALRM) */
    oom_try(e, path, mode, line, text, normal, n, leaks);
    _exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {}
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 1;
  if (WIFSIGNALED(st)) snprintf(why, whylen, "the child died of signal %d (%s)", WTERMSIG(st),
                                strsignal(WTERMSIG(st)));
  else snprintf(why, whylen, "the child exited with status %d", WEXITSTATUS(st));
  return 0;
}

/* The allocations to fail: of those made while statements are parsed,
 * bound, compiled or done outside pipelines, and of those made while
 * pipelines run, each phase up to its budget of steps (0: all, < 0:
 * none), sampled
 * with a stride whose start depends on the block (deterministic, so a
 * rerun tries the same ones, while blocks differ in which they try). */
static long *oom_pick(const oom_report *r, long budget[2], unsigned seed, long *count) {
  long tot[2] = {0, 0};
  int ph = 0, m = 0;
  for (long i = 1; i <= r->total; i++) {
    while (m < r->nmarks && r->marks[m].at < i) ph = r->marks[m++].phase;
    tot[ph]++;
  }
  long stride[2], start[2];
  for (int k = 0; k < 2; k++) {
    stride[k] = budget[k] > 0 && tot[k] > budget[k] ? (tot[k] + budget[k] - 1) / budget[k] : 1;
    start[k] = budget[k] < 0 ? -1 : (long)(seed % (unsigned)stride[k]);   /* < 0: none */
  }
  long *v = malloc(sizeof *v * (size_t)(r->total + 2));
  assert_non_null(v);
  long nv = 0, ord[2] = {0, 0};
  ph = 0, m = 0;
  for (long i = 1; i <= r->total; i++) {
    while (m < r->nmarks && r->marks[m].at < i) ph = r->marks[m++].phase;
    if (ord[ph]++ % stride[ph] == start[ph]) v[nv++] = i;
  }
  v[nv++] = r->total + 1;   /* one past the end: no failure */
  *count = nv;
  return v;
}

/* PJ_OOM_KEEP_GOING=1: every sampled allocation of a block, not up to the
 * first failure (to list every place at once while fixing). */
static int g_keep_going;

static unsigned oom_seed(const char *path, int line, const char *mode) {
  unsigned h = 2166136261u;
  for (const char *p = path; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
  for (const char *p = mode; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
  return (h ^ (unsigned)line) * 16777619u;
}

static long env_long(const char *name, long dflt) {
  const char *v = getenv(name);
  return v && *v ? atol(v) : dflt;
}

/* The block (a case or a setup script) from the state engine e is in,
 * with its Nth allocation failing for the sampled N; e is left as it
 * was (the runs happen in children). */
static void oom_sweep(pj_engine *e, const char *path, const char *mode, int line, const char *text,
                      int every, str *failures) {
  if (!g_report) {
    g_report = mmap(NULL, OOM_REPORT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                    0);
    assert_true(g_report != MAP_FAILED);
  }
  g_keep_going = env_long("PJ_OOM_KEEP_GOING", 0) != 0;
  g_oom_trace = env_long("PJ_OOM_TRACE", 0) != 0;
  pj__hooks hooks = {.before_run = oom_before_run, .after_stmt = oom_after_stmt};
  pj__engine_set_hooks(e, &hooks);
  char why[200];
  str normal = {0};
  int forked = changes_state(text);
  if (!oom_run(e, path, mode, line, text, "", 0, forked, 0, why, sizeof why)) {
    str_addf(failures, "%s:%d [%s] oom: the counting run failed: %s\n", path, line, mode, why);
    goto done;
  }
  str_add(&normal, g_report->text, g_report->len);
  g_oom_cases++;
  /* Budgets: allocations outside running pipelines (parse, bind, the
   * statements' own code) and inside; the JIT compiles at every run (no
   * cache here), and only its runs of pipelines are its own. */
  int jit = !strcmp(mode, "jit");
  long budget[2] = {env_long(jit ? "PJ_OOM_JIT_STMT_STEPS" : "PJ_OOM_STMT_STEPS", jit ? -1 : 60),
                    env_long(jit ? "PJ_OOM_JIT_STEPS" : "PJ_OOM_STEPS", jit ? 10 : 60)};
  if (every && !jit) budget[0] = budget[1] = 0;
  /* The JIT's own code runs with the pipelines: a block that runs none
   * is the interpreter's sweep's alone. */
  int runs = 0;
  for (int k = 0; k < g_report->nmarks; k++) runs |= g_report->marks[k].phase == 1;
  if (jit && budget[0] < 0 && !runs) goto done;
  long nv = 0;
  unsigned seed = oom_seed(path, line, mode);
  long *v = oom_pick(g_report, budget, seed, &nv);
  /* A leak check scans the whole heap: one run a block checks (which one
   * depends on the block), PJ_OOM_LEAK_CHECKS=all every run. */
  int all_leaks = getenv("PJ_OOM_LEAK_CHECKS") && !strcmp(getenv("PJ_OOM_LEAK_CHECKS"), "all");
  long leak_at = (long)(seed % (unsigned)(nv > 1 ? nv - 1 : 1));
  for (long k = 0; k < nv; k++) {
    int leaks = all_leaks || k == leak_at;
    if (!oom_run(e, path, mode, line, text, str_get(&normal), v[k], forked, leaks, why,
                 sizeof why)) {
      str_addf(failures, "%s:%d [%s] oom: allocation %ld failed and %s\n", path, line, mode, v[k],
               why);
      if (!g_keep_going) break;
      continue;
    }
    g_oom_injected += g_report->injected;
    g_oom_errors += g_report->errors;
    g_oom_same += g_report->same;
    if (g_report->len) {
      str_add(failures, g_report->text, g_report->len);
      if (!g_keep_going) break;
    }
  }
  free(v);
done:
  free(normal.s);
  pj__hooks none = {0};
  pj__engine_set_hooks(e, &none);
}
#endif

/* Threads and batch size of the engines (PJ_TEST_THREADS; PJ_TEST_BATCH_ROWS
 * makes the small tables of the files span several morsels, so they run
 * in parallel). The OOM sweep runs on one thread: its failures are
 * injected by allocation count, which must not depend on scheduling. */
static void tune_engine(pj_engine *e) {
#ifdef PJ_OOM_SWEEP
  pj_engine_set_threads(e, 1);
#else
  const char *t = getenv("PJ_TEST_THREADS"), *r = getenv("PJ_TEST_BATCH_ROWS");
  if (t && *t) pj_engine_set_threads(e, atoi(t));
  if (r && *r) pj__engine_set_batch_rows(e, atoi(r));
#endif
}

/* Cases whose last statement ran a segment on several threads. */
static long g_par_cases;

typedef struct mode_spec { const char *name; pj_mode mode; } mode_spec;
static mode_spec g_modes[2];
static int g_nmodes;

static void run_file(void **state) {
  const char *path = *state;
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  str text = {0};
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, fp)) > 0) str_add(&text, buf, got);
  fclose(fp);
  testfile f = {.path = path};
  parse_file(&f, str_get(&text));

  str failures = {0};
  str *first = calloc((size_t)f.nblocks + 1, sizeof *first);   /* rows of the first backend */
  assert_non_null(first);
  for (int m = 0; m < g_nmodes; m++) {
    pj_engine *e = NULL;
    assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
    pj_engine_set_mode(e, g_modes[m].mode);
    tune_engine(e);
#ifdef PJ_OOM_SWEEP
    /* The sweep runs each case many times: on an engine of its own that
     * follows the same script, so a case with side effects (an INSERT)
     * repeated leaves the engine the expectations are checked on as it
     * was. */
    pj_engine *scratch = NULL;
    assert_int_equal(pj_engine_open(NULL, &scratch), PJ_OK);
    pj_engine_set_mode(scratch, g_modes[m].mode);
    tune_engine(scratch);
    /* every run compiles (the JIT's allocations are swept too) */
    pj__engine_set_cache_size(scratch, 0);
#endif
    for (int i = 0; i < f.nblocks; i++) {
      block *b = &f.blocks[i];
      if (b->kind == B_SETUP) {
        pj_status st = b->sample >= 0 ? pj_engine_load_sample_trace(e, b->sample)
                       : b->modpath ? pj_engine_add_module_path(e, b->modpath)
                                    : pj_engine_exec(e, str_get(&b->text), NULL, NULL);
#ifdef PJ_OOM_SWEEP
        if (b->sample >= 0) pj_engine_load_sample_trace(scratch, b->sample);
        else if (b->modpath) pj_engine_add_module_path(scratch, b->modpath);
        else {
          if (!failures.n || g_keep_going)
            oom_sweep(scratch, path, g_modes[m].name, b->line, str_get(&b->text), 0, &failures);
          pj_engine_exec(scratch, str_get(&b->text), NULL, NULL);
        }
#endif
        if (st != PJ_OK) {
          str_addf(&failures, "%s:%d [%s]: setup failed: %s (at %d:%d)\n", path, b->line,
                   g_modes[m].name, pj_engine_errmsg(e), pj_engine_errline(e),
                   pj_engine_errcol(e));
          break;
        }
        continue;
      }
      str rows = {0};
      run_case(e, path, g_modes[m].name, b, &rows, &failures);
      pj_timing tm;
      pj_engine_last_timing(e, &tm);
      g_par_cases += tm.threads > 1;
#ifdef PJ_OOM_SWEEP
      if (!failures.n || g_keep_going)
        oom_sweep(scratch, path, g_modes[m].name, b->line, str_get(&b->text), b->oom_every,
                  &failures);
      pj_engine_exec(scratch, str_get(&b->text), NULL, NULL);
#endif
      if (m == 0) first[i] = rows;
      else {
        if (strcmp(str_get(&first[i]), str_get(&rows)))
          str_addf(&failures, "%s:%d: the backends disagree:\n[%s]\n%s\n[%s]\n%s\n", path,
                   b->line, g_modes[0].name, str_get(&first[i]), g_modes[m].name,
                   str_get(&rows));
        free(rows.s);
      }
    }
    pj_engine_close(e);
#ifdef PJ_OOM_SWEEP
    pj_engine_close(scratch);
#endif
  }
  for (int i = 0; i < f.nblocks; i++) free(first[i].s);
  free(first);
  free_file(&f);
  free(text.s);
  if (failures.n) {
    fputs(failures.s, stderr);   /* whole (print_error cuts long texts) */
    free(failures.s);
    fail_msg("%s: query cases failed", path);
  }
}

/* Which backends to run: PJ_TEST_MODES, else the interpreter plus the JIT
 * when LLVM can be initialized here. */
static void pick_modes(void) {
  const char *env = getenv("PJ_TEST_MODES");
  int want_interp = 1, want_jit = 1;
  if (env && *env) {
    want_interp = strstr(env, "interp") != NULL;
    want_jit = strstr(env, "jit") != NULL;
  }
  if (want_interp) g_modes[g_nmodes++] = (mode_spec){"interp", PJ_MODE_INTERP};
  if (want_jit) {
    rt_err err = {.offset = -1};
    cg_jit *j = cg_jit_new(&err);
    if (j) {
      cg_jit_free(j);
      g_modes[g_nmodes++] = (mode_spec){"jit", PJ_MODE_JIT};
    } else {
      fprintf(stderr, "test_queries: the JIT is not available (%s): interpreter only\n",
              err.msg);
    }
  }
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void) {
  const char *dir = getenv("PJ_QUERY_DIR");
  if (!dir) dir = "tests/queries";
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "test_queries: cannot open %s\n", dir);
    return 1;
  }
  char **paths = NULL;
  int n = 0;
  for (struct dirent *ent; (ent = readdir(d));) {
    size_t len = strlen(ent->d_name);
    if (len < 6 || strcmp(ent->d_name + len - 5, ".test")) continue;
    paths = realloc(paths, sizeof *paths * (size_t)(n + 1));
    size_t plen = strlen(dir) + len + 2;
    paths[n] = malloc(plen);
    snprintf(paths[n], plen, "%s/%s", dir, ent->d_name);
    n++;
  }
  closedir(d);
  if (!n) {
    fprintf(stderr, "test_queries: no .test files in %s\n", dir);
    return 1;
  }
  qsort(paths, (size_t)n, sizeof *paths, cmp_names);
  pick_modes();
  struct CMUnitTest *tests = calloc((size_t)n, sizeof *tests);
  for (int i = 0; i < n; i++) {
    tests[i].name = paths[i];
    tests[i].test_func = run_file;
    tests[i].initial_state = paths[i];
  }
  int rc = _cmocka_run_group_tests("queries", tests, (size_t)n, NULL, NULL);
  if (getenv("PJ_TEST_THREADS")) fprintf(stderr, "test_queries: %ld cases ran in parallel\n", g_par_cases);
#ifdef PJ_OOM_SWEEP
  fprintf(stderr, "oom sweep: %ld case runs, %ld allocation failures injected: %ld clean errors, "
                  "%ld runs that needed no more\n", g_oom_cases, g_oom_injected, g_oom_errors,
          g_oom_same);
#endif
  for (int i = 0; i < n; i++) free(paths[i]);
  free(paths);
  free(tests);
  return rc;
}
