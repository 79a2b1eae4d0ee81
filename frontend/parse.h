/*
 * parse.h — internals shared by the frontend's files (lex.c, parse.c,
 * parse_expr.c, parse_stage.c). Not part of the contract: other parts use
 * ast.h only.
 *
 * The parser is a hand-written recursive-descent parser over the token
 * array of fe_lex. Every parse function returns NULL (or false) after
 * recording the first error in p->err; callers just propagate the failure.
 */
#ifndef PJ_FE_PARSE_H
#define PJ_FE_PARSE_H

#include "ast.h"

/* Deepest expression (and subquery) nesting the parser accepts, as
 * SQLite's SQLITE_MAX_EXPR_DEPTH. It bounds the parser's recursion and the
 * height of every expression tree, so later passes may recurse freely. */
#define FE_MAX_DEPTH 1000

/* Tokenizes text[start..end) with offsets relative to `text`. Always
 * returns an array ending with TK_EOF; on a lexical error the EOF token
 * sits at the error's offset, *err is set and the tokens before it are
 * still valid (so the parser can report the error with its stage). */
fe_token *fe_lex_range(rt_arena *a, const char *text, int start, int end, int *ntok,
                       rt_err *err);
/* The same with options: FE_LEX_BANG makes a lone '!' a TK_PUNCT token. */
enum { FE_LEX_BANG = 1 };
fe_token *fe_lex_range_flags(rt_arena *a, const char *text, int start, int end, int *ntok,
                             rt_err *err, unsigned flags);

typedef struct fe_parser {
  rt_arena *a;
  const char *text;
  fe_token *toks;
  int ntok;
  int i;               /* current token */
  int end;             /* offset just past the text parsed */
  rt_err *err;
  rt_err lexerr;       /* lexical error at the EOF token, if any */
  const char *stage;   /* stage name prefixed to error messages */
  int depth;           /* current recursion depth (expressions, subqueries) */
  bool sql_stage;      /* parsing a |> SQL (…) stage's SELECT, where @input is the stream */
  bool oom;            /* an allocation failed (the error says so) */
  fe_token eof;        /* the tokens when the lexer ran out of memory */
} fe_parser;

/* ---- token helpers (parse.c) ------------------------------------------- */
fe_token *fe_peek(fe_parser *p, int k);
static inline fe_token *fe_cur(fe_parser *p) { return fe_peek(p, 0); }
bool fe_tok_is_kw(const fe_token *t, const char *kw);
bool fe_tok_is_punct(const fe_token *t, const char *s);
bool fe_at_kw(fe_parser *p, const char *kw);
bool fe_at_punct(fe_parser *p, const char *s);
bool fe_accept_kw(fe_parser *p, const char *kw);
bool fe_accept_punct(fe_parser *p, const char *s);
bool fe_expect_kw(fe_parser *p, const char *kw, const char *what);
bool fe_expect_punct(fe_parser *p, const char *s, const char *what);
/* Byte offset just past the previous token. */
int fe_prev_end(fe_parser *p);
/* "<stage>: syntax error near 'TOKEN': expected <what>" at token t. Returns
 * 0 (false / NULL) for `return fe_syntax_error(...)`. */
int fe_syntax_error(fe_parser *p, const fe_token *t, const char *what);
/* "<stage>: <message>" at byte offset pos (a meaning-level error found
 * while parsing, not a syntax error). Returns 0. */
int fe_fail(fe_parser *p, int pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Words that cannot be bare column names or implicit aliases. */
bool fe_is_reserved(const fe_token *t);
/* Enters one level of nesting; false (with the error set) when too deep. */
bool fe_enter(fe_parser *p, int pos);
static inline void fe_leave(fe_parser *p) { p->depth--; }

/* Appends one zeroed element to an arena-grown array; returns it, or NULL
 * (the array as it was) when out of memory. */
void *fe_push(rt_arena *a, void *arrp, int *n, int *cap, size_t size);
/* Out of memory: "<stage>: out of memory" at the current token (p->oom
 * set). Returns 0, for `return fe_oom(p)`. */
int fe_oom(fe_parser *p);
/* The parser's allocations: as rt_arena_alloc / fe_push, but a failure
 * sets the error (fe_oom); fe_push_ptr appends the pointer v. */
void *fe_alloc(fe_parser *p, size_t n);
void *fe_push_p(fe_parser *p, void *arrp, int *n, int *cap, size_t size);
bool fe_push_ptr(fe_parser *p, void *arrp, int *n, int *cap, const void *v);

/* A name: identifier or quoted identifier (true when one was read). */
bool fe_parse_name(fe_parser *p, fe_name *out, const char *what);

/* ---- statements (parse.c, parse_perfetto.c) ----------------------------- */
/* A pipeline running to the end of the input (a trailing ';' allowed). */
fe_pipeline *fe_parse_whole_pipeline(fe_parser *p);
/* `name type, …` up to and including the closing ')' (the '(' is read);
 * a type is every token up to ',' or ')' at depth 0 (JOINID(t.id)).
 * `what` names the items in messages ("column", "argument"). */
bool fe_parse_coldefs(fe_parser *p, fe_coldef **out, int *n, const char *what);
/* The body after AS: a pipeline (st->pipe) or SQL to the end (st->sql). */
bool fe_parse_body(fe_parser *p, fe_stmt *st);
/* Text of tokens [from, to) as written (arena); *pos its offset. */
char *fe_token_text(fe_parser *p, int from, int to, int *pos);
int fe_eof_index(fe_parser *p);
/* A NUL byte in SQL text[from, to) is an error (SQLite would stop there). */
bool fe_check_sql_nul(fe_parser *p, int from, int to);
/* Which PerfettoSQL statement of parse_perfetto.c starts at the cursor
 * (STMT_CREATE_VIEW, _FUNCTION, _MACRO, STMT_INCLUDE), else STMT_SQL. */
fe_stmtkind fe_perfetto_stmt_kind(fe_parser *p);
bool fe_parse_perfetto_stmt(fe_parser *p, fe_stmt *st, fe_stmtkind kind);

/* ---- expressions (parse_expr.c) ---------------------------------------- */
fe_expr *fe_parse_expr(fe_parser *p);
/* `expr [ASC | DESC] [NULLS FIRST | LAST], …` (ORDER BY's keys, after BY). */
bool fe_parse_order_list(fe_parser *p, fe_order **out, int *n);
/* A window after its OVER (parse_window.c): `( [PARTITION BY …] [ORDER BY
 * …] [frame] )`, the cursor on the '('. */
fe_window *fe_parse_window(fe_parser *p, int overpos);

/* ---- sources and stages (parse_stage.c) ------------------------------- */
/* A pipeline from the current token; stops before a token that is not
 * `|>` after a stage (the caller checks what follows). */
fe_pipeline *fe_parse_pipeline_at(fe_parser *p);
/* True when the tokens at the cursor start a pipeline (FROM, or INTERVAL
 * INTERSECTION). */
bool fe_at_pipeline_start(fe_parser *p);
/* A subquery in an expression, `( <select> )` or `( <pipeline> )`, the
 * cursor on '(' (LANGUAGE.md §5); fe_at_subquery says whether one starts
 * there (SELECT, WITH, VALUES or a pipeline after the '('). */
fe_source *fe_parse_subquery(fe_parser *p);
bool fe_at_subquery(fe_parser *p);
/* ---- PERFETTO INDEX statements (parse_index.c) --------------------------- */
/* At CREATE [OR REPLACE] PERFETTO INDEX or DROP PERFETTO INDEX. */
bool fe_at_index_stmt(fe_parser *p);
bool fe_parse_index_stmt(fe_parser *p, fe_stmt *st);

/* Checks that no `|>` appears in tokens [from, to); reports it if so. */
bool fe_check_no_pipe(fe_parser *p, int from, int to);

#endif
