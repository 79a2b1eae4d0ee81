/*
 * test_flatten_stream.c — INTERVAL FLATTEN made a chunk of segments at a
 * time and run through the rest of the segment as it is made
 * (exec/driver_interval.c iv_flatten_one / iv_flatten_par): on 1, 2 and 4
 * threads, in both backends, the segments are a brute-force reference's,
 * and an error met part way gives one thread's error.
 *
 * Under the engine's test knob of small batches a chunk is 700 segments,
 * so the 200,000 slices' ~400,000 segments come in hundreds of chunks, a
 * sweep stops inside nearly every group, chunks are filled again, and
 * batches span chunks and start off validity words.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/engine.h"
#include "pipejit.h"

#define ROWS 200000

static pj_engine *engine(pj_mode mode, int threads) {
  pj_engine *e = NULL;
  assert_int_equal(pj_engine_open(NULL, &e), PJ_OK);
  pj_engine_set_mode(e, mode);
  pj_engine_set_threads(e, threads);
  pj__engine_set_batch_rows(e, 64);
  assert_int_equal(pj_engine_load_sample_trace(e, ROWS), PJ_OK);
  return e;
}

/* ---- the reference --------------------------------------------------------- */

typedef struct seg {
  int64_t ts, dur, track, n, sum;
} seg;

typedef struct segs {
  seg *v;
  size_t n, cap;
} segs;

static void push(segs *s, seg x) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 1024;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    assert_non_null(s->v);
  }
  s->v[s->n++] = x;
}

typedef struct pt {
  int64_t at, x;
} pt;

static int cmp_pt(const void *a, const void *b) {
  const pt *p = a, *q = b;
  return p->at < q->at ? -1 : p->at > q->at;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Entries of sorted p (m of them) at or before t, and the sum of their x. */
static size_t upto(const pt *p, size_t m, const int64_t *pre, int64_t t, int64_t *sum) {
  size_t lo = 0, hi = m;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (p[mid].at <= t) lo = mid + 1;
    else hi = mid;
  }
  *sum = pre[lo];
  return lo;
}

/* One track's segments, counted rather than swept: between consecutive
 * boundaries (starts, ends, point instants) the live intervals are those
 * started at or before the left one less those ended there; at a point
 * instant, those live there and the points at it. */
static void ref_track(segs *out, int64_t track, const int64_t *ts, const int64_t *dur, const int64_t *x,
                      const size_t *rows, size_t m) {
  pt *st = malloc((m + 1) * sizeof *st), *en = malloc((m + 1) * sizeof *en), *po = malloc((m + 1) * sizeof *po);
  int64_t *b = malloc((3 * m + 1) * sizeof *b);
  int64_t *pst = malloc((m + 2) * sizeof *pst), *pen = malloc((m + 2) * sizeof *pen), *ppo = malloc((m + 2) * sizeof *ppo);
  assert_true(st && en && po && b && pst && pen && ppo);
  size_t ns = 0, np = 0, nb = 0;
  for (size_t k = 0; k < m; k++) {
    size_t r = rows[k];
    if (dur[r] > 0) {
      st[ns] = (pt){ts[r], x[r]};
      en[ns++] = (pt){ts[r] + dur[r], x[r]};
      b[nb++] = ts[r] + dur[r];
    } else {
      po[np++] = (pt){ts[r], x[r]};
    }
    b[nb++] = ts[r];
  }
  qsort(st, ns, sizeof *st, cmp_pt);
  qsort(en, ns, sizeof *en, cmp_pt);
  qsort(po, np, sizeof *po, cmp_pt);
  qsort(b, nb, sizeof *b, cmp_i64);
  pst[0] = pen[0] = ppo[0] = 0;
  for (size_t k = 0; k < ns; k++) pst[k + 1] = pst[k] + st[k].x, pen[k + 1] = pen[k] + en[k].x;
  for (size_t k = 0; k < np; k++) ppo[k + 1] = ppo[k] + po[k].x;
  for (size_t k = 0; k < nb; k++) {
    if (k > 0 && b[k] == b[k - 1]) continue;
    int64_t t = b[k], s1, s2, s3, s4;
    int64_t live = (int64_t)upto(st, ns, pst, t, &s1) - (int64_t)upto(en, ns, pen, t, &s2);
    /* the points at t: at or before t, less those before it */
    int64_t pts = (int64_t)upto(po, np, ppo, t, &s3) - (int64_t)upto(po, np, ppo, t - 1, &s4);
    if (pts > 0) push(out, (seg){t, 0, track, live + pts, s1 - s2 + s3 - s4});
    size_t j = k + 1;
    while (j < nb && b[j] == t) j++;
    if (live > 0 && j < nb) push(out, (seg){t, b[j] - t, track, live, s1 - s2});
  }
  free(st), free(en), free(po), free(b), free(pst), free(pen), free(ppo);
}

/* The reference for FLATTEN PER track_id AGGREGATE COUNT(*), SUM(depth)
 * of the rows (ts, dur, track_id, depth) of query `input`: tracks in
 * first-seen order. */
static segs reference(const char *input) {
  pj_engine *e = engine(PJ_MODE_INTERP, 1);
  pj_query *q;
  pj_result *r;
  assert_int_equal(pj_query_compile(e, input, &q), PJ_OK);
  assert_int_equal(pj_query_run(q, &r), PJ_OK);
  size_t n = (size_t)pj_result_row_count(r);
  assert_int_equal(n, ROWS);
  int64_t *ts = malloc(n * sizeof *ts), *dur = malloc(n * sizeof *dur), *tr = malloc(n * sizeof *tr),
          *x = malloc(n * sizeof *x);
  size_t *rows = malloc(n * sizeof *rows);
  assert_true(ts && dur && tr && x && rows);
  for (size_t i = 0; i < n; i++) {
    ts[i] = pj_result_int64(r, (int64_t)i, 0);
    dur[i] = pj_result_int64(r, (int64_t)i, 1);
    tr[i] = pj_result_int64(r, (int64_t)i, 2);
    x[i] = pj_result_int64(r, (int64_t)i, 3);
  }
  pj_result_free(r);
  pj_query_free(q);
  pj_engine_close(e);
  segs out = {0};
  bool *done = calloc(n, 1);
  size_t npoints = 0;
  for (size_t i = 0; i < n; i++) {
    npoints += dur[i] == 0;
    if (done[i]) continue;
    size_t m = 0;
    for (size_t k = i; k < n; k++)
      if (!done[k] && tr[k] == tr[i]) rows[m++] = k, done[k] = true;
    ref_track(&out, tr[i], ts, dur, x, rows, m);
  }
  print_message("reference: %zu segments, %zu points among the slices\n", out.n, npoints);
  free(done), free(ts), free(dur), free(tr), free(x), free(rows);
  return out;
}

/* ---- the tests ---------------------------------------------------------------- */

/* The input as a table (read in place) and as a computed relation
 * (buffered) with a point for every 7th slice. */
static const char *const INPUTS[][2] = {
    {"FROM slice |> SELECT ts, dur, track_id, depth", "FROM slice"},
    {"FROM slice |> EXTEND CASE WHEN id % 7 = 0 THEN 0 ELSE dur END AS d0 |> SELECT ts, d0 AS dur, track_id, depth",
     NULL},
};

static void segments_match_reference(void **state) {
  (void)state;
  for (size_t in = 0; in < sizeof INPUTS / sizeof *INPUTS; in++) {
    segs want = reference(INPUTS[in][0]);
    assert_true(want.n > 100 * 700);   /* hundreds of chunks */
    char text[512];
    snprintf(text, sizeof text,
             "%s |> INTERVAL FLATTEN PER track_id AGGREGATE COUNT(*) AS n, SUM(depth) AS sd "
             "|> SELECT ts, dur, track_id, n, sd",
             INPUTS[in][1] ? INPUTS[in][1] : INPUTS[in][0]);
    pj_mode modes[2] = {PJ_MODE_INTERP, PJ_MODE_JIT};
    for (int m = 0; m < 2; m++)
      for (int th = 1; th <= 4; th *= 2) {
        pj_engine *e = engine(modes[m], th);
        pj_query *q;
        pj_result *r;
        assert_int_equal(pj_query_compile(e, text, &q), PJ_OK);
        assert_int_equal(pj_query_run(q, &r), PJ_OK);
        pj_timing t;
        pj_engine_last_timing(e, &t);
        if (th > 1 && t.threads <= 1) fail_msg("input %zu, %d threads: did not run in parallel", in, th);
        if ((size_t)pj_result_row_count(r) != want.n)
          fail_msg("input %zu, %s, %d threads: %lld segments, the reference %zu", in, m ? "jit" : "interp", th,
                   (long long)pj_result_row_count(r), want.n);
        for (size_t i = 0; i < want.n; i++) {
          const seg *w = &want.v[i];
          int64_t got[5];
          for (int c = 0; c < 5; c++) got[c] = pj_result_int64(r, (int64_t)i, c);
          if (got[0] != w->ts || got[1] != w->dur || got[2] != w->track || got[3] != w->n || got[4] != w->sum)
            fail_msg("input %zu, %s, %d threads, segment %zu: %lld %lld %lld %lld %lld, the reference "
                     "%lld %lld %lld %lld %lld",
                     in, m ? "jit" : "interp", th, i, (long long)got[0], (long long)got[1], (long long)got[2],
                     (long long)got[3], (long long)got[4], (long long)w->ts, (long long)w->dur,
                     (long long)w->track, (long long)w->n, (long long)w->sum);
        }
        pj_result_free(r);
        pj_query_free(q);
        pj_engine_close(e);
      }
    free(want.v);
  }
}

/* The query's answer or "error: …" with its offset. */
static char *answer(pj_engine *e, const char *text) {
  pj_query *q;
  pj_result *r;
  char *s = malloc(512);
  assert_non_null(s);
  if (pj_query_compile(e, text, &q) != PJ_OK) {
    snprintf(s, 512, "compile error: %s", pj_engine_errmsg(e));
    return s;
  }
  if (pj_query_run(q, &r) != PJ_OK) {
    snprintf(s, 512, "error: %s at %d", pj_engine_errmsg(e), pj_engine_erroffset(e));
  } else {
    snprintf(s, 512, "%lld rows, %lld", (long long)pj_result_row_count(r),
             pj_result_row_count(r) ? (long long)pj_result_int64(r, 0, 0) : -1LL);
    pj_result_free(r);
  }
  pj_query_free(q);
  return s;
}

/* FLATTEN's integer SUM overflows in a late track (its slices of depth 0
 * and 1 overlap): every segment before that one runs downstream first, so
 * a downstream error in an earlier segment wins, a later one does not;
 * the same on every thread count and in both backends. */
static void error_part_way(void **state) {
  (void)state;
  /* the track met last: the last group */
  pj_engine *e = engine(PJ_MODE_INTERP, 1);
  char *tr = answer(e, "FROM slice |> AGGREGATE MIN(id) AS f GROUP BY track_id |> ORDER BY f DESC "
                       "|> LIMIT 1 |> SELECT track_id");
  pj_engine_close(e);
  long long track = -1;
  assert_int_equal(sscanf(tr, "1 rows, %lld", &track), 1);
  free(tr);
  char flat[512];
  snprintf(flat, sizeof flat,
           "FROM slice |> EXTEND CASE WHEN track_id = %lld AND depth < 2 THEN 5000000000000000000 ELSE 0 END AS a "
           "|> INTERVAL FLATTEN PER track_id AGGREGATE COUNT(*) AS n, SUM(a) AS sa",
           track);
  char qs[3][768];
  /* no downstream error; one in the first segments; one in none (each
   * reads sa: an aggregate nothing reads is not made) */
  snprintf(qs[0], sizeof qs[0], "%s |> AGGREGATE COUNT(*) AS c, SUM(n) AS sn, MAX(sa) AS m", flat);
  snprintf(qs[1], sizeof qs[1],
           "%s |> EXTEND CASE WHEN n > 2 THEN 9223372036854775807 + n ELSE 0 END AS b |> AGGREGATE SUM(b) AS sb, MAX(sa) AS m",
           flat);
  snprintf(qs[2], sizeof qs[2],
           "%s |> EXTEND CASE WHEN n > 100000 THEN 9223372036854775807 + n ELSE 0 END AS b |> AGGREGATE SUM(b) AS sb, MAX(sa) AS m",
           flat);
  const char *expect[3] = {"error: INTERVAL FLATTEN: integer overflow", "error: EXTEND: integer overflow",
                           "error: INTERVAL FLATTEN: integer overflow"};
  for (int qi = 0; qi < 3; qi++) {
    char *want = NULL;
    for (int m = 0; m < 2; m++)
      for (int th = 1; th <= 4; th *= 2)
        for (int rep = 0; rep < (th > 1 ? 3 : 1); rep++) {
          e = engine(m ? PJ_MODE_JIT : PJ_MODE_INTERP, th);
          char *got = answer(e, qs[qi]);
          pj_engine_close(e);
          if (strncmp(got, expect[qi], strlen(expect[qi])))
            fail_msg("query %d, %s, %d threads: %s", qi, m ? "jit" : "interp", th, got);
          if (!want) {
            want = got;
            continue;
          }
          if (strcmp(want, got)) fail_msg("query %d, %s, %d threads: %s, one thread: %s", qi, m ? "jit" : "interp", th, got, want);
          free(got);
        }
    free(want);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(segments_match_reference),
      cmocka_unit_test(error_part_way),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
