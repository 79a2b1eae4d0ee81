/*
 * sqlpipe.c — pipelines inside SQL statements (LANGUAGE.md §7.6): finds
 * every parenthesised pipeline `( FROM … )` / `( INTERVAL INTERSECTION OF
 * … )` of a SQL statement, parses it, and says how the statement's
 * parameters reach it. Which table replaces it is the engine's business
 * (api/sqlpipes.c).
 *
 * `(` followed by FROM is never SQLite syntax (a subquery starts with
 * SELECT, VALUES or WITH), so every such parenthesis is a pipeline,
 * wherever it stands: a FROM or JOIN operand, a CTE body, a view body, an
 * IN or EXISTS subquery, a scalar subquery. A pipeline nested in another
 * one belongs to the outer pipeline's parse.
 *
 * Parameters: the statement is scanned in text order and every parameter
 * numbered as SQLite numbers them (`?` one more than the largest so far,
 * `?N` N, a name the number of its first appearance). Inside a pipeline
 * every parameter token is renamed `?N` with the statement's number before
 * the pipeline is parsed, so the pipeline's parameter k is the statement's
 * parameter k; the engine passes parameters 1..nargs as the arguments of
 * the table it substitutes, each spelled as the statement spells it (a
 * name where the statement has one, so SQLite gives the rewritten text the
 * same numbering).
 */
#include <stdio.h>
#include <stdlib.h>

#include "parse.h"

static bool is_space(unsigned char c) { return c == ' ' || (c >= 0x09 && c <= 0x0d); }
static bool is_word(unsigned char c) {
  return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}
static bool is_id_char(unsigned char c) { return is_word(c); }

bool fe_is_sql_input(const char *s, size_t n) { return n == 6 && rt_strnieq(s, "@input", 6); }

/* The statement's parameters seen so far: names[k - 1] is parameter k's
 * name, or NULL for a numbered one. */
typedef struct params {
  rt_arena *a;
  int max;
  char **names;
  int cap;
  bool oom;   /* an allocation failed: the caller fails */
} params;

static bool params_grow(params *ps, int n) {
  if (n <= ps->cap) return true;
  int cap = n > ps->cap * 2 ? n : ps->cap * 2;
  char **v = rt_arena_alloc(ps->a, sizeof *v * (size_t)cap);
  if (!v) return !(ps->oom = true);
  if (ps->max) memcpy(v, ps->names, sizeof *v * (size_t)ps->max);
  ps->names = v;
  ps->cap = cap;
  return true;
}

/* The number SQLite gives the parameter spelled s[0..len); 0 when it is
 * out of range (SQLite's own error will say so) or out of memory
 * (ps->oom). */
static int param_number(params *ps, const char *s, int len) {
  if (s[0] == '?') {
    if (len == 1) {
      if (!params_grow(ps, ps->max + 1)) return 0;
      ps->names[ps->max] = NULL;
      return ++ps->max;
    }
    long v = strtol(s + 1, NULL, 10);
    if (v < 1 || v > 32766) return 0;
    if (v > ps->max) {
      if (!params_grow(ps, (int)v)) return 0;
      for (int k = ps->max; k < v; k++) ps->names[k] = NULL;
      ps->max = (int)v;
    }
    return (int)v;
  }
  for (int k = 0; k < ps->max; k++)
    if (ps->names[k] && (int)strlen(ps->names[k]) == len && !memcmp(ps->names[k], s, (size_t)len))
      return k + 1;
  if (!params_grow(ps, ps->max + 1)) return 0;
  if (!(ps->names[ps->max] = rt_arena_strndup(ps->a, s, (size_t)len))) return !(ps->oom = true);
  return ++ps->max;
}

/* Offset past a quoted run at i (a doubled quote escapes; '[' has none). */
static int skip_quoted(const char *t, int end, int i) {
  char close = t[i] == '[' ? ']' : t[i];
  for (int j = i + 1; j < end; j++) {
    if (t[j] != close) continue;
    if (close != ']' && j + 1 < end && t[j + 1] == close) {
      j++;
      continue;
    }
    return j + 1;
  }
  return end;
}

/* Offset past whitespace and comments from i. */
static int skip_blank(const char *t, int end, int i) {
  for (;;) {
    while (i < end && is_space((unsigned char)t[i])) i++;
    if (i + 1 < end && t[i] == '-' && t[i + 1] == '-') {
      while (i < end && t[i] != '\n') i++;
    } else if (i + 1 < end && t[i] == '/' && t[i + 1] == '*') {
      int j = i + 2;
      while (j + 1 < end && !(t[j] == '*' && t[j + 1] == '/')) j++;
      i = j + 1 < end ? j + 2 : end;
    } else {
      return i;
    }
  }
}

static bool word_at(const char *t, int end, int i, const char *kw, int *next) {
  int n = (int)strlen(kw);
  if (i + n > end || !rt_strnieq(t + i, kw, (size_t)n)) return false;
  if (i + n < end && is_word((unsigned char)t[i + n])) return false;
  *next = i + n;
  return true;
}

/* Whether the text after '(' at i starts a pipeline (cheap: no lexing). */
static bool pipeline_follows(const char *t, int end, int i) {
  int j = skip_blank(t, end, i + 1), k;
  if (word_at(t, end, j, "FROM", &k)) return true;
  /* or an operator source of ir/sources.def */
  static const char *const words[][2] = {
#define SOURCE(name, str, w1, w2, parse, bind, words) {w1, w2},
#include "../ir/sources.def"
#undef SOURCE
  };
  for (size_t s = 0; s < sizeof words / sizeof words[0]; s++)
    if (word_at(t, end, j, words[s][0], &k) &&
        (!words[s][1] || word_at(t, end, skip_blank(t, end, k), words[s][1], &k)))
      return true;
  return false;
}

/* Parses the pipeline whose '(' is at lp; fills sp. Returns the offset
 * past its ')', or -1 with err set. */
static int parse_one(rt_arena *a, const char *text, int lp, int end, params *ps, fe_sqlpipe *sp,
                     rt_err *err) {
  fe_parser p;
  memset(&p, 0, sizeof p);
  p.a = a;
  p.text = text;
  p.err = err;
  p.end = end;
  p.toks = fe_lex_range(a, text, lp + 1, end, &p.ntok, &p.lexerr);
  if (!p.toks) return rt_errorf(err, lp, "out of memory"), -1;
  /* The pipeline runs to the ')' that closes it: number its parameters
   * (in text order) up to there, renaming them. */
  int depth = 0, close = -1;
  for (int i = 0; i < p.ntok && close < 0; i++) {
    fe_token *tk = &p.toks[i];
    if (fe_tok_is_punct(tk, "(")) depth++;
    else if (fe_tok_is_punct(tk, ")") && depth-- == 0) close = i;
    else if (tk->kind == TK_PARAM) {
      int k = param_number(ps, tk->text, tk->len);
      if (k > 0) {
        tk->text = rt_arena_printf(a, "?%d", k);
        if (!tk->text) ps->oom = true;
        if (ps->oom) return rt_errorf(err, tk->pos, "out of memory"), -1;
        tk->textlen = strlen(tk->text);
        if (k > sp->nargs) sp->nargs = k;
      } else if (ps->oom) {
        return rt_errorf(err, tk->pos, "out of memory"), -1;
      }
    }
  }
  sp->start = lp;
  sp->pipe = fe_parse_pipeline_at(&p);
  if (!sp->pipe || p.oom) return -1;
  if (!fe_tok_is_punct(fe_cur(&p), ")")) {
    fe_syntax_error(&p, fe_cur(&p), "|> or ')'");
    return -1;
  }
  const fe_token *rp = fe_cur(&p);
  sp->end = rp->pos + 1;
  return sp->end;
}

/* CREATE [TEMP|TEMPORARY] VIEW|TRIGGER: the text is kept in the schema. */
static bool kept_in_schema(const char *t, int end, int i) {
  int k;
  if (!word_at(t, end, skip_blank(t, end, i), "CREATE", &k)) return false;
  int j = skip_blank(t, end, k);
  if (word_at(t, end, j, "TEMP", &k) || word_at(t, end, j, "TEMPORARY", &k))
    j = skip_blank(t, end, k);
  return word_at(t, end, j, "VIEW", &k) || word_at(t, end, j, "TRIGGER", &k);
}

int fe_sql_pipelines(rt_arena *a, const char *text, int start, int end, const char *stage,
                     fe_sqlpipes *out, rt_err *err) {
  memset(out, 0, sizeof *out);
  params ps = {.a = a};
  int cap = 0;
  out->kept = kept_in_schema(text, end, start);
  int i = start;
  bool after_from = false;   /* the last token was FROM or JOIN */
  while (i < end) {
    unsigned char c = (unsigned char)text[i];
    bool was_from = after_from;
    if (!is_space(c)) after_from = false;
    if (c == '-' && i + 1 < end && text[i + 1] == '-') {
      after_from = was_from;
      while (i < end && text[i] != '\n') i++;
    } else if (c == '/' && i + 1 < end && text[i + 1] == '*') {
      after_from = was_from;
      i = skip_blank(text, end, i);
    } else if (c == '\'' || c == '"' || c == '`' || c == '[') {
      i = skip_quoted(text, end, i);
    } else if (c == '?' || ((c == '$' || c == ':' || c == '@') && i + 1 < end &&
                            is_id_char((unsigned char)text[i + 1]))) {
      int j = i + 1;
      if (c == '?') {
        while (j < end && text[j] >= '0' && text[j] <= '9') j++;
      } else {
        while (j < end && is_id_char((unsigned char)text[j])) j++;
      }
      /* `FROM @input` is only ever a SQL stage's (elsewhere SQLite sees a
       * parameter where a table must be: a syntax error) */
      if (was_from && fe_is_sql_input(text + i, (size_t)(j - i)))
        return rt_errorf(err, i, "%s%s%s", stage ? stage : "", stage ? ": " : "", FE_SQL_INPUT_ONLY), -1;
      param_number(&ps, text + i, j - i);
      if (ps.oom) return rt_errorf(err, i, "%s%sout of memory", stage ? stage : "",
                                   stage ? ": " : ""), -1;
      i = j;
    } else if (is_word(c)) {
      int w = i, k;
      while (i < end && is_word((unsigned char)text[i])) i++;
      after_from = word_at(text, i, w, "FROM", &k) || word_at(text, i, w, "JOIN", &k);
    } else if (c == '|' && i + 1 < end && text[i + 1] == '>') {
      return rt_errorf(err, i,
                       "%s%ssyntax error near '|>': pipe operators need a pipeline that starts "
                       "with FROM", stage ? stage : "", stage ? ": " : ""), -1;
    } else if (c == '(' && pipeline_follows(text, end, i)) {
      fe_sqlpipe *sp = fe_push(a, &out->v, &out->n, &cap, sizeof *sp);
      if (!sp) return rt_errorf(err, i, "%s%sout of memory", stage ? stage : "",
                                stage ? ": " : ""), -1;
      sp->table = was_from;
      i = parse_one(a, text, i, end, &ps, sp, err);
      if (i < 0) return -1;
    } else {
      i++;
    }
  }
  /* How each pipeline's arguments are written: the name where the
   * statement has one, else ?k. */
  for (int n = 0; n < out->n; n++) {
    fe_sqlpipe *sp = &out->v[n];
    sp->args = rt_arena_alloc(a, sizeof *sp->args * (size_t)(sp->nargs + 1));
    for (int k = 1; sp->args && k <= sp->nargs; k++)
      if (!(sp->args[k - 1] = k <= ps.max && ps.names[k - 1] ? ps.names[k - 1]
                                                             : rt_arena_printf(a, "?%d", k)))
        sp->args = NULL;
    if (!sp->args)
      return rt_errorf(err, sp->start, "%s%sout of memory", stage ? stage : "", stage ? ": " : ""),
             -1;
  }
  return out->n;
}
