/*
 * complete.c — tab completion candidates for the shell, by context (see
 * cli_complete in shell.h): dot-commands and their arguments from dot.c's
 * table; after `|>` the stages' words from ir/stages.def; after FROM and
 * JOIN the tables; elsewhere the columns of the tables in scope,
 * keywords, functions (ir/funcs.def) and aggregates (ir/aggs.def).
 * Tables, views and columns come from the engine's SQLite connection
 * (columnar tables are temp virtual tables there). Independent of libedit
 * so tests can call it.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "shell.h"

/* Keywords that no list below names: SQL's, PerfettoSQL's, FROM (the
 * operator sources come from ir/sources.def); and those of expressions (CASE, BETWEEN, AS
 * names …, and what starts a subquery: EXISTS, SELECT, FROM …), which a
 * stage's body takes too. */
static const char *const keywords[] = {
    "CREATE", "DELETE", "FROM", "INSERT", "INTO", "ON",
    "PERFETTO", "PRAGMA", "REPLACE", "SELECT", "TABLE", "UPDATE", "VALUES", "VIEW", "WHERE",
    "WITH",
};
static const char *const expr_keywords[] = {
    "AS", "BETWEEN", "BY", "CASE", "DISTINCT", "ELSE", "END", "EXISTS", "FROM", "SELECT",
    "THEN", "VALUES", "WHEN", "WITH",
};

/* The words of the pipe language's lists (data only: ir/stages.def,
 * aggs.def, windows.def and exprs.def are X-macro lists, no internal
 * header): each aggregate's and window function's name, each operator
 * spelled in words (AND, IS NOT, IS NULL …); the stages' below (a
 * window's OVER words among their syntax words). */
static const char *const list_words[] = {
#define AGG(name, sql, printed, out, in_agg, in_tree, in_flat, in_list, lo, hi) sql,
#include "../ir/aggs.def"
#undef AGG
#define WIN(name, sql, printed, out, arg, lo, hi) sql,
#include "../ir/windows.def"
#undef WIN
#define EX(name, str, arity, form, prec, nulls) str,
#include "../ir/exprs.def"
#undef EX
};

/* Each stage's name ("INTERVAL FLATTEN") and its other syntax words,
 * which may put LEFT before the name. */
typedef struct stage_words {
  const char *name, *words;
} stage_words;
static const stage_words stages[] = {
#define STAGE(name, str, w1, w2, parse, bind, words) {str, words},
#include "../ir/stages.def"
#undef STAGE
};

/* Each operator source's name ("INTERVAL INTERSECTION OF") and its other
 * syntax words (ir/sources.def). */
static const stage_words sources[] = {
#define SOURCE(name, str, w1, w2, parse, bind, words) {str, words},
#include "../ir/sources.def"
#undef SOURCE
};

/* Scalar function names (ir/funcs.def), offered in the case of the
 * prefix. */
static const char *const function_names[] = {
#define FN(name) name,
#include "../ir/funcs.def"
#undef FN
};

/* ---- the candidate list ------------------------------------------------- */

typedef struct list {
  char **v;
  size_t n, cap;
  int failed;
} list;

static void add_n(list *l, const char *s, size_t len, const char *prefix) {
  size_t pn = strlen(prefix);
  if (l->failed || len < pn || strncasecmp(s, prefix, pn)) return;
  if (l->n + 2 > l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 32;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v) {
      l->failed = 1;
      return;
    }
    l->v = v;
    l->cap = cap;
  }
  if (!(l->v[l->n] = strndup(s, len))) {
    l->failed = 1;
    return;
  }
  l->n++;
}

static void add(list *l, const char *s, const char *prefix) { add_n(l, s, strlen(s), prefix); }

/* A keyword in the case the user types (lower case if the prefix starts
 * lower case). */
static void add_kw(list *l, const char *kw, size_t len, const char *prefix) {
  char buf[64];
  int lower = prefix[0] >= 'a' && prefix[0] <= 'z';
  if (len >= sizeof buf) return;
  for (size_t i = 0; i < len; i++) {
    char ch = kw[i];
    buf[i] = lower && ch >= 'A' && ch <= 'Z' ? (char)(ch | 0x20)
             : !lower && ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch;
  }
  add_n(l, buf, len, prefix);
}

/* The n-th word (0-based) of a space-separated list: its start and
 * length, or NULL. */
static const char *nth_word(const char *words, int n, size_t *len) {
  const char *w = words;
  for (int i = 0;; i++) {
    while (*w == ' ') w++;
    if (!*w) return NULL;
    const char *e = strchr(w, ' ');
    size_t k = e ? (size_t)(e - w) : strlen(w);
    if (i == n) {
      *len = k;
      return w;
    }
    w += k;
  }
}

/* Adds each word of `words` that is a keyword (upper case letters and
 * '_': not an operator sign or a function's own name). */
static void add_words(list *l, const char *words, const char *prefix) {
  size_t k;
  for (int i = 0; nth_word(words, i, &k); i++) {
    const char *w = nth_word(words, i, &k);
    bool word = k > 0;
    for (size_t j = 0; j < k; j++) word &= (w[j] >= 'A' && w[j] <= 'Z') || w[j] == '_';
    if (word) add_kw(l, w, k, prefix);
  }
}

/* Adds every string the query's first column returns (?1 bound to arg
 * when given). */
static void add_query(list *l, sqlite3 *db, const char *sql, const char *arg,
                      const char *prefix) {
  sqlite3_stmt *st = NULL;
  if (!db || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return;
  if (arg) sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *s = (const char *)sqlite3_column_text(st, 0);
    if (s) add(l, s, prefix);
  }
  sqlite3_finalize(st);
}

static void add_tables(list *l, sqlite3 *db, const char *prefix) {
  add_query(l, db, cli_catalog_sql, NULL, prefix);
}

static void add_columns(list *l, sqlite3 *db, const char *table, const char *prefix) {
  add_query(l, db, "SELECT name FROM pragma_table_info(?1)", table, prefix);
}

/* Keywords, functions and aggregates: what an expression may hold. */
static void add_expression_words(list *l, const char *prefix) {
  for (size_t i = 0; i < sizeof expr_keywords / sizeof *expr_keywords; i++)
    add_words(l, expr_keywords[i], prefix);
  for (size_t i = 0; i < sizeof list_words / sizeof *list_words; i++)
    add_words(l, list_words[i], prefix);
  for (size_t i = 0; i < sizeof function_names / sizeof *function_names; i++)
    add_kw(l, function_names[i], strlen(function_names[i]), prefix);
}

/* ---- reading the statement so far ---------------------------------------- */

enum { TOK_WORD, TOK_PIPE, TOK_PUNCT, TOK_STRING };
typedef struct tok {
  int kind;
  const char *s;   /* a word without its quotes */
  size_t n;
} tok;

typedef struct toks {
  tok *v;
  size_t n, cap;
} toks;

static bool is_word_char(unsigned char c) {
  return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}

/* The tokens of the last statement of text (after its last top-level
 * ';'), comments skipped. 0, or -1 when out of memory. */
static int lex(const char *t, size_t len, toks *out) {
  int depth = 0;
  for (size_t i = 0; i < len;) {
    unsigned char c = (unsigned char)t[i];
    tok k = {TOK_PUNCT, t + i, 1};
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      i++;
      continue;
    }
    if (c == '-' && i + 1 < len && t[i + 1] == '-') {
      while (i < len && t[i] != '\n') i++;
      continue;
    }
    if (c == '/' && i + 1 < len && t[i + 1] == '*') {
      const char *e = strstr(t + i + 2, "*/");
      i = e ? (size_t)(e - t) + 2 : len;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      char close = c == '[' ? ']' : (char)c;
      size_t j = i + 1;
      while (j < len && t[j] != close) j++;
      k = (tok){c == '\'' ? TOK_STRING : TOK_WORD, t + i + 1, j - i - 1};
      i = j < len ? j + 1 : len;
    } else if (is_word_char(c)) {
      size_t j = i;
      while (j < len && is_word_char((unsigned char)t[j])) j++;
      k = (tok){TOK_WORD, t + i, j - i};
      i = j;
    } else if (c == '|' && i + 1 < len && t[i + 1] == '>') {
      k = (tok){TOK_PIPE, t + i, 2};
      i += 2;
    } else {
      i++;
      if (c == '(') depth++;
      else if (c == ')' && depth > 0) depth--;
      else if (c == ';' && depth == 0) {
        out->n = 0;   /* a new statement */
        continue;
      }
    }
    if (out->n == out->cap) {
      size_t cap = out->cap ? out->cap * 2 : 64;
      tok *v = realloc(out->v, cap * sizeof *v);
      if (!v) return -1;
      out->v = v;
      out->cap = cap;
    }
    out->v[out->n++] = k;
  }
  return 0;
}

static bool tok_is(const tok *k, const char *word) {
  return k->kind == TOK_WORD && k->n == strlen(word) && !strncasecmp(k->s, word, k->n);
}

/* After `|>` and the words w[0..n): the next word of every stage whose
 * name (LEFT before it when its syntax has LEFT) starts with them. 1 when
 * the words are such a start (the candidates are the stage words), 0
 * when the stage is named already (its body follows: *named is its index
 * in stages[], the longest name that matched) or none matches (-1). */
static int stage_next(list *l, const tok *w, size_t n, const char *prefix, int *named) {
  int any = 0;
  size_t named_len = 0;
  *named = -1;
  for (size_t i = 0; i < sizeof stages / sizeof *stages; i++) {
    size_t k, lk;
    bool has_left = false;
    for (int j = 0; nth_word(stages[i].words, j, &lk); j++)
      has_left |= lk == 4 && !strncmp(nth_word(stages[i].words, j, &lk), "LEFT", 4);
    /* the name's words, maybe after LEFT */
    for (int with_left = 0; with_left <= (int)has_left; with_left++) {
      /* the name's words (LEFT first) matched against the words typed,
       * as far as both go */
      size_t m = 0;
      const char *nw = NULL;
      for (;; m++) {
        if (with_left && m == 0) nw = "LEFT", k = 4;
        else nw = nth_word(stages[i].name, (int)m - with_left, &k);
        if (!nw || m == n) break;
        if (w[m].kind != TOK_WORD || w[m].n != k || strncasecmp(w[m].s, nw, k)) break;
      }
      if (!nw) {   /* the whole name is there: its body follows */
        if (m > named_len) *named = (int)i, named_len = m;
      } else if (m == n) {   /* a start of the name: offer its next word */
        any = 1;
        add_kw(l, nw, k, prefix);
      }
    }
  }
  return any;
}

/* Words the generic context adds: the columns of the tables in scope
 * (after FROM and JOIN) and names made with AS; every table's columns and
 * the table names when none is in scope. */
static void add_scope(list *l, sqlite3 *db, const toks *t, const char *prefix) {
  int tables = 0;
  for (size_t i = 0; i + 1 < t->n; i++) {
    const tok *k = &t->v[i], *next = &t->v[i + 1];
    if (next->kind != TOK_WORD) continue;
    if (tok_is(k, "FROM") || tok_is(k, "JOIN")) {
      char name[256];
      if (next->n >= sizeof name) continue;
      memcpy(name, next->s, next->n);
      name[next->n] = 0;
      add_columns(l, db, name, prefix);
      tables++;
    } else if (tok_is(k, "AS")) {
      add_n(l, next->s, next->n, prefix);
    }
  }
  if (tables) return;
  add_tables(l, db, prefix);
  char *all = sqlite3_mprintf("SELECT DISTINCT c.name FROM (%s) t, pragma_table_info(t.name) c",
                              cli_catalog_sql);
  if (!all) l->failed = 1;
  else add_query(l, db, all, NULL, prefix);
  sqlite3_free(all);
}

/* ---- dot-commands ------------------------------------------------------- */

static void complete_dot(list *l, sqlite3 *db, const toks *t, const char *prefix, int *files) {
  if (t->n == 0) {   /* the command itself: ".sc" */
    for (int i = 0; i < cli_ndot_cmds; i++) add(l, cli_dot_cmds[i].name, prefix);
    return;
  }
  /* The command typed (maybe shortened), then its n-th argument. */
  const cli_dot_cmd *d = NULL;
  for (int i = 0; i < cli_ndot_cmds; i++) {
    const char *name = cli_dot_cmds[i].name + 1;
    if (t->v[0].n == strlen(name) && !strncmp(t->v[0].s, name, t->v[0].n)) d = &cli_dot_cmds[i];
  }
  for (int i = 0; !d && i < cli_ndot_cmds; i++)
    if (!strncmp(t->v[0].s, cli_dot_cmds[i].name + 1, t->v[0].n)) d = &cli_dot_cmds[i];
  if (!d) return;
  size_t arg = t->n;   /* 1 = the first argument */
  switch (d->arg) {
  case CLI_ARG_WORDS:
    if (arg == 1)
      for (int i = 0; d->words[i]; i++) add(l, d->words[i], prefix);
    break;
  case CLI_ARG_TABLES: add_tables(l, db, prefix); break;
  case CLI_ARG_FILES: *files = 1; break;
  case CLI_ARG_COMMANDS:
    for (int i = 0; i < cli_ndot_cmds; i++) add(l, cli_dot_cmds[i].name + 1, prefix);
    break;
  case CLI_ARG_NONE: break;
  }
}

/* ---- completion --------------------------------------------------------- */

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char **cli_complete(pj_engine *e, const char *text, size_t start, const char *prefix,
                    int *files) {
  list l = {0};
  toks t = {0};
  sqlite3 *db = e ? pj_engine_sqlite(e) : NULL;
  int file_word = 0;
  const char *p = text;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  size_t dot = (size_t)(p - text);
  if (dot >= start && prefix[0] == '.') {
    complete_dot(&l, db, &t, prefix, &file_word);   /* the command itself */
  } else if (*p == '.') {
    /* ".mode j": the words between the dot and the word (none: the
     * command itself is being completed) */
    if (start > dot && lex(p + 1, start - dot - 1, &t) < 0) l.failed = 1;
    else complete_dot(&l, db, &t, prefix, &file_word);
  } else if (lex(text, start, &t) < 0) {
    l.failed = 1;
  } else {
    /* the words since the last |>, if they are all words */
    size_t pipe = t.n;
    for (size_t i = t.n; i > 0; i--)
      if (t.v[i - 1].kind == TOK_PIPE) {
        pipe = i - 1;
        break;
      }
    const tok *last = t.n ? &t.v[t.n - 1] : NULL;
    int stage = -1;
    if (pipe < t.n && stage_next(&l, t.v + pipe + 1, t.n - pipe - 1, prefix, &stage)) {
      /* stage words only */
    } else if (last && (tok_is(last, "FROM") || tok_is(last, "JOIN"))) {
      add_tables(&l, db, prefix);
      /* a source's first word (INTERVAL, INTERVALS, …), for `FROM (` */
      for (size_t i = 0; i < sizeof sources / sizeof *sources && tok_is(last, "FROM"); i++) {
        size_t len;
        const char *w = nth_word(sources[i].name, 0, &len);
        if (w) add_kw(&l, w, len, prefix);
      }
    } else if (stage >= 0) {
      /* a stage's body: expressions, the stage's own words, the scope */
      add_expression_words(&l, prefix);
      add_words(&l, stages[stage].words, prefix);
      add_scope(&l, db, &t, prefix);
    } else {
      /* SQL, or the source before the first |>: every keyword */
      add_expression_words(&l, prefix);
      for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
        add_words(&l, keywords[i], prefix);
      for (size_t i = 0; i < sizeof stages / sizeof *stages; i++) {
        add_words(&l, stages[i].name, prefix);
        add_words(&l, stages[i].words, prefix);
      }
      for (size_t i = 0; i < sizeof sources / sizeof *sources; i++) {
        add_words(&l, sources[i].name, prefix);
        add_words(&l, sources[i].words, prefix);
      }
      add_scope(&l, db, &t, prefix);
    }
  }
  free(t.v);
  if (files) *files = file_word;
  if (l.failed) {
    for (size_t i = 0; i < l.n; i++) free(l.v[i]);
    free(l.v);
    return NULL;
  }
  if (!l.v && !(l.v = calloc(1, sizeof *l.v))) return NULL;
  qsort(l.v, l.n, sizeof *l.v, cmp);
  size_t out = 0;
  for (size_t i = 0; i < l.n; i++) {
    if (out && !strcmp(l.v[out - 1], l.v[i])) free(l.v[i]);
    else l.v[out++] = l.v[i];
  }
  l.v[out] = NULL;
  return l.v;
}

void cli_complete_free(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}
