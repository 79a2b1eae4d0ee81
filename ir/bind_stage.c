/*
 * bind_stage.c — one binder function per stage (LANGUAGE.md §4).
 *
 * Every item of a stage is bound against the row as it was before the
 * stage; the new row is built aside and installed at the end, which is
 * what makes `SET x = y, y = x` and `RENAME a b, b a` swap. Reshaping
 * stages (SELECT, EXTEND, SET, DROP, RENAME, AS) emit no ops except a
 * COMPUTE for an expression that is not a plain column reference.
 *
 * TREE ACCUMULATE is bound in bind_tree.c, the INTERVAL stages in
 * bind_interval.c.
 */
#include <stdio.h>

#include "bind.h"

int ir_materialize(ir_binder *b, ir_expr *e, const char *name, int pos) {
  if (e->kind == IX_COL) return e->col;
  bool untyped = e->type == RT_NULLT;
  e = ir_ex_settle(b, e, RT_I64);
  int col = ir_col_new(b->p, name, e->type, e->nullable);
  b->p->cols[col].untyped = untyped;
  ir_op *op = ir_op_add(b, IR_COMPUTE, pos);
  op->compute.out_col = col;
  op->compute.expr = e;
  return col;
}

static int no_name(ir_binder *b, const fe_expr *x) {
  return ir_fail(b, x->pos,
                 "expected every column to have a valid name, but '%s' is not one: give it one "
                 "with AS",
                 ir_expr_text(b, x));
}

/* Name an item's column gets: AS name, else the referenced entry's name. */
static const char *item_name(ir_binder *b, const fe_expr *x, const char *as) {
  if (as) return as;
  if (x->kind != AX_COLUMN) return no_name(b, x), NULL;
  int col;
  const char *nm = NULL;
  return ir_resolve(b, x->qual, x->name, x->pos, x->namepos, &col, &nm) ? nm : NULL;
}

/* ---- select items ------------------------------------------------------- */

/* Expands a star item (`*` over the whole row, `q.*` over q's snapshot)
 * with its EXCEPT / REPLACE modifiers into rb, all entries bare. */
static int bind_star(ir_binder *b, const fe_item *it, ir_row src, ir_rowb *rb) {
  bool *drop = ir_alloc(b, (size_t)src.n + 1);
  int *repl = ir_alloc(b, sizeof(int) * ((size_t)src.n + 1));
  for (int i = 0; i < src.n; i++) repl[i] = -1;
  for (int k = 0; k < it->nexcept; k++) {
    const fe_name *nm = &it->except[k];
    for (int j = 0; j < k; j++)
      if (ir_name_eq(it->except[j].name, nm->name))
        return ir_fail(b, nm->pos, "expected each column once in EXCEPT, but '%s' is named twice",
                       nm->name);
    bool hit = false;
    for (int i = 0; i < src.n; i++)
      if (ir_name_eq(src.e[i].name, nm->name)) drop[i] = hit = true;
    if (!hit) return ir_fail(b, nm->pos, "no such column: '%s'", nm->name);
  }
  for (int k = 0; k < it->nreplace; k++) {
    const fe_item *r = &it->replace[k];
    bool hit = false;
    for (int i = 0; i < src.n; i++) hit |= ir_name_eq(src.e[i].name, r->name);
    if (!hit) return ir_fail(b, r->namepos, "no such column: '%s'", r->name);
    ir_expr *e = ir_bind_expr(b, r->expr);
    if (!e) return 0;
    int col = ir_materialize(b, e, r->name, r->pos);
    for (int i = 0; i < src.n; i++)
      if (ir_name_eq(src.e[i].name, r->name)) repl[i] = col;
  }
  int kept = 0;
  for (int i = 0; i < src.n; i++) {
    if (drop[i]) continue;
    ir_rowb_add(b, rb, src.e[i].name, repl[i] >= 0 ? repl[i] : src.e[i].col, false);
    kept++;
  }
  if (!kept) return ir_fail(b, it->pos, "expected a column to be left after EXCEPT");
  return 1;
}

static int bind_items(ir_binder *b, const fe_stage *st, bool bare_star, ir_rowb *rb) {
  for (int i = 0; i < st->nitems; i++) {
    const fe_item *it = &st->items[i];
    if (it->kind == IT_STAR) {
      if (!bare_star) return ir_fail(b, it->pos, "expected a table alias before the star, as in t.*");
      if (!bind_star(b, it, b->row, rb)) return 0;
    } else if (it->kind == IT_QSTAR) {
      const ir_alias *a = ir_alias_find(b, it->qual);
      if (!a) return ir_fail(b, it->pos, "no such table alias: '%s'", it->qual);
      if (!bind_star(b, it, a->row, rb)) return 0;
    } else {
      ir_expr *e = ir_bind_expr(b, it->expr);
      if (!e) return 0;
      const char *name = item_name(b, it->expr, it->name);
      if (!name) return 0;
      int col = ir_materialize(b, e, name, it->expr->pos);
      ir_rowb_add(b, rb, name, col, false);
    }
  }
  return 1;
}

int ir_bind_select(ir_binder *b, const fe_stage *st) {
  if (!ir_bind_windows(b, st)) return 0;
  ir_rowb rb = {0};
  if (!bind_items(b, st, true, &rb)) return 0;
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, NULL, b->row);
  return 1;
}

int ir_bind_extend(ir_binder *b, const fe_stage *st) {
  if (!ir_bind_windows(b, st)) return 0;
  ir_rowb rb = {0};
  for (int i = 0; i < b->row.n; i++) ir_rowb_add(b, &rb, b->row.e[i].name, b->row.e[i].col, b->row.e[i].qonly);
  if (!bind_items(b, st, false, &rb)) return 0;
  b->row = ir_rowb_done(&rb); /* aliases unchanged: they do not gain the new columns */
  return 1;
}

/* ---- SET, DROP, RENAME, AS --------------------------------------------- */

/* The aliases minus those named in `names` (SET and DROP remove an alias
 * named like the column). */
static void drop_aliases(ir_binder *b, int n, const char *const *names) {
  ir_alias *keep = ir_alloc(b, sizeof(ir_alias) * ((size_t)b->naliases + 1));
  int nk = 0;
  for (int i = 0; i < b->naliases; i++) {
    bool hit = false;
    for (int k = 0; k < n; k++) hit |= ir_name_eq(b->aliases[i].name, names[k]);
    if (!hit) keep[nk++] = b->aliases[i];
  }
  b->aliases = keep;
  b->naliases = nk;
}

int ir_bind_set(ir_binder *b, const fe_stage *st) {
  if (!ir_bind_windows(b, st)) return 0;
  int n = st->nassign;
  int *cols = ir_alloc(b, sizeof(int) * ((size_t)n + 1));
  const char **names = ir_alloc(b, sizeof(char *) * ((size_t)n + 1));
  for (int k = 0; k < n; k++) {
    const fe_assign *a = &st->assign[k];
    int old;
    const char *nm;
    if (!ir_resolve(b, NULL, a->col.name, a->col.pos, a->col.pos, &old, &nm)) return 0;
    ir_expr *e = ir_bind_expr(b, a->expr);
    if (!e) return 0;
    names[k] = a->col.name;
    if ((cols[k] = ir_materialize(b, e, nm, a->expr->pos)) < 0) return 0;
  }
  ir_rowb rb = {0};
  for (int i = 0; i < b->row.n; i++) {
    ir_entry en = b->row.e[i];
    for (int k = 0; k < n; k++)
      if (!en.qonly && ir_name_eq(en.name, names[k])) en.col = cols[k];
    ir_rowb_add(b, &rb, en.name, en.col, en.qonly);
  }
  b->row = ir_rowb_done(&rb);
  drop_aliases(b, n, names);
  return 1;
}

int ir_bind_drop(ir_binder *b, const fe_stage *st) {
  int n = st->nnames;
  const char **names = ir_alloc(b, sizeof(char *) * ((size_t)n + 1));
  for (int k = 0; k < n; k++) {
    const fe_name *nm = &st->names[k];
    names[k] = nm->name;
    bool hit = ir_alias_find(b, nm->name) != NULL;
    for (int i = 0; i < b->row.n; i++) hit |= !b->row.e[i].qonly && ir_name_eq(b->row.e[i].name, nm->name);
    if (!hit) return ir_fail(b, nm->pos, "no such column: '%s'", nm->name);
  }
  ir_rowb rb = {0};
  int bare = 0;
  for (int i = 0; i < b->row.n; i++) {
    const ir_entry *en = &b->row.e[i];
    bool gone = false;
    for (int k = 0; k < n && !en->qonly; k++) gone |= ir_name_eq(en->name, names[k]);
    if (gone) continue;
    ir_rowb_add(b, &rb, en->name, en->col, en->qonly);
    bare += !en->qonly;
  }
  if (!bare) return ir_fail(b, st->pos, "expected a column to be left after DROP");
  b->row = ir_rowb_done(&rb);
  drop_aliases(b, n, names);
  return 1;
}

int ir_bind_rename(ir_binder *b, const fe_stage *st) {
  int n = st->nassign;
  for (int k = 0; k < n; k++) {
    const fe_assign *a = &st->assign[k];
    int col;
    const char *nm;
    if (!ir_resolve(b, NULL, a->col.name, a->col.pos, a->col.pos, &col, &nm)) return 0;
    for (int j = 0; j < k; j++)
      if (ir_name_eq(st->assign[j].col.name, a->col.name))
        return ir_fail(b, a->col.pos, "expected each column to be renamed once, but '%s' is renamed twice",
                       a->col.name);
  }
  ir_rowb rb = {0};
  for (int i = 0; i < b->row.n; i++) {
    ir_entry en = b->row.e[i];
    for (int k = 0; k < n && !b->row.e[i].qonly; k++)
      if (ir_name_eq(b->row.e[i].name, st->assign[k].col.name)) en.name = st->assign[k].newname.name;
    ir_rowb_add(b, &rb, en.name, en.col, en.qonly);
  }
  b->row = ir_rowb_done(&rb); /* aliases keep their snapshots, old names included */
  return 1;
}

/* ---- WHERE, ORDER BY, LIMIT -------------------------------------------- */

int ir_bind_where(ir_binder *b, const fe_stage *st) {
  ir_expr *e = ir_bind_cond(b, st->expr);
  if (!e) return 0;
  ir_op *op = ir_op_add(b, IR_FILTER, st->pos);
  op->filter.pred = e;
  return 1;
}

/* `ORDER BY k`, k an integer literal: the k-th column of the row, 1-based,
 * as in SQLite. The row's columns are its bare entries, the ones the
 * pipeline would show if it ended here. */
static ir_expr *order_position(ir_binder *b, const fe_expr *x) {
  int nbare = 0;
  for (int i = 0; i < b->row.n; i++) {
    if (b->row.e[i].qonly) continue;
    if (++nbare == x->ival) {
      return ir_ex_col(b, b->row.e[i].col, x->pos);
    }
  }
  ir_fail(b, x->pos, "there is no column %lld: the row has %d", (long long)x->ival, nbare);
  return NULL;
}

int ir_bind_order(ir_binder *b, const fe_stage *st) {
  ir_sortkey *keys = ir_alloc(b, sizeof(ir_sortkey) * ((size_t)st->norder + 1));
  for (int i = 0; i < st->norder; i++) {
    const fe_order *o = &st->order[i];
    /* `ORDER BY 2 COLLATE NOCASE` is a position too, as in SQLite. */
    const fe_expr *k = o->expr;
    while (k->kind == AX_COLLATE) {
      if (!ir_check_collation(b, k)) return 0;
      k = k->args[0];
    }
    ir_expr *e = k->kind == AX_INT ? order_position(b, k) : ir_bind_expr(b, o->expr);
    if (!e) return 0;
    e = ir_collate(b, e, ir_collation(o->expr));   /* sort by lower(x) under NOCASE */
    int col = ir_materialize(b, e, ir_expr_text(b, o->expr), o->expr->pos);
    /* NULLs sort first ascending and last descending unless told. */
    keys[i] = (ir_sortkey){col, o->desc, o->nulls ? o->nulls == 1 : !o->desc};
  }
  ir_op *op = ir_op_add(b, IR_SORT, st->pos);
  op->sort.nkeys = st->norder;
  op->sort.keys = keys;
  /* Carry everything still reachable (row and alias snapshots) plus the
   * keys; live.c trims this to what is read after the sort. */
  int *all;
  int n = ir_row_all_cols(b, &all);
  op->sort.carry = ir_alloc(b, sizeof(int) * ((size_t)(n + st->norder) + 1));
  memcpy(op->sort.carry, all, sizeof(int) * (size_t)n);
  for (int i = 0; i < st->norder; i++) {
    bool have = false;
    for (int j = 0; j < n; j++) have |= op->sort.carry[j] == keys[i].col;
    if (!have) op->sort.carry[n++] = keys[i].col;
  }
  op->sort.ncarry = n;
  return 1;
}

static ir_expr *bind_count(ir_binder *b, const fe_expr *x) {
  if (!x) return NULL;
  ir_expr *e = ir_bind_expr(b, x);
  if (!e) return NULL;
  bool ok = (e->kind == IX_CONST && !e->is_null && rt_type_is_int(e->type)) || e->kind == IX_PARAM;
  if (!ok) {
    ir_fail(b, x->pos, "expected a whole number or a parameter, but got '%s'", ir_expr_text(b, x));
    return NULL;
  }
  return e;
}

int ir_bind_limit(ir_binder *b, const fe_stage *st) {
  ir_expr *lim = bind_count(b, st->limit);
  if (!lim) return 0;
  ir_expr *off = NULL;
  if (st->offset && !(off = bind_count(b, st->offset))) return 0;
  ir_op *op = ir_op_add(b, IR_LIMIT, st->pos);
  op->limit.count = lim;
  op->limit.offset = off;
  return 1;
}

/* ---- AGGREGATE ---------------------------------------------------------- */

/* Type of a value after a trip through a breaker's buffer: ints widen to
 * int64, booleans stay booleans. */
static rt_type widen(rt_type t) {
  return t == RT_F64 || t == RT_STR || t == RT_BOOL ? t : RT_I64;
}

/* The aggregate of aggs.def called `name` that stage `where` takes with
 * an argument (star: in the f(*) form); -1 if none. */
static int agg_find(const char *name, ir_aggplace where, bool star) {
  for (int k = 0; k < IR_NAGGS; k++) {
    ir_aggarg a = ir_aggs[k].arg[where];
    if (a != IR_AGGARG_NO && (a == IR_AGGARG_STAR) == star && ir_name_eq(name, ir_aggs[k].sql))
      return k;
  }
  return -1;
}

/* "expected COUNT, SUM, MIN, MAX, AVG, ARG_MAX, ARG_MIN or GROUP_CONCAT":
 * the names aggs.def allows at `where`, each once, in its order. */
const char *ir_agg_expected(ir_binder *b, ir_aggplace where) {
  const char *names[IR_NAGGS + 1];
  int n = 0;
  for (int k = 0; k < IR_NAGGS; k++) {
    if (ir_aggs[k].arg[where] == IR_AGGARG_NO) continue;
    bool dup = false;
    for (int i = 0; i < n && !dup; i++) dup = !strcmp(names[i], ir_aggs[k].sql);
    if (!dup) names[n++] = ir_aggs[k].sql;
  }
  /* On the stack, not in an rt_buf: ir_strdup may jump out of memory,
   * which would lose a heap buffer. */
  char m[512];
  size_t len = (size_t)snprintf(m, sizeof m, "expected ");
  for (int i = 0; i < n && len < sizeof m; i++)
    len += (size_t)snprintf(m + len, sizeof m - len, "%s%s",
                            i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
  return ir_strdup(b, n ? m : "expected an aggregate");
}

/* The second argument of an aggregate call x: ARG_MAX's value and
 * GROUP_CONCAT's separator are materialized into ag->arg2_col (*arg is
 * then the value, whose type ARG_MAX returns); PERCENTILE's p must be a
 * constant number from 0 to 100 (SQLite's percentile() requires the same
 * p on every row and errors otherwise: a constant is that rule, checked
 * before the query runs). */
static int bind_agg_arg2(ir_binder *b, const fe_expr *x, ir_agg *ag, ir_expr *e2, ir_expr **arg) {
  if (!e2) return 1;
  const fe_expr *ax = x->args[1];
  if (ag->kind == RT_AGG_PERCENTILE) {
    bool num = e2->kind == IX_CONST && !e2->is_null && e2->type != RT_STR;
    double p = !num ? 0 : e2->type == RT_F64 ? e2->fval : (double)e2->ival;
    if (!num || !(p >= 0 && p <= 100))
      return ir_fail(b, ax->pos, "expected the percentile to be a constant number from 0 to 100, "
                                 "but got '%s'", ir_expr_text(b, ax));
    ag->param = p;
    return 1;
  }
  if (ag->kind == RT_AGG_GROUP_CONCAT) {
    e2 = ir_ex_to_str(b, e2);   /* a NULL separator is a NULL string: joins with nothing */
  } else {
    *arg = e2;   /* ARG_MAX / ARG_MIN: the value decides the output type */
    e2 = ir_ex_settle(b, e2, RT_I64);
  }
  ag->arg2_col = ir_materialize(b, e2, ir_expr_text(b, ax), ax->pos);
  ag->arg2_type = e2->type;
  return ag->arg2_col >= 0;
}

int ir_bind_agg_call(ir_binder *b, const fe_item *it, ir_aggplace where, const char *expected,
                     ir_agg *ag, ir_expr **arg) {
  const fe_expr *x = it->expr;
  int fn = -1;
  /* min/max with two or more arguments are the scalar functions. */
  if (it->kind == IT_EXPR && x->kind == AX_CALL && ir_is_agg_name(x->str, x->nargs))
    fn = agg_find(x->str, where, false);
  if (fn >= 0 && x->over)
    return ir_fail(b, x->pos, "a window function belongs in EXTEND, SELECT or SET, not %s", b->stage);
  if (fn < 0)
    return ir_fail(b, it->kind == IT_EXPR ? x->pos : it->pos, "%s, but got '%s'", expected,
                   it->kind == IT_EXPR ? ir_expr_text(b, x) : "*");
  if (x->distinct) {
    /* COUNT(DISTINCT x) is an aggregate of its own (aggs.def) */
    if (fn != RT_AGG_COUNT || ir_aggs[RT_AGG_COUNT_DISTINCT].arg[where] == IR_AGGARG_NO)
      return ir_fail(b, x->pos, "DISTINCT is only supported in COUNT(DISTINCT x)%s",
                     where == IR_AGG_IN_AGGREGATE ? "" : " of AGGREGATE");
    if (x->star) return ir_fail(b, x->pos, "expected an argument to COUNT(DISTINCT …), not *");
    fn = RT_AGG_COUNT_DISTINCT;
  }
  if (x->star) {
    fn = x->nargs ? -1 : agg_find(x->str, where, true);
    if (fn < 0) return ir_fail(b, x->pos, "expected an argument to %s(), not *", x->str);
  } else if (x->nargs < ir_aggs[fn].lo || x->nargs > ir_aggs[fn].hi) {
    int lo = ir_aggs[fn].lo, hi = ir_aggs[fn].hi;
    if (lo == hi)
      return ir_fail(b, x->pos, "expected %d argument%s to %s(), but got %d", lo, lo == 1 ? "" : "s",
                     x->str, x->nargs);
    return ir_fail(b, x->pos, "expected %d to %d arguments to %s(), but got %d", lo, hi, x->str,
                   x->nargs);
  }
  if (!it->name) return no_name(b, x);
  *ag = (ir_agg){.kind = (rt_aggkind)fn, .arg_col = -1, .arg_type = RT_I64, .live = true,
                 .arg2_col = -1, .arg2_type = RT_NULLT, .param = fn == RT_AGG_MEDIAN ? 50 : 0};
  *arg = NULL;
  if (x->star) return 1;
  b->agg_msg = "an aggregate cannot contain another aggregate";
  ir_expr *e = ir_bind_expr(b, x->args[0]);
  ir_expr *e2 = e && x->nargs > 1 ? ir_bind_expr(b, x->args[1]) : NULL;
  b->agg_msg = NULL;
  if (!e || (x->nargs > 1 && !e2)) return 0;
  if (!bind_agg_arg2(b, x, ag, e2, arg)) return 0;
  /* GROUP_CONCAT joins text: numbers as SQLite makes them text */
  if (fn == RT_AGG_GROUP_CONCAT && e->type != RT_NULLT) e = ir_ex_to_str(b, e);
  if ((fn == RT_AGG_MIN || fn == RT_AGG_MAX) &&
      !ir_refuse_collation(b, x->args[0], e, fn == RT_AGG_MIN ? "MIN()" : "MAX()"))
    return 0;
  if (e->type == RT_STR && ir_aggs[fn].arg[where] == IR_AGGARG_NUM)
    return ir_fail(b, x->args[0]->pos, "expected a number in %s(), but '%s' is a string",
                   ir_aggs[fn].sql, ir_expr_text(b, x->args[0]));
  /* *arg keeps RT_NULLT for a bare NULL argument: the stage's output is
   * then an untyped NULL too (ir_agg_untyped). ARG_MAX's output is its
   * value's (bind_agg_arg2 set *arg). */
  if (!*arg) *arg = e;
  e = ir_ex_settle(b, e, RT_I64);
  ag->arg_col = ir_materialize(b, e, ir_expr_text(b, x->args[0]), x->args[0]->pos);
  ag->arg_type = e->type;
  return ag->arg_col >= 0;
}

bool ir_agg_untyped(const ir_agg *ag, const ir_expr *arg) {
  return arg && arg->type == RT_NULLT && ag->kind != RT_AGG_COUNT &&
         ag->kind != RT_AGG_COUNT_DISTINCT;
}

int ir_bind_group_agg(ir_binder *b, const fe_item *it, ir_aggplace where, const char *expected,
                      ir_agg *ag, int ngroup, rt_type *out_type, bool *out_null, bool *untyped) {
  ir_expr *e;
  if (!ir_bind_agg_call(b, it, where, expected, ag, &e)) return 0;
  *untyped = ir_agg_untyped(ag, e);
  if (!e) {
    *out_type = RT_I64;
    *out_null = false;
    return 1;
  }
  /* Without GROUP BY an empty input still gives one row, where SUM & co.
   * are NULL; with groups every group has a row, so only NULL inputs make
   * them NULL. */
  *out_null = (e->nullable || ngroup == 0) && ag->kind != RT_AGG_COUNT;
  *out_type = ir_agg_out_type(ag->kind, e->type, false);
  switch (ag->kind) {
  case RT_AGG_COUNT_DISTINCT: *out_null = false; break;
  case RT_AGG_ARG_MAX: case RT_AGG_ARG_MIN: case RT_AGG_GROUP_CONCAT: case RT_AGG_MEDIAN:
  case RT_AGG_PERCENTILE: case RT_AGG_FIRST: case RT_AGG_LAST:
    *out_null = true;   /* NULL for a group whose inputs are all NULL */
    break;
  case RT_AGG_COUNT_STAR: case RT_AGG_COUNT: case RT_AGG_SUM: case RT_AGG_MIN: case RT_AGG_MAX:
  case RT_AGG_AVG: case RT_AGG_ANY_VALUE:
    break;
  }
  /* A double sum of +inf and -inf is NaN, which is NULL. */
  if ((ag->kind == RT_AGG_SUM || ag->kind == RT_AGG_AVG) && e->type == RT_F64) *out_null = true;
  return 1;
}

/* Position of the name an item gives its column: its AS name, else the
 * expression (a column reference). */
static int item_name_pos(const fe_item *it) {
  return it->name && it->namepos ? it->namepos : it->expr ? it->expr->pos : it->pos;
}

int ir_check_output_names(ir_binder *b, int n, const char *const *names, const int *pos) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (ir_name_eq(names[i], names[j]))
        return ir_fail(b, pos[i],
                       "expected each output name to be listed only once, but '%s' is listed "
                       "twice",
                       names[i]);
  return 1;
}

/* Every output name of AGGREGATE (keys, then aggregates) is distinct
 * (LANGUAGE.md §4). */
static int aggregate_names(ir_binder *b, const fe_stage *st, const char **gnames) {
  int n = st->ngroup + st->nitems;
  const char **names = ir_alloc(b, sizeof(char *) * ((size_t)n + 1));
  int *pos = ir_alloc(b, sizeof(int) * ((size_t)n + 1));
  for (int i = 0; i < st->ngroup; i++) {
    names[i] = gnames[i];
    pos[i] = item_name_pos(&st->group[i]);
  }
  for (int i = 0; i < st->nitems; i++) {
    names[st->ngroup + i] = st->items[i].name;
    pos[st->ngroup + i] = item_name_pos(&st->items[i]);
  }
  return ir_check_output_names(b, n, names, pos);
}

ir_agglist ir_agglist_new(ir_binder *b, int n) {
  return (ir_agglist){.aggs = ir_alloc(b, sizeof(ir_agg) * ((size_t)n + 1)),
                      .types = ir_alloc(b, sizeof(rt_type) * ((size_t)n + 1)),
                      .nulls = ir_alloc(b, (size_t)n + 1),
                      .untyped = ir_alloc(b, (size_t)n + 1)};
}

int ir_bind_agg_list(ir_binder *b, const fe_stage *st, ir_aggplace where, const char *expected,
                     int ngroup, ir_agglist *l) {
  *l = ir_agglist_new(b, st->nitems);
  if (!expected) expected = ir_agg_expected(b, where);
  for (int i = 0; i < st->nitems; i++)
    if (!ir_bind_group_agg(b, &st->items[i], where, expected, &l->aggs[i], ngroup, &l->types[i],
                           &l->nulls[i], &l->untyped[i]))
      return 0;
  return 1;
}

void ir_agg_outputs(ir_binder *b, const fe_stage *st, const ir_agglist *l, ir_rowb *rb) {
  ir_plan *p = b->p;
  for (int i = 0; i < st->nitems; i++) {
    l->aggs[i].out_col = ir_col_new(p, st->items[i].name, l->types[i], l->nulls[i]);
    p->cols[l->aggs[i].out_col].untyped = l->untyped[i];
    if (rb) ir_rowb_add(b, rb, st->items[i].name, l->aggs[i].out_col, false);
  }
}

int ir_bind_aggregate(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  int ng = st->ngroup, na = st->nitems;
  int *gcols = ir_alloc(b, sizeof(int) * ((size_t)ng + 1));
  const char **gnames = ir_alloc(b, sizeof(char *) * ((size_t)ng + 1));
  b->agg_msg = "an aggregate does not belong in GROUP BY";
  for (int i = 0; i < ng; i++) {
    const fe_item *g = &st->group[i];
    ir_expr *e = ir_bind_expr(b, g->expr);
    if (!e || !ir_refuse_collation(b, g->expr, e, "GROUP BY")) return 0;
    if (!(gnames[i] = item_name(b, g->expr, g->name))) return 0;
    gcols[i] = ir_materialize(b, e, gnames[i], g->expr->pos);
  }
  b->agg_msg = NULL;
  ir_agglist l;
  if (!ir_bind_agg_list(b, st, IR_AGG_IN_AGGREGATE, "expected an aggregate such as COUNT(*) or SUM(x)", ng, &l))
    return 0;
  if (!aggregate_names(b, st, gnames)) return 0;
  ir_op *op = ir_op_add(b, IR_AGGREGATE, st->pos);
  op->agg.ngroup = ng;
  op->agg.group_cols = gcols;
  op->agg.group_out = ir_alloc(b, sizeof(int) * ((size_t)ng + 1));
  op->agg.naggs = na;
  op->agg.aggs = l.aggs;
  ir_rowb rb = {0};
  for (int i = 0; i < ng; i++) {
    const ir_col *in = &p->cols[gcols[i]];
    op->agg.group_out[i] = ir_col_new(p, gnames[i], widen(in->type), in->nullable);
    p->cols[op->agg.group_out[i]].untyped = p->cols[gcols[i]].untyped;
    ir_rowb_add(b, &rb, gnames[i], op->agg.group_out[i], false);
  }
  ir_agg_outputs(b, st, &l, &rb);
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, NULL, b->row);
  return 1;
}

int ir_bind_as(ir_binder *b, const fe_stage *st) {
  ir_alias_set_one(b, st->alias.name, b->row);
  return 1;
}

int ir_bind_stage(ir_binder *b, const fe_stage *st) {
  /* window calls belong to the stage that bound them (bind_window.c); a
   * nested pipeline's stages keep their own */
  ir_winmap outer = b->win;
  bool outer_in = b->in_window;
  b->win.n = 0;
  b->in_window = false;
  int rc = -1;
  switch (st->kind) {
#define STAGE(name, str, w1, w2, parse, bind, words) \
  case ST_##name: rc = bind(b, st); break;
#include "stages.def"
#undef STAGE
  case ST__COUNT: break;
  }
  b->win = outer;
  b->in_window = outer_in;
  return rc >= 0 ? rc : ir_fail(b, st->pos, "unknown stage");
}
