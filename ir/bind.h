/*
 * bind.h — the binder's private state, shared by bind.c (sources, output),
 * bind_row.c (the row model and name lookup), bind_expr.c (expressions and
 * typing) and bind_stage.c (one function per stage). Nothing outside ir/
 * includes this: the rest of the system sees only ir/plan.h.
 *
 * The row model (LANGUAGE.md §6): the current row is a list of entries
 * (name, column id, qualified-only), and each alias is a snapshot of a row.
 * Entry arrays are never edited in place once built — stages build a new
 * array — so an alias can share the array it snapshots.
 */
#ifndef PJ_IR_BIND_H
#define PJ_IR_BIND_H

#include "../frontend/ast.h"
#include "plan.h"

typedef struct ir_entry {
  const char *name;     /* spelling as defined */
  int col;              /* column id */
  bool qonly;           /* visible only through an alias (q.x or a star) */
} ir_entry;

typedef struct ir_row {
  int n;
  const ir_entry *e;
} ir_row;

typedef struct ir_alias {
  const char *name;
  ir_row row;           /* snapshot taken when the alias was bound */
} ir_alias;

/* A row under construction (arena-grown). */
typedef struct ir_rowb {
  int n, cap;
  ir_entry *e;
} ir_rowb;

/* While an inlined function body binds: its arguments' values
 * (bind_defs.c), which its `$name` parameters stand for. */
typedef struct ir_argscope {
  const ir_fndef *def;
  ir_expr **vals;
} ir_argscope;

/* The window calls of the stage being bound and their result columns. */
typedef struct ir_winmap {
  int n;
  const fe_expr **calls;
  int *cols;
} ir_winmap;
/* A name bound by `|> FORK AS name`, visible to the later stages of its
 * pipeline (and the pipelines nested in them): its FORK op and the bare
 * entries of the row it buffered. */
typedef struct ir_forkname {
  const char *name;
  int pos;
  ir_op *op;
  ir_row row;
} ir_forkname;

typedef struct ir_binder {
  ir_plan *p;
  ir_env *env;
  rt_err *err;
  const char *text;
  ir_row row;
  int naliases;
  const ir_alias *aliases;
  const char *stage;    /* "WHERE", …: prefix of every error */
  /* Aggregate calls are never legal inside ir_bind_expr (AGGREGATE binds
   * its top-level calls itself). The error is "an aggregate belongs in
   * AGGREGATE, not <stage>" unless agg_msg gives another text (nested
   * aggregates, GROUP BY keys). */
  const char *agg_msg;
  int capops;
  int capparams;
  const ir_argscope *scope;   /* NULL outside an inlined function body */
  /* While an EXTEND, SELECT or SET stage binds: its window calls
   * (bind_window.c) and the column each one's value is in; in_window while
   * their arguments and windows bind. ir_bind_stage clears it around
   * every stage. */
  ir_winmap win;
  bool in_window;
  /* Binding a set operation's operand: its column names do not matter
   * (the input's name the result), so they need not be valid or
   * distinct. */
  bool any_names;
  /* FORK names in scope, the latest last (bind_fork.c). */
  int nforks;
  const ir_forkname *forks;
  /* The pipeline being bound (ir_bind_pipeline): a SQL stage reads its
   * source and the stages before it. */
  const fe_pipeline *pipe;
} ir_binder;

/* ---- bind.c ---- */
ir_op *ir_op_add(ir_binder *b, ir_opkind kind, int pos);
/* Text of an expression as written (arena copy), for messages and names. */
const char *ir_expr_text(ir_binder *b, const fe_expr *e);
/* Errors prefixed with the current stage: "<STAGE>: <msg>". */
int ir_fail(ir_binder *b, int pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The binder's allocations, from the plan's arena: they never return
 * NULL. Out of memory, they jump out of the binder (ir_palloc), and
 * ir_bind fails with "<STAGE>: out of memory" and frees the plan, so
 * whatever the binder holds besides the arena (a primed SQL source, a
 * callout's context) must be in the plan before it allocates again.
 * ir_oom is the same jump for a NULL from elsewhere. */
void *ir_alloc(ir_binder *b, size_t n);
char *ir_strdup(ir_binder *b, const char *s);
char *ir_strndup(ir_binder *b, const char *s, size_t n);
void *ir_memdup(ir_binder *b, const void *p, size_t n);
_Noreturn void ir_oom(ir_binder *b);
/* Binds a source into b's row and aliases; errors say `stage`. */
int ir_bind_source(ir_binder *b, const fe_source *src, const char *stage);
/* Binds a pipeline's source and stages into b (used for nested pipelines). */
int ir_bind_pipeline(ir_binder *b, const fe_pipeline *pl);
/* After a nested pipeline bound into b: its bare entries become the row
 * (checked for distinct names, errors at src). */
int ir_source_output(ir_binder *b, const fe_source *src);
/* A SQL source: SRC_NAME (a SQLite table or view) or SRC_SQL. */
int ir_bind_sql_source(ir_binder *b, const fe_source *src);

/* ---- bind_defs.c ---- */
/* FROM v / FROM fn(…) for a PerfettoSQL view or table function d: 1
 * bound, 0 error, -1 not for here (a SQL view: read it through SQLite). */
int ir_bind_def_source(ir_binder *b, const fe_source *src, const ir_fndef *d, const char *stage);
/* A call of a function env->defs knows (IX_CALLOUT), or NULL with no
 * error set when it knows none of that name. */
ir_expr *ir_bind_callout(ir_binder *b, const fe_expr *x);
/* Inside an inlined function body, the value `$name` stands for (a fresh
 * copy at pos), or NULL when it is not one of its arguments. */
ir_expr *ir_scope_arg(ir_binder *b, const char *pname, int pos);

/* ---- bind_row.c ---- */
void ir_rowb_add(ir_binder *b, ir_rowb *rb, const char *name, int col, bool qonly);
ir_row ir_rowb_done(ir_rowb *rb);
const ir_alias *ir_alias_find(const ir_binder *b, const char *name);
/* Sets the aliases to exactly one (name) over `row`, or none when name is NULL. */
void ir_alias_set_one(ir_binder *b, const char *name, ir_row row);
/* The row model at one point of binding (the row and the aliases): a
 * stage that reads its input as it was goes back to it. */
typedef struct ir_rowsave {
  ir_row row;
  int naliases;
  const ir_alias *aliases;
} ir_rowsave;
ir_rowsave ir_row_save(const ir_binder *b);
void ir_row_restore(ir_binder *b, const ir_rowsave *s);
/* Resolves [qual.]name to a column id; on success *entry_name is the
 * defining spelling. Errors: no such column, table alias, ambiguity. */
int ir_resolve(ir_binder *b, const char *qual, const char *name, int pos, int namepos,
               int *col, const char **entry_name);
/* Looks `name` up in `row` (bare entries only when bare_only; `qual` is
 * the alias it came through, for messages): 1 found (*col, *entry_name),
 * 0 none (no error set), -1 ambiguous (error set: "column 'x'[ of
 * <where>] is ambiguous: it could be …", at pos). */
int ir_lookup(ir_binder *b, ir_row row, bool bare_only, const char *qual, const char *name,
              const char *where, int pos, int *col, const char **entry_name);
/* Unique column ids of the row and every alias snapshot, in row order. */
int ir_row_all_cols(ir_binder *b, int **out);
bool ir_name_eq(const char *a, const char *b);

/* ---- bind_expr.c ---- */
ir_expr *ir_bind_expr(ir_binder *b, const fe_expr *e);
/* A condition: BOOL, or a number compared with 0 (SQLite truthiness). */
ir_expr *ir_bind_cond(ir_binder *b, const fe_expr *e);
ir_expr *ir_ex_const_null(ir_binder *b, rt_type t, int pos);
/* A reference to column `col`. */
ir_expr *ir_ex_col(ir_binder *b, int col, int pos);
/* Retypes a bare NULL to `t` so no RT_NULLT reaches a column or operator. */
ir_expr *ir_ex_settle(ir_binder *b, ir_expr *e, rt_type t);
bool ir_is_agg_name(const char *name, int nargs);

/* A new node of kind k with nargs (unset) arguments. */
ir_expr *ir_ex_new(ir_binder *b, ir_exkind k, rt_type t, bool nullable, int pos, int nargs);
/* A number or NULL as a string (TOSTR), for ||, LIKE and string functions. */
ir_expr *ir_ex_to_str(ir_binder *b, ir_expr *e);
/* A number as an integer (TOINT for a double); a string is the error
 * "expected a number for <what>, but got a string" (NULL returned). */
ir_expr *ir_ex_to_int(ir_binder *b, ir_expr *e, const char *what);
/* 1 when call x has lo..hi arguments (hi < 0: no limit), else the error
 * "expected N arguments to f(), but got M" at the call. */
int ir_arity(ir_binder *b, const fe_expr *x, int lo, int hi);

/* Settles v[0..n) on their common type (SQLite's: strings, doubles with
 * ints widened, booleans, else I64; RT_NULLT when all are bare NULLs) in
 * *t; 0 when strings mix with numbers. */
int ir_common_values(ir_binder *b, ir_expr **v, int n, rt_type *t);

/* ---- bind_window.c ---- */
/* Before an EXTEND, SELECT or SET stage's items bind: its window calls
 * become one WINDOW op (after the COMPUTEs of their keys and arguments)
 * and b->win maps each call to its result column. 1 done (or none), 0
 * error. */
int ir_bind_windows(ir_binder *b, const fe_stage *st);
/* A window call met while binding an expression: its result column, or
 * the error of a window call where none belongs. */
ir_expr *ir_bind_window_ref(ir_binder *b, const fe_expr *x);
/* A name of windows.def (ROW_NUMBER, LAG, …). */
bool ir_is_window_name(const char *name);

/* ---- bind_subq.c ---- */
/* x [NOT] IN (SELECT …), EXISTS (SELECT …), (SELECT …): x an AX_IN with
 * sub set, an AX_EXISTS or an AX_SUBQUERY. */
ir_expr *ir_bind_subquery(ir_binder *b, const fe_expr *x);
/* A scalar subquery whose type nothing fixed takes t (compared with a t):
 * true when e is one. */
bool ir_subq_adopt_type(ir_binder *b, ir_expr *e, rt_type t);
/* A constant as SQL text (strings quoted, reals stay real): 0 when e is
 * not a constant. */
int ir_sql_literal(ir_binder *b, rt_buf *q, const ir_expr *e);

/* ---- bind_sqlfn.c ---- */
/* round sign replace hex unicode char typeof printf format: *known is
 * set when x names one of them (the result is then the bound node, or
 * NULL with the error set). */
ir_expr *ir_bind_sqlfn(ir_binder *b, const fe_expr *x, bool *known);

/* ---- bind_text.c ---- */
typedef enum ir_coll { IR_COLL_NONE = 0, IR_COLL_BINARY, IR_COLL_NOCASE, IR_COLL_RTRIM } ir_coll;
/* "no such collation sequence: X" unless x (an AX_COLLATE) names one. */
int ir_check_collation(ir_binder *b, const fe_expr *x);
/* The explicit collation of an expression (SQLite's search), or NONE. */
ir_coll ir_collation(const fe_expr *x);
/* The collation a comparison of l with r uses: l's, else r's. */
ir_coll ir_cmp_collation(const fe_expr *l, const fe_expr *r);
/* The collation of `x IN (…)` (x an AX_IN). */
ir_coll ir_in_collation(const fe_expr *x);
/* e as compared under collation c: lower(e) for NOCASE, rtrim(e) for
 * RTRIM, when e is a string; else e. */
ir_expr *ir_collate(ir_binder *b, ir_expr *e, ir_coll c);
/* Refuses a string value with a non-BINARY COLLATE where the collation
 * would choose among values ("COLLATE in GROUP BY is not supported yet"). */
int ir_refuse_collation(ir_binder *b, const fe_expr *x, const ir_expr *e, const char *where);
/* x [NOT] LIKE pat [ESCAPE escx] (or GLOB, which takes no ESCAPE). */
ir_expr *ir_bind_like(ir_binder *b, bool glob, bool neg, ir_expr *x, ir_expr *pat,
                      const fe_expr *escx, int pos);

/* ---- bind_stage.c ---- */
/* Binds one stage: the bind function stages.def names for its kind. */
int ir_bind_stage(ir_binder *b, const fe_stage *st);
/* A stage's aggregates as bound (AGGREGATE, TREE ACCUMULATE, the tree
 * reshapes, INTERVAL FLATTEN and MERGE): one per item of the stage, with
 * the type, NULL-ability and untypedness of its output. */
typedef struct ir_agglist {
  ir_agg *aggs;
  rt_type *types;
  bool *nulls, *untyped;
} ir_agglist;
/* Room for the n aggregates of a stage. */
ir_agglist ir_agglist_new(ir_binder *b, int n);
/* Binds every item of st as ir_bind_group_agg does with ngroup keys;
 * expected NULL: ir_agg_expected(b, where). */
int ir_bind_agg_list(ir_binder *b, const fe_stage *st, ir_aggplace where, const char *expected,
                     int ngroup, ir_agglist *l);
/* The output columns of a stage's aggregates: one per item, named by it
 * and typed as it bound (aggs[i].out_col), added to rb unless it is NULL. */
void ir_agg_outputs(ir_binder *b, const fe_stage *st, const ir_agglist *l, ir_rowb *rb);
/* The stages' bind functions (stages.def), in bind_stage.c unless said
 * below: each edits the row model and adds the stage's ops. */
#define STAGE(name, str, w1, w2, parse, bind, words) int bind(ir_binder *b, const fe_stage *st);
#include "stages.def"
#undef STAGE
/* Column id holding e's value: e's column when it is a plain column,
 * else a new COMPUTE named `name` at stage position pos. -1 on error. */
int ir_materialize(ir_binder *b, ir_expr *e, const char *name, int pos);
/* An aggregate item `f(x) AS name` (or COUNT(*)) of a stage that takes the
 * aggregates aggs.def allows at `where`: checks the call, binds and
 * materializes its argument into ag->arg_col (a NUM argument there
 * rejects strings). *arg gets the bound argument (NULL for COUNT(*);
 * RT_NULLT for a bare NULL) so the stage can type its output.
 * Errors: "<expected>, but got '…'" for anything else, and the shared
 * DISTINCT / arity / name / string messages. */
int ir_bind_agg_call(ir_binder *b, const fe_item *it, ir_aggplace where, const char *expected,
                     ir_agg *ag, ir_expr **arg);

/* One aggregate of a grouped stage (AGGREGATE; INTERVAL MERGE, whose
 * AGGREGATE groups by merged interval): binds the call as
 * ir_bind_agg_call and types its output as AGGREGATE does (with ngroup
 * keys: only NULL inputs make SUM & co. NULL). */
int ir_bind_group_agg(ir_binder *b, const fe_item *it, ir_aggplace where, const char *expected,
                      ir_agg *ag, int ngroup, rt_type *out_type, bool *out_null, bool *untyped);

/* "expected COUNT, SUM, … or GROUP_CONCAT": every aggregate name aggs.def
 * allows at `where`, for ir_bind_agg_call's `expected`. */
const char *ir_agg_expected(ir_binder *b, ir_aggplace where);

/* An aggregate whose argument is a bare NULL (arg as ir_bind_agg_call
 * returns it) gives an untyped NULL, except COUNT (0). */
bool ir_agg_untyped(const ir_agg *ag, const ir_expr *arg);
/* "expected each output name to be listed only once, but 'x' is listed
 * twice" at pos[i] of the second of two equal names; 1 when distinct. */
int ir_check_output_names(ir_binder *b, int n, const char *const *names, const int *pos);

/* ---- bind_fork.c ---- */
/* The FORK named `name` in scope, or NULL. */
const ir_forkname *ir_fork_find(const ir_binder *b, const char *name);
/* Reads FORK f as a relation (src names it): a SCAN_FORK source whose
 * columns are fresh copies of f's, under src's alias or f's name. */
int ir_bind_fork_source(ir_binder *b, const fe_source *src, const ir_forkname *f);

/* ---- bind_tree.c ---- */
/* ir_bind_tree: TREE ACCUMULATE UP/DOWN as TREE_NUMBER, TREE_ORDER,
 * TREE_ACC (plan.h). */

/* ---- bind_interval.c ---- */
/* INTERVAL INTERSECTION OF (a source), and ir_bind_flatten, ir_bind_ijoin,
 * ir_bind_fillgaps (stages): IV_BUFFER sinks and their source op. */
int ir_bind_isect(ir_binder *b, const fe_source *src);
/* Every operator source's bind function (sources.def). */
#define SOURCE(name, str, w1, w2, parse, bind, words) int bind(ir_binder *b, const fe_source *src);
#include "sources.def"
#undef SOURCE
/* An IV_BUFFER sink carrying cols[0..n) (an interval operator's or a set
 * operation's relation; its user is set by the caller). */
ir_op *ir_add_ivbuf(ir_binder *b, int pos, int n, int *cols);

/* ---- bind_ivrel.c: shared by the interval operators' binders ---- */
/* The bare entry `name` of `row` (relation `rel`'s, for messages): its
 * column, -1 when there is none, -2 with the error set when several
 * entries have that name. */
int ir_iv_find_bare(ir_binder *b, ir_row row, const char *name, const char *rel, int pos);
/* The same, "expected x to have a ts column" when missing (-1). */
int ir_iv_rel_col(ir_binder *b, ir_row row, const char *rel, const char *name, int pos);
/* Bounds must be integers: "expected rel.name to be an integer …". */
int ir_iv_check_bound(ir_binder *b, const char *rel, const char *name, int col, int pos);
/* Kind of a PER key: 0 integer, 1 double, 2 string. */
int ir_iv_key_kind(rt_type t);
/* The distinct columns of row, in order, into *out; their count. */
int ir_iv_row_cols(ir_binder *b, ir_row row, int **out);
/* Allocates op->iv's per-relation arrays (ids -1, ts_out/dur_out -1). */
void ir_iv_rel_arrays(ir_binder *b, ir_op *op, int nrel, int nper);
/* The relation's bare integer `id` column when it has exactly one, else
 * -1 (runtime errors name a bad row by it). */
int ir_iv_rel_id(ir_binder *b, ir_row row);
/* The alias a source binds: its AS name, else a table's name, or NULL. */
const char *ir_iv_src_qual(const fe_source *s);
/* Bare integer ts and dur of the current row and st's PER columns. */
ir_op *ir_iv_input_buffer(ir_binder *b, const fe_stage *st, int nmore, const int *more);
int ir_iv_input_bounds(ir_binder *b, const fe_stage *st, int *ts, int *dur, int **per,
                       const char ***per_names);
/* A stage's operand (st->src) once bound: its row, alias, bounds and the
 * PER columns it has (-1 where missing). */
typedef struct ir_iv_operand {
  ir_row row;
  const char *qual;
  int ts, dur;
  int *per;           /* -1 where the operand lacks the PER column */
  int nper_found;
} ir_iv_operand;
int ir_iv_bind_operand(ir_binder *b, const fe_stage *st, const char *what, ir_iv_operand *o);
/* The operand of a stage that matches it lane by lane (INTERVAL JOIN,
 * FIND, KEEP/DROP IF, SUBTRACT, SPLIT): bound as above, with every PER
 * column, each of the kind of the input's (per). */
int ir_iv_bind_keyed_operand(ir_binder *b, const fe_stage *st, const int *per, ir_iv_operand *o);
/* Each PER column of the operand (op) of one kind with the input's (in). */
int ir_iv_check_key_types(ir_binder *b, const fe_stage *st, const int *in, const int *op,
                          const char *rel);
/* The IV_BUFFER of an aggregating stage (FLATTEN, MERGE): the bounds, the
 * id (-1: none), keys[0..nkeys) and the aggregates' arguments, each once. */
ir_op *ir_iv_agg_buffer(ir_binder *b, int pos, int ts, int dur, int id, int nkeys, const int *keys,
                        int na, const ir_agg *aggs);
/* The op of a one-relation stage over the input's buffer (FLATTEN, §9.2's). */
ir_op *ir_iv_one_rel_op(ir_binder *b, ir_opkind kind, const fe_stage *st, ir_op *inbuf, int ts,
                        int dur, int *per, int id);
/* The op of a two-relation stage: relation 0 the input (ts, dur, per),
 * relation 1 the operand (its PER columns opper, or NULL) named opname. */
/* The operands of src (INTERVAL INTERSECTION OF, UNION OF), each bound
 * inline with a distinct alias, its ts, dur and every PER column (of one
 * kind across operands), buffered: the op of `kind` reading them (op->iv
 * filled but for its outputs); their rows into *rows. NULL on error. */
ir_op *ir_iv_bind_operands(ir_binder *b, const fe_source *src, const char *stage, ir_opkind kind,
                           ir_row **rows);
/* INTERVAL JOIN's relationship as an rt_ijrel. */
int ir_iv_rt_rel(fe_joinrel rel);
/* The row after a stage that attaches an operand (INTERVAL JOIN, FIND,
 * SPLIT): in's entries, then the operand's qualified-only; in's aliases
 * stay and the operand's joins them. */
void ir_iv_join_row(ir_binder *b, const ir_rowsave *in, const ir_iv_operand *o);
ir_op *ir_iv_two_rel_op(ir_binder *b, ir_opkind kind, const fe_stage *st, ir_op *inbuf, int ts,
                        int dur, int *per, ir_op *opbuf, const ir_iv_operand *o, int *opper,
                        const char *opname);

#endif
