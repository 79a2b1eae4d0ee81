/*
 * bind_expr.c — AST expressions → typed ir_expr (LANGUAGE.md §5).
 *
 * Every node leaves here with uniform operands (exprs.def): arithmetic sees
 * two ints, two doubles or two strings; an int operand of a double
 * operation is wrapped in TOF64; comparisons (and IN) may also see an
 * integer against a double, which the backends compare exactly, as SQLite
 * does (cmp_operands below); `||` casts numbers with TOSTR;
 * predicates are RT_BOOL. A bare NULL (RT_NULLT) never reaches an operator:
 * it is retyped to the type the other operands settle on, or the whole node
 * folds to a bare NULL when SQL says the result is NULL anyway (`x + NULL`,
 * `x = NULL`, `'a' || NULL`, `ifnull(NULL, NULL)`, a CASE whose every
 * result is NULL). A bare NULL keeps RT_NULLT up to where a type is needed,
 * so it unifies with any type, as in SQLite: `coalesce(s, ifnull(NULL,
 * NULL))` is a string. A column holding one (ir_col.untyped) binds back to
 * a bare NULL.
 *
 * Sugar is lowered here: BETWEEN → `x >= a AND x <= b`; `CASE x WHEN v` →
 * `CASE WHEN x = v`; iif → CASE; ifnull → COALESCE; NOT IN / NOT LIKE →
 * NOT(...). What the binder leaves to the backends: checked arithmetic,
 * three-valued logic, division by zero → NULL, string functions.
 */
#include <stdlib.h>

#include "bind.h"
#include "runtime/sqlite/sqlsrc.h"

typedef enum cls { CL_NULL, CL_INT, CL_F64, CL_STR } cls;

static cls classof(rt_type t) {
  return t == RT_NULLT ? CL_NULL : t == RT_F64 ? CL_F64 : t == RT_STR ? CL_STR : CL_INT;
}

static ir_expr *mk(ir_binder *b, ir_exkind k, rt_type t, bool nullable, int pos, int nargs) {
  ir_expr *e = ir_alloc(b, sizeof *e);
  e->kind = k;
  e->type = t;
  e->nullable = nullable;
  e->pos = pos;
  e->col = -1;
  e->nargs = nargs;
  if (nargs > 0) e->args = ir_alloc(b, sizeof(ir_expr *) * (size_t)nargs);
  return e;
}

ir_expr *ir_ex_new(ir_binder *b, ir_exkind k, rt_type t, bool nullable, int pos, int nargs) {
  return mk(b, k, t, nullable, pos, nargs);
}

static ir_expr *mk1(ir_binder *b, ir_exkind k, rt_type t, ir_expr *a, int pos) {
  ir_expr *e = mk(b, k, t, a->nullable, pos, 1);
  e->args[0] = a;
  return e;
}

static ir_expr *mk2(ir_binder *b, ir_exkind k, rt_type t, ir_expr *a, ir_expr *c, int pos) {
  ir_expr *e = mk(b, k, t, a->nullable || c->nullable, pos, 2);
  e->args[0] = a;
  e->args[1] = c;
  return e;
}

ir_expr *ir_ex_const_null(ir_binder *b, rt_type t, int pos) {
  ir_expr *e = mk(b, IX_CONST, t, true, pos, 0);
  e->is_null = true;
  return e;
}

/* A bare (untyped) NULL. */
static ir_expr *bare_null(ir_binder *b, int pos) { return ir_ex_const_null(b, RT_NULLT, pos); }

static ir_expr *const_int(ir_binder *b, int64_t v, rt_type t, int pos) {
  ir_expr *e = mk(b, IX_CONST, t, false, pos, 0);
  e->ival = v;
  return e;
}

static ir_expr *const_f64(ir_binder *b, double v, int pos) {
  ir_expr *e = mk(b, IX_CONST, RT_F64, false, pos, 0);
  e->fval = v;
  return e;
}

ir_expr *ir_ex_col(ir_binder *b, int col, int pos) {
  ir_expr *e = mk(b, IX_COL, b->p->cols[col].type, b->p->cols[col].nullable, pos, 0);
  e->col = col;
  return e;
}

ir_expr *ir_ex_settle(ir_binder *b, ir_expr *e, rt_type t) {
  if (e->open_type && t != RT_NULLT) ir_subq_adopt_type(b, e, t == RT_BOOL ? RT_I64 : t);
  if (e->type != RT_NULLT) return e;
  return ir_ex_const_null(b, t == RT_NULLT ? RT_I64 : t, e->pos);
}

/* int → double, folding constants. */
static ir_expr *to_f64(ir_binder *b, ir_expr *e) {
  if (classof(e->type) != CL_INT) return e;
  if (e->kind == IX_CONST) {
    ir_expr *c = e->is_null ? ir_ex_const_null(b, RT_F64, e->pos) : const_f64(b, (double)e->ival, e->pos);
    return c;
  }
  return mk1(b, IX_TOF64, RT_F64, e, e->pos);
}

/* An integer every value of which a double holds exactly: narrow storage
 * (ids, 32-bit ints, booleans) or a constant within ±2^53. Comparing it
 * as a double is exact, and cheaper than the mixed comparison. */
static bool exact_in_f64(const ir_expr *e) {
  if (classof(e->type) != CL_INT) return false;
  if (e->kind == IX_CONST) return e->is_null || (e->ival >= -(INT64_C(1) << 53) && e->ival <= (INT64_C(1) << 53));
  return e->type == RT_U32 || e->type == RT_I32 || e->type == RT_ID || e->type == RT_BOOL;
}

/* Makes `*e` comparable with `other` (numbers of which at least one is a
 * double) without losing exactness: an exact integer becomes a double, a
 * double constant with an integral value in int64 range becomes that
 * integer; otherwise the integer stays an integer and the backends compare
 * the mixed pair by value (9007199254740993 > 9007199254740992.0, which a
 * comparison through doubles gets wrong). */
static ir_expr *cmp_operand(ir_binder *b, ir_expr *e, const ir_expr *other) {
  cls c = classof(e->type), o = classof(other->type);
  if (c == o) return e;
  if (c == CL_INT) return exact_in_f64(e) ? to_f64(b, e) : e;
  if (c == CL_F64 && o == CL_INT && e->kind == IX_CONST && !e->is_null &&
      e->fval >= -9223372036854775808.0 && e->fval < 9223372036854775808.0 &&
      e->fval == (double)(int64_t)e->fval)
    return const_int(b, (int64_t)e->fval, RT_I64, e->pos);
  return e;
}

/* Both operands of a comparison of numbers with a double among them: an
 * integral double constant becomes an integer first (an integer
 * comparison), else an exact integer becomes a double. */
static void cmp_operands(ir_binder *b, ir_expr **x, ir_expr **y) {
  if (classof((*x)->type) == classof((*y)->type)) return;
  ir_expr **ip = classof((*x)->type) == CL_INT ? x : y, **fp = ip == x ? y : x;
  ir_expr *f = cmp_operand(b, *fp, *ip);
  if (f != *fp) *fp = f;
  else *ip = cmp_operand(b, *ip, *fp);
}

/* Common type of a list of values: strings, doubles (ints widen), BOOL
 * when all are booleans, else I64; all NULL gives RT_NULLT. Returns 0 when
 * strings mix with numbers. */
static int common_type(ir_expr **v, int n, rt_type *out) {
  bool any = false, str = false, num = false, dbl = false, allbool = true;
  /* a scalar subquery of no known type takes the others' (ir_ex_settle) */
  bool skip_open = false;
  for (int i = 0; i < n && !skip_open; i++) skip_open = !v[i]->open_type && v[i]->type != RT_NULLT;
  for (int i = 0; i < n; i++) {
    cls c = classof(v[i]->type);
    if (c == CL_NULL || (skip_open && v[i]->open_type)) continue;
    any = true;
    if (c == CL_STR) {
      str = true;
      continue;
    }
    num = true;
    dbl |= c == CL_F64;
    allbool &= v[i]->type == RT_BOOL;
  }
  if (str && num) return 0;
  *out = !any ? RT_NULLT : str ? RT_STR : dbl ? RT_F64 : allbool ? RT_BOOL : RT_I64;
  return 1;
}

static void coerce_all(ir_binder *b, ir_expr **v, int n, rt_type t) {
  for (int i = 0; i < n; i++) {
    v[i] = ir_ex_settle(b, v[i], t);
    if (t == RT_F64) v[i] = to_f64(b, v[i]);
  }
}

int ir_common_values(ir_binder *b, ir_expr **v, int n, rt_type *t) {
  if (!common_type(v, n, t)) return 0;
  coerce_all(b, v, n, *t);
  return 1;
}

/* A number or NULL made into a string for `||`, LIKE and string functions. */
static ir_expr *to_str(ir_binder *b, ir_expr *e) {
  switch (classof(e->type)) {
  case CL_STR: return e;
  case CL_NULL: return ir_ex_const_null(b, RT_STR, e->pos);
  default: return mk1(b, IX_TOSTR, RT_STR, e, e->pos);
  }
}

ir_expr *ir_ex_to_str(ir_binder *b, ir_expr *e) { return to_str(b, e); }

/* A number made into an integer (SQLite casts doubles for bit operators,
 * % and substr positions). Strings are an error: 0 is returned. */
static ir_expr *to_int(ir_binder *b, ir_expr *e, const char *what) {
  switch (classof(e->type)) {
  case CL_INT: return e;
  case CL_NULL: return ir_ex_const_null(b, RT_I64, e->pos);
  case CL_F64: return mk1(b, IX_TOINT, RT_I64, e, e->pos);
  default: ir_fail(b, e->pos, "expected a number for %s, but got a string", what); return NULL;
  }
}

ir_expr *ir_ex_to_int(ir_binder *b, ir_expr *e, const char *what) { return to_int(b, e, what); }

static ir_expr *as_bool(ir_binder *b, ir_expr *e) {
  switch (classof(e->type)) {
  case CL_NULL: return ir_ex_const_null(b, RT_BOOL, e->pos);
  case CL_STR: ir_fail(b, e->pos, "expected a condition, but got a string"); return NULL;
  case CL_F64: return mk2(b, IX_NE, RT_BOOL, e, const_f64(b, 0, e->pos), e->pos);
  default:
    if (e->type == RT_BOOL) return e;
    return mk2(b, IX_NE, RT_BOOL, e, const_int(b, 0, RT_I64, e->pos), e->pos);
  }
}

/* ---- operators ---------------------------------------------------------- */

/* A parameter with no bound value takes the type of what it is compared
 * with (`name = ?` is a string comparison), so a handle compiles before its
 * values are bound. Every use of the parameter shares one type. */
static void adopt_param_type(ir_binder *b, ir_expr *e, const ir_expr *other) {
  if (other->type == RT_NULLT) return;
  rt_type t = classof(other->type) == CL_STR ? RT_STR : other->type == RT_F64 ? RT_F64 : RT_I64;
  /* a scalar subquery of no known type, likewise (bind_subq.c) */
  if (e->kind == IX_CALLOUT) ir_subq_adopt_type(b, e, t);
  if (e->kind != IX_PARAM) return;
  ir_param *pp = &b->p->params[e->param - 1];
  if (!pp->inferred) return;
  pp->type = t;
  pp->inferred = false;
  e->type = t;
}

/* a <k> c compared under collation co (bind_text.c) when both are strings. */
static ir_expr *bind_cmp(ir_binder *b, ir_exkind k, ir_expr *a, ir_expr *c, int pos, int oppos,
                         ir_coll co) {
  bool is = k == IX_IS || k == IX_ISNOT;
  adopt_param_type(b, a, c);
  adopt_param_type(b, c, a);
  if (a->type == RT_NULLT || c->type == RT_NULLT) {
    if (!is) return bare_null(b, pos); /* x = NULL is NULL */
    if (a->type == RT_NULLT && c->type == RT_NULLT)
      return const_int(b, k == IX_IS, RT_BOOL, pos);
    ir_expr *x = a->type == RT_NULLT ? c : a;
    ir_expr *e = mk1(b, k == IX_IS ? IX_ISNULL : IX_NOTNULL, RT_BOOL, x, pos);
    e->nullable = false;
    return e;
  }
  ir_expr *v[2] = {a, c};
  rt_type t;
  if (!common_type(v, 2, &t)) {
    ir_fail(b, oppos, "cannot compare a string with a number");
    return NULL;
  }
  if (t == RT_F64) cmp_operands(b, &v[0], &v[1]);
  else coerce_all(b, v, 2, t);
  v[0] = ir_collate(b, v[0], co);
  v[1] = ir_collate(b, v[1], co);
  ir_expr *e = mk2(b, k, RT_BOOL, v[0], v[1], pos);
  if (is) e->nullable = false;
  return e;
}

static ir_expr *bind_arith(ir_binder *b, ir_exkind k, const char *op, ir_expr *a, ir_expr *c,
                           int pos, int oppos) {
  if (classof(a->type) == CL_STR || classof(c->type) == CL_STR) {
    if (k == IX_ADD)
      ir_fail(b, oppos, "cannot add strings with '+': use || to concatenate");
    else
      ir_fail(b, oppos, "expected numbers around '%s', but got a string", op);
    return NULL;
  }
  bool dbl = a->type == RT_F64 || c->type == RT_F64;
  rt_type t = dbl ? RT_F64 : RT_I64;
  if (a->type == RT_NULLT || c->type == RT_NULLT) return bare_null(b, pos);
  ir_expr *e;
  if (k == IX_MOD && dbl) {
    /* SQLite's % works on integers and gives a real when an operand was
     * real: 5.5 % 2 = 1.0. Lower exactly that. */
    ir_expr *m = mk2(b, IX_MOD, RT_I64, to_int(b, a, "%"), to_int(b, c, "%"), pos);
    m->nullable = true;
    e = mk1(b, IX_TOF64, RT_F64, m, pos);
  } else {
    e = mk2(b, k, t, dbl ? to_f64(b, a) : a, dbl ? to_f64(b, c) : c, pos);
  }
  if (k == IX_DIV || k == IX_MOD) e->nullable = true; /* division by zero */
  return e;
}

static ir_expr *bind_bits(ir_binder *b, ir_exkind k, const char *op, ir_expr *a, ir_expr *c,
                          int pos) {
  if (a->type == RT_NULLT || c->type == RT_NULLT) return bare_null(b, pos);
  a = to_int(b, a, op);
  c = a ? to_int(b, c, op) : NULL;
  if (!c) return NULL;
  return mk2(b, k, RT_I64, a, c, pos);
}

static ir_expr *bind_concat(ir_binder *b, ir_expr *a, ir_expr *c, int pos) {
  if (a->type == RT_NULLT || c->type == RT_NULLT) return bare_null(b, pos);
  return mk2(b, IX_CONCAT, RT_STR, to_str(b, a), to_str(b, c), pos);
}

static ir_expr *negate(ir_binder *b, ir_expr *e, int pos) {
  if (e->type == RT_NULLT) return e;   /* NOT NULL is NULL */
  ir_expr *n = mk1(b, IX_NOT, RT_BOOL, e, pos);
  return n;
}

/* fe_op and ir_exkind are the same list (ast.h). */
_Static_assert((int)FO_CALLOUT == (int)IX_CALLOUT && (int)FO_PLUS == (int)IX__COUNT,
               "fe_op and ir_exkind are expanded from exprs.def alike");

static ir_expr *bind_binary(ir_binder *b, const fe_expr *x) {
  ir_exkind k = (ir_exkind)x->op;
  const char *op = x->op == FO_PLUS ? "+" : ir_ex_names[k];
  ir_expr *a = ir_bind_expr(b, x->args[0]);
  if (!a) return NULL;
  ir_expr *c = ir_bind_expr(b, x->args[1]);
  if (!c) return NULL;
  int pos = x->pos, oppos = x->oppos;
  switch (x->op) {
  case FO_AND:
  case FO_OR:
    a = as_bool(b, a);
    c = a ? as_bool(b, c) : NULL;
    if (!c) return NULL;
    return mk2(b, k, RT_BOOL, a, c, pos);
  case FO_EQ: case FO_NE: case FO_LT: case FO_LE: case FO_GT: case FO_GE: case FO_IS:
  case FO_ISNOT:
    return bind_cmp(b, k, a, c, pos, oppos, ir_cmp_collation(x->args[0], x->args[1]));
  case FO_ADD: case FO_SUB: case FO_MUL: case FO_DIV: case FO_MOD:
    return bind_arith(b, k, op, a, c, pos, oppos);
  case FO_BITAND: case FO_BITOR: case FO_SHL: case FO_SHR: return bind_bits(b, k, op, a, c, pos);
  case FO_CONCAT: return bind_concat(b, a, c, pos);
  case FO_LIKE:
  case FO_GLOB:
    return ir_bind_like(b, x->op == FO_GLOB, x->negated, a, c, x->nargs > 2 ? x->args[2] : NULL, pos);
  case FO_CONST: case FO_COL: case FO_PARAM: case FO_TOF64: case FO_NEG: case FO_BITNOT:
  case FO_NOT: case FO_ISNULL: case FO_NOTNULL: case FO_IN: case FO_CASE: case FO_COALESCE:
  case FO_NULLIF: case FO_MIN: case FO_MAX: case FO_ABS: case FO_TOINT: case FO_TOSTR:
  case FO_STRTOF64: case FO_LENGTH: case FO_LOWER: case FO_UPPER: case FO_SUBSTR: case FO_INSTR:
  case FO_TRIM: case FO_LTRIM: case FO_RTRIM: case FO_ROUND: case FO_SIGN: case FO_REPLACE:
  case FO_HEX: case FO_UNICODE: case FO_CHAR: case FO_PRINTF: case FO_CALLOUT: case FO_PLUS:
    break;   /* not a binary operator */
  }
  ir_fail(b, oppos, "unknown operator '%s'", op);
  return NULL;
}

static ir_expr *bind_unary(ir_binder *b, const fe_expr *x) {
  ir_expr *a = ir_bind_expr(b, x->args[0]);
  if (!a) return NULL;
  switch (x->op) {
  case FO_NOT:
    a = as_bool(b, a);
    return a ? mk1(b, IX_NOT, RT_BOOL, a, x->pos) : NULL;
  case FO_PLUS:
    if (classof(a->type) == CL_STR) {
      ir_fail(b, x->oppos, "expected a number after '+', but got a string");
      return NULL;
    }
    return a;
  case FO_NEG:
    switch (classof(a->type)) {
    case CL_NULL: return bare_null(b, x->pos);
    case CL_STR: ir_fail(b, x->oppos, "expected a number after '-', but got a string"); return NULL;
    case CL_F64:
      if (a->kind == IX_CONST && !a->is_null) return const_f64(b, -a->fval, x->pos);
      return mk1(b, IX_NEG, RT_F64, a, x->pos);
    default:
      /* Fold -literal (so LIMIT -1 stays a constant); INT64_MIN would
       * overflow and is left to the checked NEG. */
      if (a->kind == IX_CONST && !a->is_null && a->ival != INT64_MIN)
        return const_int(b, -a->ival, RT_I64, x->pos);
      return mk1(b, IX_NEG, RT_I64, a, x->pos);
    }
  case FO_BITNOT:
    if (a->type == RT_NULLT) return bare_null(b, x->pos);
    a = to_int(b, a, "~");
    return a ? mk1(b, IX_BITNOT, RT_I64, a, x->pos) : NULL;
  case FO_CONST: case FO_COL: case FO_PARAM: case FO_TOF64: case FO_ADD: case FO_SUB:
  case FO_MUL: case FO_DIV: case FO_MOD: case FO_BITAND: case FO_BITOR: case FO_SHL: case FO_SHR:
  case FO_CONCAT: case FO_EQ: case FO_NE: case FO_LT: case FO_LE: case FO_GT: case FO_GE:
  case FO_IS: case FO_ISNOT: case FO_AND: case FO_OR: case FO_ISNULL: case FO_NOTNULL: case FO_IN:
  case FO_LIKE: case FO_GLOB: case FO_CASE: case FO_COALESCE: case FO_NULLIF: case FO_MIN:
  case FO_MAX: case FO_ABS: case FO_TOINT: case FO_TOSTR: case FO_STRTOF64: case FO_LENGTH:
  case FO_LOWER: case FO_UPPER: case FO_SUBSTR: case FO_INSTR: case FO_TRIM: case FO_LTRIM:
  case FO_RTRIM: case FO_ROUND: case FO_SIGN: case FO_REPLACE: case FO_HEX: case FO_UNICODE:
  case FO_CHAR: case FO_PRINTF: case FO_CALLOUT:
    break;   /* not a unary operator */
  }
  ir_fail(b, x->oppos, "unknown operator");
  return NULL;
}

/* Binds args[from..n) into v and settles them on a common type. */
static int bind_values(ir_binder *b, fe_expr *const *args, int n, ir_expr **v, rt_type *t,
                       int pos, const char *mixmsg) {
  for (int i = 0; i < n; i++)
    if (!(v[i] = ir_bind_expr(b, args[i]))) return 0;
  if (!common_type(v, n, t)) return ir_fail(b, pos, "%s", mixmsg);
  coerce_all(b, v, n, *t);
  return 1;
}

static ir_expr *bind_in(ir_binder *b, const fe_expr *x) {
  int n = x->nargs;
  ir_expr **v = ir_alloc(b, sizeof(ir_expr *) * (size_t)n);
  rt_type t;
  for (int i = 0; i < n; i++)
    if (!(v[i] = ir_bind_expr(b, x->args[i]))) return NULL;
  /* `x IN ()` is false and `x NOT IN ()` true, even for a NULL x, as in
   * SQLite. */
  if (n == 1) return const_int(b, x->negated, RT_BOOL, x->pos);
  if (!common_type(v, n, &t)) {
    ir_fail(b, x->pos, "cannot compare a string with a number");
    return NULL;
  }
  if (t == RT_F64) {
    /* Each item meets the left side exactly, as in bind_cmp; the left side
     * settles first so that an integer list against an integer stays
     * integral. */
    for (int i = 0; i < n; i++) v[i] = ir_ex_settle(b, v[i], RT_F64);
    if (exact_in_f64(v[0])) v[0] = to_f64(b, v[0]);
    for (int i = 1; i < n; i++) v[i] = cmp_operand(b, v[i], v[0]);
  } else {
    coerce_all(b, v, n, t);
    ir_coll co = ir_in_collation(x);
    for (int i = 0; i < n; i++) v[i] = ir_collate(b, v[i], co);
  }
  ir_expr *e;
  if (v[0]->kind == IX_CONST && v[0]->is_null) {
    e = bare_null(b, x->pos);
  } else {
    e = mk(b, IX_IN, RT_BOOL, false, x->pos, n);
    for (int i = 0; i < n; i++) {
      e->args[i] = v[i];
      e->nullable |= v[i]->nullable;
    }
  }
  return x->negated ? negate(b, e, x->pos) : e;
}

static ir_expr *bind_between(ir_binder *b, const fe_expr *x) {
  /* x is bound once and shared by both comparisons, so a parameter in it
   * is numbered once. */
  ir_expr *v = ir_bind_expr(b, x->args[0]);
  ir_expr *lo = v ? ir_bind_expr(b, x->args[1]) : NULL;
  ir_expr *hi = lo ? ir_bind_expr(b, x->args[2]) : NULL;
  if (!hi) return NULL;
  ir_expr *ge = bind_cmp(b, IX_GE, v, lo, x->pos, x->args[1]->pos,
                         ir_cmp_collation(x->args[0], x->args[1]));
  ir_expr *le = ge ? bind_cmp(b, IX_LE, v, hi, x->pos, x->args[2]->pos,
                              ir_cmp_collation(x->args[0], x->args[2]))
                   : NULL;
  if (!le) return NULL;
  /* a comparison with a NULL bound is a bare NULL: AND needs booleans */
  ir_expr *e = mk2(b, IX_AND, RT_BOOL, as_bool(b, ge), as_bool(b, le), x->pos);
  return x->negated ? negate(b, e, x->pos) : e;
}

static ir_expr *bind_case(ir_binder *b, const fe_expr *x) {
  int n = x->nwhens;
  ir_expr *opnd = NULL;
  if (x->operand && !(opnd = ir_bind_expr(b, x->operand))) return NULL;
  ir_expr **conds = ir_alloc(b, sizeof(ir_expr *) * (size_t)n);
  ir_expr **vals = ir_alloc(b, sizeof(ir_expr *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    ir_expr *w = ir_bind_expr(b, x->whens[i]);
    if (!w) return NULL;
    conds[i] = opnd ? bind_cmp(b, IX_EQ, opnd, w, x->whens[i]->pos, x->whens[i]->pos,
                               ir_cmp_collation(x->operand, x->whens[i]))
                    : w;
    if (conds[i]) conds[i] = as_bool(b, conds[i]);   /* CASE NULL WHEN …: a NULL condition */
    if (!conds[i]) return NULL;
    if (!(vals[i] = ir_bind_expr(b, x->thens[i]))) return NULL;
  }
  int nv = n;
  if (x->els && !(vals[nv++] = ir_bind_expr(b, x->els))) return NULL;
  rt_type t;
  if (!common_type(vals, nv, &t)) {
    ir_fail(b, x->pos, "expected every branch of CASE to have the same type, but some are "
                       "strings and some numbers");
    return NULL;
  }
  /* Every result NULL: the CASE is a bare NULL (its conditions cannot
   * change that). */
  if (t == RT_NULLT) return bare_null(b, x->pos);
  coerce_all(b, vals, nv, t);
  ir_expr *e = mk(b, IX_CASE, t, !x->els, x->pos, 2 * n + 1);
  for (int i = 0; i < n; i++) {
    e->args[2 * i] = conds[i];
    e->args[2 * i + 1] = vals[i];
    e->nullable |= vals[i]->nullable;
  }
  e->args[2 * n] = x->els ? vals[n] : ir_ex_const_null(b, t, x->pos);
  e->nullable |= e->args[2 * n]->nullable;
  return e;
}

static ir_expr *bind_cast(ir_binder *b, const fe_expr *x) {
  ir_expr *a = ir_bind_expr(b, x->args[0]);
  if (!a) return NULL;
  const char *tn = x->str ? x->str : "";
  cls c = classof(a->type);
  /* By SQLite's affinity rules (rt_sql_decl_type), so `VARCHAR(10)` is
   * text and `BIGINT` an integer; STRING is text too, as Perfetto writes
   * it. */
  rt_type kind = rt_sql_decl_type(tn);
  if (kind == RT_I64) {
    if (c == CL_NULL) return ir_ex_const_null(b, RT_I64, x->pos);
    if (c == CL_INT) return a;
    return mk1(b, IX_TOINT, RT_I64, a, x->pos);
  }
  if (kind == RT_F64) {
    if (c == CL_NULL) return ir_ex_const_null(b, RT_F64, x->pos);
    if (c == CL_F64) return a;
    if (c == CL_STR) return mk1(b, IX_STRTOF64, RT_F64, a, x->pos);
    return to_f64(b, a);
  }
  if (kind == RT_STR) return to_str(b, a);
  ir_fail(b, x->pos, "cannot cast to '%s': expected INTEGER, REAL or TEXT", tn);
  return NULL;
}

/* ---- functions ---------------------------------------------------------- */

bool ir_is_agg_name(const char *name, int nargs) {
  /* min/max with one argument aggregate; with two or more they are the
   * scalar functions, as in SQLite. */
  if ((ir_name_eq(name, "min") || ir_name_eq(name, "max")) && nargs > 1) return false;
  for (int k = 0; k < IR_NAGGS; k++)
    if (ir_name_eq(name, ir_aggs[k].sql)) return true;   /* aggs.def */
  return false;
}

int ir_arity(ir_binder *b, const fe_expr *x, int lo, int hi) {
  int n = x->nargs;
  if (n >= lo && (hi < 0 || n <= hi)) return 1;
  if (hi < 0) return ir_fail(b, x->pos, "expected at least %d arguments to %s(), but got %d", lo, x->str, n);
  if (lo == hi) return ir_fail(b, x->pos, "expected %d argument%s to %s(), but got %d", lo, lo == 1 ? "" : "s", x->str, n);
  return ir_fail(b, x->pos, "expected %d to %d arguments to %s(), but got %d", lo, hi, x->str, n);
}

static ir_expr *bind_varargs(ir_binder *b, const fe_expr *x, ir_exkind k, const char *mixmsg) {
  int n = x->nargs;
  ir_expr *e = mk(b, k, RT_I64, false, x->pos, n);
  rt_type t;
  if (!bind_values(b, x->args, n, e->args, &t, x->pos, mixmsg)) return NULL;
  if (t == RT_NULLT) return bare_null(b, x->pos); /* every argument is NULL */
  e->type = t;
  for (int i = 0; i < n; i++) {
    /* COALESCE is NULL only when every argument can be; MIN/MAX when any. */
    if (k == IX_COALESCE) e->nullable = i ? e->nullable && e->args[i]->nullable : e->args[i]->nullable;
    else e->nullable |= e->args[i]->nullable;
  }
  return e;
}

/* Binds string-function arguments: strs first ones as strings, then ints. */
static ir_expr *bind_strfn(ir_binder *b, const fe_expr *x, ir_exkind k, rt_type t, int nstr) {
  ir_expr *e = mk(b, k, t, false, x->pos, x->nargs);
  bool null_arg = false;
  for (int i = 0; i < x->nargs; i++) {
    ir_expr *a = ir_bind_expr(b, x->args[i]);
    if (!a) return NULL;
    null_arg |= a->type == RT_NULLT;
    a = i < nstr ? to_str(b, a) : to_int(b, a, x->str);
    if (!a) return NULL;
    e->args[i] = a;
    e->nullable |= a->nullable;
  }
  /* Every string function gives NULL for a NULL argument. */
  return null_arg ? bare_null(b, x->pos) : e;
}

static ir_expr *bind_call(ir_binder *b, const fe_expr *x) {
  const char *f = x->str;
  if (x->over) return ir_bind_window_ref(b, x);   /* bind_window.c bound it */
  if (ir_is_agg_name(f, x->nargs)) {
    if (b->agg_msg) ir_fail(b, x->pos, "%s", b->agg_msg);
    else ir_fail(b, x->pos, "an aggregate belongs in AGGREGATE, not %s", b->stage);
    return NULL;
  }
  if (x->distinct) {
    ir_fail(b, x->pos, "DISTINCT is only allowed in aggregates");
    return NULL;
  }
  if (x->star) {
    ir_fail(b, x->pos, "expected arguments to %s(), not *", f);
    return NULL;
  }
  if (ir_name_eq(f, "abs")) {
    if (!ir_arity(b, x, 1, 1)) return NULL;
    ir_expr *a = ir_bind_expr(b, x->args[0]);
    if (!a) return NULL;
    switch (classof(a->type)) {
    case CL_NULL: return bare_null(b, x->pos);
    case CL_STR: ir_fail(b, x->args[0]->pos, "expected a number for abs(), but got a string"); return NULL;
    case CL_F64: return mk1(b, IX_ABS, RT_F64, a, x->pos);
    default: return mk1(b, IX_ABS, RT_I64, a, x->pos);
    }
  }
  if (ir_name_eq(f, "coalesce") || ir_name_eq(f, "ifnull")) {
    bool ifn = ir_name_eq(f, "ifnull");
    if (!ir_arity(b, x, 2, ifn ? 2 : -1)) return NULL;
    return bind_varargs(b, x, IX_COALESCE,
                        "expected every argument to have the same type, but some are strings "
                        "and some numbers");
  }
  if (ir_name_eq(f, "min") || ir_name_eq(f, "max")) {
    ir_expr *e = bind_varargs(b, x, ir_name_eq(f, "min") ? IX_MIN : IX_MAX,
                              "cannot compare a string with a number");
    return e && ir_refuse_collation(b, x, e, "min() and max()") ? e : NULL;
  }
  if (ir_name_eq(f, "like") || ir_name_eq(f, "glob")) {
    /* like(pattern, x [, escape]) is x LIKE pattern ESCAPE escape. */
    bool glob = ir_name_eq(f, "glob");
    if (!ir_arity(b, x, 2, glob ? 2 : 3)) return NULL;
    ir_expr *pat = ir_bind_expr(b, x->args[0]);
    ir_expr *s = pat ? ir_bind_expr(b, x->args[1]) : NULL;
    if (!s) return NULL;
    return ir_bind_like(b, glob, false, s, pat, x->nargs > 2 ? x->args[2] : NULL, x->pos);
  }
  if (ir_name_eq(f, "nullif")) {
    if (!ir_arity(b, x, 2, 2)) return NULL;
    ir_expr *v[2];
    rt_type t;
    for (int i = 0; i < 2; i++)
      if (!(v[i] = ir_bind_expr(b, x->args[i]))) return NULL;
    if (!common_type(v, 2, &t)) {
      ir_fail(b, x->pos, "cannot compare a string with a number");
      return NULL;
    }
    ir_expr *p = v[0], *q = v[1];
    if (t == RT_F64 && p->type != RT_NULLT && q->type != RT_NULLT &&
        classof(p->type) != classof(q->type)) {
      /* An integer against a double compares by value (cmp_operands). */
      cmp_operands(b, &p, &q);
      if (classof(p->type) != classof(q->type)) {
        /* Still mixed: nullif(a, b) is CASE WHEN a = b THEN NULL ELSE a
         * END, with a as a double (the node's type). */
        ir_expr *e = mk(b, IX_CASE, RT_F64, true, x->pos, 3);
        e->args[0] = mk2(b, IX_EQ, RT_BOOL, p, q, x->pos);
        e->args[1] = ir_ex_const_null(b, RT_F64, x->pos);
        e->args[2] = to_f64(b, v[0]);
        return e;
      }
      /* Now of one kind, p holding a's value exactly: the result is p's,
       * as a double. */
      ir_expr *e = mk(b, IX_NULLIF, classof(p->type) == CL_INT ? RT_I64 : RT_F64, true, x->pos, 2);
      e->args[0] = p;
      e->args[1] = q;
      return to_f64(b, e);
    }
    coerce_all(b, v, 2, t);
    if (t == RT_STR && !ir_refuse_collation(b, x, v[0], "nullif()")) return NULL;
    ir_expr *e = mk(b, IX_NULLIF, t, true, x->pos, 2);
    e->args[0] = v[0];
    e->args[1] = v[1];
    return e;
  }
  if (ir_name_eq(f, "iif")) {
    if (!ir_arity(b, x, 3, 3)) return NULL;
    ir_expr *c = ir_bind_expr(b, x->args[0]);
    if (!c || !(c = as_bool(b, c))) return NULL;
    ir_expr *v[2];
    rt_type t;
    if (!bind_values(b, x->args + 1, 2, v, &t, x->pos,
                     "expected both results of iif() to have the same type, but one is a "
                     "string and the other a number"))
      return NULL;
    if (t == RT_NULLT) return bare_null(b, x->pos);
    ir_expr *e = mk(b, IX_CASE, t, v[0]->nullable || v[1]->nullable, x->pos, 3);
    e->args[0] = c;
    e->args[1] = v[0];
    e->args[2] = v[1];
    return e;
  }
  if (ir_name_eq(f, "length")) return ir_arity(b, x, 1, 1) ? bind_strfn(b, x, IX_LENGTH, RT_I64, 1) : NULL;
  if (ir_name_eq(f, "lower")) return ir_arity(b, x, 1, 1) ? bind_strfn(b, x, IX_LOWER, RT_STR, 1) : NULL;
  if (ir_name_eq(f, "upper")) return ir_arity(b, x, 1, 1) ? bind_strfn(b, x, IX_UPPER, RT_STR, 1) : NULL;
  if (ir_name_eq(f, "substr") || ir_name_eq(f, "substring"))
    return ir_arity(b, x, 2, 3) ? bind_strfn(b, x, IX_SUBSTR, RT_STR, 1) : NULL;
  if (ir_name_eq(f, "instr")) return ir_arity(b, x, 2, 2) ? bind_strfn(b, x, IX_INSTR, RT_I64, 2) : NULL;
  if (ir_name_eq(f, "trim")) return ir_arity(b, x, 1, 2) ? bind_strfn(b, x, IX_TRIM, RT_STR, 2) : NULL;
  if (ir_name_eq(f, "ltrim")) return ir_arity(b, x, 1, 2) ? bind_strfn(b, x, IX_LTRIM, RT_STR, 2) : NULL;
  if (ir_name_eq(f, "rtrim")) return ir_arity(b, x, 1, 2) ? bind_strfn(b, x, IX_RTRIM, RT_STR, 2) : NULL;
  /* the engine's: PerfettoSQL functions, EXTRACT_ARG, trace_start() … */
  ir_expr *c = ir_bind_callout(b, x);
  if (c || b->err->set) return c;
  bool known = false;
  ir_expr *e = ir_bind_sqlfn(b, x, &known);
  if (known) return e;
  if (ir_is_window_name(f))
    ir_fail(b, x->pos, "%s() is a window function: expected OVER (…) after it", f);
  else
    ir_fail(b, x->pos, "no such function: '%s'", f);
  return NULL;
}

/* ---- leaves ------------------------------------------------------------- */

/* Parameters are numbered as SQLite does: `?` takes one more than the
 * largest number so far, `?N` is N, a name keeps the number of its first
 * appearance. */
static ir_expr *bind_param(ir_binder *b, const fe_expr *x) {
  ir_plan *p = b->p;
  const char *s = x->str;
  int idx = 0;
  /* `$arg` in an inlined function body is the argument's value */
  ir_expr *arg = b->scope ? ir_scope_arg(b, s, x->pos) : NULL;
  if (arg) return arg;
  if (s[0] == '?' && s[1]) {
    char *end;
    long v = strtol(s + 1, &end, 10);
    if (*end || v < 1 || v > 32766) {
      ir_fail(b, x->pos, "parameter number out of range: '%s'", s);
      return NULL;
    }
    idx = (int)v;
  } else if (s[0] != '?') {
    for (int i = 0; i < p->nparams; i++)
      if (p->params[i].name && !strcmp(p->params[i].name, s)) idx = i + 1;
  }
  if (!idx) idx = p->nparams + 1;
  if (idx > b->capparams) {
    int cap = idx > b->capparams * 2 ? idx : b->capparams * 2;
    ir_param *np = ir_alloc(b, sizeof(ir_param) * (size_t)cap);
    if (p->nparams) memcpy(np, p->params, sizeof(ir_param) * (size_t)p->nparams);
    p->params = np;
    b->capparams = cap;
  }
  rt_type t = RT_I64;
  bool inferred = true;
  if (b->env && idx <= b->env->nparam_types && b->env->param_types) {
    rt_type bt = b->env->param_types[idx - 1];
    t = bt == RT_F64 ? RT_F64 : bt == RT_STR ? RT_STR : RT_I64;
    inferred = bt == RT_NULLT;
  }
  for (int i = p->nparams; i < idx; i++) p->params[i] = (ir_param){NULL, RT_I64, true, -1, NULL};
  if (idx > p->nparams) p->nparams = idx;
  if (s[0] != '?' && !p->params[idx - 1].name)
    p->params[idx - 1].name = ir_strdup(b, s);
  p->params[idx - 1].type = t;
  p->params[idx - 1].inferred = inferred;
  if (p->params[idx - 1].pos < 0) {
    p->params[idx - 1].pos = x->pos;
    p->params[idx - 1].stage = b->stage;
  }
  ir_expr *e = mk(b, IX_PARAM, t, true, x->pos, 0);
  e->param = idx;
  return e;
}

ir_expr *ir_bind_expr(ir_binder *b, const fe_expr *x) {
  switch (x->kind) {
  case AX_INT: return const_int(b, x->ival, RT_I64, x->pos);
  case AX_FLOAT: return const_f64(b, x->fval, x->pos);
  case AX_STRING: {
    ir_expr *e = mk(b, IX_CONST, RT_STR, false, x->pos, 0);
    e->sval = rt_str_intern(b->env->strings, x->str, x->strlen);
    return e;
  }
  case AX_NULL: return ir_ex_const_null(b, RT_NULLT, x->pos);
  case AX_TRUE: return const_int(b, 1, RT_BOOL, x->pos);
  case AX_FALSE: return const_int(b, 0, RT_BOOL, x->pos);
  case AX_PARAM: return bind_param(b, x);
  case AX_COLUMN: {
    int col;
    const char *nm;
    if (!ir_resolve(b, x->qual, x->name, x->pos, x->namepos, &col, &nm)) return NULL;
    if (b->p->cols[col].untyped) return bare_null(b, x->pos);
    return ir_ex_col(b, col, x->pos);
  }
  case AX_UNARY: return bind_unary(b, x);
  case AX_BINARY: return bind_binary(b, x);
  case AX_ISNULL: {
    ir_expr *a = ir_bind_expr(b, x->args[0]);
    if (!a) return NULL;
    if (a->type == RT_NULLT) return const_int(b, !x->negated, RT_BOOL, x->pos);
    ir_expr *e = mk1(b, x->negated ? IX_NOTNULL : IX_ISNULL, RT_BOOL, a, x->pos);
    e->nullable = false;
    return e;
  }
  case AX_IN: return x->sub ? ir_bind_subquery(b, x) : bind_in(b, x);
  case AX_EXISTS: case AX_SUBQUERY: return ir_bind_subquery(b, x);
  case AX_BETWEEN: return bind_between(b, x);
  case AX_CASE: return bind_case(b, x);
  case AX_CAST: return bind_cast(b, x);
  case AX_CALL: return bind_call(b, x);
  case AX_COLLATE:
    /* The collation matters only to the comparison or ORDER BY that reads
     * it (bind_text.c); the value is the operand's. */
    return ir_check_collation(b, x) ? ir_bind_expr(b, x->args[0]) : NULL;
  }
  ir_fail(b, x->pos, "unknown expression");
  return NULL;
}

ir_expr *ir_bind_cond(ir_binder *b, const fe_expr *x) {
  ir_expr *e = ir_bind_expr(b, x);
  return e ? as_bool(b, e) : NULL;
}
