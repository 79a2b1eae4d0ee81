/*
 * lex.c — the tokenizer, compatible with SQLite's (tokenize.c) for what
 * pipe queries use.
 *
 * Differences that matter: `|>` is one token (TK_PIPE) while `| >` stays two;
 * unterminated block comments are errors (SQLite silently ends them at end
 * of input). A decimal integer too big for int64 becomes a float, as in
 * SQLite; a hex literal of more than 64 bits is an error, also as in SQLite.
 * Keywords are not recognized here: every word is a TK_IDENT and the parser
 * matches words case-insensitively, so pipe keywords stay valid identifiers.
 * With FE_LEX_BANG a lone `!` is a token, for macro invocations `m!(…)`
 * (macro.c expands them before the parser sees the text; the parser's own
 * lexing still refuses a `!`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* fe_push lives here, at the bottom of frontend/ (the parser uses it
 * too), so the lexer calls nothing of the parser. */
void *fe_push(rt_arena *a, void *arrp, int *n, int *cap, size_t size) {
  /* arrp points at the caller's array pointer (of any element type); it is
   * read and written through memcpy to stay clear of aliasing rules. */
  char *arr;
  memcpy(&arr, arrp, sizeof arr);
  if (*n == *cap) {
    int ncap = *cap ? *cap * 2 : 4;
    char *grown = rt_arena_alloc(a, (size_t)ncap * size);
    if (!grown) return NULL;   /* out of memory: the array is as it was */
    if (*n) memcpy(grown, arr, (size_t)*n * size);
    arr = grown;
    *cap = ncap;
    memcpy(arrp, &arr, sizeof arr);
  }
  return arr + (size_t)(*n)++ * size; /* zeroed: fresh arena memory */
}

static bool is_space(unsigned char c) { return c == ' ' || (c >= 0x09 && c <= 0x0d); }
static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_xdigit(unsigned char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static bool is_alpha(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
/* SQLite treats every byte >= 0x80 as part of an identifier (UTF-8). */
static bool is_id_start(unsigned char c) { return is_alpha(c) || c == '_' || c >= 0x80; }
static bool is_id_char(unsigned char c) { return is_id_start(c) || is_digit(c) || c == '$'; }

static int xdigit_value(unsigned char c) {
  if (is_digit(c)) return c - '0';
  return (c | 0x20) - 'a' + 10;
}

/* Multi-character operators, longest first so that `<<` wins over `<`. */
static const char *const k_ops[] = {
  "->>", "||", "<<", ">>", "<=", ">=", "!=", "<>", "==", "->",
  "(", ")", ",", ".", ";", "*", "+", "-", "/", "%", "|", "&", "~", "<", ">", "=",
};

typedef struct lexer {
  rt_arena *a;
  const char *s;
  int end;
  fe_token *toks;
  int n, cap;
  rt_err *err;
  bool bang;           /* FE_LEX_BANG: a lone '!' is a token (macro calls) */
  bool oom;            /* out of memory: the lexer returns NULL */
} lexer;

static fe_token *lex_oom(lexer *L, int pos) {
  L->oom = true;
  rt_errorf(L->err, pos, "out of memory");
  return NULL;
}

/* The new token, or NULL (out of memory). */
static fe_token *add(lexer *L, fe_tokkind kind, int pos, int len) {
  fe_token *t = fe_push(L->a, &L->toks, &L->n, &L->cap, sizeof *t);
  if (!t) return lex_oom(L, pos);
  t->kind = kind;
  t->pos = pos;
  t->len = len;
  t->text = rt_arena_strndup(L->a, L->s + pos, (size_t)len);
  if (!t->text) return lex_oom(L, pos);
  t->textlen = (size_t)len;
  return t;
}

/* Reads a quoted run starting at the opening quote; a doubled closing
 * quote stands for one (except for `[…]`, which has no escape). Returns
 * the offset past the closing quote, or -1 if unterminated. The unquoted
 * value goes to the token. */
static int lex_quoted(lexer *L, int i, fe_tokkind kind) {
  char open = L->s[i];
  char close = open == '[' ? ']' : open;
  int j = i + 1;
  size_t n = 0;
  for (;;) {
    if (j >= L->end) return -1;
    if (L->s[j] == close) {
      if (close != ']' && j + 1 < L->end && L->s[j + 1] == close) {
        j += 2;
        n++;
        continue;
      }
      break;
    }
    j++;
    n++;
  }
  fe_token *t = add(L, kind, i, j + 1 - i);
  char *v = t ? rt_arena_alloc(L->a, n + 1) : NULL;
  if (!v) return lex_oom(L, i), -1;
  size_t k = 0;
  for (int q = i + 1; q < j; q++) {
    v[k++] = L->s[q];
    if (L->s[q] == close && close != ']') q++;
  }
  t->text = v;
  t->textlen = n;
  return j + 1;
}

static int lex_error(lexer *L, int pos, const char *what) {
  return rt_errorf(L->err, pos, "syntax error: %s", what);
}

/* Names longer than this are refused: a name is echoed in messages, plans
 * and result headers, and no real schema needs more (SQLite has no limit
 * of its own). A string literal has no such limit. */
#define FE_MAX_IDENT 1024

static int ident_too_long(lexer *L, int pos) {
  return rt_errorf(L->err, pos, "syntax error: a name is longer than %d bytes", FE_MAX_IDENT);
}

/* A number starting at i (a digit, or '.' followed by a digit). */
static int lex_number(lexer *L, int i) {
  const char *s = L->s;
  int j = i;
  bool is_float = false, hex = false;
  if (s[j] == '0' && j + 2 < L->end && (s[j + 1] == 'x' || s[j + 1] == 'X') &&
      is_xdigit((unsigned char)s[j + 2])) {
    hex = true;
    j += 2;
    while (j < L->end && is_xdigit((unsigned char)s[j])) j++;
  } else {
    while (j < L->end && is_digit((unsigned char)s[j])) j++;
    if (j < L->end && s[j] == '.') {
      is_float = true;
      j++;
      while (j < L->end && is_digit((unsigned char)s[j])) j++;
    }
    /* An exponent needs a digit, maybe after a sign; "1e" is not a number. */
    if (j < L->end && (s[j] == 'e' || s[j] == 'E')) {
      int k = j + 1;
      if (k < L->end && (s[k] == '+' || s[k] == '-')) k++;
      if (k < L->end && is_digit((unsigned char)s[k])) {
        is_float = true;
        j = k;
        while (j < L->end && is_digit((unsigned char)s[j])) j++;
      }
    }
  }
  /* As SQLite: a number running into identifier characters ("12abc",
   * "1e", "0x") is one unrecognized token. */
  int64_t unit = 0;
  int stop = j;   /* the token's end: past the unit when there is one */
  if (j < L->end && is_id_char((unsigned char)s[j])) {
    int k = j;
    while (k < L->end && is_id_char((unsigned char)s[k])) k++;
    /* `100ms`: a time unit after a decimal integer (QUANTIZE's width) */
    static const struct { const char *u; int64_t mul; } units[] = {
        {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    for (size_t u = 0; !hex && !is_float && u < sizeof units / sizeof units[0]; u++)
      if ((size_t)(k - j) == strlen(units[u].u) && !strncmp(s + j, units[u].u, (size_t)(k - j)))
        unit = units[u].mul;
    stop = k;
    if (!unit) {
      rt_errorf(L->err, i, "syntax error: unrecognized token '%.*s'", k - i, s + i);
      return -1;
    }
  }
  fe_token *t = add(L, TK_INT, i, stop - i);
  if (!t) return -1;
  t->unit = unit;
  if (hex) {
    uint64_t v = 0;
    int digits = 0;
    for (int k = i + 2; k < j; k++) {
      if (digits == 0 && s[k] == '0') continue; /* leading zeros do not count */
      if (++digits > 16) {
        rt_errorf(L->err, i, "syntax error: hex literal too big: '%.*s'", j - i, s + i);
        return -1;
      }
      v = v << 4 | (uint64_t)xdigit_value((unsigned char)s[k]);
    }
    /* 0xFFFFFFFFFFFFFFFF is -1, as in SQLite (two's complement). */
    t->ival = (int64_t)v;
    return j;
  }
  if (!is_float) {
    uint64_t v = 0;
    bool overflow = false;
    for (int k = i; k < j && !overflow; k++) {
      unsigned d = (unsigned)(s[k] - '0');
      if (v > (UINT64_MAX - d) / 10) overflow = true;
      else v = v * 10 + d;
    }
    if (!overflow && v <= (uint64_t)INT64_MAX) {
      t->ival = (int64_t)v;
      return stop;
    }
    if (unit) {
      rt_errorf(L->err, i, "syntax error: integer literal too big: '%.*s'", stop - i, s + i);
      return -1;
    }
  }
  /* A float, or a decimal too big for int64 (which SQLite reads as a
   * float); t->text is NUL-terminated, so strtod can read it. */
  t->kind = TK_FLOAT;
  t->fval = strtod(t->text, NULL);
  return j;
}

/* A parameter: ?, ?NNN, $name, :name, @name. */
static int lex_param(lexer *L, int i) {
  const char *s = L->s;
  int j = i + 1;
  if (s[i] == '?') {
    while (j < L->end && is_digit((unsigned char)s[j])) j++;
  } else {
    while (j < L->end && is_id_char((unsigned char)s[j])) j++;
    if (j == i + 1) {
      rt_errorf(L->err, i, "syntax error: unrecognized token '%c'", s[i]);
      return -1;
    }
  }
  return add(L, TK_PARAM, i, j - i) ? j : -1;
}

/* One token (or whitespace / comment) at i; returns the next offset, or -1
 * on error, which is always reported at offset i. */
static int lex_one(lexer *L, int i) {
  const char *s = L->s;
  unsigned char c = (unsigned char)s[i];
  if (is_space(c)) {
    while (i < L->end && is_space((unsigned char)s[i])) i++;
    return i;
  }
  if (c == '-' && i + 1 < L->end && s[i + 1] == '-') {
    while (i < L->end && s[i] != '\n') i++;
    return i;
  }
  if (c == '/' && i + 1 < L->end && s[i + 1] == '*') {
    for (int j = i + 2; j + 1 < L->end; j++)
      if (s[j] == '*' && s[j + 1] == '/') return j + 2;
    lex_error(L, i, "unterminated comment");
    return -1;
  }
  if (c == '\'' || c == '"' || c == '`' || c == '[') {
    int j = lex_quoted(L, i, c == '\'' ? TK_STRING : TK_QIDENT);
    if (j < 0) {
      if (!L->oom)
        lex_error(L, i, c == '\'' ? "unterminated string" : "unterminated quoted identifier");
      return -1;
    }
    if (c != '\'' && L->toks[L->n - 1].textlen > FE_MAX_IDENT) {
      L->n--;   /* the token is not kept: the error ends the input here */
      ident_too_long(L, i);
      return -1;
    }
    return j;
  }
  if (is_digit(c) || (c == '.' && i + 1 < L->end && is_digit((unsigned char)s[i + 1])))
    return lex_number(L, i);
  if (is_id_start(c)) {
    int j = i;
    while (j < L->end && is_id_char((unsigned char)s[j])) j++;
    if (j - i > FE_MAX_IDENT) {
      ident_too_long(L, i);
      return -1;
    }
    return add(L, TK_IDENT, i, j - i) ? j : -1;
  }
  if (c == '?' || c == '$' || c == ':' || c == '@') return lex_param(L, i);
  if (c == '|' && i + 1 < L->end && s[i + 1] == '>') return add(L, TK_PIPE, i, 2) ? i + 2 : -1;
  /* `name!(…)` invokes a macro (macro.c); elsewhere '!' is only part of != */
  if (c == '!' && L->bang && !(i + 1 < L->end && s[i + 1] == '='))
    return add(L, TK_PUNCT, i, 1) ? i + 1 : -1;
  for (size_t k = 0; k < sizeof k_ops / sizeof k_ops[0]; k++) {
    size_t n = strlen(k_ops[k]);
    if ((size_t)(L->end - i) >= n && memcmp(s + i, k_ops[k], n) == 0)
      return add(L, TK_PUNCT, i, (int)n) ? i + (int)n : -1;
  }
  if (c == 0)
    rt_errorf(L->err, i, "syntax error: unexpected NUL byte (a script is text; a NUL belongs "
                         "only inside a string literal)");
  else if (c >= 0x20 && c < 0x7f)
    rt_errorf(L->err, i, "syntax error: unrecognized token '%c'", c);
  else
    rt_errorf(L->err, i, "syntax error: unrecognized character 0x%02x", c);
  return -1;
}

fe_token *fe_lex_range_flags(rt_arena *a, const char *text, int start, int end, int *ntok,
                             rt_err *err, unsigned flags) {
  lexer L = {.a = a, .s = text, .end = end, .err = err, .bang = (flags & FE_LEX_BANG) != 0};
  int i = start;
  while (i < end) {
    int next = lex_one(&L, i);
    if (next < 0) break; /* every lexical error is at the token start i */
    i = next;
  }
  fe_token *t = L.oom ? NULL : fe_push(a, &L.toks, &L.n, &L.cap, sizeof *t);
  if (!t) {
    lex_oom(&L, i);
    *ntok = 0;
    return NULL;
  }
  t->kind = TK_EOF;
  t->pos = i < end ? i : end;
  static char empty[1];   /* EOF's text (never written) */
  t->text = empty;
  *ntok = L.n;
  return L.toks;
}

fe_token *fe_lex_range(rt_arena *a, const char *text, int start, int end, int *ntok,
                       rt_err *err) {
  return fe_lex_range_flags(a, text, start, end, ntok, err, 0);
}

fe_token *fe_lex(rt_arena *a, const char *text, size_t len, int *ntok, rt_err *err) {
  rt_err local = {0};
  fe_token *toks = fe_lex_range(a, text, 0, (int)len, ntok, &local);
  if (local.set) {
    rt_errorf(err, local.offset, "%s", local.msg);
    return NULL;
  }
  return toks;
}
