/*
 * bind.c — ir_bind: a pipeline AST → a flat list of ops over column ids.
 *
 * This file binds sources (LANGUAGE.md §3) and the final OUTPUT; stages
 * are in bind_stage.c, expressions in bind_expr.c, the row model and name
 * lookup in bind_row.c. Liveness and SQL wrapping happen later (live.c):
 * a SCAN here reads every column of its source.
 *
 * Sources:
 *   FROM name         a finalized table of env->catalog → SCAN_TABLE;
 *                     else a SQLite table/view → SCAN_SQL
 *   FROM schema.name  always SQLite (`main.t`)
 *   FROM (SELECT …)   SCAN_SQL of the text
 *   FROM (FROM …)     the inner pipeline's ops inline; its output row
 *                     (bare entries) becomes the row
 *   FROM v, FROM fn(…)  PerfettoSQL views and table functions: bind_defs.c
 *   INTERVAL INTERSECTION OF (…)  bind_interval.c
 * Qualifier: the alias, else the table name; an unaliased subquery has none.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bind.h"
#include "runtime/sqlite/sqlsrc.h"

int ir_fail(ir_binder *b, int pos, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return rt_errorf(b->err, pos, "%s: %s", b->stage, msg);
}

void *ir_alloc(ir_binder *b, size_t n) {
  b->p->oom_stage = b->stage;
  return ir_palloc(b->p, n);
}

char *ir_strndup(ir_binder *b, const char *s, size_t n) {
  char *d = ir_alloc(b, n + 1);
  if (n) memcpy(d, s, n);
  return d;   /* NUL-terminated: arena memory is zeroed */
}

char *ir_strdup(ir_binder *b, const char *s) { return ir_strndup(b, s, strlen(s)); }

void *ir_memdup(ir_binder *b, const void *p, size_t n) {
  void *d = ir_alloc(b, n);
  if (n) memcpy(d, p, n);
  return d;
}

void ir_oom(ir_binder *b) {
  b->p->oom_stage = b->stage;
  longjmp(*b->p->oom_jmp, 1);
}

ir_op *ir_op_add(ir_binder *b, ir_opkind kind, int pos) {
  ir_plan *p = b->p;
  if (p->nops == b->capops) {
    int cap = b->capops ? b->capops * 2 : 16;
    ir_op **ops = ir_alloc(b, sizeof(ir_op *) * (size_t)cap);
    if (p->nops) memcpy(ops, p->ops, sizeof(ir_op *) * (size_t)p->nops);
    p->ops = ops;
    b->capops = cap;
  }
  ir_op *op = ir_alloc(b, sizeof *op);
  op->kind = kind;
  op->stage = b->stage;
  op->pos = pos;
  p->ops[p->nops++] = op;
  return op;
}

const char *ir_expr_text(ir_binder *b, const fe_expr *e) {
  int end = e->endpos;
  if (end <= e->pos) return e->name ? e->name : e->str ? e->str : "?";
  return ir_strndup(b, b->text + e->pos, (size_t)(end - e->pos));
}

/* A source column name must be usable as a bare name: what SQLite calls an
 * unaliased expression (`1 + 1`, `count(*)`) is not. Identifier characters
 * only (letters, digits, _, $, any non-ASCII byte), not starting with a
 * digit or $. */
static bool valid_name(const char *s) {
  if (!s || !*s) return false;
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || *c >= 0x80;
    bool digit = *c >= '0' && *c <= '9';
    if (c == (const unsigned char *)s ? !alpha : !(alpha || digit || *c == '$')) return false;
  }
  return true;
}

static int check_names(ir_binder *b, int n, const char *const *names, bool validity, int pos) {
  if (b->any_names) return 1;
  for (int i = 0; i < n; i++) {
    if (validity && !valid_name(names[i]))
      return ir_fail(b, pos,
                     "expected every column to have a valid name, but '%s' is not one: give it "
                     "one with AS",
                     names[i]);
    for (int j = 0; j < i; j++)
      if (ir_name_eq(names[i], names[j]))
        return ir_fail(b, pos, "expected distinct column names, but there are two named '%s'",
                       names[i]);
  }
  return 1;
}

/* Makes the row and the single alias from a scan's columns. */
static void scan_row(ir_binder *b, ir_op *op, const char *qual) {
  ir_rowb rb = {0};
  for (int i = 0; i < op->scan.nscan; i++)
    ir_rowb_add(b, &rb, b->p->cols[op->scan.out_cols[i]].name, op->scan.out_cols[i], false);
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, qual, b->row);
}

static int bind_table(ir_binder *b, const fe_source *src, rt_table *t) {
  ir_plan *p = b->p;
  const char **names = ir_alloc(b, sizeof(char *) * (size_t)(t->ncols + 1));
  for (int i = 0; i < t->ncols; i++) names[i] = t->cols[i].name;
  if (!check_names(b, t->ncols, names, false, src->pos)) return 0;
  ir_op *op = ir_op_add(b, IR_SCAN_TABLE, src->pos);
  op->scan.table = rt_table_ref(t);
  op->scan.table_name = ir_strdup(b, t->name ? t->name : src->name);
  op->scan.nscan = t->ncols;
  op->scan.table_cols = ir_alloc(b, sizeof(int) * (size_t)(t->ncols + 1));
  op->scan.out_cols = ir_alloc(b, sizeof(int) * (size_t)(t->ncols + 1));
  for (int i = 0; i < t->ncols; i++) {
    op->scan.table_cols[i] = i;
    op->scan.out_cols[i] = ir_col_new(p, t->cols[i].name, t->cols[i].type, t->cols[i].nullable);
  }
  scan_row(b, op, src->alias.name ? src->alias.name : src->name);
  return 1;
}

/* SQLite's "no such table: [schema.]name" about this very source (not
 * about a table a view refers to). */
static bool missing_table(const char *msg, const fe_source *src) {
  const char *m = strstr(msg, "no such table: ");
  if (!m) return false;
  m += strlen("no such table: ");
  if (src->schema) {
    size_t n = strlen(src->schema);
    if (rt_strnieq(m, src->schema, n) && m[n] == '.') m += n + 1;
  }
  return ir_name_eq(m, src->name);
}

int ir_bind_sql_source(ir_binder *b, const fe_source *src) {
  ir_plan *p = b->p;
  rt_buf q = {0};
  int pos = src->kind == SRC_NAME ? src->pos : src->sqlpos;
  if (src->kind == SRC_NAME) {
    rt_buf_printf(&q, "SELECT * FROM ");
    if (src->schema) {
      ir_sql_quote(&q, src->schema);
      rt_buf_append(&q, ".", 1);
    }
    ir_sql_quote(&q, src->name);
  } else {
    rt_buf_printf(&q, "%s", src->sql);
  }
  const char *base = q.data && !q.failed ? rt_arena_strndup(&p->arena, q.data, q.len) : NULL;
  rt_buf_free(&q);
  if (!base) ir_oom(b);
  rt_sqlcols sc = {0};
  rt_err lerr = {0};
  rt_sqlsrc *primed = NULL;
  /* A scan of no kind yet (the plan frees it as nothing) until primed. */
  ir_op *op = ir_op_add(b, IR_SCAN_BUF, src->pos);
  if (!b->env->db ||
      !rt_sql_prime(b->env->db, base, b->env->strings, &p->arena, &sc, &primed, &lerr) ||
      lerr.set) {
    rt_sqlsrc_close(primed);
    if (src->kind == SRC_NAME && (!lerr.set || missing_table(lerr.msg, src)))
      return ir_fail(b, src->pos, "no such table: '%s'", src->name);
    /* rt_sql_describe speaks as FROM; the error belongs to this stage
     * (FROM, or the INTERVAL stage whose operand this is). */
    const char *m = lerr.msg;
    if (!strncmp(m, "FROM: ", 6)) m += 6;
    return ir_fail(b, pos, "%s", m);
  }
  /* The op (made before: ir_op_add may jump) keeps the rows read to type
   * the columns: the first run goes on from them (the plan closes them
   * if none does). */
  op->kind = IR_SCAN_SQL;
  op->scan.primed = primed;
  if (!check_names(b, sc.ncols, (const char *const *)sc.names, true, pos)) return 0;
  p->reads_sql = true;
  if (sc.sampled) p->sql_sampled = true;
  op->scan.sql_base = base;
  op->scan.sql = (char *)base;
  op->scan.nsrc = sc.ncols;
  op->scan.table_name = src->kind == SRC_NAME ? ir_strdup(b, src->name) : NULL;
  op->scan.nscan = sc.ncols;
  op->scan.table_cols = ir_alloc(b, sizeof(int) * (size_t)(sc.ncols + 1));
  op->scan.out_cols = ir_alloc(b, sizeof(int) * (size_t)(sc.ncols + 1));
  for (int i = 0; i < sc.ncols; i++) {
    op->scan.table_cols[i] = i;
    /* Any SQLite value may be NULL. */
    op->scan.out_cols[i] = ir_col_new(p, sc.names[i], sc.types[i], true);
  }
  const char *qual = src->alias.name ? src->alias.name : src->kind == SRC_NAME ? src->name : NULL;
  scan_row(b, op, qual);
  return 1;
}

/* The columns a pipeline shows: its bare entries. Qualified-only entries
 * (an INTERVAL JOIN operand's columns, say) are reachable only through
 * their alias or a star, so they are not part of the result unless a star
 * made them bare. This is the SQL reading: `SELECT *` shows what the
 * query's row holds bare, and the user can always reach the rest with
 * `SELECT *` or `EXTEND q.*`. */
static ir_row output_row(ir_binder *b) {
  ir_rowb rb = {0};
  for (int i = 0; i < b->row.n; i++)
    if (!b->row.e[i].qonly) ir_rowb_add(b, &rb, b->row.e[i].name, b->row.e[i].col, false);
  return ir_rowb_done(&rb);
}

int ir_source_output(ir_binder *b, const fe_source *src) {
  b->row = output_row(b);
  const char **names = ir_alloc(b, sizeof(char *) * (size_t)(b->row.n + 1));
  for (int i = 0; i < b->row.n; i++) names[i] = b->row.e[i].name;
  return check_names(b, b->row.n, names, false, src->pos);
}

/* Binds a source with errors prefixed by `stage` ("FROM", or the interval
 * operator whose operand it is). */
int ir_bind_source(ir_binder *b, const fe_source *src, const char *stage) {
  b->stage = stage;
  switch (src->kind) {
  case SRC_NAME:
    if (!src->schema) {   /* a FORK name shadows a table (bind_fork.c) */
      const ir_forkname *f = ir_fork_find(b, src->name);
      if (f) return ir_bind_fork_source(b, src, f);
    }
    if (!src->schema && b->env->catalog) {
      rt_table *t = rt_catalog_get(b->env->catalog, src->name);
      if (t) return bind_table(b, src, t);
    }
    if (!src->schema && b->env->defs) {
      ir_fndef d;
      if (b->env->defs->find(b->env->defs->ctx, src->name, &d)) {
        b->p->reads_defs = true;
        int r = ir_bind_def_source(b, src, &d, stage);
        if (r >= 0) return r;
      }
    }
    return ir_bind_sql_source(b, src);
  case SRC_CALL: {
    ir_fndef d;
    if (!b->env->defs || !b->env->defs->find(b->env->defs->ctx, src->name, &d))
      return ir_fail(b, src->pos, "no such table function: '%s'", src->name);
    return ir_bind_def_source(b, src, &d, stage);
  }
  case SRC_SQL: return ir_bind_sql_source(b, src);
  case SRC_PIPELINE: {
    if (!ir_bind_pipeline(b, src->pipe)) return 0;
    b->stage = stage;
    if (!ir_source_output(b, src)) return 0;
    ir_alias_set_one(b, src->alias.name, b->row);
    return 1;
  }
#define SOURCE(name, str, w1, w2, parse, bind, words) \
  case SRC_##name: b->stage = str; return bind(b, src);
#include "sources.def"
#undef SOURCE
  }
  return ir_fail(b, src->pos, "unknown source");
}

int ir_bind_pipeline(ir_binder *b, const fe_pipeline *pl) {
  /* The forks this pipeline names are its own (bind_fork.c). */
  int nforks = b->nforks;
  const ir_forkname *forks = b->forks;
  const fe_pipeline *outer = b->pipe;
  b->pipe = pl;
  /* From the last SQL stage on, if any: it reads everything before it
   * as a table (bind_sql.c) and is the stream's source. */
  int last = -1;
  for (int i = 0; i < pl->nstages; i++)
    if (pl->stages[i].kind == ST_SQL) last = i;
  int ok, from = last + 1;
  if (last >= 0) {
    b->stage = fe_stage_names[ST_SQL];
    ok = ir_bind_stage(b, &pl->stages[last]);
  } else {
    ok = ir_bind_source(b, pl->src, "FROM");
  }
  for (int i = from; ok && i < pl->nstages; i++) {
    b->stage = fe_stage_names[pl->stages[i].kind];
    ok = ir_bind_stage(b, &pl->stages[i]);
  }
  b->nforks = nforks;
  b->forks = forks;
  b->pipe = outer;
  return ok;
}

/* The plan of pl (bound into p), or NULL with the error set (p freed). */
static ir_plan *bind_plan(ir_plan *p, const struct fe_pipeline *pl, const char *text, ir_env *env,
                          rt_err *err) {
  ir_binder b = {.p = p, .env = env, .err = err, .text = text, .stage = "FROM"};
  if (env->params_of && env->params_of->nparams) {
    /* a pipeline subquery: its parameters are the enclosing plan's */
    const ir_plan *o = env->params_of;
    p->params = ir_memdup(&b, o->params, sizeof(ir_param) * (size_t)o->nparams);
    p->nparams = b.capparams = o->nparams;
  }
  if (!ir_bind_pipeline(&b, pl)) {
    ir_plan_free(p);
    return NULL;
  }
  /* OUTPUT: the final row's bare entries (see output_row). */
  b.stage = "OUTPUT";
  ir_row out = output_row(&b);
  ir_op *op = ir_op_add(&b, IR_OUTPUT, pl->endpos);
  op->output.nout = out.n;
  op->output.out = ir_alloc(&b, sizeof(int) * (size_t)(out.n + 1));
  op->output.out_names = ir_alloc(&b, sizeof(char *) * (size_t)(out.n + 1));
  for (int i = 0; i < out.n; i++) {
    op->output.out[i] = out.e[i].col;
    op->output.out_names[i] = ir_strdup(&b, out.e[i].name);
  }
  p->oom_jmp = NULL;
  return p;
}

/* bind_plan, with the landing of the binder's out-of-memory jump. */
static ir_plan *bind_guarded(ir_plan *plan, const struct fe_pipeline *pl, const char *text,
                             ir_env *env, rt_err *err) {
  ir_plan *volatile p = plan;
  jmp_buf oom;
  if (setjmp(oom)) {
    /* An allocation failed (ir_palloc): whatever error came before it
     * is a consequence. */
    memset(err, 0, sizeof *err);
    rt_errorf(err, -1, "%s: out of memory", p->oom_stage ? p->oom_stage : "FROM");
    ir_plan_free(p);
    return NULL;
  }
  p->oom_jmp = &oom;
  return bind_plan(p, pl, text, env, err);
}

ir_plan *ir_bind(const struct fe_pipeline *pl, const char *text, ir_env *env, rt_err *err) {
  ir_plan *p = calloc(1, sizeof *p);
  if (!p) {
    rt_errorf(err, -1, "FROM: out of memory");
    return NULL;
  }
  rt_arena_init(&p->arena);
  p->text = text;
  p->strings = env->strings;
  return bind_guarded(p, pl, text, env, err);
}
