/*
 * bind_window.c — window function calls `f(args) OVER (…)` in EXTEND,
 * SELECT and SET items (LANGUAGE.md §8) → one WINDOW op per stage.
 *
 * Before the stage's items bind, ir_bind_windows finds every window call
 * in them and binds it against the row before the stage: its arguments,
 * partition and order keys become columns (COMPUTEs, before the op), its
 * frame is checked, and it gets a result column. Calls whose keys are the
 * same expressions share one window (ir_winspec), and so one sort at run
 * time. Then the WINDOW op is added, carrying every column still
 * reachable, and the items bind as usual: bind_call meets each window
 * call again and reads its result column (ir_bind_window_ref), so the
 * rest of an item (`ts - LAG(ts) OVER (…)`) is a COMPUTE after the
 * breaker, which the JIT fuses into the next segment's loop.
 *
 * A window call anywhere else (WHERE, ORDER BY, AGGREGATE, GROUP BY, …,
 * or inside another window call) is an error naming the stage.
 */
#include "bind.h"

/* ---- finding the calls ------------------------------------------------------ */

static void find_calls(ir_binder *b, const fe_expr *x, const fe_expr ***v, int *n, int *cap) {
  if (!x) return;
  if (x->kind == AX_CALL && x->over) {
    if (*n == *cap) {
      int nc = *cap ? *cap * 2 : 8;
      const fe_expr **nv = ir_alloc(b, sizeof *nv * (size_t)nc);
      if (*n) memcpy(nv, *v, sizeof *nv * (size_t)*n);
      *v = nv;
      *cap = nc;
    }
    (*v)[(*n)++] = x;
    return;   /* a window call inside its arguments is an error, found when they bind */
  }
  for (int i = 0; i < x->nargs; i++) find_calls(b, x->args[i], v, n, cap);
  find_calls(b, x->operand, v, n, cap);
  for (int i = 0; i < x->nwhens; i++) {
    find_calls(b, x->whens[i], v, n, cap);
    find_calls(b, x->thens[i], v, n, cap);
  }
  find_calls(b, x->els, v, n, cap);
}

/* ---- keys shared between calls --------------------------------------------- */

/* The same value on every row: the same tree of the same nodes (engine
 * callouts never count as the same: they may not be pure). */
static bool same_expr(const ir_expr *a, const ir_expr *c) {
  if (a->kind != c->kind || a->type != c->type || a->nargs != c->nargs) return false;
  switch (a->kind) {
  case IX_CONST:
    if (a->is_null != c->is_null) return false;
    if (a->is_null) return true;
    if (a->type == RT_F64) return memcmp(&a->fval, &c->fval, sizeof a->fval) == 0;
    if (a->type == RT_STR) return a->sval == c->sval;
    return a->ival == c->ival;
  case IX_COL: return a->col == c->col;
  case IX_PARAM: return a->param == c->param;
  case IX_CALLOUT: return false;
  default: break;
  }
  if (a->col != c->col || a->param != c->param || a->ival != c->ival) return false;
  for (int i = 0; i < a->nargs; i++)
    if (!same_expr(a->args[i], c->args[i])) return false;
  return true;
}

typedef struct keyset {
  int n, cap;
  ir_expr **e;
  int *col;
} keyset;

/* The column of a key or argument: a column already made for the same
 * expression in this stage, else a new one (ir_materialize). */
static int key_col(ir_binder *b, keyset *ks, ir_expr *e, const fe_expr *x) {
  if (e->kind == IX_COL) return e->col;
  for (int i = 0; i < ks->n; i++)
    if (same_expr(ks->e[i], e)) return ks->col[i];
  int col = ir_materialize(b, e, ir_expr_text(b, x), x->pos);
  if (col < 0) return -1;
  if (ks->n == ks->cap) {
    int nc = ks->cap ? ks->cap * 2 : 8;
    ir_expr **ne = ir_alloc(b, sizeof *ne * (size_t)nc);
    int *ncol = ir_alloc(b, sizeof *ncol * (size_t)nc);
    if (ks->n) {
      memcpy(ne, ks->e, sizeof *ne * (size_t)ks->n);
      memcpy(ncol, ks->col, sizeof *ncol * (size_t)ks->n);
    }
    ks->e = ne;
    ks->col = ncol;
    ks->cap = nc;
  }
  ks->e[ks->n] = e;
  ks->col[ks->n++] = col;
  return col;
}

static bool same_spec(const ir_winspec *a, const ir_winspec *c) {
  if (a->npart != c->npart || a->norder != c->norder) return false;
  for (int i = 0; i < a->npart; i++)
    if (a->part[i] != c->part[i]) return false;
  for (int i = 0; i < a->norder; i++)
    if (a->order[i].col != c->order[i].col || a->order[i].desc != c->order[i].desc ||
        a->order[i].nulls_first != c->order[i].nulls_first)
      return false;
  return true;
}

/* ---- one call --------------------------------------------------------------- */

static int find_fn(const fe_expr *x) {
  for (int k = 0; k < IR_NWINS; k++) {
    if (!ir_name_eq(x->str, ir_wins[k].sql)) continue;
    if ((ir_wins[k].arg == IR_WINARG_STAR) == x->star) return k;
  }
  return -1;
}

/* "ROW_NUMBER, RANK, …": for the error about a function that is not one. */
static const char *fn_list(ir_binder *b) {
  rt_buf m = {0};
  for (int k = 0; k < IR_NWINS; k++) {
    if (k == RT_WIN_COUNT_STAR) continue;   /* COUNT once */
    rt_buf_printf(&m, "%s%s", k ? (k == IR_NWINS - 1 ? " and " : ", ") : "", ir_wins[k].sql);
  }
  const char *s = m.failed ? NULL : rt_arena_strndup(&b->p->arena, m.data ? m.data : "", m.len);
  rt_buf_free(&m);
  if (!s) ir_oom(b);
  return s;
}

/* A frame offset: a constant whole number, zero or more (of rows or peer
 * groups); a RANGE frame over a REAL key takes any number (*d). */
static int frame_n(ir_binder *b, const fe_fbnd *bd, bool real, int64_t *out, double *d) {
  ir_expr *e = ir_bind_expr(b, bd->n);
  if (!e) return 0;
  bool num = e->kind == IX_CONST && !e->is_null && e->type != RT_STR;
  double v = !num ? 0 : e->type == RT_F64 ? e->fval : (double)e->ival;
  bool whole = num && (e->type != RT_F64 || (v >= -9223372036854775808.0 &&
                                              v < 9223372036854775808.0 && v == (double)(int64_t)v));
  if (!num || (!whole && !real))
    return ir_fail(b, bd->n->pos, "expected a frame offset that is a constant whole number, but "
                                  "got '%s'", ir_expr_text(b, bd->n));
  if (v < 0 || (e->type != RT_F64 && e->ival < 0))
    return ir_fail(b, bd->n->pos, "expected a frame offset of zero or more, but got '%s'",
                   ir_expr_text(b, bd->n));
  *out = e->type == RT_F64 ? (whole ? (int64_t)v : 0) : e->ival;
  *d = e->type == RT_F64 ? v : (double)e->ival;
  return 1;
}

static rt_winbound bound_kind(fe_fbound k) {
  switch (k) {
  case FB_UNBOUNDED_PRECEDING: return RT_WB_UNBOUNDED_PRECEDING;
  case FB_PRECEDING: return RT_WB_PRECEDING;
  case FB_CURRENT: return RT_WB_CURRENT;
  case FB_FOLLOWING: return RT_WB_FOLLOWING;
  case FB_UNBOUNDED_FOLLOWING: break;
  }
  return RT_WB_UNBOUNDED_FOLLOWING;
}

/* The frame of window w: SQL's default (RANGE BETWEEN UNBOUNDED PRECEDING
 * AND CURRENT ROW: up to the current row's last peer, the whole partition
 * without ORDER BY), or the one written, with SQLite's rules on which
 * bound may follow which. A RANGE frame with an offset orders by one
 * numeric key: `key` (its column's type), else NULL. */
static int bind_frame(ir_binder *b, const fe_window *w, const ir_expr *key, rt_winframe *f) {
  *f = (rt_winframe){RT_WU_RANGE, RT_WB_UNBOUNDED_PRECEDING, RT_WB_CURRENT, 0, 0, 0, 0};
  if (!w->framed) return 1;
  if (w->excludepos >= 0) return ir_fail(b, w->excludepos, "EXCLUDE in a frame is not supported");
  fe_fbound s = w->start.kind, e = w->end.kind;
  if (s == FB_UNBOUNDED_FOLLOWING)
    return ir_fail(b, w->start.pos, "a frame cannot start at UNBOUNDED FOLLOWING");
  if (e == FB_UNBOUNDED_PRECEDING)
    return ir_fail(b, w->end.pos, "a frame cannot end at UNBOUNDED PRECEDING");
  if (s == FB_CURRENT && e == FB_PRECEDING)
    return ir_fail(b, w->end.pos, "a frame that starts at CURRENT ROW cannot end before it");
  if (s == FB_FOLLOWING && (e == FB_PRECEDING || e == FB_CURRENT))
    return ir_fail(b, w->end.pos, "a frame that starts after the current row cannot end at or "
                                  "before it");
  bool offset = s == FB_PRECEDING || s == FB_FOLLOWING || e == FB_PRECEDING || e == FB_FOLLOWING;
  if (w->unit == FU_RANGE && offset) {
    int at = (s == FB_PRECEDING || s == FB_FOLLOWING) ? w->start.pos : w->end.pos;
    if (w->norder != 1)
      return ir_fail(b, at, "RANGE with offset PRECEDING/FOLLOWING requires one ORDER BY "
                            "expression");
    if (key && key->type == RT_STR)
      return ir_fail(b, w->order[0].expr->pos, "expected a number to order a RANGE frame with an "
                                               "offset, but '%s' is a string",
                     ir_expr_text(b, w->order[0].expr));
  }
  f->unit = w->unit == FU_RANGE ? RT_WU_RANGE : w->unit == FU_GROUPS ? RT_WU_GROUPS : RT_WU_ROWS;
  f->start = bound_kind(s);
  f->end = bound_kind(e);
  bool real = w->unit == FU_RANGE && key && key->type == RT_F64;
  if (w->start.n && !frame_n(b, &w->start, real, &f->start_n, &f->start_d)) return 0;
  if (w->end.n && !frame_n(b, &w->end, real, &f->end_n, &f->end_d)) return 0;
  return 1;
}

/* Type of a value after a trip through the buffer: ints widen to int64,
 * booleans stay booleans. */
static rt_type widen(rt_type t) {
  return t == RT_F64 || t == RT_STR || t == RT_BOOL ? t : RT_I64;
}

/* A whole-number argument (LAG's offset, NTILE's and NTH_VALUE's n): a
 * constant integer goes in c->n, anything else in a column. */
static int bind_count_arg(ir_binder *b, keyset *ks, const fe_expr *x, int i, int64_t *n, int *col) {
  ir_expr *e = ir_bind_expr(b, x->args[i]);
  if (!e) return 0;
  if (e->type == RT_STR)
    return ir_fail(b, x->args[i]->pos, "expected a number for %s(), but '%s' is a string", x->str,
                   ir_expr_text(b, x->args[i]));
  if (e->kind == IX_CONST && !e->is_null && rt_type_is_int(e->type)) {
    *n = e->ival;
    return 1;
  }
  e = ir_ex_settle(b, e, RT_I64);
  return (*col = key_col(b, ks, e, x->args[i])) >= 0;
}

/* A result column's name: the call as written up to OVER (`LAG(ts)`); an
 * item that is just the call renames it after its own name. */
static const char *call_name(ir_binder *b, const fe_expr *x) {
  int end = x->over->pos;
  while (end > x->pos && (b->text[end - 1] == ' ' || b->text[end - 1] == '\t' ||
                          b->text[end - 1] == '\n' || b->text[end - 1] == '\r'))
    end--;
  if (end <= x->pos) return ir_expr_text(b, x);
  return ir_strndup(b, b->text + x->pos, (size_t)(end - x->pos));
}

static int bind_call(ir_binder *b, keyset *ks, const fe_expr *x, ir_wincall *c, ir_winspec *sp) {
  const fe_window *w = x->over;
  int fn = find_fn(x);
  if (fn < 0 && x->star) return ir_fail(b, x->pos, "expected arguments to %s(), not *", x->str);
  if (fn < 0)
    return ir_fail(b, x->pos, "%s() is not a window function: the window functions are %s", x->str,
                   fn_list(b));
  if (x->distinct) return ir_fail(b, x->pos, "DISTINCT is not supported for window functions");
  const ir_wininfo *info = &ir_wins[fn];
  if (!x->star && !ir_arity(b, x, info->lo, info->hi)) return 0;
  *c = (ir_wincall){.fn = (rt_winfn)fn, .arg_col = -1, .n_col = -1, .dflt_col = -1, .n = 1,
                    .framed = w->framed, .pos = x->pos};

  /* the window: partition keys, then order keys (collated as ORDER BY) */
  sp->npart = w->npart;
  sp->part = ir_alloc(b, sizeof(int) * ((size_t)w->npart + 1));
  for (int i = 0; i < w->npart; i++) {
    ir_expr *e = ir_bind_expr(b, w->part[i]);
    if (!e) return 0;
    e = ir_collate(b, ir_ex_settle(b, e, RT_I64), ir_collation(w->part[i]));
    if ((sp->part[i] = key_col(b, ks, e, w->part[i])) < 0) return 0;
  }
  sp->norder = w->norder;
  sp->order = ir_alloc(b, sizeof(ir_sortkey) * ((size_t)w->norder + 1));
  for (int i = 0; i < w->norder; i++) {
    const fe_order *o = &w->order[i];
    ir_expr *e = ir_bind_expr(b, o->expr);
    if (!e) return 0;
    e = ir_collate(b, ir_ex_settle(b, e, RT_I64), ir_collation(o->expr));
    int col = key_col(b, ks, e, o->expr);
    if (col < 0) return 0;
    /* NULLs first ascending and last descending unless told (SQLite's) */
    sp->order[i] = (ir_sortkey){col, o->desc, o->nulls ? o->nulls == 1 : !o->desc};
  }
  if (!bind_frame(b, w, w->norder == 1 ? &(ir_expr){.type = b->p->cols[sp->order[0].col].type} : NULL,
                  &c->frame))
    return 0;

  /* the arguments, and the result's type */
  c->out_col = -1;
  rt_type out = info->out == IR_WINOUT_F64 || info->out == IR_WINOUT_AVG ? RT_F64 : RT_I64;
  bool nullable = info->out != IR_WINOUT_I64 && info->out != IR_WINOUT_F64;
  if (fn == RT_WIN_NTILE) {
    if (!bind_count_arg(b, ks, x, 0, &c->n, &c->n_col)) return 0;
  } else if (info->arg != IR_WINARG_NO && info->arg != IR_WINARG_STAR) {
    ir_expr *v[2] = {ir_bind_expr(b, x->args[0]), NULL};
    if (!v[0]) return 0;
    if (info->arg == IR_WINARG_NUM && v[0]->type == RT_STR)
      return ir_fail(b, x->args[0]->pos, "expected a number in %s(), but '%s' is a string",
                     info->sql, ir_expr_text(b, x->args[0]));
    if ((fn == RT_WIN_MIN || fn == RT_WIN_MAX) &&
        !ir_refuse_collation(b, x->args[0], v[0], fn == RT_WIN_MIN ? "MIN()" : "MAX()"))
      return 0;
    int nv = 1;
    if ((fn == RT_WIN_LAG || fn == RT_WIN_LEAD) && x->nargs > 2) {
      if (!(v[1] = ir_bind_expr(b, x->args[2]))) return 0;
      nv = 2;
    }
    rt_type t;
    if (!ir_common_values(b, v, nv, &t))
      return ir_fail(b, x->args[2]->pos, "expected the default of %s() to have the type of its "
                                         "value, but one is a string and the other a number",
                     x->str);
    if (t == RT_NULLT) t = RT_I64;
    for (int i = 0; i < nv; i++) v[i] = ir_ex_settle(b, v[i], t);
    if (info->out == IR_WINOUT_SUM) out = t == RT_F64 ? RT_F64 : RT_I64;
    if (info->out == IR_WINOUT_ARG || info->out == IR_WINOUT_LAG) out = widen(t);
    if ((c->arg_col = key_col(b, ks, v[0], x->args[0])) < 0) return 0;
    if (nv > 1 && !(v[1]->kind == IX_CONST && v[1]->is_null) &&
        (c->dflt_col = key_col(b, ks, v[1], x->args[2])) < 0)
      return 0;
    if ((fn == RT_WIN_LAG || fn == RT_WIN_LEAD || fn == RT_WIN_NTH_VALUE) && x->nargs > 1 &&
        !bind_count_arg(b, ks, x, 1, &c->n, &c->n_col))
      return 0;
  }
  c->out_col = ir_col_new(b->p, call_name(b, x), out, nullable);
  return 1;
}

/* ---- the stage ---------------------------------------------------------------- */

int ir_bind_windows(ir_binder *b, const fe_stage *st) {
  const fe_expr **xs = NULL;
  int n = 0, cap = 0;
  for (int i = 0; i < st->nitems; i++) {
    const fe_item *it = &st->items[i];
    if (it->kind == IT_EXPR) find_calls(b, it->expr, &xs, &n, &cap);
    for (int k = 0; k < it->nreplace; k++) find_calls(b, it->replace[k].expr, &xs, &n, &cap);
  }
  for (int i = 0; i < st->nassign; i++) find_calls(b, st->assign[i].expr, &xs, &n, &cap);
  if (n == 0) return 1;

  ir_plan *p = b->p;
  ir_wincall *calls = ir_alloc(b, sizeof *calls * (size_t)n);
  ir_winspec *specs = ir_alloc(b, sizeof *specs * (size_t)n);
  int nspecs = 0;
  keyset ks = {0};
  b->in_window = true;   /* a window call in there is nested */
  for (int i = 0; i < n; i++) {
    ir_winspec sp;
    int ok = bind_call(b, &ks, xs[i], &calls[i], &sp);
    if (!ok) {
      b->in_window = false;
      return 0;
    }
    int s = 0;
    while (s < nspecs && !same_spec(&specs[s], &sp)) s++;
    if (s == nspecs) specs[nspecs++] = sp;
    calls[i].spec = s;
  }
  b->in_window = false;

  ir_op *op = ir_op_add(b, IR_WINDOW, st->pos);
  op->win.nspecs = nspecs;
  op->win.specs = specs;
  op->win.ncalls = n;
  op->win.calls = calls;
  /* Carry everything still reachable plus every key and argument; live.c
   * trims it to what is read after the op and what its live calls read. */
  int *all;
  int na = ir_row_all_cols(b, &all);
  bool *seen = ir_alloc(b, (size_t)p->ncols + 1);
  int *carry = ir_alloc(b, sizeof(int) * ((size_t)(na + ks.n + 3 * n) + 1));
  int nc = 0;
#define CARRY(c) do { int c_ = (c); if (c_ >= 0 && !seen[c_]) { seen[c_] = true; carry[nc++] = c_; } } while (0)
  for (int i = 0; i < na; i++) CARRY(all[i]);
  for (int i = 0; i < n; i++) {
    CARRY(calls[i].arg_col);
    CARRY(calls[i].n_col);
    CARRY(calls[i].dflt_col);
  }
  for (int s = 0; s < nspecs; s++) {
    for (int i = 0; i < specs[s].npart; i++) CARRY(specs[s].part[i]);
    for (int i = 0; i < specs[s].norder; i++) CARRY(specs[s].order[i].col);
  }
#undef CARRY
  op->win.ncarry = nc;
  op->win.carry = carry;

  /* `LAG(ts) OVER (…) AS prev`: the result column is prev */
  for (int i = 0; i < st->nitems; i++) {
    const fe_item *it = &st->items[i];
    for (int k = 0; it->kind == IT_EXPR && it->name && k < n; k++)
      if (xs[k] == it->expr) p->cols[calls[k].out_col].name = ir_strdup(b, it->name);
  }
  for (int i = 0; i < st->nassign; i++)
    for (int k = 0; k < n; k++)
      if (xs[k] == st->assign[i].expr)
        p->cols[calls[k].out_col].name = ir_strdup(b, st->assign[i].col.name);
  b->win.n = n;
  b->win.calls = xs;
  b->win.cols = ir_alloc(b, sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) b->win.cols[i] = calls[i].out_col;
  return 1;
}

ir_expr *ir_bind_window_ref(ir_binder *b, const fe_expr *x) {
  for (int i = 0; i < b->win.n; i++)
    if (b->win.calls[i] == x) return ir_ex_col(b, b->win.cols[i], x->pos);
  if (b->in_window)
    ir_fail(b, x->pos, "a window function cannot be used inside another window function's "
                       "arguments or window");
  else
    ir_fail(b, x->pos, "a window function belongs in EXTEND, SELECT or SET, not %s", b->stage);
  return NULL;
}

bool ir_is_window_name(const char *name) {
  for (int k = 0; k < IR_NWINS; k++)
    if (ir_name_eq(name, ir_wins[k].sql)) return true;
  return false;
}
