/*
 * bind_sqlfn.c — round, sign, replace, hex, unicode, char, typeof and
 * printf/format (LANGUAGE.md §5: "as SQLite defines them").
 *
 * Each becomes one node of exprs.def computed by runtime/sqlfn.c or
 * printf.c, with the NULL rules SQLite has beyond "a NULL argument gives
 * NULL" lowered here onto nodes both backends already have: hex(NULL) is
 * '' and char(NULL) is char(0) (the argument under a COALESCE),
 * unicode('') is NULL (NULLIF(unicode(x), -1)), replace(x, '', NULL) is
 * x (a CASE on length(y) = 0, the test SQLite makes). typeof is known
 * from the static type, so it is a constant, or a CASE on IS NULL;
 * char(a, b, …) is char(a) || char(b) || ….
 *
 * Like abs(), the number functions (round, sign, char) take numbers: a
 * string argument is a compile-time error, as comparing a string with a
 * number is (§5), where SQLite would read the string as a number.
 */
#include "bind.h"

/* SQLite's SQLITE_MAX_FUNCTION_ARG: printf with more is its error too. */
enum { MAX_FUNCTION_ARGS = 127 };

static ir_expr *str_const(ir_binder *b, const char *s, int pos) {
  ir_expr *e = ir_ex_new(b, IX_CONST, RT_STR, false, pos, 0);
  e->sval = rt_str_intern(b->env->strings, s, strlen(s));
  return e;
}

static ir_expr *int_const(ir_binder *b, int64_t v, int pos) {
  ir_expr *e = ir_ex_new(b, IX_CONST, RT_I64, false, pos, 0);
  e->ival = v;
  return e;
}

static ir_expr *node(ir_binder *b, ir_exkind k, rt_type t, int pos, int n, ir_expr *const *args) {
  ir_expr *e = ir_ex_new(b, k, t, false, pos, n);
  for (int i = 0; i < n; i++) {
    e->args[i] = args[i];
    e->nullable |= args[i]->nullable;
  }
  return e;
}

/* coalesce(e, dflt): e with its NULLs replaced (e itself when never NULL). */
static ir_expr *or_else(ir_binder *b, ir_expr *e, ir_expr *dflt) {
  if (!e->nullable) return e;
  ir_expr *c = ir_ex_new(b, IX_COALESCE, e->type, false, e->pos, 2);
  c->args[0] = e;
  c->args[1] = dflt;
  return c;
}

/* Argument i of x bound as a number: NULL (error set) for a string; a
 * bare NULL stays RT_NULLT for the caller. */
static ir_expr *number_arg(ir_binder *b, const fe_expr *x, int i) {
  ir_expr *a = ir_bind_expr(b, x->args[i]);
  if (a && a->type == RT_STR) {
    ir_fail(b, x->args[i]->pos, "expected a number for argument %d of %s(), but got a string",
            i + 1, x->str);
    return NULL;
  }
  return a;
}

static ir_expr *as_double(ir_binder *b, ir_expr *a) {
  if (a->type == RT_F64) return a;
  if (a->kind == IX_CONST) {
    ir_expr *c = ir_ex_new(b, IX_CONST, RT_F64, false, a->pos, 0);
    c->fval = (double)a->ival;
    return c;
  }
  ir_expr *e = ir_ex_new(b, IX_TOF64, RT_F64, a->nullable, a->pos, 1);
  e->args[0] = a;
  return e;
}

static ir_expr *bind_round(ir_binder *b, const fe_expr *x) {
  if (!ir_arity(b, x, 1, 2)) return NULL;
  ir_expr *v[2];
  bool null = false;
  for (int i = 0; i < x->nargs; i++) {
    if (!(v[i] = number_arg(b, x, i))) return NULL;
    null |= v[i]->type == RT_NULLT;
  }
  if (null) return ir_ex_const_null(b, RT_NULLT, x->pos);
  v[0] = as_double(b, v[0]);
  if (x->nargs == 2 && !(v[1] = ir_ex_to_int(b, v[1], "round()"))) return NULL;
  return node(b, IX_ROUND, RT_F64, x->pos, x->nargs, v);
}

static ir_expr *bind_sign(ir_binder *b, const fe_expr *x) {
  if (!ir_arity(b, x, 1, 1)) return NULL;
  ir_expr *a = number_arg(b, x, 0);
  if (!a) return NULL;
  if (a->type == RT_NULLT) return a;
  a = as_double(b, a);
  return node(b, IX_SIGN, RT_I64, x->pos, 1, &a);
}

/* Argument i as a string (numbers as SQLite makes them text). */
static ir_expr *text_arg(ir_binder *b, const fe_expr *x, int i) {
  ir_expr *a = ir_bind_expr(b, x->args[i]);
  return !a || a->type == RT_NULLT ? a : ir_ex_to_str(b, a);
}

static ir_expr *bind_replace(ir_binder *b, const fe_expr *x) {
  if (!ir_arity(b, x, 3, 3)) return NULL;
  ir_expr *v[3];
  for (int i = 0; i < 3; i++)
    if (!(v[i] = text_arg(b, x, i))) return NULL;
  if (v[0]->type == RT_NULLT || v[1]->type == RT_NULLT) return ir_ex_const_null(b, RT_NULLT, x->pos);
  v[2] = ir_ex_settle(b, v[2], RT_STR);
  ir_expr *r = node(b, IX_REPLACE, RT_STR, x->pos, 3, v);
  if (!v[2]->nullable) return r;
  /* replace(x, y, NULL) is x when y is empty (or starts with a NUL
   * byte): SQLite returns x before it reads z. */
  ir_expr *len = node(b, IX_LENGTH, RT_I64, x->pos, 1, &v[1]);
  ir_expr *eq[2] = {len, int_const(b, 0, x->pos)};
  ir_expr *c = ir_ex_new(b, IX_CASE, RT_STR, true, x->pos, 3);
  c->args[0] = node(b, IX_EQ, RT_BOOL, x->pos, 2, eq);
  c->args[1] = v[0];
  c->args[2] = r;
  return c;
}

static ir_expr *bind_hex(ir_binder *b, const fe_expr *x) {
  if (!ir_arity(b, x, 1, 1)) return NULL;
  ir_expr *a = text_arg(b, x, 0);
  if (!a) return NULL;
  if (a->type == RT_NULLT) return str_const(b, "", x->pos);   /* hex(NULL) = '' */
  a = or_else(b, a, str_const(b, "", x->pos));
  return node(b, IX_HEX, RT_STR, x->pos, 1, &a);
}

static ir_expr *bind_unicode(ir_binder *b, const fe_expr *x) {
  if (!ir_arity(b, x, 1, 1)) return NULL;
  ir_expr *a = text_arg(b, x, 0);
  if (!a || a->type == RT_NULLT) return a;
  ir_expr *n[2] = {node(b, IX_UNICODE, RT_I64, x->pos, 1, &a), int_const(b, -1, x->pos)};
  ir_expr *e = node(b, IX_NULLIF, RT_I64, x->pos, 2, n);
  e->nullable = true;   /* unicode('') is NULL */
  return e;
}

static ir_expr *bind_char(ir_binder *b, const fe_expr *x) {
  ir_expr *out = NULL;
  for (int i = 0; i < x->nargs; i++) {
    ir_expr *a = number_arg(b, x, i);
    if (!a) return NULL;
    /* sqlite3_value_int64: NULL reads as 0, a double truncates */
    a = a->type == RT_NULLT ? int_const(b, 0, a->pos) : ir_ex_to_int(b, a, "char()");
    if (!a) return NULL;
    a = or_else(b, a, int_const(b, 0, a->pos));
    ir_expr *c = node(b, IX_CHAR, RT_STR, x->pos, 1, &a);
    if (out) {
      ir_expr *cat[2] = {out, c};
      c = node(b, IX_CONCAT, RT_STR, x->pos, 2, cat);
    }
    out = c;
  }
  return out ? out : str_const(b, "", x->pos);   /* char() = '' */
}

static ir_expr *bind_typeof(ir_binder *b, const fe_expr *x) {
  if (!ir_arity(b, x, 1, 1)) return NULL;
  ir_expr *a = ir_bind_expr(b, x->args[0]);
  if (!a) return NULL;
  if (a->type == RT_NULLT) return str_const(b, "null", x->pos);
  const char *t = a->type == RT_F64 ? "real" : a->type == RT_STR ? "text" : "integer";
  if (!a->nullable) return str_const(b, t, x->pos);
  ir_expr *e = ir_ex_new(b, IX_CASE, RT_STR, false, x->pos, 3);
  e->args[0] = node(b, IX_ISNULL, RT_BOOL, x->pos, 1, &a);
  e->args[0]->nullable = false;
  e->args[1] = str_const(b, "null", x->pos);
  e->args[2] = str_const(b, t, x->pos);
  return e;
}

static ir_expr *bind_printf(ir_binder *b, const fe_expr *x) {
  if (x->nargs > MAX_FUNCTION_ARGS) {
    ir_fail(b, x->pos, "too many arguments on function %s", x->str);
    return NULL;
  }
  if (x->nargs == 0) return ir_ex_const_null(b, RT_NULLT, x->pos);   /* SQLite: NULL */
  ir_expr *fmt = text_arg(b, x, 0);
  if (!fmt) return NULL;
  ir_expr *e = ir_ex_new(b, IX_PRINTF, RT_STR, true, x->pos, x->nargs);
  e->args[0] = fmt;
  for (int i = 1; i < x->nargs; i++) {
    ir_expr *a = ir_bind_expr(b, x->args[i]);
    if (!a) return NULL;
    e->args[i] = ir_ex_settle(b, a, RT_I64);   /* a bare NULL: any type reads as NULL */
  }
  if (fmt->type == RT_NULLT) return ir_ex_const_null(b, RT_NULLT, x->pos);
  return e;
}

ir_expr *ir_bind_sqlfn(ir_binder *b, const fe_expr *x, bool *known) {
  static const struct {
    const char *name;
    ir_expr *(*bind)(ir_binder *, const fe_expr *);
  } fns[] = {
      {"round", bind_round},     {"sign", bind_sign}, {"replace", bind_replace},
      {"hex", bind_hex},         {"unicode", bind_unicode}, {"char", bind_char},
      {"typeof", bind_typeof},   {"printf", bind_printf}, {"format", bind_printf},
  };
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
    if (ir_name_eq(x->str, fns[i].name)) {
      *known = true;
      return fns[i].bind(b, x);
    }
  *known = false;
  return NULL;
}
