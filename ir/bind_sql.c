/*
 * bind_sql.c — binds `|> SQL (select)` (LANGUAGE.md §8): SQLite's SQL over
 * the stream so far, read as the table `@input`; its result is the new
 * stream, with no alias.
 *
 * The stream so far is the pipeline's source and the stages before the
 * SQL stage. The engine compiles them as a query of their own and makes
 * it a SQLite table (ir_env.sqlin; api/sql_input.c), and the stage is a
 * SQL source (ir_bind_sql_source) over the stage's text with `@input`
 * replaced by that table's name: SQLite plans the SQL with the table's
 * declared columns, and the types of computed columns come from the
 * first rows as for any SQL source (which runs the input once, then the
 * run goes on from those rows). So ir_bind_pipeline binds a pipeline from
 * its last SQL stage on, and the stages before it are never bound into
 * this plan. What that query cannot see, then: a FORK name, parameter or
 * function argument of the pipeline around it. Those are errors here,
 * not silent NULLs (the engine refuses a parameter in the input; a fork
 * name before the stage is named in the error of a later read).
 */
#include "bind.h"

static bool word_char(unsigned char c) {
  return c == '_' || c == '$' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
         c >= 0x80;
}

/* The SQL with every `@input` token (outside strings, quoted names and
 * comments) replaced by `name`; *count gets how many there were. A
 * parameter token (which SQL sources do not bind) is an error at sqlpos
 * (NULL returned). */
static const char *replace_input(ir_binder *b, const char *sql, int sqlpos, const char *name,
                                 int *count) {
  rt_buf o = {0};
  *count = 0;
  size_t n = strlen(sql);
  for (size_t i = 0; i < n;) {
    char c = sql[i];
    size_t j = i + 1;
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      char close = c == '[' ? ']' : c;   /* a doubled quote escapes; '[' has none */
      while (j < n) {
        if (sql[j++] != close) continue;
        if (close != ']' && j < n && sql[j] == close) j++;
        else break;
      }
    } else if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
      while (j < n && sql[j] != '\n') j++;
    } else if (c == '/' && i + 1 < n && sql[i + 1] == '*') {
      j = i + 2;
      while (j + 1 < n && !(sql[j] == '*' && sql[j + 1] == '/')) j++;
      j = j + 1 < n ? j + 2 : n;
    } else if (c == '?' || ((c == '@' || c == '$' || c == ':') && j < n && word_char((unsigned char)sql[j]))) {
      while (j < n && word_char((unsigned char)sql[j])) j++;
      if (!fe_is_sql_input(sql + i, j - i)) {
        rt_buf_free(&o);
        ir_fail(b, sqlpos + (int)i,
                "the SQL of a SQL stage cannot read parameters or function arguments yet (%.*s is "
                "one): compute the value in a stage after it",
                (int)(j - i), sql + i);
        return NULL;
      }
      ir_sql_quote(&o, name);
      (*count)++;
      i = j;
      continue;
    } else if (word_char((unsigned char)c)) {
      while (j < n && word_char((unsigned char)sql[j])) j++;
      if (fe_is_sql_input(sql + i, j - i)) {
        ir_sql_quote(&o, name);
        (*count)++;
        i = j;
        continue;
      }
    }
    rt_buf_append(&o, sql + i, j - i);
    i = j;
  }
  const char *out = o.failed ? NULL : rt_arena_strndup(&b->p->arena, o.data ? o.data : "", o.len);
  rt_buf_free(&o);
  if (!out) ir_oom(b);   /* the buffer is freed: the jump loses nothing */
  return out;
}

/* The input's forks are its own query's: a later read of one of their
 * names finds an entry with no op (ir_bind_fork_source says why). */
static void hide_forks(ir_binder *b, const fe_pipeline *pre) {
  for (int i = 0; i < pre->nstages; i++) {
    const fe_stage *st = &pre->stages[i];
    if (st->kind != ST_FORK) continue;
    ir_forkname *v = ir_alloc(b, sizeof *v * ((size_t)b->nforks + 1));
    if (b->nforks) memcpy(v, b->forks, sizeof *v * (size_t)b->nforks);
    v[b->nforks] = (ir_forkname){st->alias.name, st->alias.pos, NULL, {0, NULL}};
    b->forks = v;
    b->nforks++;
  }
}

int ir_bind_sql_stage(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  const fe_pipeline *pl = b->pipe;
  if (!pl || st < pl->stages || st >= pl->stages + pl->nstages || !st->src)
    return ir_fail(b, st->pos, "internal error: a SQL stage outside its pipeline");
  const ir_sqlinput *in = b->env->sqlin;
  if (!in || !b->env->db) return ir_fail(b, st->pos, "SQL stages need the engine's SQLite connection");
  /* The input: the source and the stages before this one. */
  fe_pipeline *pre = ir_alloc(b, sizeof *pre);
  *pre = (fe_pipeline){.pos = pl->pos, .endpos = st->pos, .src = pl->src,
                       .nstages = (int)(st - pl->stages), .stages = pl->stages};
  const char *name = NULL, *plan = NULL;
  rt_err err = {.offset = -1};
  /* The slot for the input is made before the input is: an allocation
   * that fails (and jumps) after open would leave it owned by no one. */
  struct ir_sqlin_held *v = ir_alloc(b, sizeof *v * ((size_t)p->nsqlins + 1));
  if (p->nsqlins) memcpy(v, p->sqlins, sizeof *v * (size_t)p->nsqlins);
  p->sqlins = v;
  void *h = in->open(in->ctx, pre, b->text, &p->arena, &name, &plan, &err);
  if (!h) {
    *b->err = err;   /* the input's own error, placed where it is */
    return 0;
  }
  v[p->nsqlins++] = (struct ir_sqlin_held){in, h};
  hide_forks(b, pre);
  fe_source src = *st->src;
  int uses;
  src.sql = (char *)replace_input(b, st->src->sql, st->src->sqlpos, name, &uses);
  if (!src.sql) return 0;
  src.alias.name = NULL;
  if (!ir_bind_sql_source(b, &src)) return 0;
  ir_op *op = p->ops[p->nops - 1];
  op->scan.sql_stage = st->src->sql;
  op->scan.input_plan = uses ? plan : NULL;
  op->stage = b->stage;
  return 1;
}
