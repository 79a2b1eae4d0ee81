/*
 * test_adaptive.c — mode auto's background compile and backend switch,
 * and the compile cache (exec/adaptive.c, api/query.c).
 *
 *  - Forced switches at every batch boundary (interpreter first, or
 *    compiled code first) give results identical, cell for cell, to the
 *    pure interpreter and the pure JIT, over multi-batch queries:
 *    aggregates, many groups, ORDER BY, LIMIT/OFFSET stopping early,
 *    strings, doubles.
 *  - A real switch in the middle of a run: the compile thread is held,
 *    then let go at a chosen batch; the batches after it run compiled.
 *  - Judging (fake timings): compiled code measured slower than the
 *    interpreter by more than the margin sends the segment back to the
 *    interpreter; faster code stays; rows identical either way.
 *  - An overflow raised mid-query by either backend gives the same
 *    message and offset.
 *  - Cancellation: a tiny query in auto returns while its compile has not
 *    even begun (the thread is held: a run that waited would hang), and
 *    the dropped job is never compiled; closing the engine while a
 *    compile runs is safe.
 *  - The compile thread takes no signals (the application's Ctrl-C
 *    goes to the application's threads).
 *  - The cache: hit on the second run of the same text (also in auto,
 *    from the first batch), miss after a parameter changes type or a
 *    scanned table is replaced by one of another shape, a correct hit
 *    (new data) after a replacement of the same shape, LRU bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "codegen/cg.h"
#include "exec/adaptive.h"
#include "interp/vm.h"
#include "api/engine.h"

/* ~7.3 batches of slices: every query below spans several batches. */
#define NSLICES 60000

static pj_engine *open_engine(pj_mode mode) {
  pj_engine *e = NULL;
  if (pj_engine_open(NULL, &e) != PJ_OK) fail_msg("open: %s", e ? pj_engine_errmsg(e) : "");
  pj__engine_set_force_switch(e, 0);   /* whatever PJ_FORCE_SWITCH says */
  pj_engine_set_mode(e, mode);
  return e;
}

static void exec_ok(pj_engine *e, const char *script) {
  if (pj_engine_exec(e, script, NULL, NULL) != PJ_OK)
    fail_msg("%s\n-> %s", script, pj_engine_errmsg(e));
}

static pj_query *compile_ok(pj_engine *e, const char *text) {
  pj_query *q = NULL;
  if (pj_query_compile(e, text, &q) != PJ_OK) fail_msg("%s\n-> %s", text, pj_engine_errmsg(e));
  return q;
}

static pj_result *run_ok(pj_query *q, const char *text, pj_timing *t) {
  pj_result *r = NULL;
  if (pj_query_run(q, &r) != PJ_OK) fail_msg("%s\n-> %s", text, pj_engine_errmsg(q->e));
  if (t) pj_engine_last_timing(q->e, t);
  return r;
}

/* Compiles, runs once, frees the handle. */
static pj_result *run1(pj_engine *e, const char *text, pj_timing *t) {
  pj_query *q = compile_ok(e, text);
  pj_result *r = run_ok(q, text, t);
  pj_query_free(q);
  return r;
}

/* Cell for cell, doubles bit for bit. */
static void assert_same(const pj_result *a, const pj_result *b, const char *what) {
  if (pj_result_row_count(a) != pj_result_row_count(b) ||
      pj_result_column_count(a) != pj_result_column_count(b))
    fail_msg("%s: %lld x %d vs %lld x %d", what, (long long)pj_result_row_count(a),
             pj_result_column_count(a), (long long)pj_result_row_count(b),
             pj_result_column_count(b));
  for (int c = 0; c < pj_result_column_count(a); c++) {
    pj_type t = pj_result_column_type(a, c);
    if (t != pj_result_column_type(b, c)) fail_msg("%s: type of column %d", what, c);
    for (int64_t r = 0; r < pj_result_row_count(a); r++) {
      int na = pj_result_is_null(a, r, c), nb = pj_result_is_null(b, r, c);
      int same = na == nb;
      if (same && !na) {
        if (t == PJ_TYPE_DOUBLE) {
          double x = pj_result_double(a, r, c), y = pj_result_double(b, r, c);
          same = memcmp(&x, &y, sizeof x) == 0;
        } else if (t == PJ_TYPE_STRING) {
          same = strcmp(pj_result_text(a, r, c, NULL), pj_result_text(b, r, c, NULL)) == 0;
        } else {
          same = pj_result_int64(a, r, c) == pj_result_int64(b, r, c);
        }
      }
      if (!same) fail_msg("%s: row %lld column %d differs", what, (long long)r, c);
    }
  }
}

/* ---- forced switches ------------------------------------------------------ */

static const char *const queries[] = {
    "FROM slice |> WHERE dur > 100 |> AGGREGATE SUM(dur) AS s, COUNT(*) AS n, AVG(dur) AS a, "
    "MIN(ts) AS mn, MAX(ts) AS mx GROUP BY depth |> ORDER BY depth",
    /* many groups: the table grows while the backends take turns */
    "FROM slice |> AGGREGATE COUNT(*) AS n, SUM(dur) AS s, MAX(name) AS mx GROUP BY ts % 7001 AS k",
    /* several keys (NULL parent_id) and a string key with an integer: the
     * JIT's inlined tuple probe and the runtime's group_tuple take turns on
     * one table, so they must hash and compare alike */
    "FROM slice |> AGGREGATE COUNT(*) AS n, SUM(dur) AS s GROUP BY track_id, parent_id, ts % 5 AS q",
    "FROM slice |> AGGREGATE COUNT(*) AS n, MAX(dur) AS m GROUP BY name, depth",
    "FROM slice |> WHERE depth < 3 |> SELECT id, ts, dur, name |> ORDER BY dur DESC, id |> LIMIT 500",
    /* LIMIT/OFFSET across batches, stopping the scan early */
    "FROM slice |> WHERE dur % 3 = 1 |> SELECT id, dur |> LIMIT 15000 OFFSET 9000",
    "FROM slice |> LIMIT 10 OFFSET 17000",
    "FROM slice |> EXTEND upper(name) AS u, length(name) AS l, substr(name, 2, 3) AS s2, "
    "name || '-' || category AS c |> WHERE name LIKE '%a%' OR c GLOB '*e*' |> SELECT id, u, l, s2, c",
    "FROM slice |> EXTEND dur * 0.5 AS h |> AGGREGATE SUM(h) AS sh, AVG(h) AS ah, COUNT(parent_id) AS np "
    "GROUP BY category",
    "FROM slice |> WHERE dur > 5000 OR parent_id IS NULL |> SELECT id, dur + depth AS x, parent_id",
    "FROM slice |> EXTEND CASE WHEN depth IN (0, 1) THEN 'top' WHEN dur BETWEEN 100 AND 1000 "
    "THEN 'mid' ELSE 'low' END AS cls |> AGGREGATE COUNT(*) AS n, SUM(depth) AS d GROUP BY cls "
    "|> ORDER BY cls",
    "FROM slice |> AGGREGATE SUM(dur) AS s, COUNT(*) AS n",
};

static void test_forced_switch_identical(void **state) {
  pj_engine *e = open_engine(PJ_MODE_INTERP);
  assert_int_equal(pj_engine_load_sample_trace(e, NSLICES), PJ_OK);
  for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
    const char *text = queries[i];
    pj_engine_set_mode(e, PJ_MODE_INTERP);
    pj_timing ti, tj, tf;
    pj_result *ri = run1(e, text, &ti);
    assert_int_equal(ti.used_jit, 0);
    pj_engine_set_mode(e, PJ_MODE_JIT);
    pj_result *rj = run1(e, text, &tj);
    assert_int_equal(tj.jit_batches, tj.batches);
    assert_same(ri, rj, text);
    /* interpreter first, then compiled first; in modes auto and jit */
    for (int force = 1; force <= 2; force++) {
      for (int m = 0; m < 2; m++) {
        pj_engine_set_mode(e, m ? PJ_MODE_JIT : PJ_MODE_AUTO);
        pj__engine_set_force_switch(e, force);
        pj_result *rf = run1(e, text, &tf);
        pj__engine_set_force_switch(e, 0);
        assert_same(ri, rf, text);
        assert_true(tf.batches >= 2);
        /* exactly every other batch ran compiled code */
        assert_int_equal(tf.jit_batches, force == 2 ? (tf.batches + 1) / 2 : tf.batches / 2);
        pj_result_free(rf);
      }
    }
    pj_result_free(ri);
    pj_result_free(rj);
  }
  pj_engine_close(e);
}

/* ---- a real switch mid-run -------------------------------------------------- */

typedef struct switch_at {
  ex_picker pk;
  ex_adapt *a;
  int64_t at;      /* let the compile go before this batch */
} switch_at;

static ex_batch_fn pick_switch_at(void *ctx, int seg) {
  switch_at *s = ctx;
  if (s->pk.batches == s->at) {
    ex_adapt_hold(s->a, 0);
    ex_adapt_drain(s->a);
  }
  return ex_pick(&s->pk, seg);
}

static void test_switch_mid_run(void **state) {
  pj_engine *e = open_engine(PJ_MODE_INTERP);
  assert_int_equal(pj_engine_load_sample_trace(e, NSLICES), PJ_OK);
  assert_int_equal(pj__engine_jit(e), PJ_OK);
  const char *text = queries[0];
  pj_result *ri = run1(e, text, NULL);
  pj_query *q = compile_ok(e, text);

  ex_adapt_hold(e->adapt, 1);
  ex_job *job = ex_job_submit(e->adapt, e->jit, q->plan, e->opt_level, NULL);
  assert_non_null(job);
  switch_at sw = {.pk = {.interp = &vm_backend, .jit = &cg_backend, .job = job}, .a = e->adapt, .at = 3};
  ex_run run;
  ex_run_init(&run, q->plan, e->strings, e->db, q->nparams, q->params);
  assert_int_equal(ex_run_plan(&run, pick_switch_at, &sw), 0);
  /* batches 0..2 interpreted, every later one compiled */
  assert_true(sw.pk.batches > 4);
  assert_int_equal(sw.pk.jit_batches, sw.pk.batches - 3);
  const ir_op *output = q->plan->segs[q->plan->nsegs - 1].sink;
  rt_table *t = rt_rowbuf_to_table(&run.result, "result", output->output.out_names, NULL);
  ex_run_free(&run);
  assert_non_null(t);
  pj_result *rs = pj__result_new(t, e->strings);
  assert_same(ri, rs, "switch at batch 3");
  pj_result_free(rs);
  ex_job_release(job);
  pj_query_free(q);
  pj_result_free(ri);
  pj_engine_close(e);
}

/* ---- keeping the faster backend (judging) ------------------------------------ */

/* A picker with a fake clock: every batch "takes" a fixed time per
 * backend, so the judging is deterministic. */
typedef struct fake_timed {
  switch_at sw;
  int64_t now, interp_ns, jit_ns;
} fake_timed;

static int64_t fake_clock(void *ctx) { return ((fake_timed *)ctx)->now; }

static ex_batch_fn pick_fake_timed(void *ctx, int seg) {
  fake_timed *f = ctx;
  ex_batch_fn fn = pick_switch_at(&f->sw, seg);
  f->now += fn == vm_run_batch ? f->interp_ns : f->jit_ns;
  return fn;
}

/* Compiled code slower than the interpreter by more than the margin: the
 * segment goes back to the interpreter after its probe batches, and stays
 * there; faster or within the margin: it stays compiled. The code is
 * ready before batch 0 (no interpreted baseline yet: the segment probes
 * the interpreter after the code) or before batch 4. Rows identical to
 * the interpreter's either way. */
static void test_judge_keeps_faster(void **state) {
  pj_engine *e = open_engine(PJ_MODE_INTERP);
  assert_int_equal(pj_engine_load_sample_trace(e, 2 * NSLICES + 5000), PJ_OK);   /* 15+ batches */
  assert_int_equal(pj__engine_jit(e), PJ_OK);
  const char *text = queries[0];
  pj_result *ri = run1(e, text, NULL);
  pj_query *q = compile_ok(e, text);
  static const struct { int64_t at, interp_ns, jit_ns; int back; } cases[] = {
      {4, 100, 200, 1}, {0, 100, 200, 1}, {4, 200, 100, 0}, {0, 200, 100, 0},
      {4, 100, 104, 0},   /* 4% slower: within the margin */
      {4, 100, 106, 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    ex_adapt_hold(e->adapt, 1);
    ex_job *job = ex_job_submit(e->adapt, e->jit, q->plan, e->opt_level, NULL);
    assert_non_null(job);
    if (cases[k].at == 0) {
      ex_adapt_hold(e->adapt, 0);
      ex_adapt_drain(e->adapt);
    }
    fake_timed f = {.sw = {.pk = {.interp = &vm_backend, .jit = &cg_backend, .job = job, .judge = 1}, .a = e->adapt, .at = cases[k].at},
                    .now = 1000, .interp_ns = cases[k].interp_ns, .jit_ns = cases[k].jit_ns};
    f.sw.pk.clock = fake_clock;
    f.sw.pk.clock_ctx = &f;
    ex_run run;
    ex_run_init(&run, q->plan, e->strings, e->db, q->nparams, q->params);
    assert_int_equal(ex_run_plan(&run, pick_fake_timed, &f), 0);
    const ex_segcost *c = &f.sw.pk.cost[0];
    char what[64];
    snprintf(what, sizeof what, "judge case %zu", k);
    /* the loser is measured only while probing */
    assert_int_equal(c->n[cases[k].back ? 1 : 0], EX_PROBE_BATCHES);
    assert_true(c->n[cases[k].back ? 0 : 1] >= EX_PROBE_BATCHES);
    assert_int_equal(c->decided, cases[k].back ? 1 : 2);
    assert_int_equal(f.sw.pk.switched_back, cases[k].back);
    assert_true(c->ran[0] + c->ran[1] >= 15);   /* every batch of segment 0 */
    if (cases[k].back) {
      /* one warm-up and the probes compiled, everything else interpreted */
      assert_int_equal(c->ran[1], EX_PROBE_BATCHES + 1);
    } else {
      /* the interpreter only for the baseline it lacked */
      assert_int_equal(c->ran[0], cases[k].at == 0 ? EX_PROBE_BATCHES : cases[k].at);
    }
    const ir_op *output = q->plan->segs[q->plan->nsegs - 1].sink;
    rt_table *t = rt_rowbuf_to_table(&run.result, "result", output->output.out_names, NULL);
    ex_run_free(&run);
    assert_non_null(t);
    pj_result *rs = pj__result_new(t, e->strings);
    assert_same(ri, rs, what);
    pj_result_free(rs);
    ex_job_release(job);
  }
  pj_query_free(q);
  pj_result_free(ri);
  pj_engine_close(e);
}

/* A whole auto run on a large input: it starts interpreted, compiles in
 * the background, and whatever mix of backends ran, the rows are the
 * interpreter's. The second handle of the same text finds the code. */

/* Every thread of this process except the caller blocks SIGINT: a signal
 * meant for the application (the shell's Ctrl-C) must not land on the
 * compile thread, where the line editor never hears of it. Reads SigBlk
 * of each task in /proc. Returns the number of threads that do not. */
static int threads_taking_sigint(void) {
  char self[64];
  snprintf(self, sizeof self, "/proc/self/task/%ld/status", (long)syscall(SYS_gettid));
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;   /* no /proc: nothing to check */
  int taking = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char path[300];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", de->d_name);
    if (!strcmp(path, self)) continue;
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char line[256];
    while (fgets(line, sizeof line, f))
      if (!strncmp(line, "SigBlk:", 7)) {
        unsigned long long m = strtoull(line + 7, NULL, 16);
        if (!(m & (1ull << (SIGINT - 1)))) taking++;
      }
    fclose(f);
  }
  closedir(d);
  return taking;
}

static void test_auto_large(void **state) {
  pj_engine *e = open_engine(PJ_MODE_INTERP);
  assert_int_equal(pj_engine_load_sample_trace(e, NSLICES), PJ_OK);
  const char *text = queries[1];
  pj_result *ri = run1(e, text, NULL);
  pj_engine_set_mode(e, PJ_MODE_AUTO);
  pj__engine_set_auto_rows(e, 1000);   /* NSLICES counts as large */
  pj_timing t;
  pj_query *q = compile_ok(e, text);
  pj_result *ra = run_ok(q, text, &t);
  assert_same(ri, ra, "auto");
  assert_int_equal(t.cache_hit, 0);
  ex_adapt_drain(e->adapt);
  ex_adapt_stats st;
  ex_adapt_get_stats(e->adapt, &st);
  assert_int_equal(st.submitted, 1);
  assert_int_equal(st.compiled, 1);
  assert_int_equal(threads_taking_sigint(), 0);   /* the compile thread blocks it */
  /* the handle's next run: compiled from the first batch */
  pj_result_free(ra);
  ra = run_ok(q, text, &t);
  assert_same(ri, ra, "auto, second run");
  assert_int_equal(t.jit_batches, t.batches);
  pj_query_free(q);
  /* a new handle of the same text */
  pj_result *rb = run1(e, text, &t);
  assert_same(ri, rb, "auto, cached");
  assert_int_equal(t.cache_hit, 1);
  assert_int_equal(t.jit_batches, t.batches);
  assert_int_equal(t.compile_ns, 0);
  pj_result_free(ri);
  pj_result_free(ra);
  pj_result_free(rb);
  pj_engine_close(e);
}

/* ---- errors in either backend -------------------------------------------------- */

static void test_error_either_backend(void **state) {
  pj_engine *e = open_engine(PJ_MODE_INTERP);
  /* 50000 rows; v overflows when 1000 is added at row 30000 (batch 3) in
   * table a and at row 40000 (batch 4) in table b. With the interpreter
   * first, batch 3 runs compiled and batch 4 interpreted; compiled first,
   * the other way round: each backend raises each error once. */
  exec_ok(e, "CREATE PERFETTO TABLE a AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL "
             "SELECT x + 1 FROM c WHERE x < 49999) SELECT x, CASE WHEN x = 30000 THEN "
             "9223372036854775000 ELSE x END AS v FROM c;"
             "CREATE PERFETTO TABLE b AS FROM a |> SET v = CASE WHEN x = 30000 THEN 30000 "
             "WHEN x = 40000 THEN 9223372036854775000 ELSE v END");
  const char *texts[] = {
      "FROM a |> EXTEND v + 1000 AS w |> AGGREGATE SUM(w) AS s GROUP BY x % 10 AS k",
      "FROM b |> WHERE x >= 0 |> SELECT x, v + 1000 AS w",
      "FROM b |> AGGREGATE SUM(v) AS s, SUM(v + 1000) AS s2",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    char msg[256];
    pj_engine_set_mode(e, PJ_MODE_INTERP);
    pj_query *q = compile_ok(e, texts[i]);
    pj_result *r = NULL;
    assert_int_equal(pj_query_run(q, &r), PJ_ERROR);
    snprintf(msg, sizeof msg, "%s", pj_engine_errmsg(e));
    int off = pj_engine_erroffset(e);
    assert_non_null(strstr(msg, "integer overflow"));
    for (int v = 0; v < 3; v++) {
      pj_engine_set_mode(e, v == 0 ? PJ_MODE_JIT : PJ_MODE_AUTO);
      pj__engine_set_force_switch(e, v);   /* 0: all compiled; 1, 2: alternating */
      assert_int_equal(pj_query_run(q, &r), PJ_ERROR);
      assert_string_equal(pj_engine_errmsg(e), msg);
      assert_int_equal(pj_engine_erroffset(e), off);
      pj__engine_set_force_switch(e, 0);
    }
    /* the handle still works for a run without the bad rows */
    pj_query_free(q);
  }
  pj_engine_close(e);
}

/* ---- cancellation ------------------------------------------------------------------- */

static void test_tiny_does_not_wait(void **state) {
  pj_engine *e = open_engine(PJ_MODE_AUTO);
  assert_int_equal(pj_engine_load_sample_trace(e, 1000), PJ_OK);
  pj__engine_set_auto_rows(e, 0);   /* every query starts a compile */
  assert_int_equal(pj__engine_jit(e), PJ_OK);
  const char *text = queries[0];
  pj_engine_set_mode(e, PJ_MODE_INTERP);
  pj_result *ri = run1(e, text, NULL);
  pj_engine_set_mode(e, PJ_MODE_AUTO);

  /* Held: the compile cannot begin, so a run that waited for it would
   * never return. */
  ex_adapt_hold(e->adapt, 1);
  pj_query *q = compile_ok(e, text);
  pj_timing t;
  pj_result *r = run_ok(q, text, &t);
  assert_same(ri, r, "tiny auto");
  assert_int_equal(t.used_jit, 0);
  assert_int_equal(t.batches, 3);   /* one per segment: scan, groups, sorted groups */
  ex_adapt_stats st;
  ex_adapt_get_stats(e->adapt, &st);
  assert_int_equal(st.submitted, 1);
  assert_int_equal(st.compiled, 0);
  /* Run again: still interpreted, the same job (not a second one). */
  pj_result_free(r);
  r = run_ok(q, text, &t);
  assert_int_equal(t.used_jit, 0);
  ex_adapt_get_stats(e->adapt, &st);
  assert_int_equal(st.submitted, 1);
  /* The handle goes before the compile began: the job is dropped. */
  pj_query_free(q);
  ex_adapt_hold(e->adapt, 0);
  ex_adapt_drain(e->adapt);
  ex_adapt_get_stats(e->adapt, &st);
  assert_int_equal(st.cancelled, 1);
  assert_int_equal(st.compiled, 0);
  assert_int_equal(st.cached, 0);

  /* Not held: the compile finishes some time after the run; the handle's
   * next run takes the code from its first batch. */
  q = compile_ok(e, text);
  pj_result_free(r);
  r = run_ok(q, text, &t);
  ex_adapt_drain(e->adapt);
  pj_result_free(r);
  r = run_ok(q, text, &t);
  assert_int_equal(t.used_jit, 1);
  assert_int_equal(t.jit_batches, t.batches);
  assert_same(ri, r, "tiny auto, compiled");
  pj_query_free(q);
  pj_result_free(r);
  pj_result_free(ri);
  pj_engine_close(e);
}

/* Freeing handles, rebinding them and closing the engine while compiles
 * are queued or running (ASan/TSan check the lifetimes). */
static void test_close_while_compiling(void **state) {
  const char *text = "FROM slice |> WHERE dur > ? |> AGGREGATE COUNT(*) AS n GROUP BY depth";
  for (int round = 0; round < 3; round++) {
    pj_engine *e = open_engine(PJ_MODE_AUTO);
    assert_int_equal(pj_engine_load_sample_trace(e, 1000), PJ_OK);
    pj__engine_set_auto_rows(e, 0);
    for (int i = 0; i < 4; i++) {
      pj_query *q = compile_ok(e, queries[i]);
      pj_result *r = run_ok(q, queries[i], NULL);
      pj_result_free(r);
      pj_query_free(q);
    }
    /* a new parameter type rebinds: the plan the compile reads goes */
    pj_query *q = compile_ok(e, text);
    assert_int_equal(pj_query_bind_int64(q, 1, 10), PJ_OK);
    pj_result *r = run_ok(q, text, NULL);
    pj_result_free(r);
    assert_int_equal(pj_query_bind_double(q, 1, 10.5), PJ_OK);
    r = run_ok(q, text, NULL);
    pj_result_free(r);
    if (round == 1) pj_query_free(q);
    if (round == 2) ex_adapt_drain(e->adapt);
    if (round != 1) pj_query_free(q);
    pj_engine_close(e);
  }
}

/* ---- the cache ------------------------------------------------------------------------ */

static void test_cache(void **state) {
  pj_engine *e = open_engine(PJ_MODE_JIT);
  exec_ok(e, "CREATE PERFETTO TABLE t AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL "
             "SELECT x + 1 FROM c WHERE x < 19999) SELECT x, x * 2 AS v FROM c");
  const char *text = "FROM t |> WHERE v > ? |> AGGREGATE COUNT(*) AS n, SUM(x) AS s";
  pj_timing t;

  pj_query *q = compile_ok(e, text);
  assert_int_equal(pj_query_bind_int64(q, 1, 100), PJ_OK);
  pj_result *r = run_ok(q, text, &t);
  assert_int_equal(t.cache_hit, 0);
  assert_true(t.compile_ns > 0);
  assert_int_equal(pj_result_int64(r, 0, 0), 19949);
  pj_result_free(r);
  pj_query_free(q);

  /* same text, same types: a hit, no compile */
  q = compile_ok(e, text);
  assert_int_equal(pj_query_bind_int64(q, 1, 39990), PJ_OK);
  r = run_ok(q, text, &t);
  assert_int_equal(t.cache_hit, 1);
  assert_int_equal(t.compile_ns, 0);
  assert_int_equal(t.used_jit, 1);
  assert_int_equal(pj_result_int64(r, 0, 0), 4);
  pj_result_free(r);
  /* the dumps of code from the cache come from this handle's plan */
  const char *raw = pj_query_llvm_ir(q, 0);
  assert_non_null(raw);
  assert_non_null(strstr(raw, "seg0"));
  assert_non_null(pj_query_llvm_ir(q, 1));

  /* a double parameter: the plan is bound again, other code (a miss) */
  assert_int_equal(pj_query_bind_double(q, 1, 39990.5), PJ_OK);
  r = run_ok(q, text, &t);
  assert_int_equal(t.cache_hit, 0);
  assert_true(t.compile_ns > 0);
  assert_int_equal(pj_result_int64(r, 0, 0), 4);
  pj_result_free(r);
  /* back to an integer: the first code again */
  assert_int_equal(pj_query_bind_int64(q, 1, 39996), PJ_OK);
  r = run_ok(q, text, &t);
  assert_int_equal(t.cache_hit, 1);
  assert_int_equal(pj_result_int64(r, 0, 0), 1);
  pj_result_free(r);

  /* t replaced by a table of another shape (v double): a miss */
  exec_ok(e, "CREATE OR REPLACE PERFETTO TABLE t AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL "
             "SELECT x + 1 FROM c WHERE x < 9) SELECT x, x * 2.5 AS v FROM c");
  r = run_ok(q, text, &t);
  assert_int_equal(t.cache_hit, 0);
  assert_true(t.compile_ns > 0);
  assert_int_equal(pj_result_int64(r, 0, 0), 0);
  pj_result_free(r);
  assert_int_equal(pj_query_bind_int64(q, 1, 10), PJ_OK);
  r = run_ok(q, text, &t);
  assert_int_equal(pj_result_int64(r, 0, 0), 5);   /* 12.5 … 22.5 */
  pj_result_free(r);

  /* replaced by one of the same shape: the code fits (it bakes in types,
   * not tables) and reads the new rows */
  exec_ok(e, "CREATE OR REPLACE PERFETTO TABLE t AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL "
             "SELECT x + 1 FROM c WHERE x < 99) SELECT x, x * 1.5 AS v FROM c");
  r = run_ok(q, text, &t);
  assert_int_equal(t.cache_hit, 1);
  assert_int_equal(pj_result_int64(r, 0, 0), 93);   /* v > 10: x >= 7 */
  assert_int_equal(pj_result_int64(r, 0, 1), 4929);
  pj_result_free(r);
  pj_query_free(q);

  /* another opt level is other code */
  pj_engine_set_opt_level(e, 0);
  const char *text0 = "FROM t |> WHERE v > 10 |> AGGREGATE COUNT(*) AS n, SUM(x) AS s";
  r = run1(e, text0, &t);
  assert_int_equal(t.cache_hit, 0);
  pj_result_free(r);
  r = run1(e, text0, &t);
  assert_int_equal(t.cache_hit, 1);
  pj_result_free(r);
  pj_engine_set_opt_level(e, 2);

  /* a script's pipeline is cached too */
  exec_ok(e, "FROM t |> WHERE x > 3 |> SELECT x + v AS y; FROM t |> WHERE x > 3 |> SELECT x + v AS y");
  pj_engine_last_timing(e, &t);
  assert_int_equal(t.cache_hit, 1);

  /* bounded: LRU */
  ex_adapt_stats st;
  pj__engine_set_cache_size(e, 2);
  ex_adapt_get_stats(e->adapt, &st);
  assert_int_equal(st.cached, 2);
  int64_t ev = st.evictions;
  r = run1(e, "FROM t |> SELECT x + 1 AS y", &t);
  pj_result_free(r);
  r = run1(e, "FROM t |> SELECT x + 2 AS y", &t);
  pj_result_free(r);
  r = run1(e, "FROM t |> SELECT x + 1 AS y", &t);   /* used last: kept */
  assert_int_equal(t.cache_hit, 1);
  pj_result_free(r);
  r = run1(e, "FROM t |> SELECT x + 3 AS y", &t);
  pj_result_free(r);
  ex_adapt_get_stats(e->adapt, &st);
  assert_int_equal(st.cached, 2);
  assert_true(st.evictions >= ev + 2);
  r = run1(e, "FROM t |> SELECT x + 1 AS y", &t);
  assert_int_equal(t.cache_hit, 1);
  pj_result_free(r);
  r = run1(e, "FROM t |> SELECT x + 2 AS y", &t);
  assert_int_equal(t.cache_hit, 0);
  pj_result_free(r);
  /* disabled */
  pj__engine_set_cache_size(e, 0);
  r = run1(e, "FROM t |> SELECT x + 1 AS y", &t);
  assert_int_equal(t.cache_hit, 0);
  pj_result_free(r);
  pj_engine_close(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forced_switch_identical),
      cmocka_unit_test(test_switch_mid_run),
      cmocka_unit_test(test_judge_keeps_faster),
      cmocka_unit_test(test_auto_large),
      cmocka_unit_test(test_error_either_backend),
      cmocka_unit_test(test_tiny_does_not_wait),
      cmocka_unit_test(test_close_while_compiling),
      cmocka_unit_test(test_cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
