/*
 * bind_defs.c — sources that are PerfettoSQL views and table functions
 * (LANGUAGE.md §7.1-7.2), found through env->defs.
 *
 *   FROM v           a view with a pipeline body: the body's ops inline, as
 *                    FROM (<body>) would (a view with a SQL body is a
 *                    SQLite view: bind.c reads it through SQLite)
 *   FROM fn(a, …)    a table function with a pipeline body: the same, with
 *                    each `$arg` of the body bound to the argument,
 *                    converted to its declared type; with a SQL body, a
 *                    SQLite source `SELECT * FROM "fn"(…)` whose arguments
 *                    must then be constants (their values go into the text)
 *
 * Arguments are expressions with no row to read (constants, parameters
 * of the calling pipeline, arithmetic on them). An error while binding an
 * inlined body cannot point into the caller's text, so it is reported at
 * the source with the body's own message; the inlined ops take the
 * source's position for the same reason (runtime errors point there).
 */
#include <stdio.h>

#include "bind.h"

/* A deep copy, so each use of an argument owns its nodes. */
static ir_expr *clone(ir_binder *b, const ir_expr *e) {
  ir_expr *c = ir_memdup(b, e, sizeof *e);
  if (e->nargs) {
    c->args = ir_alloc(b, sizeof(ir_expr *) * (size_t)e->nargs);
    for (int i = 0; i < e->nargs; i++) c->args[i] = clone(b, e->args[i]);
  }
  return c;
}

ir_expr *ir_scope_arg(ir_binder *b, const char *pname, int pos) {
  const ir_argscope *s = b->scope;
  if (!s || pname[0] != '$') return NULL;
  for (int i = 0; i < s->def->nargs; i++)
    if (ir_name_eq(pname + 1, s->def->argnames[i])) {
      ir_expr *e = clone(b, s->vals[i]);
      e->pos = pos;
      return e;
    }
  return NULL;
}

/* Argument i (`argname`) of function `fname` as type `want`: numbers
 * convert as CAST does, a string is not a number. */
static ir_expr *convert_to(ir_binder *b, ir_expr *a, rt_type want, const char *fname,
                           const char *argname, int i, int pos) {
  want = want == RT_F64 ? RT_F64 : want == RT_STR ? RT_STR : RT_I64;
  if (a->type == RT_NULLT) return ir_ex_const_null(b, want, a->pos);
  bool str = a->type == RT_STR, real = a->type == RT_F64;
  if (want == RT_STR) return str ? a : ir_ex_to_str(b, a);
  if (str) {
    ir_fail(b, pos, "argument %d ('%s') of %s is %s, but got a string", i + 1, argname, fname,
            want == RT_F64 ? "a number" : "an integer");
    return NULL;
  }
  if (want == RT_F64 && !real) {
    ir_expr *c = ir_ex_new(b, IX_TOF64, RT_F64, a->nullable, a->pos, 1);
    c->args[0] = a;
    return c;
  }
  if (want == RT_I64 && real) {
    ir_expr *c = ir_ex_new(b, IX_TOINT, RT_I64, a->nullable, a->pos, 1);
    c->args[0] = a;
    return c;
  }
  return a;
}

static ir_expr *convert(ir_binder *b, ir_expr *a, const ir_fndef *d, int i, int pos) {
  return convert_to(b, a, d->argtypes[i], d->name, d->argnames[i], i, pos);
}

/* The arguments, bound with no row: columns are not in scope. */
static ir_expr **bind_args(ir_binder *b, const fe_source *src, const ir_fndef *d) {
  if (src->nargs != d->nargs) {
    ir_fail(b, src->pos, "%s takes %d argument%s, but got %d", d->name, d->nargs,
            d->nargs == 1 ? "" : "s", src->nargs);
    return NULL;
  }
  ir_row row = b->row;
  int naliases = b->naliases;
  const ir_alias *aliases = b->aliases;
  b->row = (ir_row){0};
  b->naliases = 0;
  b->aliases = NULL;
  ir_expr **vals = ir_alloc(b, sizeof(ir_expr *) * (size_t)(d->nargs + 1));
  bool ok = true;
  for (int i = 0; i < d->nargs && ok; i++) {
    ir_expr *a = ir_bind_expr(b, src->args[i]);
    ok = a && (vals[i] = convert(b, a, d, i, src->args[i]->pos)) != NULL;
  }
  b->row = row;
  b->naliases = naliases;
  b->aliases = aliases;
  return ok ? vals : NULL;
}

static void set_pos(ir_expr *e, int pos) {
  if (!e) return;
  e->pos = pos;
  for (int i = 0; i < e->nargs; i++) set_pos(e->args[i], pos);
}

/* Binds the body of d in place of src (with args for its $arguments). */
static int inline_body(ir_binder *b, const fe_source *src, const ir_fndef *d, ir_expr **vals,
                       const char *stage) {
  const char *text = b->text;
  rt_err *err = b->err;
  const ir_argscope *scope = b->scope;
  rt_err local = {.offset = -1};
  ir_argscope mine = {d, vals};
  int nops = b->p->nops;
  int nforks = b->nforks;   /* a body sees none of its caller's forks */
  b->text = d->text;
  b->err = &local;
  b->scope = &mine;
  b->nforks = 0;
  int ok = ir_bind_pipeline(b, d->pipe);
  b->text = text;
  b->err = err;
  b->scope = scope;
  b->nforks = nforks;
  b->stage = stage;
  if (!ok)
    return ir_fail(b, src->pos, "%s '%s' does not bind any more: %s", d->view ? "view" : "function",
                   d->name, local.msg);
  for (int i = nops; i < b->p->nops; i++) {
    ir_op *op = b->p->ops[i];
    op->pos = src->pos;
    switch (op->kind) {   /* the kinds whose fields hold expressions */
    case IR_FILTER: set_pos(op->filter.pred, src->pos); break;
    case IR_COMPUTE: set_pos(op->compute.expr, src->pos); break;
    case IR_LIMIT:
      set_pos(op->limit.count, src->pos);
      set_pos(op->limit.offset, src->pos);
      break;
    default: break;
    }
  }
  b->p->reads_defs = true;
  if (!ir_source_output(b, src)) return 0;
  ir_alias_set_one(b, src->alias.name ? src->alias.name : src->name, b->row);
  return 1;
}

/* A constant as SQL text, for a SQL table function's arguments. */
static int sql_literal(ir_binder *b, rt_buf *q, const ir_expr *e, const ir_fndef *d, int i,
                       int pos) {
  if (!ir_sql_literal(b, q, e))
    return ir_fail(b, pos,
                   "argument %d ('%s') of %s must be a constant: its body is SQL, which takes the "
                   "values as text",
                   i + 1, d->argnames[i], d->name);
  return 1;
}

int ir_bind_def_source(ir_binder *b, const fe_source *src, const ir_fndef *d, const char *stage) {
  if (src->kind == SRC_NAME) {
    if (!d->pipe) return -1;   /* a SQL view: SQLite's */
    b->p->reads_defs = true;
    return inline_body(b, src, d, NULL, stage);
  }
  if (d->view || !d->table)
    return ir_fail(b, src->pos, "%s is not a table function%s", d->name,
                   d->view ? " but a view: read it as FROM name" : ": call it in an expression");
  ir_expr **vals = bind_args(b, src, d);
  if (!vals) return 0;
  b->p->reads_defs = true;
  if (d->pipe) return inline_body(b, src, d, vals, stage);
  rt_buf q = {0};
  rt_buf_printf(&q, "SELECT * FROM ");
  ir_sql_quote(&q, d->name);
  rt_buf_append(&q, "(", 1);
  for (int i = 0; i < d->nargs; i++) {
    if (i) rt_buf_append(&q, ", ", 2);
    if (!sql_literal(b, &q, vals[i], d, i, src->args[i]->pos)) {
      rt_buf_free(&q);
      return 0;
    }
  }
  rt_buf_append(&q, ")", 1);
  fe_source sql = *src;
  sql.kind = SRC_SQL;
  sql.sql = q.data && !q.failed ? rt_arena_strndup(&b->p->arena, q.data, q.len) : NULL;
  sql.sqlpos = src->pos;
  if (!sql.alias.name) sql.alias = (fe_name){src->name, src->pos};
  rt_buf_free(&q);
  if (!sql.sql) ir_oom(b);
  return ir_bind_sql_source(b, &sql);
}

ir_expr *ir_bind_callout(ir_binder *b, const fe_expr *x) {
  const ir_defs *d = b->env->defs;
  char msg[300] = "";
  ir_callout c = {0};
  if (!d || !d->callout || !d->callout(d->ctx, x->str, -1, NULL, NULL, &c, msg, sizeof msg))
    return NULL;
  int n = x->nargs;
  if (x->star) return ir_fail(b, x->pos, "expected arguments to %s(), not *", x->str), NULL;
  if (n > 64) return ir_fail(b, x->pos, "%s: a call takes at most 64 arguments", x->str), NULL;
  ir_expr **args = ir_alloc(b, sizeof(ir_expr *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++)
    if (!(args[i] = ir_bind_expr(b, x->args[i]))) return NULL;
  /* Room first: the callout takes references the plan must own before
   * anything else is allocated (ir_alloc may jump out). */
  ir_plan *p = b->p;
  if (p->ncallouts == p->capcallouts) {
    int cap = p->capcallouts ? p->capcallouts * 2 : 4;
    ir_callout *v = ir_alloc(b, sizeof *v * (size_t)cap);
    if (p->ncallouts) memcpy(v, p->callouts, sizeof *v * (size_t)p->ncallouts);
    p->callouts = v;
    p->capcallouts = cap;
  }
  if (d->callout(d->ctx, x->str, n, args, &b->p->arena, &c, msg, sizeof msg) <= 0)
    return ir_fail(b, x->pos, "%s", msg[0] ? msg : "the call is not possible"), NULL;
  c.stage = b->stage;
  c.pos = x->pos;
  p->callouts[p->ncallouts++] = c;   /* the plan owns c's table and ctx now */
  p->reads_defs = true;
  if (c.reads_sql) p->reads_sql = p->sql_sampled = true;
  ir_expr *e = ir_ex_new(b, IX_CALLOUT, c.ret, true, x->pos, n);
  e->ival = p->ncallouts - 1;
  for (int i = 0; i < n; i++) {
    char an[16];
    snprintf(an, sizeof an, "%d", i + 1);
    const char *argname = c.argnames ? c.argnames[i] : an;
    e->args[i] = convert_to(b, args[i], c.argtypes[i], c.name, argname, i, x->args[i]->pos);
    if (!e->args[i]) return NULL;
  }
  return e;
}
