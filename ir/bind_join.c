/*
 * bind_join.c — binds `|> [INNER | LEFT | RIGHT | FULL | CROSS] JOIN src
 * [[AS] alias] [ON expr | USING (col, …)]` (LANGUAGE.md §8).
 *
 * The relation is bound inline like a FROM (…) subpipeline, with global
 * column ids, and its ops end in a JOIN_BUILD sink (its buffer becomes the
 * hash table); the input's segment goes on after it with a JOIN_PROBE
 * step (segment.c resumes the open segment after the build's). ON is
 * bound against the joined row and split at its top-level ANDs: each
 * `x = y` with x reading only input columns and y only the relation's
 * (or the reverse) is a hash key, materialized as a column on its side
 * (the relation's in its segment before the build, the input's before
 * the probe); the rest is the residual, checked per match. No key: a
 * nested loop (the plan says so).
 *
 * Keys compare as SQLite compares them: strings by id, doubles by value
 * (-0.0 = 0.0), integers with doubles exactly: the double side becomes
 * `CASE WHEN d = CAST(d AS INTEGER) THEN CAST(d AS INTEGER) END`, NULL
 * (no match) when it is not a whole number an integer could equal.
 *
 * Row model: the input's entries and aliases unchanged, then the
 * relation's columns bare, and its alias (the AS name, else a table's
 * name) over all of them. A USING column appears once, at the input's
 * position; for RIGHT and FULL it is the coalesce of both sides. LEFT and
 * FULL make the relation's columns nullable, RIGHT and FULL the input's.
 */
#include "runtime/jointab.h"
#include "bind.h"

/* Bit 1: e reads an input column; bit 2: one of the relation's. */
static int sides(const ir_expr *e, const bool *is_src, int nsrcflags) {
  if (!e) return 0;
  int s = 0;
  if (e->kind == IX_COL) s |= e->col < nsrcflags && is_src[e->col] ? 2 : 1;
  for (int i = 0; i < e->nargs; i++) s |= sides(e->args[i], is_src, nsrcflags);
  return s;
}

/* Stored kind of a key: 0 integer, 1 double, 2 string. */
static int key_kind(rt_type t) { return t == RT_F64 ? 1 : t == RT_STR ? 2 : 0; }

/* A double key compared with an integer key: the integer it equals, or
 * NULL when it equals none. */
static ir_expr *exact_int(ir_binder *b, ir_expr *d) {
  ir_expr *ti = ir_ex_new(b, IX_TOINT, RT_I64, d->nullable, d->pos, 1);
  ti->args[0] = d;
  ir_expr *eq = ir_ex_new(b, IX_EQ, RT_BOOL, d->nullable, d->pos, 2);
  eq->args[0] = ti;
  eq->args[1] = d;
  ir_expr *cs = ir_ex_new(b, IX_CASE, RT_I64, true, d->pos, 3);
  cs->args[0] = eq;
  cs->args[1] = ti;
  cs->args[2] = ir_ex_const_null(b, RT_I64, d->pos);
  return cs;
}

typedef struct jkeys {
  int n;
  ir_expr **in, **src;
  ir_expr *residual;
} jkeys;

static void add_residual(ir_binder *b, jkeys *k, ir_expr *e) {
  if (!k->residual) {
    k->residual = e;
    return;
  }
  ir_expr *a = ir_ex_new(b, IX_AND, RT_BOOL, k->residual->nullable || e->nullable, e->pos, 2);
  a->args[0] = k->residual;
  a->args[1] = e;
  k->residual = a;
}

/* One key pair (in, src), settled to one stored kind. */
static void add_key(ir_binder *b, jkeys *k, ir_expr *in, ir_expr *src) {
  if (k->n >= RT_JOIN_MAX_KEYS) {   /* the table's limit: check the rest per match */
    ir_expr *eq = ir_ex_new(b, IX_EQ, RT_BOOL, in->nullable || src->nullable, in->pos, 2);
    eq->args[0] = in;
    eq->args[1] = src;
    add_residual(b, k, eq);
    return;
  }
  int ki = key_kind(in->type), ks = key_kind(src->type);
  if (ki == 1 && ks == 0) in = exact_int(b, in);
  if (ki == 0 && ks == 1) src = exact_int(b, src);
  k->in[k->n] = in;
  k->src[k->n] = src;
  k->n++;
}

/* Splits a bound ON condition into keys and the residual. */
static void split_on(ir_binder *b, ir_expr *e, const bool *is_src, int nflags, jkeys *k) {
  if (e->kind == IX_AND) {
    split_on(b, e->args[0], is_src, nflags, k);
    split_on(b, e->args[1], is_src, nflags, k);
    return;
  }
  if (e->kind == IX_EQ) {
    int l = sides(e->args[0], is_src, nflags), r = sides(e->args[1], is_src, nflags);
    if (l == 1 && r == 2) return add_key(b, k, e->args[0], e->args[1]);
    if (l == 2 && r == 1) return add_key(b, k, e->args[1], e->args[0]);
  }
  add_residual(b, k, e);
}

static int conjuncts(const ir_expr *e) {
  return e->kind == IX_AND ? conjuncts(e->args[0]) + conjuncts(e->args[1]) : 1;
}

/* USING (col, …): each name must be a bare column of both sides, of
 * kinds that compare. in_cols/src_cols get the columns. */
static int bind_using(ir_binder *b, const fe_stage *st, ir_row in_row, ir_row src_row,
                      const char *rel, jkeys *k, int *in_cols, int *src_cols) {
  for (int i = 0; i < st->nusing; i++) {
    const fe_name *nm = &st->usings[i];
    for (int j = 0; j < i; j++)
      if (ir_name_eq(st->usings[j].name, nm->name))
        return ir_fail(b, nm->pos, "expected each USING column once, but '%s' is listed twice",
                       nm->name);
    const char *en;
    int r = ir_lookup(b, in_row, true, NULL, nm->name, "the input", nm->pos, &in_cols[i], &en);
    if (r < 0) return 0;
    if (r == 0)
      return ir_fail(b, nm->pos, "expected the input to have a column '%s' for USING", nm->name);
    r = ir_lookup(b, src_row, true, NULL, nm->name, rel, nm->pos, &src_cols[i], &en);
    if (r < 0) return 0;
    if (r == 0)
      return ir_fail(b, nm->pos, "expected %s to have a column '%s' for USING", rel, nm->name);
    rt_type ti = b->p->cols[in_cols[i]].type, ts = b->p->cols[src_cols[i]].type;
    if ((ti == RT_STR) != (ts == RT_STR))
      return ir_fail(b, nm->pos,
                     "cannot compare a string with a number: the input's %s is %s and %s's is %s",
                     nm->name, rt_type_name(ti), rel, rt_type_name(ts));
    add_key(b, k, ir_ex_col(b, in_cols[i], nm->pos), ir_ex_col(b, src_cols[i], nm->pos));
  }
  return 1;
}

static bool in_list(const int *v, int n, int x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

int ir_bind_join(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  const char *stage = b->stage;
  static const rt_joinkind kinds[] = {[JK_INNER] = RT_JOIN_INNER, [JK_LEFT] = RT_JOIN_LEFT,
                                      [JK_RIGHT] = RT_JOIN_RIGHT, [JK_FULL] = RT_JOIN_FULL,
                                      [JK_CROSS] = RT_JOIN_CROSS};
  rt_joinkind kind = kinds[st->jkind];
  ir_row in_row = b->row;
  int in_nal = b->naliases;
  const ir_alias *in_al = b->aliases;
  int *in_all;
  int nin_all = ir_row_all_cols(b, &in_all);

  /* The relation: a table or view, (select), (pipeline); a FORK name or a
   * table function call is bound by ir_bind_source too once it knows
   * them. */
  const fe_source *src = st->src;
  if (!ir_bind_source(b, src, stage)) return 0;
  b->stage = stage;
  ir_row src_row = b->row;
  const char *qual = src->alias.name ? src->alias.name : src->kind == SRC_NAME ? src->name : NULL;
  const char *rel = qual ? qual : "the joined relation";
  for (int i = 0; qual && i < in_nal; i++)
    if (ir_name_eq(in_al[i].name, qual))
      return ir_fail(b, src->alias.name ? src->alias.pos : src->pos,
                     "the alias '%s' is already taken: give the joined relation another with AS",
                     qual);
  int nflags = p->ncols;
  bool *is_src = ir_alloc(b, (size_t)nflags + 1);
  for (int i = 0; i < src_row.n; i++) is_src[src_row.e[i].col] = true;

  /* The joined row (what ON sees), and its aliases. */
  ir_rowb rb = {0};
  for (int i = 0; i < in_row.n; i++) ir_rowb_add(b, &rb, in_row.e[i].name, in_row.e[i].col, in_row.e[i].qonly);
  for (int i = 0; i < src_row.n; i++) ir_rowb_add(b, &rb, src_row.e[i].name, src_row.e[i].col, false);
  ir_row joined = ir_rowb_done(&rb);
  ir_alias *al = ir_alloc(b, sizeof(ir_alias) * ((size_t)in_nal + 1));
  for (int i = 0; i < in_nal; i++) al[i] = in_al[i];
  int nal = in_nal;
  if (qual) al[nal++] = (ir_alias){qual, src_row};

  int nus = st->nusing > 0 ? st->nusing : 0;
  ir_expr *on = NULL;
  int room = nus + 1;
  if (st->on) {
    b->row = joined;
    b->naliases = nal;
    b->aliases = al;
    if (!(on = ir_bind_cond(b, st->on))) return 0;
    if (on->type == RT_NULLT) on = ir_ex_settle(b, on, RT_BOOL);
    room += conjuncts(on);
  }
  jkeys k = {0};
  k.in = ir_alloc(b, sizeof(ir_expr *) * (size_t)room);
  k.src = ir_alloc(b, sizeof(ir_expr *) * (size_t)room);
  int *us_in = ir_alloc(b, sizeof(int) * ((size_t)nus + 1));
  int *us_src = ir_alloc(b, sizeof(int) * ((size_t)nus + 1));
  if (nus && !bind_using(b, st, in_row, src_row, rel, &k, us_in, us_src)) return 0;
  if (on) split_on(b, on, is_src, nflags, &k);

  /* The relation's side: keys as columns, then the build. */
  int *src_keys = ir_alloc(b, sizeof(int) * ((size_t)k.n + 1));
  int *in_keys = ir_alloc(b, sizeof(int) * ((size_t)k.n + 1));
  for (int i = 0; i < k.n; i++)
    if ((src_keys[i] = ir_materialize(b, k.src[i], "join key", st->pos)) < 0) return 0;
  int *carry = ir_alloc(b, sizeof(int) * ((size_t)(src_row.n + k.n) + 1));
  int ncarry = 0;
  for (int i = 0; i < src_row.n; i++)
    if (!in_list(carry, ncarry, src_row.e[i].col)) carry[ncarry++] = src_row.e[i].col;
  for (int i = 0; i < k.n; i++)
    if (!in_list(carry, ncarry, src_keys[i])) carry[ncarry++] = src_keys[i];
  ir_op *build = ir_op_add(b, IR_JOIN_BUILD, src->pos);

  /* The input's side: keys as columns, then the probe. */
  for (int i = 0; i < k.n; i++)
    if ((in_keys[i] = ir_materialize(b, k.in[i], "join key", st->pos)) < 0) return 0;
  ir_op *probe = ir_op_add(b, IR_JOIN_PROBE, st->pos);
  struct ir_join j = {.kind = (int)kind, .nkeys = k.n, .in_keys = in_keys, .src_keys = src_keys,
                      .residual = k.residual, .build = build, .probe = probe,
                      .name = qual ? ir_strdup(b, qual) : NULL};
  probe->join = j;
  j.ncarry = ncarry;
  j.carry = carry;
  build->join = j;

  bool src_null = kind == RT_JOIN_LEFT || kind == RT_JOIN_FULL;
  bool in_null = kind == RT_JOIN_RIGHT || kind == RT_JOIN_FULL;
  for (int i = 0; src_null && i < ncarry; i++) p->cols[carry[i]].nullable = true;
  for (int i = 0; in_null && i < nin_all; i++) p->cols[in_all[i]].nullable = true;

  /* The output row. */
  ir_rowb ob = {0};
  for (int i = 0; i < in_row.n; i++) {
    const ir_entry *e = &in_row.e[i];
    int col = e->col;
    for (int u = 0; u < nus && in_null; u++) {
      if (e->col != us_in[u] || e->qonly || !ir_name_eq(e->name, st->usings[u].name)) continue;
      /* the non-NULL side's value, typed as coalesce() types it */
      rt_type ti = p->cols[us_in[u]].type, ts = p->cols[us_src[u]].type;
      rt_type t = ti == RT_F64 || ts == RT_F64 ? RT_F64 : ti == RT_STR ? RT_STR
                  : ti == RT_BOOL && ts == RT_BOOL ? RT_BOOL : RT_I64;
      ir_expr *c = ir_ex_new(b, IX_COALESCE, t, true, st->usings[u].pos, 2);
      for (int a = 0; a < 2; a++) {
        ir_expr *x = ir_ex_col(b, a ? us_src[u] : us_in[u], st->usings[u].pos);
        if (t == RT_F64 && x->type != RT_F64) {
          ir_expr *f = ir_ex_new(b, IX_TOF64, RT_F64, x->nullable, x->pos, 1);
          f->args[0] = x;
          x = f;
        }
        c->args[a] = x;
      }
      col = ir_materialize(b, c, e->name, st->pos);
      if (col < 0) return 0;
    }
    ir_rowb_add(b, &ob, e->name, col, e->qonly);
  }
  for (int i = 0; i < src_row.n; i++) {
    if (in_list(us_src, nus, src_row.e[i].col)) {
      bool named = false;
      for (int u = 0; u < nus; u++) named |= ir_name_eq(src_row.e[i].name, st->usings[u].name);
      if (named) continue;
    }
    ir_rowb_add(b, &ob, src_row.e[i].name, src_row.e[i].col, false);
  }
  b->row = ir_rowb_done(&ob);
  b->naliases = nal;
  b->aliases = al;
  return 1;
}
