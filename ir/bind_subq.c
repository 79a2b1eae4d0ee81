/*
 * bind_subq.c — subqueries in expressions (LANGUAGE.md §5):
 * `x [NOT] IN (SELECT …)`, `EXISTS (SELECT …)` and a scalar `(SELECT …)`.
 *
 * Each is SQLite's: it is prepared here, once, to check it (errors point
 * into the subquery's text) and to learn its columns and types, and
 * becomes an IX_CALLOUT whose ir_callout.subq names a plan->subqs entry;
 * a run evaluates it once, when first asked (exec/subq.c).
 *
 * Parameters written in the subquery are the pipeline's: each is bound
 * here in text order (so `?` numbering runs on through the subquery, as
 * in SQLite) and the SQL SQLite runs spells each as ?N, N its number in
 * the plan. A subquery that names a column of the pipeline's row, which
 * SQLite reports as "no such column", is correlated: an error (use JOIN).
 * A pipeline as a subquery is not supported yet (its own error).
 *
 * Types. IN compares x with every row as SQLite does (integers and reals
 * by value; a number never equals a string), except that a string x
 * against a column declared as a number (or the other way round) is the
 * compile-time "cannot compare a string with a number" of every
 * comparison. A scalar takes its column's declared type; with none, the
 * type of what it is compared with (as an unbound parameter does), else
 * the type of its value when the plan binds (the plan then binds again
 * when the data changes); else an integer.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bind.h"
#include "runtime/sqlite/subq.h"

int ir_sql_literal(ir_binder *b, rt_buf *q, const ir_expr *e) {
  if (e->kind != IX_CONST) return 0;
  if (e->is_null || e->type == RT_NULLT) rt_buf_printf(q, "NULL");
  else if (e->type == RT_F64) {
    char num[40];
    snprintf(num, sizeof num, "%.17g", e->fval);
    /* stays a real in SQLite: 1.0, not 1 */
    rt_buf_printf(q, "%s%s", num, strpbrk(num, ".eEin") ? "" : ".0");
  } else if (e->type == RT_STR) {
    size_t n;
    const char *s = rt_str_get(b->env->strings, e->sval, &n);
    rt_buf_append(q, "'", 1);
    for (size_t k = 0; k < n; k++) {
      if (s[k] == '\'') rt_buf_append(q, "'", 1);
      rt_buf_append(q, s + k, 1);
    }
    rt_buf_append(q, "'", 1);
  } else rt_buf_printf(q, "%lld", (long long)e->ival);
  return 1;
}

/* Where the text SQLite sees came from: byte `at` of it is byte `from` of
 * the query text (until the next mark). */
typedef struct mark { int at, from; } mark;

typedef struct sqltext {
  rt_buf sql;
  int nmarks;
  mark *marks;
} sqltext;

static int origin(const sqltext *t, int off) {
  int r = t->marks[0].from + off;
  for (int i = 0; i < t->nmarks && t->marks[i].at <= off; i++) r = t->marks[i].from + (off - t->marks[i].at);
  return r;
}

/* The subquery's SQL with its parameters bound and renamed ?N. */
static int build_sql(ir_binder *b, const fe_source *src, sqltext *out) {
  out->marks = ir_alloc(b, sizeof(mark) * (size_t)(2 * src->nparams + 1));
  /* The parameters bound first: the binder's allocations may jump out
   * (ir_alloc), which must not happen while the text's buffer is held. */
  ir_expr **vals = ir_alloc(b, sizeof *vals * (size_t)(src->nparams + 1));
  for (int i = 0; i < src->nparams; i++)
    if (!(vals[i] = ir_bind_expr(b, src->params[i]))) return 0;
  int at = src->sqlpos, end = src->sqlpos + (int)strlen(src->sql);
  out->marks[out->nmarks++] = (mark){0, at};
  for (int i = 0; i < src->nparams; i++) {
    const fe_expr *px = src->params[i];
    rt_buf_append(&out->sql, b->text + at, (size_t)(px->pos - at));
    out->marks[out->nmarks++] = (mark){(int)out->sql.len, px->pos};
    ir_expr *e = vals[i];
    if (e->kind == IX_PARAM) rt_buf_printf(&out->sql, "?%d", e->param);
    else if (!ir_sql_literal(b, &out->sql, e))
      return ir_fail(b, px->pos,
                     "%s stands for a function's argument here, which a subquery (SQL) takes "
                     "only as a constant",
                     px->str);
    at = px->endpos;
    out->marks[out->nmarks++] = (mark){(int)out->sql.len, at};
  }
  rt_buf_append(&out->sql, b->text + at, (size_t)(end - at));
  rt_buf_append(&out->sql, "", 1);
  if (out->sql.failed || !out->sql.data) return ir_fail(b, src->pos, "out of memory");
  return 1;
}

/* Does SQLite's "no such column: [q.]x" name a column of the pipeline's
 * row (bare x, or x of alias q)? */
static bool pipeline_column(ir_binder *b, const char *name) {
  const char *dot = strchr(name, '.');
  ir_row row = b->row;
  bool bare = true;
  if (dot) {
    char *q = ir_strndup(b, name, (size_t)(dot - name));
    const ir_alias *a = ir_alias_find(b, q);
    if (!a) return false;
    row = a->row;
    bare = false;
    name = dot + 1;
  }
  for (int i = 0; i < row.n; i++)
    if ((!bare || !row.e[i].qonly) && ir_name_eq(row.e[i].name, name)) return true;
  return false;
}

static int check_error(ir_binder *b, const fe_source *src, const sqltext *t, const char *msg,
                       int off) {
  int pos = off >= 0 && off < (int)t->sql.len ? origin(t, off) : src->sqlpos;
  static const char nsc[] = "no such column: ";
  if (!strncmp(msg, nsc, sizeof nsc - 1) && pipeline_column(b, msg + sizeof nsc - 1))
    return ir_fail(b, pos,
                   "correlated subqueries are not supported here: use JOIN (the subquery "
                   "refers to the pipeline's column '%s')",
                   msg + sizeof nsc - 1);
  return ir_fail(b, pos, "subquery: %s", msg);
}

/* The type of a scalar's first value when the plan binds (parameters as
 * NULL), RT_NULLT when NULL or there is no row. */
static rt_type sample(ir_binder *b, const char *sql) {
  rt_err err = {.offset = -1};
  rt_subqrun *r = rt_sql_subq_open(b->env->db, sql, 0, NULL, &err);
  if (!r) return RT_NULLT;
  rt_sqlval v;
  rt_type t = rt_sql_subq_next(r, &v, &err) == 1 && !v.blob ? v.type : RT_NULLT;
  rt_sql_subq_close(r);
  return t;
}

static int add_subq(ir_binder *b, const ir_subq *q) {
  ir_plan *p = b->p;
  if (p->nsubqs == p->capsubqs) {
    int cap = p->capsubqs ? p->capsubqs * 2 : 4;
    /* not ir_alloc, which jumps on failure: q's plan is not the plan's
     * yet and is freed before the jump */
    ir_subq *v = rt_arena_alloc(&p->arena, sizeof *v * (size_t)cap);
    if (!v) {
      ir_plan_free(q->plan);
      ir_oom(b);
    }
    if (p->nsubqs) memcpy(v, p->subqs, sizeof *v * (size_t)p->nsubqs);
    p->subqs = v;
    p->capsubqs = cap;
  }
  p->subqs[p->nsubqs++] = *q;
  return p->nsubqs;
}

static int add_callout(ir_binder *b, const ir_callout *c) {
  ir_plan *p = b->p;
  if (p->ncallouts == p->capcallouts) {
    int cap = p->capcallouts ? p->capcallouts * 2 : 4;
    ir_callout *v = ir_alloc(b, sizeof *v * (size_t)cap);
    if (p->ncallouts) memcpy(v, p->callouts, sizeof *v * (size_t)p->ncallouts);
    p->callouts = v;
    p->capcallouts = cap;
  }
  p->callouts[p->ncallouts++] = *c;
  return p->ncallouts - 1;
}

static bool is_str(rt_type t) { return t == RT_STR; }

static ir_expr *finish(ir_binder *b, const fe_expr *x, ir_subq *q, ir_expr *lhs, rt_type ty);

/* The column name SQLite's or the binder's "no such column" names (quotes
 * taken off), or NULL. */
static const char *missing_column(ir_binder *b, const char *msg) {
  const char *m = strstr(msg, "no such column: ");
  if (!m) return NULL;
  m += strlen("no such column: ");
  size_t n = strlen(m);
  if (n >= 2 && m[0] == '\'' && m[n - 1] == '\'') return ir_strndup(b, m + 1, n - 2);
  return m;
}

/* The alias the binder's "no such table alias: 'q'" names, or NULL. */
static const char *missing_alias(ir_binder *b, const char *msg) {
  const char *m = strstr(msg, "no such table alias: '");
  if (!m) return NULL;
  m += strlen("no such table alias: '");
  const char *end = strchr(m, '\'');
  return end ? ir_strndup(b, m, (size_t)(end - m)) : NULL;
}

/* A pipeline as the subquery: bound into a plan of its own (its
 * parameters numbered on from this plan's), run by exec/subq.c with the
 * interpreter. Its column's type is known: nothing is sampled. */
static ir_expr *bind_pipeline(ir_binder *b, const fe_expr *x, ir_subqkind kind, ir_expr *lhs) {
  const fe_source *src = x->sub;
  ir_plan *p = b->p;
  ir_env env = *b->env;
  env.params_of = p;
  rt_err err = {.offset = -1};
  ir_plan *sub = ir_build(src->pipe, b->text, &env, &err);
  if (!sub) {
    const char *name = missing_column(b, err.msg);
    if (name && pipeline_column(b, name))
      return ir_fail(b, err.offset,
                     "correlated subqueries are not supported here: use JOIN (the subquery "
                     "refers to the pipeline's column '%s')",
                     name),
             NULL;
    const char *alias = missing_alias(b, err.msg);
    if (alias && ir_alias_find(b, alias))
      return ir_fail(b, err.offset,
                     "correlated subqueries are not supported here: use JOIN (the subquery "
                     "refers to the pipeline's alias '%s')",
                     alias),
             NULL;
    rt_errorf(b->err, err.offset, "%s", err.msg);
    return NULL;
  }
  const ir_op *out = sub->segs[sub->nsegs - 1].sink;
  if (kind != IR_SUBQ_EXISTS && out->output.nout != 1) {
    ir_fail(b, src->pos, "expected the subquery to return 1 column, but it returns %d",
            out->output.nout);
    ir_plan_free(sub);
    return NULL;
  }
  /* sub is not the plan's until finish registers it: out of memory it
   * goes before the jump */
  ir_subq q = {.kind = kind,
               .plan = sub,
               .text = rt_arena_strndup(&p->arena, b->text + src->pipe->pos,
                                        (size_t)(src->pipe->endpos - src->pipe->pos)),
               .stage = b->stage,
               .pos = x->pos};
  size_t pbytes = sizeof(ir_param) * (size_t)sub->nparams;
  ir_param *params =
      sub->nparams > p->nparams ? rt_arena_memdup(&p->arena, sub->params, pbytes) : p->params;
  if (!q.text || (sub->nparams > p->nparams && !params)) {
    ir_plan_free(sub);
    ir_oom(b);
  }
  if (sub->nparams > p->nparams) {
    p->params = params;
    p->nparams = b->capparams = sub->nparams;
  }
  p->reads_sql |= sub->reads_sql;
  p->sql_sampled |= sub->sql_sampled;
  p->reads_defs |= sub->reads_defs;
  rt_type ty = RT_NULLT;
  if (kind != IR_SUBQ_EXISTS) {
    const ir_col *c = &sub->cols[out->output.out[0]];
    ty = c->untyped ? RT_NULLT : rt_store_type(c->type);
  }
  return finish(b, x, &q, lhs, ty);
}

ir_expr *ir_bind_subquery(ir_binder *b, const fe_expr *x) {
  const fe_source *src = x->sub;
  ir_subqkind kind = x->kind == AX_EXISTS ? IR_SUBQ_EXISTS : x->kind == AX_IN ? IR_SUBQ_IN
                                                                             : IR_SUBQ_SCALAR;
  /* x first: its parameters come before the subquery's */
  ir_expr *lhs = NULL;
  if (kind == IR_SUBQ_IN) {
    if (!(lhs = ir_bind_expr(b, x->args[0]))) return NULL;
  }
  if (src->kind == SRC_PIPELINE) return bind_pipeline(b, x, kind, lhs);
  if (!b->env->db) {
    ir_fail(b, src->pos, "subquery: there is no SQLite database");
    return NULL;
  }
  sqltext t = {0};
  if (!build_sql(b, src, &t)) {
    rt_buf_free(&t.sql);
    return NULL;
  }
  rt_subqinfo info;
  char msg[300];
  int off;
  int ok = rt_sql_subq_check(b->env->db, t.sql.data, &info, msg, sizeof msg, &off);
  /* The text moves into the arena before anything that may jump out
   * (ir_alloc in check_error, ir_oom): the buffer would be lost. */
  ir_plan *p = b->p;
  char *sql = rt_arena_strndup(&p->arena, t.sql.data, t.sql.len);
  rt_buf_free(&t.sql);
  if (!sql) ir_oom(b);
  t.sql.len = strlen(sql) + 1;   /* as built: with its NUL */
  if (!ok) {
    check_error(b, src, &t, msg, off);
    return NULL;
  }
  ir_subq q = {.kind = kind, .sql = sql, .text = src->sql, .stage = b->stage, .pos = x->pos};
  if (kind != IR_SUBQ_EXISTS && info.ncols != 1) {
    ir_fail(b, src->pos, "expected the subquery to return 1 column, but it returns %d",
            info.ncols);
    return NULL;
  }
  p->reads_sql = true;
  rt_type ty = info.decl;
  if (kind == IR_SUBQ_SCALAR && ty == RT_NULLT && (ty = sample(b, q.sql)) != RT_NULLT)
    p->sql_sampled = true;
  return finish(b, x, &q, lhs, ty);
}

/* The subquery's call: q described, lhs IN's x, ty the type of the
 * subquery's column (RT_NULLT: not known). */
static ir_expr *finish(ir_binder *b, const fe_expr *x, ir_subq *q, ir_expr *lhs, rt_type ty) {
  ir_plan *p = b->p;
  /* registered first: the plan owns a pipeline's plan from here on, even
   * when an error follows */
  ir_callout c = {.name = "subquery", .stage = b->stage, .pos = x->pos, .reads_sql = true};
  c.subq = add_subq(b, q);
  ir_subq *sq = &p->subqs[c.subq - 1];
  ir_expr *e;
  if (sq->kind == IR_SUBQ_IN) {
    /* (SELECT …) IN (SELECT …): the first takes the second's type */
    if (lhs->open_type && ty != RT_NULLT) ir_subq_adopt_type(b, lhs, ty);
    rt_type xt = lhs->type == RT_NULLT ? (ty != RT_NULLT ? ty : RT_I64)
                 : lhs->type == RT_F64 || lhs->type == RT_STR ? lhs->type : RT_I64;
    if (ty != RT_NULLT && lhs->type != RT_NULLT && is_str(xt) != is_str(ty)) {
      ir_fail(b, x->oppos, "cannot compare a string with a number");
      return NULL;
    }
    c.nargs = 1;
    c.argtypes = ir_alloc(b, sizeof(rt_type));
    c.argtypes[0] = xt;
    c.ret = RT_BOOL;
    /* x's collation compares the rows too (SQLite): x lowered or trimmed
     * here, the rows' strings likewise when the set is made */
    ir_coll co = xt == RT_STR ? ir_collation(x->args[0]) : IR_COLL_NONE;
    sq->coll = co == IR_COLL_NOCASE ? 1 : co == IR_COLL_RTRIM ? 2 : 0;
    e = ir_ex_new(b, IX_CALLOUT, RT_BOOL, true, x->pos, 1);
    e->args[0] = ir_collate(b, ir_ex_settle(b, lhs, xt), co);
  } else if (sq->kind == IR_SUBQ_EXISTS) {
    c.ret = RT_BOOL;
    e = ir_ex_new(b, IX_CALLOUT, RT_BOOL, false, x->pos, 0);
  } else {
    sq->inferred = ty == RT_NULLT;
    sq->type = c.ret = ty == RT_NULLT ? RT_I64 : ty;
    e = ir_ex_new(b, IX_CALLOUT, c.ret, true, x->pos, 0);
    e->open_type = sq->inferred;
  }
  e->ival = add_callout(b, &c);
  if (sq->kind == IR_SUBQ_IN && x->negated) {
    ir_expr *n = ir_ex_new(b, IX_NOT, RT_BOOL, true, x->pos, 1);
    n->args[0] = e;
    e = n;
  }
  return e;
}

bool ir_subq_adopt_type(ir_binder *b, ir_expr *e, rt_type t) {
  if (e->kind != IX_CALLOUT || e->ival < 0 || e->ival >= b->p->ncallouts) return false;
  ir_callout *c = &b->p->callouts[e->ival];
  if (!c->subq) return false;
  ir_subq *q = &b->p->subqs[c->subq - 1];
  if (q->kind != IR_SUBQ_SCALAR || !q->inferred) return false;
  q->inferred = false;
  e->open_type = false;
  q->type = c->ret = e->type = t;
  return true;
}
