/*
 * parse_expr.c — scalar expressions, by precedence climbing.
 *
 * Precedence is SQLite's (LANGUAGE.md §5), loosest first:
 *   1 OR   2 AND   3 NOT (prefix)   4 = == != <> IS IN LIKE GLOB BETWEEN
 *   ISNULL NOTNULL NOT NULL   5 < <= > >=   6 << >> & |   7 + -
 *   8 * / %   9 ||   10 COLLATE (postfix)   then unary - + ~ binding
 *   tightest (so `-x COLLATE NOCASE` is `(-x) COLLATE NOCASE`, and
 *   `a || b COLLATE NOCASE` collates b). `x LIKE p ESCAPE e` takes e as
 *   its third argument.
 * A prefix NOT takes a level-4 operand wherever it appears, as in SQLite
 * (`1 = NOT 0 = 0` is `1 = NOT (0 = 0)`). BETWEEN bounds are level-5
 * expressions so the AND of `x BETWEEN a AND b` is not taken as logic.
 *
 * Recursion is bounded by FE_MAX_DEPTH (nesting) and so is the height of
 * every tree built (long left-deep chains), so no input can overflow the
 * stack here or in the passes that walk the tree.
 */
#include "parse.h"

/* The PREC column of ir/exprs.def names these levels (NONE: not infix). */
enum { PREC_NONE = 0, PREC_OR, PREC_AND, PREC_NOT, PREC_EQ, PREC_REL, PREC_BIT, PREC_ADD, PREC_MUL,
       PREC_CONCAT, PREC_COLLATE };

static fe_expr *parse_binary(fe_parser *p, int minprec);

/* A new node; NULL (out of memory, the error set) if there is no room. */
static fe_expr *mk(fe_parser *p, fe_exkind kind, int pos) {
  fe_expr *e = fe_alloc(p, sizeof *e);
  if (!e) return NULL;
  e->kind = kind;
  e->pos = pos;
  e->oppos = pos;
  return e;
}

static int max_height(fe_expr *const *v, int n, int h) {
  for (int i = 0; i < n; i++)
    if (v[i] && v[i]->height > h) h = v[i]->height;
  return h;
}

/* Sets endpos (past the last token read) and height; fails when the tree
 * would be deeper than FE_MAX_DEPTH. */
static fe_expr *finish(fe_parser *p, fe_expr *e) {
  e->endpos = fe_prev_end(p);
  int h = max_height(e->args, e->nargs, 0);
  h = max_height(e->whens, e->nwhens, h);
  h = max_height(e->thens, e->nwhens, h);
  if (e->operand && e->operand->height > h) h = e->operand->height;
  if (e->els && e->els->height > h) h = e->els->height;
  if (e->over) {
    const fe_window *w = e->over;
    h = max_height(w->part, w->npart, h);
    for (int i = 0; i < w->norder; i++)
      if (w->order[i].expr->height > h) h = w->order[i].expr->height;
    if (w->start.n && w->start.n->height > h) h = w->start.n->height;
    if (w->end.n && w->end.n->height > h) h = w->end.n->height;
  }
  e->height = h + 1;
  if (e->height > FE_MAX_DEPTH) {
    rt_errorf(p->err, e->oppos, "%s%sexpression is nested too deeply (more than %d levels)",
              p->stage ? p->stage : "", p->stage ? ": " : "", FE_MAX_DEPTH);
    return NULL;
  }
  return e;
}

static bool set_args(fe_parser *p, fe_expr *e, int n, fe_expr *a0, fe_expr *a1, fe_expr *a2) {
  e->args = fe_alloc(p, (size_t)n * sizeof *e->args);
  if (!e->args) return false;
  e->nargs = n;
  fe_expr *v[3] = {a0, a1, a2};
  for (int i = 0; i < n; i++) e->args[i] = v[i];
  return true;
}

/* ---- operators -------------------------------------------------------- */

typedef enum { OP_BIN, OP_ISNULL, OP_IN, OP_BETWEEN, OP_COLLATE } opkind;

typedef struct opinfo {
  opkind kind;
  fe_op op;            /* OP_BIN */
  int prec;
  int ntoks;           /* tokens the operator spans */
  bool negated;
} opinfo;

/* The binary operators: exprs.def's INFIX entries (those with a PREC),
 * spelled as punctuation or as one keyword, and two more spellings. IS
 * (IS NOT, IS [NOT] DISTINCT FROM) is matched by hand: it spans tokens. */
static const struct binop { const char *s; fe_op op; int prec; } k_binops[] = {
#define EX(name, str, arity, form, prec, nulls) {str, FO_##name, PREC_##prec},
#include "../ir/exprs.def"
#undef EX
    {"==", FO_EQ, PREC_EQ},
    {"<>", FO_NE, PREC_EQ},
};

static bool is_word(const char *s) {
  for (; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
  return true;
}

/* Recognizes the operator at the cursor without consuming it. */
static bool match_op(fe_parser *p, opinfo *o) {
  fe_token *t = fe_cur(p), *t1 = fe_peek(p, 1);
  *o = (opinfo){.kind = OP_BIN, .prec = PREC_EQ, .ntoks = 1};
  if (t->kind != TK_PUNCT && t->kind != TK_IDENT) return false;
  if (t->kind == TK_IDENT && fe_tok_is_kw(t, "IS")) {
    /* `IS [NOT] NULL` is IS with a NULL operand, as in SQLite's grammar:
     * `x IS NOT NULL || 'a'` is `x IS NOT (NULL || 'a')`. The binder
     * makes `x IS NULL` an ISNULL test. */
    bool neg = fe_tok_is_kw(t1, "NOT");
    fe_token *n = fe_peek(p, neg ? 2 : 1);
    if (fe_tok_is_kw(n, "DISTINCT") && fe_tok_is_kw(fe_peek(p, neg ? 3 : 2), "FROM")) {
      /* IS DISTINCT FROM is IS NOT; IS NOT DISTINCT FROM is IS. */
      o->op = neg ? FO_IS : FO_ISNOT;
      o->ntoks = neg ? 4 : 3;
      return true;
    }
    o->op = neg ? FO_ISNOT : FO_IS;
    o->ntoks = neg ? 2 : 1;
    return true;
  }
  for (size_t i = 0; i < sizeof k_binops / sizeof k_binops[0]; i++) {
    const struct binop *b = &k_binops[i];
    if (b->prec == PREC_NONE) continue;
    bool word = is_word(b->s);
    if (word ? t->kind != TK_IDENT || !fe_tok_is_kw(t, b->s) : t->kind != TK_PUNCT || strcmp(t->text, b->s))
      continue;
    o->op = b->op;
    o->prec = b->prec;
    return true;
  }
  if (t->kind != TK_IDENT) return false;
  if (fe_tok_is_kw(t, "COLLATE")) return o->kind = OP_COLLATE, o->prec = PREC_COLLATE, true;
  if (fe_tok_is_kw(t, "IN")) return o->kind = OP_IN, true;
  if (fe_tok_is_kw(t, "BETWEEN")) return o->kind = OP_BETWEEN, true;
  if (fe_tok_is_kw(t, "ISNULL")) return o->kind = OP_ISNULL, true;
  if (fe_tok_is_kw(t, "NOTNULL")) return o->kind = OP_ISNULL, o->negated = true, true;
  if (fe_tok_is_kw(t, "NOT")) {
    o->negated = true;
    o->ntoks = 2;
    if (fe_tok_is_kw(t1, "NULL")) return o->kind = OP_ISNULL, true;
    if (fe_tok_is_kw(t1, "IN")) return o->kind = OP_IN, true;
    if (fe_tok_is_kw(t1, "BETWEEN")) return o->kind = OP_BETWEEN, true;
    if (fe_tok_is_kw(t1, "LIKE")) return o->op = FO_LIKE, true;
    if (fe_tok_is_kw(t1, "GLOB")) return o->op = FO_GLOB, true;
  }
  return false;
}

/* x [NOT] IN ( v, … ): args[0] is x, the list follows. */
static fe_expr *parse_in(fe_parser *p, fe_expr *e, fe_expr *x) {
  int cap = 0;
  if (!fe_push_ptr(p, &e->args, &e->nargs, &cap, x)) return NULL;
  if (fe_at_subquery(p)) {   /* x IN (SELECT …) */
    const char *outer = p->stage;
    e->sub = fe_parse_subquery(p);
    p->stage = outer;
    return e->sub ? e : NULL;
  }
  if (!fe_expect_punct(p, "(", "'(' after IN")) return NULL;
  if (!fe_at_punct(p, ")")) {
    do {
      fe_expr *v = fe_parse_expr(p);
      if (!v) return NULL;
      if (!fe_push_ptr(p, &e->args, &e->nargs, &cap, v)) return NULL;
    } while (fe_accept_punct(p, ","));
  }
  if (!fe_expect_punct(p, ")", "',' or ')'")) return NULL;
  return e;
}

/* One operator application on `left`, the operator being at the cursor. */
static fe_expr *apply_op(fe_parser *p, fe_expr *left, const opinfo *o) {
  fe_token *optok = fe_cur(p);
  p->i += o->ntoks; /* match_op saw them all, none is EOF */
  fe_expr *e;
  switch (o->kind) {
  case OP_BIN: {
    fe_expr *right = parse_binary(p, o->prec + 1);
    if (!right) return NULL;
    e = mk(p, AX_BINARY, left->pos);
    if (!e) return NULL;
    e->op = o->op;
    e->negated = o->negated;
    bool like = o->op == FO_LIKE || o->op == FO_GLOB;
    if (like && fe_accept_kw(p, "ESCAPE")) {
      fe_expr *esc = parse_binary(p, o->prec + 1);
      if (!esc) return NULL;
      if (!set_args(p, e, 3, left, right, esc)) return NULL;
    } else {
      if (!set_args(p, e, 2, left, right, NULL)) return NULL;
    }
    break;
  }
  case OP_COLLATE: {
    fe_token *name = fe_cur(p);
    if (name->kind != TK_IDENT && name->kind != TK_QIDENT && name->kind != TK_STRING)
      return fe_syntax_error(p, name, "a collation name (BINARY, NOCASE or RTRIM)"), NULL;
    p->i++;
    e = mk(p, AX_COLLATE, left->pos);
    if (!e) return NULL;
    e->str = name->text;
    e->strlen = name->textlen;
    if (!set_args(p, e, 1, left, NULL, NULL)) return NULL;
    break;
  }
  case OP_ISNULL:
    e = mk(p, AX_ISNULL, left->pos);
    if (!e) return NULL;
    if (!set_args(p, e, 1, left, NULL, NULL)) return NULL;
    break;
  case OP_IN:
    e = mk(p, AX_IN, left->pos);
    if (!e) return NULL;
    if (!parse_in(p, e, left)) return NULL;
    break;
  case OP_BETWEEN: {
    fe_expr *lo = parse_binary(p, PREC_REL);
    if (!lo || !fe_expect_kw(p, "AND", "AND in BETWEEN")) return NULL;
    fe_expr *hi = parse_binary(p, PREC_REL);
    if (!hi) return NULL;
    e = mk(p, AX_BETWEEN, left->pos);
    if (!e) return NULL;
    if (!set_args(p, e, 3, left, lo, hi)) return NULL;
    break;
  }
  default:
    return NULL;
  }
  e->oppos = optok->pos;
  e->negated = o->negated;
  return finish(p, e);
}

/* ---- primaries -------------------------------------------------------- */

static fe_expr *parse_case(fe_parser *p) {
  fe_expr *e = mk(p, AX_CASE, fe_cur(p)->pos);
  if (!e) return NULL;
  p->i++; /* CASE */
  if (!fe_at_kw(p, "WHEN") && !(e->operand = fe_parse_expr(p))) return NULL;
  int cap = 0, cap2 = 0, n2 = 0;
  if (!fe_at_kw(p, "WHEN")) return fe_syntax_error(p, fe_cur(p), "WHEN"), NULL;
  while (fe_accept_kw(p, "WHEN")) {
    fe_expr *w = fe_parse_expr(p);
    if (!w || !fe_expect_kw(p, "THEN", NULL)) return NULL;
    fe_expr *t = fe_parse_expr(p);
    if (!t) return NULL;
    if (!fe_push_ptr(p, &e->whens, &e->nwhens, &cap, w) || !fe_push_ptr(p, &e->thens, &n2, &cap2, t))
      return NULL;
  }
  if (fe_accept_kw(p, "ELSE") && !(e->els = fe_parse_expr(p))) return NULL;
  if (!fe_expect_kw(p, "END", "WHEN, ELSE or END")) return NULL;
  return finish(p, e);
}

/* CAST ( x AS type ): the type is kept as written ("INTEGER", "VARCHAR(10)"). */
static fe_expr *parse_cast(fe_parser *p) {
  fe_expr *e = mk(p, AX_CAST, fe_cur(p)->pos);
  if (!e) return NULL;
  p->i += 2; /* CAST ( */
  fe_expr *x = fe_parse_expr(p);
  if (!x || !fe_expect_kw(p, "AS", NULL)) return NULL;
  int from = p->i, depth = 0;
  for (;;) {
    fe_token *t = fe_cur(p);
    if (t->kind == TK_EOF || (depth == 0 && fe_tok_is_punct(t, ")"))) break;
    if (fe_tok_is_punct(t, "(")) depth++;
    if (fe_tok_is_punct(t, ")")) depth--;
    p->i++;
  }
  if (p->i == from) return fe_syntax_error(p, fe_cur(p), "a type name"), NULL;
  int start = p->toks[from].pos, end = fe_prev_end(p);
  e->str = rt_arena_strndup(p->a, p->text + start, (size_t)(end - start));
  if (!e->str) return fe_oom(p), NULL;
  e->strlen = (size_t)(end - start);
  if (!fe_expect_punct(p, ")", NULL)) return NULL;
  if (!set_args(p, e, 1, x, NULL, NULL)) return NULL;
  return finish(p, e);
}

/* name ( [DISTINCT] args | * ) */
static fe_expr *parse_call(fe_parser *p) {
  fe_token *t = fe_cur(p);
  fe_expr *e = mk(p, AX_CALL, t->pos);
  if (!e) return NULL;
  e->str = t->text;
  e->strlen = t->textlen;
  p->i += 2; /* name ( */
  if (fe_at_punct(p, "*") && fe_tok_is_punct(fe_peek(p, 1), ")")) {
    e->star = true;
    p->i++;
  } else if (!fe_at_punct(p, ")")) {
    e->distinct = fe_accept_kw(p, "DISTINCT");
    int cap = 0;
    do {
      fe_expr *a = fe_parse_expr(p);
      if (!a) return NULL;
      if (!fe_push_ptr(p, &e->args, &e->nargs, &cap, a)) return NULL;
    } while (fe_accept_punct(p, ","));
  }
  if (!fe_expect_punct(p, ")", "',' or ')'")) return NULL;
  /* `f(…) OVER (…)`: a window function call (parse_window.c); OVER not
   * followed by '(' stays an alias, as before */
  if (fe_at_kw(p, "OVER") && fe_tok_is_punct(fe_peek(p, 1), "(")) {
    int overpos = fe_cur(p)->pos;
    p->i++;
    if (!(e->over = fe_parse_window(p, overpos))) return NULL;
  } else if (fe_at_kw(p, "OVER") && fe_peek(p, 1)->kind == TK_IDENT && !fe_is_reserved(fe_peek(p, 1))) {
    /* `OVER w`: a named window (SQL's WINDOW clause) */
    fe_fail(p, fe_peek(p, 1)->pos, "named windows are not supported: write the window out, as in "
                                   "%s(…) OVER (PARTITION BY … ORDER BY …)", t->text);
    return NULL;
  }
  return finish(p, e);
}

/* [qual.]name: the cursor is on an identifier or quoted identifier. */
static fe_expr *parse_column(fe_parser *p) {
  fe_token *t = fe_cur(p);
  fe_expr *e = mk(p, AX_COLUMN, t->pos);
  if (!e) return NULL;
  p->i++;
  if (fe_at_punct(p, ".")) {
    p->i++;
    fe_token *n = fe_cur(p);
    if (n->kind != TK_IDENT && n->kind != TK_QIDENT)
      return fe_syntax_error(p, n, "a column name after '.'"), NULL;
    e->qual = t->text;
    t = n;
    p->i++;
  }
  e->name = t->text;
  e->namepos = t->pos;
  return finish(p, e);
}

static fe_expr *parse_primary(fe_parser *p) {
  fe_token *t = fe_cur(p);
  fe_expr *e;
  switch (t->kind) {
  case TK_INT:
    if (t->unit)   /* a time unit belongs only to INTERVAL QUANTIZE's width */
      return fe_fail(p, t->pos, "syntax error: unrecognized token '%.*s'", t->len, p->text + t->pos), NULL;
    e = mk(p, AX_INT, t->pos);
    if (!e) return NULL;
    e->ival = t->ival;
    p->i++;
    return finish(p, e);
  case TK_FLOAT:
    e = mk(p, AX_FLOAT, t->pos);
    if (!e) return NULL;
    e->fval = t->fval;
    p->i++;
    return finish(p, e);
  case TK_STRING:
    e = mk(p, AX_STRING, t->pos);
    if (!e) return NULL;
    e->str = t->text;
    e->strlen = t->textlen;
    p->i++;
    return finish(p, e);
  case TK_PARAM:
    e = mk(p, AX_PARAM, t->pos);
    if (!e) return NULL;
    e->str = t->text;
    e->strlen = t->textlen;
    p->i++;
    return finish(p, e);
  case TK_QIDENT:
    return parse_column(p);
  case TK_PUNCT:
    if (fe_at_subquery(p)) {   /* a scalar (SELECT …) */
      e = mk(p, AX_SUBQUERY, t->pos);
      if (!e) return NULL;
      const char *outer = p->stage;
      e->sub = fe_parse_subquery(p);
      p->stage = outer;
      return e->sub ? finish(p, e) : NULL;
    }
    if (fe_tok_is_punct(t, "(")) {
      p->i++;
      e = fe_parse_expr(p);
      if (!e || !fe_expect_punct(p, ")", NULL)) return NULL;
      /* The span includes the parentheses. */
      e->pos = t->pos;
      e->endpos = fe_prev_end(p);
      return e;
    }
    break;
  case TK_IDENT: {
    bool call = fe_tok_is_punct(fe_peek(p, 1), "(");
    if (fe_tok_is_kw(t, "NULL") || fe_tok_is_kw(t, "TRUE") || fe_tok_is_kw(t, "FALSE")) {
      e = mk(p, fe_tok_is_kw(t, "NULL") ? AX_NULL : fe_tok_is_kw(t, "TRUE") ? AX_TRUE : AX_FALSE,
             t->pos);
      if (!e) return NULL;
      p->i++;
      return finish(p, e);
    }
    if (fe_tok_is_kw(t, "CASE")) return parse_case(p);
    if (fe_tok_is_kw(t, "EXISTS")) {   /* EXISTS (SELECT …) */
      p->i++;
      if (!fe_at_subquery(p)) return fe_syntax_error(p, fe_cur(p), "'(SELECT' after EXISTS"), NULL;
      e = mk(p, AX_EXISTS, t->pos);
      if (!e) return NULL;
      const char *outer = p->stage;
      e->sub = fe_parse_subquery(p);
      p->stage = outer;
      return e->sub ? finish(p, e) : NULL;
    }
    if (fe_tok_is_kw(t, "CAST") && call) return parse_cast(p);
    /* replace(), like() and glob() are functions though their names are
     * keywords. */
    if (call && (!fe_is_reserved(t) || fe_tok_is_kw(t, "REPLACE") || fe_tok_is_kw(t, "LIKE") ||
                 fe_tok_is_kw(t, "GLOB")))
      return parse_call(p);
    if (!fe_is_reserved(t)) return parse_column(p);
    break;
  }
  default:
    break;
  }
  return fe_syntax_error(p, t, "an expression"), NULL;
}

/* 9223372036854775808 is lexed as a float (too big for int64); negated it
 * is INT64_MIN, an integer, as SQLite reads it. */
static bool is_int64_min_magnitude(const fe_token *t) {
  if (t->kind != TK_FLOAT) return false;
  const char *s = t->text;
  while (*s == '0' && s[1]) s++;
  return strcmp(s, "9223372036854775808") == 0;
}

static fe_expr *parse_unary(fe_parser *p) {
  fe_token *t = fe_cur(p);
  bool sign = fe_tok_is_punct(t, "-") || fe_tok_is_punct(t, "+") || fe_tok_is_punct(t, "~");
  bool not = fe_tok_is_kw(t, "NOT");
  if (!sign && !not) return parse_primary(p);
  if (fe_tok_is_punct(t, "-") && is_int64_min_magnitude(fe_peek(p, 1))) {
    fe_expr *e = mk(p, AX_INT, t->pos);
    if (!e) return NULL;
    e->ival = INT64_MIN;
    p->i += 2;
    return finish(p, e);
  }
  if (!fe_enter(p, t->pos)) return NULL;
  p->i++;
  fe_expr *x = not ? parse_binary(p, PREC_EQ) : parse_unary(p);
  fe_leave(p);
  if (!x) return NULL;
  fe_expr *e = mk(p, AX_UNARY, t->pos);
  if (!e) return NULL;
  e->op = not ? FO_NOT : fe_tok_is_punct(t, "-") ? FO_NEG : fe_tok_is_punct(t, "+") ? FO_PLUS : FO_BITNOT;
  if (!set_args(p, e, 1, x, NULL, NULL)) return NULL;
  return finish(p, e);
}

/* The right operand of a binary operator returns before the next operator
 * is read, so this loop only recurses through prefix operators and
 * fe_parse_expr (parentheses, arguments, CASE …), which count depth. */
static fe_expr *parse_binary(fe_parser *p, int minprec) {
  fe_expr *left = parse_unary(p);
  opinfo o;
  while (left && match_op(p, &o) && o.prec >= minprec) left = apply_op(p, left, &o);
  return left;
}

fe_expr *fe_parse_expr(fe_parser *p) {
  if (!fe_enter(p, fe_cur(p)->pos)) return NULL;
  fe_expr *e = parse_binary(p, PREC_OR);
  fe_leave(p);
  return e;
}
