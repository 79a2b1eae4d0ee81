/*
 * macro.c — PerfettoSQL macro expansion (LANGUAGE.md §7.3), before parsing.
 *
 * Expansion is syntactic: the statement is lexed (with '!' as a token),
 * every `name!(arg, …)` is replaced by the tokens of the macro's body with
 * each `$arg` replaced by the argument's tokens, and the result is scanned
 * again, so bodies and arguments may invoke macros (at most FE_MACRO_DEPTH
 * levels: a macro that invokes itself hits the limit). Arguments are split
 * at commas outside parentheses; strings, quoted names and brackets are
 * single tokens, so their commas never split.
 *
 * The output is text for the parser (and for SQLite: macros work in plain
 * SQL too). Between two tokens that were neighbours in the user's text the
 * original bytes (spaces, comments) are copied; elsewhere one space
 * separates tokens, which never changes how SQL tokenizes. Each output
 * token remembers where it came from (fe_xorigin), so an error in the
 * expanded text is reported at the user's own token, or at the invocation
 * with the macro's name when the token came from a macro body.
 *
 * RETURNS Pipeline (§7.3): a source body invoked as `FROM m!(…)` replaces
 * the FROM too (the body starts with its own FROM or INTERVAL …), and a
 * stage tail invoked as `|> m!(…)` drops the body's leading `|>`.
 *
 * What the macro means is left to the parser: an expansion that does not
 * parse is a syntax error in the expanded text, reported at the
 * invocation.
 */
#include <stdio.h>

#include "parse.h"

/* Expansions bigger than this many tokens are refused: a few macros that
 * each invoke the next twice grow exponentially within the depth limit. */
#define FE_MACRO_MAX_TOKENS 2000000

/* A token of the expansion with its provenance. `src` is the text its
 * position refers to (the statement, or a macro's body); `idx` its index
 * among the statement's tokens (-1 for a body token), so neighbours in the
 * user's text can keep the bytes between them. */
typedef struct xtok {
  const fe_token *t;
  const char *src;
  int idx;
  int origin;
  const char *macro, *outer;
} xtok;

typedef struct xlist {
  xtok *v;
  int n, cap;
} xlist;

typedef struct expander {
  rt_arena *a;
  const char *text;      /* the statement's text (offsets relative to it) */
  fe_macro_find find;
  void *ctx;
  rt_err *err;
  int64_t total;         /* tokens emitted, for the size limit */
  bool oom;              /* an allocation failed: the expansion fails */
} expander;

static void push(expander *x, xlist *l, xtok t) {
  xtok *v = fe_push(x->a, &l->v, &l->n, &l->cap, sizeof t);
  if (v) *v = t;
  else x->oom = true;
}

/* rt_buf_append that notes a failure (the buffer drops what does not fit). */
static void append(expander *x, rt_buf *b, const void *p, size_t n) {
  size_t before = b->len;
  rt_buf_append(b, p, n);
  if (b->len != before + n) x->oom = true;
}

/* The error of a failed allocation; -1. */
static int expand_oom(expander *x, int origin) {
  x->oom = true;
  return rt_errorf(x->err, origin, "out of memory"), -1;
}

static bool is_kw(const xtok *t, const char *kw) { return fe_tok_is_kw(t->t, kw); }
static bool is_punct(const xtok *t, const char *s) { return fe_tok_is_punct(t->t, s); }

/* `name ! (` with the '!' right after the name. */
static bool at_invocation(const xlist *in, int i) {
  if (i + 2 >= in->n) return false;
  const xtok *n = &in->v[i], *bang = &in->v[i + 1];
  if (n->t->kind != TK_IDENT || !is_punct(bang, "!") || !is_punct(&in->v[i + 2], "(")) return false;
  return n->src == bang->src && n->t->pos + n->t->len == bang->t->pos;
}

/* Tokens [from, to) of an argument as text, for messages. */
static const char *arg_text(expander *x, const xlist *in, int from, int to) {
  if (from >= to) return "";
  rt_buf b = {0};
  for (int i = from; i < to; i++) {
    if (i > from) rt_buf_append(&b, " ", 1);
    rt_buf_append(&b, in->v[i].src + in->v[i].t->pos, (size_t)in->v[i].t->len);
  }
  /* a failed append leaves other text: out of memory, not that text */
  char *s = b.failed ? NULL : rt_arena_strndup(x->a, b.data ? b.data : "", b.len > 60 ? 60 : b.len);
  rt_buf_free(&b);
  if (!s) expand_oom(x, in->v[from].origin);
  return s ? s : "";
}

static bool is_name(const xtok *t) { return t->t->kind == TK_IDENT || t->t->kind == TK_QIDENT; }

/* Does argument [from, to) fit its declared type? Expr and Pipeline take
 * any tokens (the parser judges them once expanded); a ColumnName is a
 * name (optionally qualified), a TableOrSubquery a [schema.]name or a
 * parenthesised query. */
static bool arg_fits(const xlist *in, int from, int to, fe_mtype t) {
  int n = to - from;
  const xtok *v = in->v + from;
  switch (t) {
  case FE_MT_EXPR:
  case FE_MT_PIPELINE:
    return n > 0;
  case FE_MT_COLUMN:
  case FE_MT_TABLE:
    if (n == 1 && is_name(&v[0])) return true;
    if (n == 3 && is_name(&v[0]) && is_punct(&v[1], ".") && is_name(&v[2])) return true;
    if (t == FE_MT_TABLE && n >= 2 && is_punct(&v[0], "(") && is_punct(&v[n - 1], ")")) return true;
    return false;
  }
  return false;
}

static bool expand_list(expander *x, const xlist *in, int depth, xlist *out);

/* The invocation at in[i] (name ! ( args )): appends its expansion to out
 * and returns the index past its ')', or -1 on error. */
static int expand_call(expander *x, const xlist *in, int i, int depth, xlist *out) {
  const xtok *name = &in->v[i];
  const fe_macro *m = x->find(x->ctx, name->t->text);
  if (!m) return rt_errorf(x->err, name->origin, "no such macro: '%s'", name->t->text), -1;
  if (depth >= FE_MACRO_DEPTH)
    return rt_errorf(x->err, name->origin,
                     "macro expansion is too deep (cycle?): '%s' is invoked %d levels down",
                     m->name, depth + 1), -1;
  /* Arguments: token ranges between top-level commas. */
  int cap = 0, nargs = 0, *starts = NULL, *ends = NULL, cap2 = 0, nends = 0;
  int j = i + 3, from = j, level = 0;
  for (;; j++) {
    if (j >= in->n || in->v[j].t->kind == TK_EOF)
      return rt_errorf(x->err, name->origin, "macro '%s': expected ')' to close its arguments",
                       m->name), -1;
    const xtok *t = &in->v[j];
    if (is_punct(t, "(")) level++;
    else if (is_punct(t, ")") && level > 0) level--;
    else if ((is_punct(t, ")") || is_punct(t, ",")) && level == 0) {
      int *s = fe_push(x->a, &starts, &nargs, &cap, sizeof(int));
      int *e = s ? fe_push(x->a, &ends, &nends, &cap2, sizeof(int)) : NULL;
      if (!e) return expand_oom(x, name->origin);
      *s = from;
      *e = j;
      from = j + 1;
      if (is_punct(t, ")")) break;
    }
  }
  int close = j;
  if (nargs == 1 && starts[0] == ends[0]) nargs = 0;   /* m!() */
  if (nargs != m->nargs)
    return rt_errorf(x->err, name->origin, "macro '%s' takes %d argument%s, but got %d", m->name,
                     m->nargs, m->nargs == 1 ? "" : "s", nargs), -1;
  for (int k = 0; k < nargs; k++) {
    if (arg_fits(in, starts[k], ends[k], m->argtypes[k])) continue;
    return rt_errorf(x->err, starts[k] < ends[k] ? in->v[starts[k]].origin : name->origin,
                     "macro '%s': argument '%s' is a %s, but got '%s'", m->name, m->argnames[k],
                     fe_mtype_name(m->argtypes[k]), arg_text(x, in, starts[k], ends[k])), -1;
  }

  /* The body's tokens, with the arguments put in. */
  rt_err lexerr = {0};
  int nb = 0;
  fe_token *bt = fe_lex_range_flags(x->a, m->body, 0, m->bodylen, &nb, &lexerr, FE_LEX_BANG);
  if (lexerr.set)
    return rt_errorf(x->err, name->origin, "macro '%s': %s", m->name, lexerr.msg), -1;
  const char *outer = name->outer ? name->outer : m->name;
  xlist body = {0};
  for (int b = 0; b < nb - 1; b++) {   /* the last token is EOF */
    const fe_token *t = &bt[b];
    int k = -1;
    if (t->kind == TK_PARAM && t->text[0] == '$')
      for (int a = 0; a < m->nargs && k < 0; a++)
        if (rt_strieq(t->text + 1, m->argnames[a])) k = a;
    if (k < 0) {
      push(x, &body, (xtok){t, m->body, -1, name->origin, m->name, outer});
      continue;
    }
    for (int a = starts[k]; a < ends[k]; a++) push(x, &body, in->v[a]);
  }
  /* RETURNS Pipeline as a stage tail after `|>`, or as a source after FROM. */
  int skip = 0;
  if (body.n > 0 && out->n > 0) {
    const xtok *prev = &out->v[out->n - 1];
    if (prev->t->kind == TK_PIPE && body.v[0].t->kind == TK_PIPE) skip = 1;
    else if (is_kw(prev, "FROM") && m->ret == FE_MT_PIPELINE &&
             (is_kw(&body.v[0], "FROM") || is_kw(&body.v[0], "INTERVAL")))
      out->n--;
  }
  if (x->oom) return expand_oom(x, name->origin);
  xlist rest = {body.v + skip, body.n - skip, 0};
  if (!expand_list(x, &rest, depth + 1, out)) return -1;
  return close + 1;
}

static bool expand_list(expander *x, const xlist *in, int depth, xlist *out) {
  for (int i = 0; i < in->n;) {
    if (at_invocation(in, i)) {
      int next = expand_call(x, in, i, depth, out);
      if (next < 0) return false;
      i = next;
      continue;
    }
    if (++x->total > FE_MACRO_MAX_TOKENS)
      return rt_errorf(x->err, in->v[i].origin, "macro expansion is too large (more than %d tokens)",
                       FE_MACRO_MAX_TOKENS);
    push(x, out, in->v[i++]);
    if (x->oom) {
      expand_oom(x, in->v[i - 1].origin);
      return false;
    }
  }
  return true;
}

int fe_macro_expand(rt_arena *a, const char *text, int pos, int len, fe_macro_find find,
                    void *ctx, fe_expansion *out, rt_err *err) {
  memset(out, 0, sizeof *out);
  /* Cheap test first: most statements have no '!' at all. */
  if (!memchr(text + pos, '!', (size_t)len)) return 0;
  expander x = {.a = a, .text = text, .find = find, .ctx = ctx, .err = err};
  rt_err lexerr = {0};
  int ntok = 0;
  fe_token *toks = fe_lex_range_flags(a, text, pos, pos + len, &ntok, &lexerr, FE_LEX_BANG);
  if (!toks) return expand_oom(&x, pos);
  xlist in = {0};
  for (int i = 0; i < ntok - 1; i++) push(&x, &in, (xtok){&toks[i], text, i, toks[i].pos, NULL, NULL});
  if (x.oom) return expand_oom(&x, pos);
  bool any = false;
  for (int i = 0; i < in.n && !any; i++) any = at_invocation(&in, i);
  if (!any) return 0;
  xlist res = {0};
  if (!expand_list(&x, &in, 0, &res)) return -1;

  rt_buf b = {0};
  int cap = 0;
  for (int i = 0; i < res.n; i++) {
    const xtok *t = &res.v[i];
    if (i > 0) {
      const xtok *p = &res.v[i - 1];
      if (p->idx >= 0 && t->idx == p->idx + 1)
        append(&x, &b, text + p->t->pos + p->t->len, (size_t)(t->t->pos - p->t->pos - p->t->len));
      else
        append(&x, &b, " ", 1);
    }
    fe_xorigin *o = fe_push(a, &out->map, &out->nmap, &cap, sizeof *o);
    if (!o) {
      x.oom = true;
      break;
    }
    *o = (fe_xorigin){(int)b.len, t->t->len, t->origin, t->macro, t->outer};
    append(&x, &b, t->src + t->t->pos, (size_t)t->t->len);
  }
  /* A lexical error ended the token list: the rest of the statement
   * follows as written, for the parser to report where it is. */
  int tail = toks[ntok - 1].pos;
  if (lexerr.set && tail < pos + len && !x.oom) {
    const xtok *last = res.n ? &res.v[res.n - 1] : NULL;
    if (last && last->idx == ntok - 2)
      append(&x, &b, text + last->t->pos + last->t->len,
             (size_t)(tail - last->t->pos - last->t->len));
    else if (last)
      append(&x, &b, " ", 1);
    fe_xorigin *o = fe_push(a, &out->map, &out->nmap, &cap, sizeof *o);
    if (o) *o = (fe_xorigin){(int)b.len, pos + len - tail, tail, NULL, NULL};
    else x.oom = true;
    append(&x, &b, text + tail, (size_t)(pos + len - tail));
  }
  out->text = x.oom ? NULL : rt_arena_strndup(a, b.data ? b.data : "", b.len);
  if (!out->text) {
    rt_buf_free(&b);
    return expand_oom(&x, pos);
  }
  out->len = (int)b.len;
  rt_buf_free(&b);
  return 1;
}

int fe_expansion_origin(const fe_expansion *x, int off, const fe_xorigin **from) {
  if (from) *from = NULL;
  if (x->nmap == 0) return 0;
  /* The last token starting at or before off. */
  int lo = 0, hi = x->nmap;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (x->map[mid].at <= off) lo = mid;
    else hi = mid;
  }
  const fe_xorigin *o = &x->map[lo];
  if (off < o->at) return o->origin;   /* before the first token */
  if (off >= o->at + o->len) {
    /* Between tokens (or past the end): the next token's origin, or
     * just past the last one. */
    if (lo + 1 < x->nmap) {
      if (from) *from = &x->map[lo + 1];
      return x->map[lo + 1].origin;
    }
    if (from) *from = o;
    return o->macro ? o->origin : o->origin + o->len;
  }
  if (from) *from = o;
  return o->macro ? o->origin : o->origin + (off - o->at);
}
