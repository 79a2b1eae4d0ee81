/*
 * ast.h — the syntax tree of scripts and pipelines, with source positions.
 *
 * The lexer (lex.c) turns text into tokens; the parser (parse.c) builds
 * these nodes in an arena. Every node records `pos`, the byte offset of its
 * first token in the text given to the parser, so later stages can point at
 * it. Names keep the user's spelling; matching is ASCII case-insensitive.
 * The AST says nothing about types or columns: that is the binder's job.
 */
#ifndef PJ_AST_H
#define PJ_AST_H

#include "../runtime/rt.h"

/* ---- tokens -------------------------------------------------------------- */

typedef enum fe_tokkind {
  TK_EOF,
  TK_IDENT,    /* bare word (keywords are idents: matched case-insensitively) */
  TK_QIDENT,   /* quoted identifier "x" `x` [x]; text is the unquoted name */
  TK_INT,      /* integer literal (decimal or 0x hex); ival */
  TK_FLOAT,    /* fval */
  TK_STRING,   /* 'x' ; text is the unquoted value */
  TK_PARAM,    /* ? ?NNN $name :name @name ; text is the spelling */
  TK_PIPE,     /* |> */
  TK_PUNCT,    /* operators and punctuation; text is the spelling:
                  ( ) , . ; * + - / % || | & ~ << >> < <= > >= = == != <>
                  and the lone '?' never appears here (it is TK_PARAM) */
} fe_tokkind;

typedef struct fe_token {
  fe_tokkind kind;
  int pos, len;        /* span in the text */
  char *text;          /* arena copy (unquoted for strings and quoted idents) */
  size_t textlen;      /* length of text (strings may hold NUL bytes) */
  int64_t ival;
  double fval;
  /* A decimal integer written with a time unit (`100ms`: ival 100, unit
   * 1000000; ns, us, ms, s): only INTERVAL QUANTIZE's width takes one;
   * anywhere else it is the unrecognized token it always was. 0: none. */
  int64_t unit;
} fe_token;

/* Tokenizes text[0..len) into an arena array ending with TK_EOF. Returns
 * NULL and sets err ("syntax error: unterminated string", …) on a lexical
 * error. `stage` prefixes error messages. */
fe_token *fe_lex(rt_arena *a, const char *text, size_t len, int *ntok, rt_err *err);

/* ---- expressions --------------------------------------------------------- */

/* The operator of an AX_UNARY or AX_BINARY node: the expression kind it
 * binds to (ir/exprs.def, so FO_x and the binder's IX_x are the same
 * number), and unary plus, which binds to no node. `NOT LIKE` is FO_LIKE
 * with `negated`; `==` is FO_EQ, `<>` FO_NE, `IS NOT DISTINCT FROM` FO_IS. */
typedef enum fe_op {
#define EX(name, str, arity, form, prec, nulls) FO_##name,
#include "../ir/exprs.def"
#undef EX
  FO_PLUS,
} fe_op;

typedef enum fe_exkind {
  AX_INT, AX_FLOAT, AX_STRING, AX_NULL, AX_TRUE, AX_FALSE,
  AX_PARAM,            /* name = "?", "?3", "$x", ":x", "@x" */
  AX_COLUMN,           /* [qual.]name */
  AX_UNARY,            /* op: FO_NEG, FO_PLUS, FO_BITNOT, FO_NOT */
  AX_BINARY,           /* op: an INFIX kind of exprs.def (FO_OR … FO_GLOB);
                          `x NOT LIKE p` is FO_LIKE with negated (LIKE with
                          ESCAPE has args[2], the escape) */
  AX_ISNULL,           /* x IS NULL / x ISNULL (negated: IS NOT NULL / NOTNULL / NOT NULL) */
  AX_IN,               /* args[0] [NOT] IN (args[1..]), or with `sub` set
                          args[0] [NOT] IN (subquery) (nargs 1) */
  AX_BETWEEN,          /* args[0] [NOT] BETWEEN args[1] AND args[2] */
  AX_CASE,             /* operand (may be NULL); whens[i], thens[i]; els (may be NULL) */
  AX_CAST,             /* CAST(args[0] AS type_name) */
  AX_CALL,             /* name(args…), name(*) sets star, name(DISTINCT …) sets distinct */
  AX_COLLATE,          /* args[0] COLLATE str (the collation's name as written) */
  AX_EXISTS,           /* EXISTS (sub); NOT EXISTS is NOT over it */
  AX_SUBQUERY,         /* a scalar (sub) */
} fe_exkind;

struct fe_source;

typedef struct fe_expr fe_expr;
typedef struct fe_window fe_window;
struct fe_expr {
  fe_exkind kind;
  int pos;             /* first token */
  int oppos;           /* operator token (binary/unary) */
  int endpos;          /* byte offset just past the last token */
  int64_t ival;        /* AX_INT */
  double fval;         /* AX_FLOAT */
  char *str;           /* AX_STRING value, AX_PARAM / AX_CALL name, AX_CAST type */
  size_t strlen;
  char *qual;          /* AX_COLUMN qualifier or NULL */
  char *name;          /* AX_COLUMN name */
  int namepos;         /* AX_COLUMN: offset of the name token */
  fe_op op;            /* AX_UNARY / AX_BINARY */
  bool negated;        /* NOT IN / NOT BETWEEN / IS NOT NULL / NOT LIKE / NOT GLOB */
  bool star;           /* COUNT(*) */
  bool distinct;       /* f(DISTINCT x): rejected by the binder */
  int nargs;
  fe_expr **args;
  fe_expr *operand;    /* AX_CASE */
  int nwhens;
  fe_expr **whens, **thens;
  fe_expr *els;
  fe_window *over;     /* AX_CALL: `f(…) OVER (…)`, a window function */
  struct fe_source *sub;   /* AX_IN / AX_EXISTS / AX_SUBQUERY: the subquery,
                              a SRC_SQL or SRC_PIPELINE source (LANGUAGE.md §5) */
  int height;          /* 1 for a leaf; at most FE_MAX_DEPTH (1000): the
                          parser rejects deeper trees, so passes may recurse */
};

/* ---- stages -------------------------------------------------------------- */

typedef struct fe_order {
  fe_expr *expr;
  bool desc;
  int nulls;           /* 0 default, 1 NULLS FIRST, 2 NULLS LAST */
} fe_order;

/* A window (LANGUAGE.md §8): OVER ([PARTITION BY expr, …] [ORDER BY …]
 * [frame]). A frame is `unit BETWEEN start AND end` or `unit start` (end
 * CURRENT ROW); a bound is UNBOUNDED PRECEDING / FOLLOWING, CURRENT ROW,
 * or `n PRECEDING` / `n FOLLOWING` with n an expression (the binder wants
 * a whole number). The parser takes SQLite's frame grammar; the binder
 * says which frames are supported. */
typedef enum fe_fbound {
  FB_UNBOUNDED_PRECEDING, FB_PRECEDING, FB_CURRENT, FB_FOLLOWING, FB_UNBOUNDED_FOLLOWING,
} fe_fbound;
typedef enum fe_funit { FU_ROWS, FU_RANGE, FU_GROUPS } fe_funit;
typedef struct fe_fbnd {
  fe_fbound kind;
  fe_expr *n;          /* PRECEDING / FOLLOWING */
  int pos;
} fe_fbnd;
struct fe_window {
  int pos;             /* OVER */
  int npart;
  fe_expr **part;
  int norder;
  fe_order *order;
  bool framed;         /* a frame was written */
  fe_funit unit;
  int unitpos;
  fe_fbnd start, end;
  int excludepos;      /* EXCLUDE …, or -1 */
};

typedef struct fe_name {
  char *name;
  int pos;
} fe_name;

typedef enum fe_itemkind { IT_EXPR, IT_STAR, IT_QSTAR } fe_itemkind;

/* A select item: expr [[AS] name] | * | q.* ; stars may carry
 * EXCEPT (names) or REPLACE (expr AS name, …). Also used for aggregate
 * lists (agg AS name) and GROUP BY keys (expr [AS name]). */
typedef struct fe_item {
  fe_itemkind kind;
  int pos;
  fe_expr *expr;
  char *name;          /* AS name, or NULL */
  int namepos;
  char *qual;          /* IT_QSTAR */
  int nexcept;
  fe_name *except;
  int nreplace;
  struct fe_item *replace;  /* each: expr + name */
} fe_item;

typedef struct fe_assign {     /* SET col = expr ; RENAME old AS new */
  fe_name col;
  fe_expr *expr;
  fe_name newname;
} fe_assign;

/* The stages of ir/stages.def. */
typedef enum fe_stagekind {
#define STAGE(name, str, w1, w2, parse, bind, words) ST_##name,
#include "../ir/stages.def"
#undef STAGE
  ST__COUNT
} fe_stagekind;

/* Stage names as used in error messages: "WHERE", "ORDER BY",
 * "TREE ACCUMULATE", "INTERVAL FLATTEN", … (stages.def). */
extern const char *const fe_stage_names[ST__COUNT];

typedef enum fe_joinrel {
  JR_OVERLAPPING_BOUNDS, JR_COVERING_BEGIN, JR_COVERING_END,
  JR_COVERING_BOUNDS, JR_WITHIN_BOUNDS,
} fe_joinrel;

/* `|> [INNER | LEFT | RIGHT | FULL | CROSS] JOIN` (LANGUAGE.md §8). */
typedef enum fe_joinkind { JK_INNER, JK_LEFT, JK_RIGHT, JK_FULL, JK_CROSS } fe_joinkind;

struct fe_source;

typedef struct fe_stage {
  fe_stagekind kind;
  int pos;             /* the stage keyword */
  fe_expr *expr;       /* WHERE */
  int nitems;
  fe_item *items;      /* SELECT, EXTEND; aggregates of AGGREGATE / TREE / FLATTEN */
  int nassign;
  fe_assign *assign;   /* SET, RENAME */
  int nnames;
  fe_name *names;      /* DROP */
  fe_name alias;       /* AS alias */
  int norder;
  fe_order *order;     /* ORDER BY */
  fe_expr *limit, *offset;
  int ngroup;
  fe_item *group;      /* AGGREGATE … GROUP BY */
  bool up;             /* TREE ACCUMULATE UP (else DOWN) */
  struct fe_source *src;   /* INTERVAL JOIN / FILL GAPS operand */
  fe_joinrel rel;
  bool left;           /* LEFT INTERVAL JOIN */
  fe_joinkind jkind;   /* JOIN: its kind; src, and on or usings */
  fe_expr *on;         /* JOIN … ON expr (NULL: none) */
  int nusing;          /* JOIN … USING (col, …): -1 when not given */
  fe_name *usings;
  bool all;            /* UNION / INTERSECT / EXCEPT ALL (else DISTINCT) */
  int nsrcs;           /* their operands, (pipeline) or (select) */
  struct fe_source **srcs;
  int nper;
  fe_name *per;        /* PER columns */
  /* §9.2 interval reshaping */
  bool within;         /* INTERVAL FILL WITHIN (else FILL GAPS WITH) */
  bool consecutive;    /* INTERVAL MERGE CONSECUTIVE (else OVERLAPPING) */
  int nby;
  fe_name *by;         /* MERGE CONSECUTIVE BY cols; TREE MERGE's BY */
  fe_expr *begin_at, *end_at, *for_dur;   /* SET BOUNDS BEGIN AT e1 (END AT e2 | FOR e3) */
  int64_t width;       /* QUANTIZE: in ns, units applied */
  int widthpos;
  int align;           /* QUANTIZE ALIGNED TO: 0 TRACE START, 1 ZERO, 2 align_expr */
  fe_expr *align_expr;
  /* §9.4 tree operators: src is the node set (OF / AT / IN rel), over the
   * OVER tree (NULL: none); tmode the form (fe_tshape_mode); by/nby
   * (above) the BY columns of TREE MERGE; ordered its ORDERED; items its (and
   * CONTRACT's, ABSORB's) aggregates. */
  struct fe_source *over;
  int tmode;
  bool ordered;
  /* §9.3 (ivsrc). [LEFT] INTERVAL FIND src (STARTING | ENDING) (AFTER |
   * BEFORE) (BEGIN | END) [OF alias] [WITHIN d]: src, left, per; rel is
   * KEEP IF / DROP IF's relationship. */
  bool ending, before, anchor_end;
  fe_name anchor_of;   /* name NULL: the input row */
  fe_expr *within_d;    /* NULL: no limit */
} fe_stage;

/* The form of a §9.4 stage (fe_stage.tmode). */
typedef enum fe_tshape_mode {
  TM_DESCENDANT,       /* TREE KEEP / DROP IF DESCENDANT OF */
  TM_ANCESTOR,         /* TREE KEEP / DROP IF ANCESTOR OF */
  TM_SIBLINGS,         /* TREE MERGE SIBLINGS BY */
  TM_INTO_PARENT,      /* TREE MERGE INTO PARENT BY */
} fe_tshape_mode;

/* ---- sources and pipelines ----------------------------------------------- */

typedef enum fe_srckind {
  SRC_NAME,            /* [schema.]name */
  SRC_SQL,             /* ( SELECT … ): sql is the text inside the parens */
  SRC_PIPELINE,        /* ( FROM … ): pipe */
  SRC_CALL,            /* name(args…): a PerfettoSQL table function */
  /* The operator sources of ir/sources.def: SRC_INTERSECT (INTERVAL
   * INTERSECTION OF (ops…) [PER …]), … */
#define SOURCE(name, str, w1, w2, parse, bind, words) SRC_##name,
#include "../ir/sources.def"
#undef SOURCE
} fe_srckind;

typedef struct fe_pipeline fe_pipeline;
typedef struct fe_source {
  fe_srckind kind;
  int pos;
  char *schema;
  char *name;
  char *sql;           /* arena copy of the SELECT text */
  int sqlpos;          /* its offset in the text */
  fe_pipeline *pipe;
  fe_name alias;       /* [AS] alias, name NULL if none */
  int nops;
  struct fe_source **ops;   /* intersection operands (each with its alias);
                               GRAPH's NODES, EDGES and FROM relations */
  int nper;
  fe_name *per;
  int nargs;                /* SRC_CALL: the arguments */
  struct fe_expr **args;
  int nparams;              /* SRC_SQL: the parameters written in sql (AX_PARAM,
                               in text order, positions in the text), which a
                               subquery in an expression binds (ir/bind_subq.c) */
  struct fe_expr **params;
  /* §9.1 (ivsrc). INTERVALS FROM EVENTS: ops[0] the events, ops[1] the
   * STOP events (nops 2 with STOP), per; close the CLOSING LAST AT
   * expression (NULL: KEEPING LAST OPEN). INTERVAL UNION OF: ops, per, as
   * INTERSECTION OF. */
  struct fe_expr *close;
} fe_source;

struct fe_pipeline {
  int pos, endpos;
  fe_source *src;
  int nstages;
  fe_stage *stages;
};

/* ---- statements ---------------------------------------------------------- */

typedef enum fe_stmtkind {
  STMT_SQL,            /* passed to SQLite as is */
  STMT_PIPELINE,
  STMT_CREATE_TABLE,   /* CREATE [OR REPLACE] PERFETTO TABLE */
  STMT_PRAGMA,         /* PERFETTO PRAGMA name = value */
  STMT_CREATE_INDEX,   /* CREATE [OR REPLACE] PERFETTO INDEX index ON table(cols) */
  STMT_DROP_INDEX,     /* DROP PERFETTO INDEX index ON table */
  STMT_CREATE_VIEW,    /* CREATE [OR REPLACE] PERFETTO VIEW name [(schema)] AS body */
  STMT_CREATE_FUNCTION,/* … PERFETTO FUNCTION name(args) RETURNS type|TABLE(…) AS body */
  STMT_CREATE_MACRO,   /* … PERFETTO MACRO name(args) RETURNS Type AS tokens */
  STMT_INCLUDE,        /* INCLUDE PERFETTO MODULE a.b.c (or a.b.*) */
} fe_stmtkind;

/* A pipeline inside a SQL statement (§7.6): text[start, end) is its
 * parenthesis, `pipe` its parse (positions relative to the script); its
 * parameters are the statement's parameters 1..nargs, args[k - 1] the
 * statement's spelling of parameter k ("$min", or "?2" for a numbered
 * one). `table` says whether it stands right after FROM or JOIN, where a
 * table may stand (elsewhere it must be a subquery). */
typedef struct fe_sqlpipe {
  int start, end;
  bool table;          /* right after FROM or JOIN: a table, not a subquery */
  fe_pipeline *pipe;
  int nargs;
  char **args;
} fe_sqlpipe;

/* The pipelines of one SQL statement, in text order; `kept` when the
 * statement's text is kept in the schema (CREATE VIEW, CREATE TRIGGER), so
 * what stands for them must outlive the statement. */
typedef struct fe_sqlpipes {
  int n;
  fe_sqlpipe *v;
  bool kept;
} fe_sqlpipes;

/* `@input` (ASCII case-insensitive), the table a |> SQL (…) stage's SELECT
 * reads the stream as (LANGUAGE.md §8), and the error for it anywhere
 * else where a table or value of SQL stands (sqlpipe.c). */
bool fe_is_sql_input(const char *s, size_t n);
#define FE_SQL_INPUT_ONLY \
  "@input is the stream of a |> SQL (…) stage: it can be read only inside one"

/* Finds the pipelines of SQL text[start, end) (sqlpipe.c). Returns their
 * count, or -1 with err set: a syntax error inside one, or a `|>` outside
 * any (prefixed with `stage` when not NULL). */
int fe_sql_pipelines(rt_arena *a, const char *text, int start, int end, const char *stage,
                     fe_sqlpipes *out, rt_err *err);

typedef struct fe_coldef {
  fe_name name;
  char *type;          /* as written: INT, LONG, DOUBLE, STRING, … */
  int typepos;
} fe_coldef;

typedef struct fe_stmt {
  fe_stmtkind kind;
  int pos, len;        /* span of the statement in the script (no ';') */
  fe_pipeline *pipe;   /* STMT_PIPELINE, or CREATE … AS <pipeline> */
  char *sql;           /* STMT_SQL text, or CREATE … AS <select> text */
  int sqlpos;
  fe_sqlpipes sqlpipes; /* the pipelines inside `sql` */
  fe_name table;       /* CREATE: table name; INDEX: the indexed table */
  fe_name index;       /* INDEX: its name */
  int nindexcols;
  fe_name *indexcols;  /* CREATE PERFETTO INDEX: the columns */
  bool or_replace;
  int ncoldefs;        /* -1 when no schema was given */
  fe_coldef *coldefs;
  fe_name pragma;      /* PRAGMA name */
  char *pragma_value;
  int valuepos;
  /* CREATE PERFETTO FUNCTION / MACRO: the arguments (name and type as
   * written), the return type (NULL for RETURNS TABLE(…), whose columns
   * are coldefs), and for a macro the body's text span. */
  int nargs;
  fe_coldef *args;
  char *returns;
  int returnspos;
  bool returns_table;
  int bodypos, bodylen;
  /* The body (VIEW, FUNCTION): st->pipe or st->sql; its first token. */
  int asbody;
  /* INCLUDE PERFETTO MODULE: the dotted name as written ("a.b.*"). */
  char *module;
  int modulepos;
} fe_stmt;

/* Splits a script into statements at top-level ';' (outside quotes,
 * comments and parentheses), skipping empty ones. Offsets are relative to
 * `text`. Returns the count (-1: out of memory); spans go to an arena
 * array in *out. */
typedef struct fe_span { int pos, len; } fe_span;
int fe_split(rt_arena *a, const char *text, size_t len, fe_span **out);
/* The same one statement at a time, for scripts of any length in constant
 * memory: finds the next non-empty statement at or after *at, stores it in
 * *out, moves *at past its ';' and returns 1; 0 when none is left. */
int fe_split_next(const char *text, size_t len, size_t *at, fe_span *out);
/* True when text holds no unfinished statement: every statement ends
 * with its ';' and no block comment is left open (blanks and comments
 * alone are complete). The shell's continuation prompt asks this. */
bool fe_split_complete(const char *text, size_t len);

/* Parses one statement text[pos..pos+len) (offsets stay relative to
 * text). On error returns NULL and fills err with "<STAGE>: syntax error
 * near 'TOKEN': expected …" at the offending token. */
fe_stmt *fe_parse_stmt(rt_arena *a, const char *text, int pos, int len, rt_err *err);

/* Parses a whole pipeline (for pj_query_compile). */
fe_pipeline *fe_parse_pipeline(rt_arena *a, const char *text, size_t len, rt_err *err);

/* Line and column (1-based) of a byte offset. */
void fe_line_col(const char *text, int offset, int *line, int *col);

/* ---- macros (macro.c) ---------------------------------------------------- */

/* Argument and return types of PerfettoSQL macros (LANGUAGE.md §7.3). */
typedef enum fe_mtype { FE_MT_EXPR, FE_MT_TABLE, FE_MT_COLUMN, FE_MT_PIPELINE } fe_mtype;
/* The type named by `word` (Expr, TableOrSubquery, ColumnName, Pipeline;
 * case-insensitive): 1 found, 0 not a type. */
int fe_mtype_parse(const char *word, fe_mtype *out);
const char *fe_mtype_name(fe_mtype t);

typedef struct fe_macro {
  char *name;
  int nargs;
  char **argnames;     /* without the '$' */
  fe_mtype *argtypes;
  fe_mtype ret;
  char *body;          /* the body's text as written (NUL-terminated) */
  int bodylen;
} fe_macro;

/* Finds a macro by name (ASCII case-insensitive) for the expander. */
typedef const fe_macro *(*fe_macro_find)(void *ctx, const char *name);

/* One token of an expansion: its bytes in `text` [at, at + len), and the
 * statement offset it came from: its own for the user's tokens, the
 * invocation's for a macro's (`macro` the innermost macro whose body made
 * it, `outer` the macro invoked in the user's text). */
typedef struct fe_xorigin {
  int at, len;
  int origin;
  const char *macro, *outer;
} fe_xorigin;

typedef struct fe_expansion {
  char *text;          /* the statement with every invocation replaced */
  int len;
  int nmap;
  fe_xorigin *map;     /* in text order */
} fe_expansion;

/* Expands every `name!(…)` of the statement text[pos, pos + len) (LANGUAGE.md
 * §7.3): the invocation is replaced by the body's tokens, each `$arg` by
 * the argument's tokens, and the result is expanded again (at most
 * FE_MACRO_DEPTH levels). Returns 1 with *out filled (arena a), 0 when the
 * statement invokes no macro (nothing to do), or -1 with err set at the
 * invocation in `text` (no such macro, argument count or type, depth). */
#define FE_MACRO_DEPTH 100
int fe_macro_expand(rt_arena *a, const char *text, int pos, int len, fe_macro_find find,
                    void *ctx, fe_expansion *out, rt_err *err);
/* The statement offset an offset of x->text came from; *from (may be
 * NULL) gets its map entry, NULL for text between tokens. */
int fe_expansion_origin(const fe_expansion *x, int off, const fe_xorigin **from);

#endif
