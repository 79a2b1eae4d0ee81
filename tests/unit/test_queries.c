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
 * malloc, calloc, realloc, strdup and strndup, so that every allocation
 * the library's own code makes goes through the counter below), each case
 * is then run again failing its Nth allocation, as SQLite's and Lua's
 * tests do, for N = 1, 2, … up to the number of allocations the case
 * makes. Each such run must either fail with a message or print exactly
 * the rows of the normal run (an allocation the library can do without),
 * and the engine must still work: the case run again without a failure
 * prints what it printed before. Cases of more than PJ_OOM_STEPS
 * allocations (default 150; PJ_OOM_JIT_STEPS, default 10, for the JIT,
 * which compiles at every run) are swept with a stride, so that the whole
 * suite stays a few minutes under ASan; 0 tries every N. The sweep
 * covers running pipelines (the JIT's compile included), from the
 * before_run hook on: parsing and binding are not swept yet.
 * Allocations inside SQLite and LLVM are not counted (LLVM aborts on
 * out-of-memory by design; SQLite reports SQLITE_NOMEM, covered by its
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

#include <cmocka.h>
#include <sqlite3.h>

#include "codegen/cg.h"
#include "pipejit.h"

/* ---- failing the Nth allocation (PJ_OOM_SWEEP) ------------------------------ */

#ifdef PJ_OOM_SWEEP
#include <pthread.h>

#include "api/engine.h"   /* pj__engine_set_cache_size */

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

/* Armed when fail_at > 0: allocations of the main thread are counted and
 * the fail_at-th returns NULL (once). paused > 0 while the test's own
 * code runs inside the engine (the result callback). */
static long g_oom_count, g_oom_fail_at;
static int g_oom_hit, g_oom_paused;
static pthread_t g_oom_thread;

static int oom_now(void) {
  if (g_oom_fail_at <= 0 || g_oom_paused || !pthread_equal(pthread_self(), g_oom_thread)) return 0;
  if (++g_oom_count != g_oom_fail_at) return 0;
  g_oom_hit = 1;
  return 1;
}
void *__wrap_malloc(size_t n) { return oom_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return oom_now() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return oom_now() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return oom_now() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return oom_now() ? NULL : __real_strndup(s, n); }

/* Counting goes on across the pipelines of a script: the sweep resets
 * g_oom_count and g_oom_hit before each run. */
static void oom_arm(long fail_at) {
  g_oom_thread = pthread_self();
  g_oom_fail_at = fail_at;
}
static void oom_disarm(void) { g_oom_fail_at = 0; }

/* The sweep covers running a compiled pipeline (and what the script does
 * after it): the engine's before_run hook arms the counter once the
 * pipeline is parsed and bound. Parsing and binding allocate from arenas
 * whose callers do not all check yet, so they are left out (see
 * docs/DECISIONS.md, "Out of memory"). */
static long g_oom_pending;
/* What the sweep did, printed at the end: cases swept, failures
 * injected, runs that then failed with a message, runs that printed the
 * normal rows anyway. */
static long g_oom_cases, g_oom_injected, g_oom_errors, g_oom_same;
static int oom_before_run(void *ctx, pj_query *q, const char *text, size_t len, size_t off) {
  if (g_oom_pending) oom_arm(g_oom_pending);
  return 0;
}
/* … until the statement ends: the next statement is parsed unarmed. */
static void oom_after_stmt(void *ctx, const char *text, size_t len, size_t off, const pj_timing *t,
                           int pipeline) {
  oom_disarm();
}
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
/* What a run of a case printed: its rows, or its error. */
static void run_outcome(pj_engine *e, const block *b, str *out) {
  out->n = 0;
  str rows = {0};
  pj_status s = pj_engine_exec(e, b->text.s ? b->text.s : "", collect, &rows);
  oom_disarm();
  rtrim(&rows);
  if (s == PJ_OK) str_addf(out, "rows:\n%s", str_get(&rows));
  else str_addf(out, "error: %s", pj_engine_errmsg(e));
  free(rows.s);
}

/* The case again with its Nth allocation failing, for every N (or a
 * stride of them, see the banner): each failure a clean error or the
 * same rows, and the engine unharmed after it. */
static void oom_sweep(pj_engine *e, const char *path, const char *mode, const block *b,
                      str *failures) {
  str normal = {0}, got = {0}, again = {0};
  pj__hooks hooks = {.before_run = oom_before_run, .after_stmt = oom_after_stmt};
  pj__engine_set_hooks(e, &hooks);
  /* Count only: the allocations of every pipeline run of the script. */
  g_oom_pending = LONG_MAX;
  long total = 0;
  g_oom_count = 0;
  run_outcome(e, b, &normal);
  total = g_oom_count;
  g_oom_cases++;
  /* The JIT compiles at every run (no cache here): fewer steps for it. */
  int jit = !strcmp(mode, "jit");
  const char *env = getenv(jit ? "PJ_OOM_JIT_STEPS" : "PJ_OOM_STEPS");
  long steps = env ? atol(env) : jit ? 10 : 150;
  long stride = steps > 0 && total > steps ? (total + steps - 1) / steps : 1;
  for (long n = 1; n <= total + 1; n += stride) {
    g_oom_pending = n;
    g_oom_hit = 0;
    g_oom_count = 0;
    run_outcome(e, b, &got);
    int hit = g_oom_hit;
    g_oom_pending = 0;
    if (!hit) {
      /* fewer allocations this time (caches warm): the normal outcome */
      if (strcmp(str_get(&got), str_get(&normal)))
        str_addf(failures, "%s:%d [%s] oom: with no allocation failing the case printed\n%s\n"
                           "-- instead of --\n%s\n", path, b->line, mode, str_get(&got),
                 str_get(&normal));
      break;
    }
    g_oom_injected++;
    if (!strncmp(str_get(&got), "error: ", 7)) g_oom_errors++;
    else g_oom_same++;
    if (!strncmp(str_get(&got), "error: ", 7)) {
      if (strlen(str_get(&got)) <= 7)
        str_addf(failures, "%s:%d [%s] oom: allocation %ld failed with an empty message\n",
                 path, b->line, mode, n);
    } else if (strcmp(str_get(&got), str_get(&normal))) {
      str_addf(failures, "%s:%d [%s] oom: allocation %ld failed and the case printed\n%s\n"
                         "-- instead of --\n%s\n", path, b->line, mode, n, str_get(&got),
               str_get(&normal));
      break;
    }
    run_outcome(e, b, &again);
    if (strcmp(str_get(&again), str_get(&normal))) {
      str_addf(failures, "%s:%d [%s] oom: after allocation %ld failed (%s), the case printed\n%s\n"
                         "-- instead of --\n%s\n", path, b->line, mode, n, str_get(&got),
               str_get(&again), str_get(&normal));
      break;
    }
  }
  g_oom_pending = 0;
  pj__hooks none = {0};
  pj__engine_set_hooks(e, &none);
  free(normal.s);
  free(got.s);
  free(again.s);
}
#endif

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
#ifdef PJ_OOM_SWEEP
    /* The sweep runs each case many times: on an engine of its own that
     * follows the same script, so a case with side effects (an INSERT)
     * repeated leaves the engine the expectations are checked on as it
     * was. */
    pj_engine *scratch = NULL;
    assert_int_equal(pj_engine_open(NULL, &scratch), PJ_OK);
    pj_engine_set_mode(scratch, g_modes[m].mode);
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
        else pj_engine_exec(scratch, str_get(&b->text), NULL, NULL);
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
#ifdef PJ_OOM_SWEEP
      pj_engine_exec(scratch, str_get(&b->text), NULL, NULL);
      if (!failures.n) oom_sweep(scratch, path, g_modes[m].name, b, &failures);
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
    print_error("%s", failures.s);
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
