/*
 * bind_text.c — the text rules SQLite users expect (LANGUAGE.md §5):
 * COLLATE BINARY | NOCASE | RTRIM on comparisons and ORDER BY, and
 * LIKE … ESCAPE.
 *
 * Collations are lowered here, so both backends go on comparing bytes:
 * NOCASE compares lower(a) with lower(b) — SQLite's NOCASE folds ASCII A-Z
 * byte by byte before comparing, which is exactly lower() followed by a
 * byte comparison, so equality and order are the same — and RTRIM
 * compares rtrim(a) with rtrim(b) (trailing spaces only, as SQLite).
 *
 * Which collation a comparison uses is SQLite's rule
 * (sqlite3BinaryCompareCollSeq): the left operand's explicit COLLATE, else
 * the right's. An operand's COLLATE is the first one found in it, the left
 * operand first, then argument lists, then the right operand
 * (sqlite3ExprCollSeq): `(x COLLATE NOCASE) || 'a'` is NOCASE too.
 * `x IN (a, b)` uses x's alone; `x IN (a)` with a constant a is `x = a`, as
 * SQLite's parser rewrites it. Declared collations of SQLite columns are
 * not read: every column is BINARY.
 *
 * Where a collation would decide which of several values is kept (GROUP
 * BY keys, MIN/MAX) it is refused with a clear error rather than guessed.
 */
#include "bind.h"

static ir_coll coll_named(const char *name) {
  if (!name) return IR_COLL_NONE;
  if (ir_name_eq(name, "BINARY")) return IR_COLL_BINARY;
  if (ir_name_eq(name, "NOCASE")) return IR_COLL_NOCASE;
  if (ir_name_eq(name, "RTRIM")) return IR_COLL_RTRIM;
  return IR_COLL_NONE;
}

int ir_check_collation(ir_binder *b, const fe_expr *x) {
  if (coll_named(x->str) != IR_COLL_NONE) return 1;
  /* SQLite's text */
  return ir_fail(b, x->oppos, "no such collation sequence: %s", x->str);
}

ir_coll ir_collation(const fe_expr *x) {
  if (!x) return IR_COLL_NONE;
  const fe_expr *left = NULL, *right = NULL;
  fe_expr *const *list = NULL;
  int nlist = 0;
  switch (x->kind) {
  case AX_COLLATE: return coll_named(x->str);
  case AX_UNARY: case AX_CAST: case AX_ISNULL: left = x->args[0]; break;
  case AX_BINARY:
    if (x->nargs > 2 || x->op == FO_LIKE || x->op == FO_GLOB) {
      /* like(pattern, x [, escape]) in SQLite: an argument list */
      ir_coll c = ir_collation(x->args[1]);
      if (!c) c = ir_collation(x->args[0]);
      if (!c && x->nargs > 2) c = ir_collation(x->args[2]);
      return c;
    }
    left = x->args[0];
    right = x->args[1];
    break;
  case AX_IN: case AX_BETWEEN:
    left = x->args[0];
    list = x->args + 1;
    nlist = x->nargs - 1;
    break;
  case AX_CALL:
    list = x->args;
    nlist = x->nargs;
    break;
  case AX_CASE: {
    ir_coll c = ir_collation(x->operand);
    for (int i = 0; i < x->nwhens && !c; i++) {
      c = ir_collation(x->whens[i]);
      if (!c) c = ir_collation(x->thens[i]);
    }
    return c ? c : ir_collation(x->els);
  }
  default: return IR_COLL_NONE;
  }
  ir_coll c = ir_collation(left);
  for (int i = 0; i < nlist && !c; i++) c = ir_collation(list[i]);
  return c ? c : ir_collation(right);
}

ir_coll ir_cmp_collation(const fe_expr *l, const fe_expr *r) {
  ir_coll c = ir_collation(l);
  return c ? c : ir_collation(r);
}

ir_expr *ir_collate(ir_binder *b, ir_expr *e, ir_coll c) {
  if (e->type != RT_STR || (c != IR_COLL_NOCASE && c != IR_COLL_RTRIM)) return e;
  ir_expr *w = ir_ex_new(b, c == IR_COLL_NOCASE ? IX_LOWER : IX_RTRIM, RT_STR, e->nullable, e->pos, 1);
  w->args[0] = e;
  return w;
}

static bool has_column(const fe_expr *x) {
  if (!x) return false;
  if (x->kind == AX_COLUMN) return true;
  for (int i = 0; i < x->nargs; i++)
    if (has_column(x->args[i])) return true;
  if (has_column(x->operand) || has_column(x->els)) return true;
  for (int i = 0; i < x->nwhens; i++)
    if (has_column(x->whens[i]) || has_column(x->thens[i])) return true;
  return false;
}

ir_coll ir_in_collation(const fe_expr *x) {
  if (x->nargs == 2 && !has_column(x->args[1])) return ir_cmp_collation(x->args[0], x->args[1]);
  return ir_collation(x->args[0]);
}

int ir_refuse_collation(ir_binder *b, const fe_expr *x, const ir_expr *e, const char *where) {
  ir_coll c = ir_collation(x);
  if (e->type != RT_STR || c == IR_COLL_NONE || c == IR_COLL_BINARY) return 1;
  return ir_fail(b, x->pos, "COLLATE in %s is not supported yet: compare with lower(x) or rtrim(x)",
                 where);
}

/* ---- LIKE … ESCAPE --------------------------------------------------------- */

/* The one character of an ESCAPE string (SQLite's rule: exactly one UTF-8
 * character), as the runtime's pattern reader decodes it; 0 when the text
 * is not one character. */
static uint32_t one_char(const unsigned char *s, size_t n) {
  if (n == 0) return 0;
  size_t len = s[0] < 0x80 ? 1 : s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 1;
  if (len != n) return 0;
  if (len == 1) return s[0];
  uint32_t c = s[0] & (0x7f >> len);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    c = c << 6 | (s[i] & 0x3f);
  }
  return c;
}

ir_expr *ir_bind_like(ir_binder *b, bool glob, bool neg, ir_expr *x, ir_expr *pat,
                      const fe_expr *escx, int pos) {
  uint32_t esc = 0;
  bool null_esc = false;
  if (escx) {
    if (glob) {
      ir_fail(b, escx->pos, "GLOB takes no ESCAPE: match a literal * or ? with [*] or [?]");
      return NULL;
    }
    ir_expr *e = ir_bind_expr(b, escx);
    if (!e) return NULL;
    null_esc = e->type == RT_NULLT || (e->kind == IX_CONST && e->is_null);
    if (!null_esc) {
      if (e->kind != IX_CONST || e->type != RT_STR) {
        ir_fail(b, escx->pos, "expected ESCAPE to be a string literal of one character");
        return NULL;
      }
      size_t n;
      const char *s = rt_str_get(b->env->strings, e->sval, &n);
      if (!(esc = one_char((const unsigned char *)s, n))) {
        ir_fail(b, escx->pos, "ESCAPE expression must be a single character");   /* SQLite's */
        return NULL;
      }
    }
  }
  /* A NULL operand or escape makes the match NULL, as in SQLite. */
  if (x->type == RT_NULLT || pat->type == RT_NULLT || null_esc) return ir_ex_const_null(b, RT_NULLT, pos);
  ir_expr *e = ir_ex_new(b, glob ? IX_GLOB : IX_LIKE, RT_BOOL, false, pos, 2);
  e->args[0] = ir_ex_to_str(b, x);
  e->args[1] = ir_ex_to_str(b, pat);
  e->nullable = e->args[0]->nullable || e->args[1]->nullable;
  e->ival = esc;
  if (!neg) return e;
  ir_expr *n = ir_ex_new(b, IX_NOT, RT_BOOL, e->nullable, pos, 1);
  n->args[0] = e;
  return n;
}
