/*
 * subq.c — the answers of a run's subqueries in expressions (ir/plan.h's
 * ir_subq), for ex_callout: both backends ask through it, one row at a
 * time, so they agree on every value and error.
 *
 * A subquery runs in SQLite at most once per run, when first asked (a
 * subquery in a branch no row reaches, or behind a stage with no rows,
 * never runs), with the run's parameter values: the data may change
 * between two runs of a handle, so nothing is kept across runs. IN keeps
 * its rows in a hash set (runtime/valset.h: integers and doubles meet by
 * value, strings as ids of the run's pool), EXISTS whether there was a
 * row, a scalar the first row's value in the plan's type.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "adaptive.h"
#include "exec.h"
#include "runtime/sqlite/subq.h"
#include "runtime/valset.h"

struct ex_subqval {
  bool done;
  bool any;             /* the subquery has a row */
  bool has_null;        /* IN: some row is NULL */
  bool isnull;          /* SCALAR: its value is NULL */
  int64_t word;         /* SCALAR: the value as ex_callout returns it */
  rt_valset *set;       /* IN */
};

static void subqs_free(ex_run *run) {
  if (!run->subqs || !run->plan) return;
  for (int i = 0; i < run->plan->nsubqs; i++) rt_valset_free(run->subqs[i].set);
  free(run->subqs);
  run->subqs = NULL;
}

static const char *class_name(rt_type t) {
  return t == RT_STR ? "text" : t == RT_F64 ? "a real" : "an integer";
}

/* The scalar's value as the plan's type wants it (see ir_subq). */
static int scalar_word(ex_run *run, const ir_subq *q, const rt_sqlval *v, struct ex_subqval *out,
                       char *msg, size_t msglen) {
  if (v->type == RT_NULLT) {
    out->isnull = true;
    return 1;
  }
  if (v->blob) return snprintf(msg, msglen, "the subquery's value is a blob"), 0;
  rt_type want = q->type;
  if (want == RT_STR) {
    /* SQLite's own text of a number, as CAST would give it */
    char num[64];
    const char *s = v->s;
    size_t n = v->n;
    if (v->type == RT_I64) n = (size_t)snprintf(num, sizeof num, "%lld", (long long)v->i), s = num;
    else if (v->type == RT_F64) n = (size_t)snprintf(num, sizeof num, "%.15g", v->f), s = num;
    uint32_t id = rt_str_intern(run->strings, s, n);
    if (id == 0 && n > 0) return snprintf(msg, msglen, "%s", rt_strpool_error(run->strings)), 0;
    out->word = id;
    return 1;
  }
  if (v->type == RT_STR) goto mismatch;
  if (want == RT_F64) {
    double d = v->type == RT_I64 ? (double)v->i : v->f;
    memcpy(&out->word, &d, sizeof d);
    return 1;
  }
  if (v->type == RT_I64) {
    out->word = v->i;
    return 1;
  }
  if (v->f >= -9223372036854775808.0 && v->f < 9223372036854775808.0 && v->f == floor(v->f)) {
    out->word = (int64_t)v->f;
    return 1;
  }
mismatch:
  snprintf(msg, msglen,
           "the subquery's value is %s, but the query was compiled for %s (bind the query "
           "again, or CAST the subquery)",
           class_name(v->type), class_name(want));
  return 0;
}

/* A row's string as the collation of x compares it (ir_subq.coll): ASCII
 * lowered (NOCASE), or without trailing spaces (RTRIM); in *tmp when
 * changed (grown as needed). NULL when out of memory. */
static const char *collate(int coll, const char *s, size_t *n, char **tmp, size_t *cap) {
  if (coll == 2) {
    while (*n > 0 && s[*n - 1] == ' ') (*n)--;
    return s;
  }
  if (coll != 1) return s;
  if (*n > *cap) {
    char *t = realloc(*tmp, *n);
    if (!t) return NULL;
    *tmp = t;
    *cap = *n;
  }
  for (size_t i = 0; i < *n; i++) (*tmp)[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : s[i];
  return *tmp;
}

/* One row of an IN subquery into its set. */
static int in_add(ex_run *run, const ir_subq *q, struct ex_subqval *out, const rt_sqlval *v,
                  char **tmp, size_t *cap, char *msg, size_t msglen) {
  int ok = 1;
  switch (v->type) {
  case RT_NULLT: out->has_null = true; return 1;
  case RT_I64: ok = rt_valset_add_i64(out->set, v->i); break;
  case RT_F64: ok = rt_valset_add_f64(out->set, v->f); break;
  default: {
    if (v->blob) return 1;   /* a blob equals no text and no number (SQLite) */
    size_t n = v->n;
    const char *s = collate(q->coll, v->s, &n, tmp, cap);
    if (!s) return snprintf(msg, msglen, "out of memory"), 0;
    uint32_t id = rt_str_intern(run->strings, s, n);
    if (id == 0 && n > 0) return snprintf(msg, msglen, "%s", rt_strpool_error(run->strings)), 0;
    ok = rt_valset_add_str(out->set, id);
  }
  }
  if (!ok) snprintf(msg, msglen, "out of memory");
  return ok;
}

/* The end of either evaluation: on failure nothing half made stays (a
 * later ask starts again) and the error names the stage; else the answer
 * is complete (a scalar over no rows is NULL). */
static int finish(ex_run *run, const ir_subq *q, struct ex_subqval *out, int rc, const char *msg) {
  if (rc < 0) {
    rt_valset_free(out->set);
    memset(out, 0, sizeof *out);
    rt_errorf(&run->err, q->pos, "%s: subquery: %s", q->stage, msg);
    return -1;
  }
  if (q->kind == IR_SUBQ_SCALAR && !out->any) out->isnull = true;
  out->done = true;
  return 0;
}

/* A pipeline subquery: its plan runs on the interpreter, with this run's
 * parameters, interrupt and memory limit; its rows are then read as a
 * SQL subquery's would be. */
static int evaluate_plan(ex_run *run, const ir_subq *q, struct ex_subqval *out) {
  if (!run->interp) return rt_errorf(&run->err, q->pos, "%s: subquery: no interpreter", q->stage), -1;
  ex_run sub;
  ex_run_init(&sub, q->plan, run->strings, run->db, run->nparams, run->params);
  sub.interrupt = run->interrupt;
  sub.budget.limit = run->budget.limit;
  sub.interp = run->interp;
  sub.run_from = run->run_from;   /* RIGHT / FULL JOIN's unmatched rows */
  ex_picker pk = {.interp = run->interp};
  int rc = ex_run_plan(&sub, ex_pick, &pk);
  char msg[sizeof sub.err.msg] = "";
  if (rc != 0) {
    rt_errorf(&run->err, sub.err.set ? sub.err.offset : q->pos, "%s",
              sub.err.set ? sub.err.msg : "subquery: the query failed");
    ex_run_free(&sub);
    return -1;
  }
  const rt_rowbuf *rb = &sub.result;
  out->any = rb->nrows > 0;
  if (q->kind == IR_SUBQ_IN && !(out->set = rt_valset_new())) rc = -1, snprintf(msg, sizeof msg, "out of memory");
  for (int64_t i = 0; rc == 0 && i < rb->nrows && q->kind != IR_SUBQ_EXISTS; i++) {
    bool null = !rt_bit(rb->valid[0], (uint32_t)i);
    rt_type t = rb->types[0];
    if (q->kind == IR_SUBQ_SCALAR) {
      /* the plan typed it as the column is typed: no conversion */
      out->isnull = null;
      if (!null && t == RT_STR) out->word = ((const uint32_t *)rb->data[0])[i];
      else if (!null) memcpy(&out->word, (const char *)rb->data[0] + 8 * i, 8);
      break;
    }
    int ok = 1;
    if (null) out->has_null = true;
    else if (t == RT_STR) {
      uint32_t id = ((const uint32_t *)rb->data[0])[i];
      if (q->coll) {
        size_t n;
        const char *s = rt_str_get(run->strings, id, &n);
        rt_sqlval v = {.type = RT_STR, .s = s, .n = n};
        char *tmp = NULL;
        size_t cap = 0;
        ok = in_add(run, q, out, &v, &tmp, &cap, msg, sizeof msg);
        free(tmp);
        if (!ok) rc = -1;
        continue;
      }
      ok = rt_valset_add_str(out->set, id);
    } else if (t == RT_F64) ok = rt_valset_add_f64(out->set, ((const double *)rb->data[0])[i]);
    else ok = rt_valset_add_i64(out->set, ((const int64_t *)rb->data[0])[i]);
    if (!ok) rc = -1, snprintf(msg, sizeof msg, "out of memory");
  }
  rt_rowbuf_free(&sub.result);   /* a finished run leaves its rows to its caller */
  ex_run_free(&sub);
  return finish(run, q, out, rc, msg);
}

/* Runs subquery k for this run. 0, or -1 with run->err set. */
static int evaluate(ex_run *run, int k) {
  const ir_subq *q = &run->plan->subqs[k];
  struct ex_subqval *out = &run->subqs[k];
  if (q->plan) return evaluate_plan(run, q, out);
  rt_err err = {.offset = -1};
  char msg[sizeof err.msg] = "";
  rt_sqlval *args = calloc((size_t)run->nparams + 1, sizeof *args);
  if (!args) return rt_errorf(&run->err, q->pos, "%s: out of memory", q->stage), -1;
  for (int i = 1; i <= run->nparams && run->params; i++) {
    const ex_value *v = &run->params[i];
    args[i].type = v->type;
    args[i].i = v->i;
    args[i].f = v->f;
    if (v->type == RT_STR) args[i].s = rt_str_get(run->strings, v->s, &args[i].n);
  }
  rt_subqrun *r = run->db ? rt_sql_subq_open(run->db, q->sql, run->nparams, args, &err) : NULL;
  free(args);
  if (!r) {
    rt_errorf(&run->err, q->pos, "%s: subquery: %s", q->stage, err.set ? err.msg : "no database");
    return -1;
  }
  if (q->kind == IR_SUBQ_IN && !(out->set = rt_valset_new())) snprintf(msg, sizeof msg, "out of memory");
  int rc = msg[0] ? -1 : 0;
  rt_sqlval v;
  char *tmp = NULL;   /* a collated string */
  size_t cap = 0;
  while (rc == 0) {
    if (run->interrupt && *run->interrupt) {
      snprintf(msg, sizeof msg, "interrupted");
      rc = -1;
      break;
    }
    int got = rt_sql_subq_next(r, &v, &err);
    if (got < 0) {
      snprintf(msg, sizeof msg, "%s", err.msg);
      rc = -1;
    }
    if (got <= 0) break;
    bool first = !out->any;
    out->any = true;
    if (q->kind == IR_SUBQ_EXISTS) break;
    if (q->kind == IR_SUBQ_SCALAR) {
      /* more than one row: the first, as SQLite takes it */
      if (first && !scalar_word(run, q, &v, out, msg, sizeof msg)) rc = -1;
      break;
    }
    if (!in_add(run, q, out, &v, &tmp, &cap, msg, sizeof msg)) rc = -1;
  }
  free(tmp);
  rt_sql_subq_close(r);
  return finish(run, q, out, rc, msg);
}

int64_t ex_subq_call(ex_run *run, const ir_callout *c, const int64_t *argv, uint64_t nulls,
                     int32_t *status) {
  const ir_plan *p = run->plan;
  int k = c->subq - 1;
  *status = -1;
  if (k < 0 || k >= p->nsubqs) return rt_errorf(&run->err, c->pos, "%s: no such subquery", c->stage), 0;
  if (!run->subqs) {
    if (!(run->subqs = calloc((size_t)p->nsubqs, sizeof *run->subqs)))
      return rt_errorf(&run->err, c->pos, "%s: out of memory", c->stage), 0;
    run->subqs_free = subqs_free;
  }
  struct ex_subqval *s = &run->subqs[k];
  if (!s->done && evaluate(run, k) < 0) return 0;
  *status = 0;
  switch (p->subqs[k].kind) {
  case IR_SUBQ_EXISTS: return s->any;
  case IR_SUBQ_SCALAR:
    *status = s->isnull;
    return s->isnull ? 0 : s->word;
  case IR_SUBQ_IN: break;
  }
  /* x IN (rows): no row is FALSE even for a NULL x; a match TRUE; else
   * NULL when x or some row is NULL (SQL's three-valued rules). */
  if (!s->any) return 0;
  if (nulls & 1) return *status = 1, 0;
  bool found;
  if (c->argtypes[0] == RT_STR) found = rt_valset_has_str(s->set, (uint32_t)argv[0]);
  else if (c->argtypes[0] == RT_F64) {
    double d;
    memcpy(&d, &argv[0], sizeof d);
    found = rt_valset_has_f64(s->set, d);
  } else found = rt_valset_has_i64(s->set, argv[0]);
  if (found) return 1;
  if (s->has_null) return *status = 1, 0;
  return 0;
}
