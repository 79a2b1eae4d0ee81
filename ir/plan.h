/*
 * plan.h — the IR: typed expressions and a logical plan over column ids,
 * split into segments. One IR feeds both backends (interp/ and codegen/)
 * and the plan printer.
 *
 * A pipeline is a chain: source, stages, output. The binder (bind.c) turns
 * the AST into a flat list of ops over *column ids* (ir_col); reshaping
 * stages (SELECT/EXTEND/DROP/RENAME/SET/AS) only edit the binder's row model
 * and produce no ops, except COMPUTE for expressions that are not plain
 * column references. live.c removes dead columns, computes and aggregates.
 * segment.c cuts the list at breakers into segments:
 *
 *   segment = source op, streaming steps (FILTER/COMPUTE/LIMIT/TREE_NUMBER/
 *             TREE_ACC), sink op
 *
 * (the INTERVAL operators add IV_BUFFER sinks and their own sources: see
 * struct ir_interval)
 *
 * where a breaker (SORT, AGGREGATE, TREE_ORDER) is the sink of one segment
 * and is read back by the next segment's SCAN_BUF source. Every op and column lives in
 * the plan's arena.
 */
#ifndef PJ_PLAN_H
#define PJ_PLAN_H

#include <setjmp.h>
#include "../runtime/rt.h"
#include "../runtime/store.h"
#include "runtime/tree/tree.h"
#include "../runtime/window.h"

/* Where an op sits in a segment, and what else its consumers ask about it:
 * the ROLE, FLAGS and ARITY columns of ops.def (read them there). */
typedef enum ir_oprole { IR_ROLE_SOURCE, IR_ROLE_STEP, IR_ROLE_SINK, IR_ROLE_BREAKER } ir_oprole;
enum {
  OPF_IV = 1 << 0,
  OPF_SEL = 1 << 1,
  OPF_JIT = 1 << 2,
  OPF_ROWS = 1 << 3,
};

typedef enum ir_opkind {
#define OP(name, str, role, flags, arity) IR_##name,
#include "ops.def"
#undef OP
  IR__COUNT
} ir_opkind;

/* UNION / INTERSECT / EXCEPT */
typedef enum ir_setkind { IR_SET_UNION, IR_SET_INTERSECT, IR_SET_EXCEPT } ir_setkind;

/* The FORM and NULLS columns of exprs.def (read them there). */
typedef enum ir_exform {
  IR_FORM_LEAF, IR_FORM_PREFIX, IR_FORM_INFIX, IR_FORM_POSTFIX, IR_FORM_LIST, IR_FORM_CASE,
  IR_FORM_CALL,
} ir_exform;
typedef enum ir_exnulls { IR_NULLS_STRICT, IR_NULLS_NEVER, IR_NULLS_LOGIC, IR_NULLS_OWN } ir_exnulls;

typedef enum ir_exkind {
#define EX(name, str, arity, form, prec, nulls) IX_##name,
#include "exprs.def"
#undef EX
  IX__COUNT
} ir_exkind;

extern const char *const ir_op_names[IR__COUNT];
extern const char *const ir_ex_names[IX__COUNT];
extern const ir_oprole ir_op_roles[IR__COUNT];
extern const unsigned ir_op_flags[IR__COUNT];
extern const signed char ir_op_arities[IR__COUNT];
extern const ir_exform ir_ex_forms[IX__COUNT];
extern const ir_exnulls ir_ex_nullss[IX__COUNT];
extern const signed char ir_ex_arities[IX__COUNT];

static inline ir_oprole ir_op_role(ir_opkind k) { return ir_op_roles[k]; }
static inline bool ir_op_has(ir_opkind k, unsigned flag) { return (ir_op_flags[k] & flag) != 0; }
/* Starts a segment / ends one (a plain sink or a breaker). */
static inline bool ir_op_is_source(ir_opkind k) { return ir_op_roles[k] == IR_ROLE_SOURCE; }
static inline bool ir_op_is_sink(ir_opkind k) {
  return ir_op_roles[k] == IR_ROLE_SINK || ir_op_roles[k] == IR_ROLE_BREAKER;
}
/* An INTERVAL source (ISECT, FLATTEN, IJOIN, FILLGAPS, …). */
static inline bool ir_op_is_interval(ir_opkind k) {
  return ir_op_roles[k] == IR_ROLE_SOURCE && (ir_op_flags[k] & OPF_IV);
}

/* A column of the plan. Scan columns keep their storage type (RT_ID,
 * RT_U32, …); computed columns are RT_I64, RT_F64, RT_STR or RT_BOOL. */
typedef struct ir_col {
  const char *name;     /* defining spelling, for plans and output */
  rt_type type;
  bool nullable;
  bool live;            /* set by live.c */
  bool untyped;         /* every value is an untyped NULL (`EXTEND NULL AS n`,
                           `MAX(NULL)`): stored as `type`, but a reference
                           binds as a bare NULL, which takes any type */
  bool shared_name;     /* another column has the same name (set by
                           ir_mark_names when p->names_marked) */
} ir_col;

typedef struct ir_expr ir_expr;
struct ir_expr {
  ir_exkind kind;
  rt_type type;         /* RT_I64, RT_F64, RT_STR, RT_BOOL, RT_NULLT, or a
                           scan type for IX_COL */
  bool nullable;        /* false only when the value can never be NULL */
  int pos;              /* byte offset in the query text */
  /* IX_CONST */
  bool is_null;
  int64_t ival;
  double fval;
  uint32_t sval;        /* string id */
  int col;              /* IX_COL */
  int param;            /* IX_PARAM, 1-based */
  bool open_type;       /* binder scratch: an IX_CALLOUT of a scalar subquery
                           whose type nothing fixed yet, which takes the type
                           of its context (bind_subq.c) */
  int nargs;
  ir_expr **args;
};

/* The aggregates of aggs.def, indexed by rt_aggkind (read the columns
 * there). */
typedef enum ir_aggout { IR_AGGOUT_I64, IR_AGGOUT_F64, IR_AGGOUT_SUM, IR_AGGOUT_ARG, IR_AGGOUT_VAL, IR_AGGOUT_STR } ir_aggout;
typedef enum ir_aggarg { IR_AGGARG_NO, IR_AGGARG_STAR, IR_AGGARG_ANY, IR_AGGARG_NUM } ir_aggarg;
typedef enum ir_aggplace { IR_AGG_IN_AGGREGATE, IR_AGG_IN_TREE, IR_AGG_IN_FLATTEN, IR_AGG_IN_LIST, IR_AGG_IN__COUNT } ir_aggplace;
typedef struct ir_agginfo {
  const char *sql;        /* "COUNT": the name it is called by */
  const char *printed;    /* "count(*)": in plans */
  ir_aggout out;
  ir_aggarg arg[IR_AGG_IN__COUNT];   /* what each stage takes */
  int lo, hi;             /* argument count */
} ir_agginfo;
extern const ir_agginfo ir_aggs[];
enum {
  IR_NAGGS = 0   /* entries of aggs.def */
#define AGG(name, sql, printed, out, in_agg, in_tree, in_flat, in_list, lo, hi) +1
#include "aggs.def"
#undef AGG
};

/* Output type of aggregate k over an argument of type `arg` (RT_NULLT for
 * a bare NULL), by its OUT column: ARG keeps the argument's type with
 * ints widened to I64, and with `numeric` (the TREE and FLATTEN runtimes,
 * which accumulate int64 or double) booleans too. */
rt_type ir_agg_out_type(rt_aggkind k, rt_type arg, bool numeric);

/* One aggregate of an AGGREGATE op. arg_col is the input column (-1 for
 * COUNT(*)); out_col the output column. Output types: COUNT → I64; SUM of
 * ints → I64 (checked), of doubles → F64; AVG → F64; MIN/MAX/ANY_VALUE →
 * the argument's type widened (ints → I64). */
typedef struct ir_agg {
  rt_aggkind kind;
  int arg_col;
  int out_col;
  rt_type arg_type;
  bool live;
  int arg2_col;         /* the second argument (ARG_MAX's value, GROUP_CONCAT's
                           separator), -1 when none */
  rt_type arg2_type;
  double param;         /* PERCENTILE's constant p; MEDIAN: 50 */
} ir_agg;

typedef struct ir_sortkey {
  int col;
  bool desc;
  bool nulls_first;
} ir_sortkey;

/* The window functions of windows.def, indexed by rt_winfn (read the
 * columns there). */
typedef enum ir_winout { IR_WINOUT_I64, IR_WINOUT_F64, IR_WINOUT_ARG, IR_WINOUT_LAG, IR_WINOUT_SUM, IR_WINOUT_AVG } ir_winout;
typedef enum ir_winarg { IR_WINARG_NO, IR_WINARG_STAR, IR_WINARG_ANY, IR_WINARG_NUM, IR_WINARG_INT } ir_winarg;
typedef struct ir_wininfo {
  const char *sql;        /* "ROW_NUMBER": the name it is called by */
  const char *printed;    /* "row_number": in plans */
  ir_winout out;
  ir_winarg arg;
  int lo, hi;             /* argument count */
} ir_wininfo;
extern const ir_wininfo ir_wins[];
enum {
  IR_NWINS = 0   /* entries of windows.def */
#define WIN(name, sql, printed, out, arg, lo, hi) +1
#include "windows.def"
#undef WIN
};

/* One distinct window of a WINDOW op: partition keys part[0..npart) (the
 * columns, in any order), then order keys. Calls with the same keys share
 * it, and so its one sort. */
typedef struct ir_winspec {
  int npart;
  int *part;
  int norder;
  ir_sortkey *order;
} ir_winspec;

/* One window function call of a WINDOW op (runtime/window.h rt_wincall,
 * over plan columns): arg_col its value (-1 for COUNT(*) and the ranks),
 * n_col LAG/LEAD's offset or NTILE's / NTH_VALUE's n when not the
 * constant n, dflt_col LAG/LEAD's default (-1: NULL); out_col the result;
 * live as for aggregates (live.c). pos is the call's, for its errors. */
typedef struct ir_wincall {
  rt_winfn fn;
  int spec;
  int arg_col, n_col, dflt_col;
  int64_t n;
  rt_winframe frame;
  bool framed;          /* a frame was written (the plan prints it) */
  int out_col;
  bool live;
  int pos;
} ir_wincall;

typedef struct ir_op ir_op;

/* INTERVAL FIND's variant in op->iv.rel (§9.3): the operand's end (else
 * its start), nearest at or before (else at or after) the anchor, the
 * anchor the end of its interval (else the start). */
enum { IR_FIND_ENDING = 1, IR_FIND_BEFORE = 2, IR_FIND_END = 4 };
struct ir_op {
  ir_opkind kind;
  const char *stage;    /* "WHERE", "ORDER BY", … : prefix of runtime errors */
  int pos;              /* byte offset of the stage keyword */
  bool dead;            /* removed by live.c; skipped by everyone */

  /* The fields of one kind of op (the others' are not there). Readers
   * that take every kind switch on it: ir_op_need, ir_buf_layout,
   * ir_source_cols (plan.c). */
  union {
    /* SCAN_TABLE: reads table->cols[table_cols[i]] into column out_cols[i].
     * It holds a reference on `table`, released by ir_plan_free; with no
     * live column it reads nothing (nscan == 0) and the row count comes
     * from table->nrows.
     * SCAN_SQL: steps `sql` (already wrapped to project only live columns,
     * in the order of out_cols). sql_base is the source query before
     * live.c wraps it (`SELECT * FROM "name"` or the subquery text), nsrc
     * its column count; table_cols[i] is the position of out_cols[i] among
     * those columns. A SCAN_SQL always reads at least one column, so
     * SQLite still yields every row.
     * SCAN_BUF: reads the buffer of op `buf_op` (a breaker); its columns
     * are that op's buffer layout (ir_buf_layout), stored as
     * rt_store_type(col type) (ints as int64), as store.h's rowbuf does;
     * over a TREE_ORDER in place it reads `table` (struct ir_tree). */
    struct ir_scan {
      int nscan;
      int *out_cols;
      int *table_cols;
      rt_table *table;
      const char *table_name;
      char *sql;
      const char *sql_base;
      int nsrc;
      ir_op *buf_op;
      /* SCAN_SQL whose types came from the values: sql_base, open, with
       * the first rows read (runtime/sqlite/sqlsrc.h rt_sql_prime), for
       * the next run to go on from instead of running the query again;
       * NULL once a run took it or when nothing was read. Owned by the
       * plan. */
      struct rt_sqlsrc *primed;
      /* SCAN_SQL of a `|> SQL (…)` stage (bind_sql.c): the stage's SQL
       * as written and the plan of its input (the pipeline before it),
       * for the printer; NULL for every other scan. */
      const char *sql_stage;
      const char *input_plan;
    } scan;
    struct ir_filter {          /* FILTER */
      ir_expr *pred;
    } filter;
    struct ir_compute {         /* COMPUTE: out_col = expr */
      int out_col;
      ir_expr *expr;
    } compute;
    struct ir_limit {           /* LIMIT: counts are expressions (constants or
                                   parameters) evaluated once per run; NULL
                                   offset = 0 */
      ir_expr *count, *offset;
    } limit;
    struct ir_sort {            /* SORT: keys; the buffer holds columns
                                   carry[0..ncarry) (every column live after
                                   the sort, the keys included) and the next
                                   segment reads them under the same ids */
      int nkeys;
      ir_sortkey *keys;
      int ncarry;
      int *carry;
    } sort;
    struct ir_aggregate {       /* AGGREGATE: group keys are input columns
                                   group_cols[i] → output columns
                                   group_out[i]; aggs as above. The next
                                   segment reads group_out then the live
                                   aggs' out_cols. With no GROUP BY
                                   (ngroup == 0) there is exactly one output
                                   row, even for empty input. */
      int ngroup;
      int *group_cols;
      int *group_out;
      int naggs;
      ir_agg *aggs;
    } agg;
    /* WINDOW (bound in bind_window.c; runtime/window.h): a breaker that
     * buffers carry[0..ncarry) — every column live after it plus the
     * keys and arguments of its live calls — and, when its input ends,
     * computes each live call into out_col, sorting once per spec. The
     * next segment reads the buffer in input order: carry then the live
     * calls' out_col (ir_buf_layout), the carried columns under their own
     * ids. A WINDOW none of whose calls is read is dead. */
    struct ir_window {
      int nspecs;
      ir_winspec *specs;
      int ncalls;
      ir_wincall *calls;
      int ncarry;
      int *carry;
    } win;
    struct ir_output {          /* OUTPUT: result columns (names as the
                                   user sees them) */
      int nout;
      int *out;
      const char **out_names;
    } output;
    /* TREE ACCUMULATE (runtime state in runtime/tree/tree.h, found by op
     * index in ex_run.trees). A stage lowers to
     *   TREE_NUMBER  reads id_col, parent_col (bare id, parent_id: both
     *                ints of any kind, or both strings) and defines
     *                node_col, pnode_col: RT_U32, never NULL, the row's
     *                node number and its parent's (RT_TREE_NONE for a
     *                root). tier: RT_TREE_TIER_TABLE when segment.c proved
     *                the input is an unfiltered table scan whose id is the
     *                row index, else RT_TREE_TIER_DENSE (identity until an
     *                id breaks density, then a hash map).
     *   TREE_ORDER   sink (breaker): buffers carry[0..ncarry) — the
     *                columns live after it, always including both node
     *                columns — and at the end orders them child-first (up)
     *                or parent-first; the next SCAN_BUF reads them under
     *                the same ids through the permutation (run->perms).
     *   TREE_ACC     per row, in that order: aggs (SUM, COUNT_STAR, MIN,
     *                MAX; arg_col, out_col, live as for AGGREGATE) with the
     *                rule of runtime/tree/tree.h, reading the node columns.
     * num / order link the ops of a stage (TREE_ORDER and TREE_ACC copy
     * their numbering's node columns); a later stage over the same id and
     * parent_id columns with only COMPUTEs in between shares its
     * TREE_NUMBER (reuse_num), and in the same direction its TREE_ORDER too
     * (reuse_order). A TREE_ACC none of whose outputs is read is dead, and
     * so are the TREE_ORDER and TREE_NUMBER no live TREE_ACC needs: the
     * whole stage disappears, errors included.
     * TREE_ORDER in_place (set by segment.c): its segment is an unfiltered
     * SCAN_TABLE whose only step is its TABLE-tier TREE_NUMBER, so node
     * numbers are row indices and nothing needs buffering. The driver runs
     * no backend for that segment: one pass over parent_id checks the order
     * (rt_tree_table_order) and the next segment's SCAN_BUF reads the table
     * itself — forwards, backwards (parents precede children: child-first
     * for UP is the table read backwards) or through a permutation of row
     * indices. That SCAN_BUF then has `table` and `table_name` set (no
     * reference held: the SCAN_TABLE owns it) and table_cols[i] is the
     * table column of out_cols[i]: the id column (RT_ID) for the node
     * column, -1 for the parent-node column (a uint32 array the check
     * writes, owned by the numbering's state). */
    struct ir_tree {
      int id_col, parent_col;   /* TREE_NUMBER */
      int node_col, pnode_col;
      int tier;                 /* TREE_NUMBER */
      bool up;                  /* TREE_ORDER, TREE_ACC */
      bool reuse_num, reuse_order;   /* TREE_ACC */
      bool used;                /* TREE_ORDER, live.c scratch: a live
                                   TREE_ACC reads this order */
      bool in_place;            /* TREE_ORDER */
      ir_op *num;               /* TREE_ORDER, TREE_ACC: their TREE_NUMBER */
      ir_op *order;             /* TREE_ACC: its TREE_ORDER */
      int ncarry;               /* TREE_ORDER: what it buffers */
      int *carry;
      int naggs;                /* TREE_ACC */
      ir_agg *aggs;
    } tree;
    /* INTERVAL operators (bound in bind_interval.c).
     *   IV_BUFFER  sink: buffers carry[0..ncarry) (as SORT does, without
     *              keys) for the interval source user that reads it; no
     *              SCAN_BUF follows it. live.c trims the carry to what is
     *              read later, so an operand's unread columns are never
     *              buffered.
     *   ISECT      INTERVAL INTERSECTION OF: relation j (j < nrel) is
     *              buffered by bufs[j] and has columns ts[j],
     *              dur[j], per[j][0..nper); names[j] is its
     *              alias. Output: ts_out, dur_out (RT_I64, flat), and
     *              every carried operand column under its own id, read
     *              through a selection of its operand's buffer.
     *   FLATTEN    INTERVAL FLATTEN: relation 0 is the input. Output:
     *              ts_out, dur_out, the PER columns under their own
     *              ids (a selection of each segment's first row), then the
     *              live aggs' out_col (arg_col as for AGGREGATE).
     *   IJOIN      [LEFT] INTERVAL JOIN: relation 0 the input, 1 the
     *              operand; rel is an rt_ijrel, left LEFT. Output:
     *              every carried column of both, under their own ids,
     *              through selections (LEFT's unmatched rows select a NULL
     *              row appended to the operand's buffer).
     *   FILLGAPS   INTERVAL FILL GAPS: relation 0 the input, 1 the
     *              background (per[1] NULL when it has no PER column).
     *              Output columns out_cols[0..nscan), each copied from input
     *              column from_in[k] on input rows and, on fillers, from
     *              from_bg[k] (-1: NULL) or the filler's own bounds
     *              (fill_kind[k]: 1 ts, 2 dur, 3 PER key fill_key[k]
     *              taken from its lane, 0 a plain column). */
    struct ir_ivbuf {           /* IV_BUFFER */
      int ncarry;
      int *carry;
      ir_op *user;              /* the source that reads it */
    } ivbuf;
    struct ir_interval {        /* ISECT, FLATTEN, IJOIN, FILLGAPS */
      int nscan;                /* the columns it serves, as a scan's */
      int *out_cols;
      int nrel;
      ir_op **bufs;
      int *ts, *dur;
      /* Per relation: its bare integer `id` column, or -1. Carried
       * (live.c) so that a runtime error about a row names it by id
       * (ISECT, FLATTEN, FILL GAPS' background). */
      int *id;
      int nper;
      int **per;
      const char **names;
      int ts_out, dur_out;
      int rel;                  /* IJOIN */
      bool left;
      int *from_in, *from_bg, *fill_kind, *fill_key;   /* FILLGAPS */
      int naggs;                /* FLATTEN */
      ir_agg *aggs;
      /* §9.1 (ivsrc). IV_EVENTS: relation 0 the events (dur[0] = ts[0]:
       * no dur is read), 1 the STOP events when nrel is 2; close_col the
       * CLOSING LAST AT end computed on each event row, or -1. */
      int close_col;
      /* §9.2 (bind_reshape.c): IVMERGE's merged interval of each row
       * (gid_out; ts_out, dur_out its bounds) and its BY columns (by[0..nby)
       * of relation 0, none for OVERLAPPING); QUANTIZE's bucket_out, width
       * (ns), align (0 TRACE START, 1 ZERO, 2 an expression) and origin
       * (relation 0's column holding the origin, -1: ZERO); FILLGAPS'
       * within (FILL WITHIN: fillers carry only bounds and PER columns).
       * SUBTRACT, SPLIT, QUANTIZE serve ts_out, dur_out, then relation 0's
       * carry through a selection of its rows (SPLIT also relation 1's,
       * QUANTIZE bucket_out after the bounds); SETBOUNDS serves relation
       * 0's carry (its ts/dur are the new bounds, checked); IVMERGE
       * gid_out, ts_out, dur_out, then relation 0's carry. */
      int gid_out, bucket_out;
      int nby;
      int *by;
      int64_t width;
      int align, origin;
      bool within;
      /* §9.1 IV_UNION: per_out[0..nper), the lane's PER values (flat
       * columns the driver fills per batch). §9.3 IV_FIND: rel holds the
       * IR_FIND_* bits, left LEFT, within_col WITHIN's distance computed
       * on each input row (or -1); IV_KEEP: rel an rt_ijrel, drop for
       * DROP IF. */
      int *per_out;
      int within_col;
      bool drop;
    } iv;
    /* TREE_SHAPE, the §9.4 tree operators (bind_tshape.c; runtime/tree/tshape.h,
     * run by exec/driver_tshape.c): kind is an rt_tshape_kind. in_buf
     * buffers the input (id_col, parent_col — -1 with OVER when it has no
     * parent_id —, the BY columns by[0..nby), the aggregates' arguments and
     * every column read later); set_buf the node set (its column set_col),
     * over_buf the OVER tree (over_id, over_parent); NULL when absent.
     * Output, through ir_source_cols: out_cols[0..nscan) (set by segment.c
     * after liveness): parent_out (the new parent_id), id_out (MERGE
     * SIBLINGS' new id, else -1), the live aggregates' out_col, and every
     * column in_buf carries, read through the selection of output rows. */
    struct ir_tshape {
      int kind;
      bool ordered;
      ir_op *in_buf, *set_buf, *over_buf;
      int id_col, parent_col, set_col, over_id, over_parent;
      int nby;
      int *by;
      int naggs;
      ir_agg *aggs;
      int parent_out, id_out;
      int nscan;
      int *out_cols;
    } tshape;
    struct ir_setop {           /* SETOP (bind_setop.c) */
      int kind;                 /* ir_setkind */
      bool all;                 /* ALL, else DISTINCT */
      int nrel;                 /* the input, then each operand */
      int ncols;
      ir_op **bufs;             /* relation j's IV_BUFFER */
      int **cols;               /* relation j's columns, by position */
      int *out;                 /* the output columns (also out_cols) */
    } setop;
    /* FORK: buffers carry[0..ncarry) (every column live after it, and
     * what its readers read) for the SCAN_BUF after it and for every
     * SCAN_FORK of the name; dead (nothing buffered, the stream goes on
     * in its segment) when nothing reads the name. A SCAN_FORK has
     * scan.buf_op = its FORK and serves out_cols[i], a copy of the fork's
     * column scan.table_cols[i] (a plan column id among the carry). */
    struct ir_fork {
      int ncarry;
      int *carry;
      const char *name;
      bool used;                /* live.c scratch: a live SCAN_FORK reads it */
    } fork;
    /* GRAPH (§9.5; bound in bind_graph.c, run by exec/driver_graph.c):
     * relation 0 NODES, 1 EDGES, 2 FROM (the seeds), buffered by
     * bufs[0..3); id_col (NODES), src_col and dst_col (EDGES), seed_col
     * (FROM) are integer columns of theirs. algo is an rt_graphalgo
     * (runtime/graph/graph.h). Output: NODES' carried columns under their
     * own ids, read through a selection of its buffer (the tree's rows in
     * its order), then parent_out and depth_out (RT_I64, parent NULL for
     * a root); out_cols[0..nscan) lists them once live.c trimmed the
     * buffers (segment.c). */
    struct ir_graph {
      int algo;
      ir_op *bufs[3];
      int id_col, src_col, dst_col, seed_col;
      int parent_out, depth_out;
      int nscan;
      int *out_cols;
    } graph;
    struct ir_join {            /* JOIN_PROBE and its JOIN_BUILD (bind_join.c) */
      int kind;                 /* rt_joinkind (runtime/jointab.h) */
      int nkeys;                /* equality keys: input column in_keys[k] equals
                                   the relation's src_keys[k] (same stored
                                   kind: both ints, doubles or strings) */
      int *in_keys, *src_keys;
      ir_expr *residual;        /* the rest of ON, checked per match (NULL: none) */
      int ncarry;               /* BUILD: what it buffers (trimmed by live.c),
                                   the columns its PROBE serves */
      int *carry;
      ir_op *build;             /* PROBE: its JOIN_BUILD */
      ir_op *probe;             /* BUILD: the JOIN_PROBE that reads it */
      const char *name;         /* the relation's alias or name, for plans */
    } join;
  };
};

/* A TREE_ORDER made in place (struct ir_tree): the next segment reads the
 * table, not a buffer. False for NULL and every other op. */
static inline bool ir_tree_in_place(const ir_op *op) {
  return op && op->kind == IR_TREE_ORDER && op->tree.in_place;
}

typedef struct ir_segment {
  ir_op *source;        /* SCAN_TABLE, SCAN_SQL, SCAN_BUF or an interval source */
  int nsteps;
  ir_op **steps;        /* FILTER, COMPUTE, LIMIT, TREE_NUMBER, TREE_ACC — in order */
  ir_op *sink;          /* SORT, AGGREGATE, TREE_ORDER, IV_BUFFER or OUTPUT */
} ir_segment;

typedef struct ir_param {
  const char *name;     /* "$name", or NULL for `?` */
  rt_type type;         /* type assumed when the plan was bound */
  bool inferred;        /* no value was bound: the type comes from context
                           (the other operand of a comparison), else int */
  int pos;              /* first use in the text (-1: never used, a gap
                           before a ?N), and its stage, for "not bound" */
  const char *stage;
} ir_param;

/* A call of a function the engine provides (a PerfettoSQL scalar
 * function, EXTRACT_ARG, trace_start(); LANGUAGE.md §7.2, §7.7): an
 * IX_CALLOUT node names it by index. Both backends call it through
 * ex_callout (exec/callout.c), one row at a time, with each argument a
 * 64-bit word: an integer, a double's bits, or a string id of the run's
 * pool. fn returns 0 with *out set, 1 for NULL, or -1 with a message in
 * err (which ex_callout prefixes with the stage and the function's name).
 * The plan text shows only the name and arguments, so compiled code
 * shared through the compile cache reads fn and ctx from the plan of the
 * run, never from constants. */
typedef int (*ir_callout_fn)(void *ctx, const int64_t *argv, uint64_t nulls, int64_t *out,
                             char *err, size_t errlen);
typedef struct ir_callout {
  const char *name;
  int nargs;            /* at most 64 */
  rt_type *argtypes;    /* RT_I64, RT_F64 or RT_STR: what argv[i] holds */
  const char *const *argnames;   /* for messages, or NULL */
  rt_type ret;          /* RT_I64, RT_F64, RT_STR or RT_BOOL */
  ir_callout_fn fn;
  void *ctx;
  void (*release)(void *ctx);   /* called by ir_plan_free, or NULL */
  bool reads_sql;       /* answers come from SQLite (the plan rebinds on
                           schema and data changes) */
  /* A columnar table the answers come from (EXTRACT_ARG's args), held by
   * the plan: a handle binds again when the catalog replaces it. */
  rt_table *table;
  const char *stage;    /* where it was called, for errors */
  int pos;
  /* 1 + the index in plan->subqs of the subquery this call answers (fn
   * is NULL then: ex_callout asks exec/subq.c), else 0. */
  int subq;
} ir_callout;

/* A subquery in an expression (LANGUAGE.md §5; bound by bind_subq.c),
 * answered through an IX_CALLOUT whose ir_callout.subq names it:
 *   IN      callout(x): TRUE when x equals a row's value, else NULL when a
 *           row is NULL or x is (and some row exists), else FALSE (SQL's
 *           rules; NOT IN is NOT over it); argtypes[0] is x's type
 *   EXISTS  callout(): whether the subquery has a row, never NULL
 *   SCALAR  callout(): the first row's value (NULL with no row), of `type`
 * A run evaluates each one at most once, when first asked (exec/subq.c),
 * in SQLite, with the run's parameter values. */
typedef enum ir_subqkind { IR_SUBQ_IN, IR_SUBQ_EXISTS, IR_SUBQ_SCALAR } ir_subqkind;
typedef struct ir_subq {
  ir_subqkind kind;
  const char *sql;      /* as SQLite runs it: every parameter spelled ?N,
                           N its number in the plan (plan->params); NULL
                           for a pipeline */
  struct ir_plan *plan; /* a pipeline subquery's own plan (owned), which
                           numbers its parameters as this one does (the
                           run's values serve both); NULL for SQL */
  const char *text;     /* as written, for plans */
  rt_type type;         /* SCALAR: the value's type (RT_I64, RT_F64, RT_STR) */
  bool inferred;        /* SCALAR: nothing said the type yet (binder scratch) */
  int coll;             /* IN: the rows' strings compare lowered (1, NOCASE) or
                           without trailing spaces (2, RTRIM), as x does */
  const char *stage;    /* where it was written, for errors */
  int pos;
} ir_subq;

typedef struct ir_plan {
  rt_arena arena;       /* owns everything below */
  int ncols, capcols;
  ir_col *cols;
  int nops;
  ir_op **ops;          /* in pipeline order */
  int nsegs;
  ir_segment *segs;
  int nparams;
  ir_param *params;
  const char *text;     /* the pipeline text positions refer to */
  /* Added by ir/: the pool string constants were interned in (the
   * engine's, not owned), so the printer can show them. */
  const rt_strpool *strings;
  /* Set by the binder: some op reads SQLite (a plan that must be bound
   * again when the schema changes), and some SQLite column's type was
   * sampled from the values (bound again when the data changes too). */
  bool reads_sql;
  bool sql_sampled;
  bool reads_defs;      /* inlined a PerfettoSQL view or function body, or calls one */
  int ncallouts, capcallouts;
  ir_callout *callouts; /* IX_CALLOUT targets */
  int nsubqs, capsubqs;
  ir_subq *subqs;       /* subqueries in expressions (see ir_subq) */
  /* ir_mark_names ran: cols[].shared_name is valid (the printer then
   * needs no search per column: a 20,000-column plan printed in
   * quadratic time). */
  bool names_marked;
  /* The tables made for the inputs of SQL stages (ir_sqlinput.open),
   * dropped by ir_plan_free after the SQL scans that read them close. */
  int nsqlins;
  struct ir_sqlin_held {
    const struct ir_sqlinput *by;
    void *handle;
  } *sqlins;
  /* While the binder builds the plan: where an allocation from the arena
   * that fails jumps to (ir_bind, which then fails with "<stage>: out
   * of memory", oom_stage naming the stage). See ir_palloc. */
  jmp_buf *oom_jmp;
  const char *oom_stage;
} ir_plan;

/* ---- building ----------------------------------------------------------- */

/* Context the binder needs from the engine. */
struct rt_catalog;
/* A PerfettoSQL function or view (LANGUAGE.md §7.1-7.2) as the binder
 * sees it: FROM v and FROM fn(…) inline a pipeline body (binding `$arg`
 * to the argument), or read a SQL one through SQLite. api/defs.h owns
 * them; everything here lives as long as the definition. */
typedef struct ir_fndef {
  const char *name;
  bool view;            /* a view (no arguments); else a function */
  bool table;           /* a table function, or a view */
  const struct fe_pipeline *pipe;   /* a pipeline body, or NULL for SQL */
  const char *text;     /* the text pipe's positions refer to */
  int nargs;
  const char *const *argnames;
  const rt_type *argtypes;   /* RT_I64, RT_F64, RT_STR, RT_BOOL */
} ir_fndef;

typedef struct ir_defs {
  void *ctx;
  /* Fills *out for the function or view `name`; 0 when there is none. */
  int (*find)(void *ctx, const char *name, ir_fndef *out);
  /* A scalar function `name` called with these (bound) arguments: fills
   * *out (name, argtypes — the binder converts the arguments to them —,
   * ret, fn, ctx, table; argtypes from arena a) and returns 1; 0 when no
   * such function exists; -1 with msg set when the call is wrong. */
  int (*callout)(void *ctx, const char *name, int nargs, struct ir_expr *const *args,
                 rt_arena *a, ir_callout *out, char *msg, size_t msglen);
} ir_defs;

/* `|> SQL (select)` (LANGUAGE.md §8; ir/bind_sql.c): the engine makes
 * the stages before the SQL stage, with their source, a table SQLite can
 * read, which the stage's SQL names instead of `@input`. */
struct fe_pipeline;
typedef struct ir_sqlinput {
  void *ctx;
  /* Compiles pipeline pl (positions in text; copied as needed) into a
   * table: fills *name (the table, as SQL names it) and *plan (the
   * pipeline's plan, printed), both from arena a, and returns a handle
   * for drop; NULL with err set (its offset in text). */
  void *(*open)(void *ctx, const struct fe_pipeline *pl, const char *text, rt_arena *a,
                const char **name, const char **plan, rt_err *err);
  void (*drop)(void *ctx, void *handle);
} ir_sqlinput;

typedef struct ir_env {
  struct rt_catalog *catalog;
  void *db;             /* sqlite3 *, for FROM a SQLite table/view/subquery */
  rt_strpool *strings;
  /* Types of bound parameter values (index 1..nparam_types), used to type
   * IX_PARAM; a parameter with no entry is typed RT_I64. */
  int nparam_types;
  const rt_type *param_types;
  const ir_defs *defs;  /* PerfettoSQL functions and views, or NULL */
  /* Binding a pipeline subquery of this plan (bind_subq.c): the new
   * plan's parameters go on from its numbering. NULL otherwise. */
  const struct ir_plan *params_of;
  const ir_sqlinput *sqlin;   /* for |> SQL (…), or NULL (the stage is then an error) */
} ir_env;

struct fe_pipeline;
/* AST → plan: binding, typing, liveness, segmenting. On error returns NULL
 * and fills err ("<STAGE>: <message>", offset of the offending token). */
ir_plan *ir_build(const struct fe_pipeline *p, const char *text, ir_env *env, rt_err *err);
void ir_plan_free(ir_plan *p);
/* Closes the SQL sources the binder left open with their first rows read
 * (scan.primed): for a plan that will not run soon, since an open query
 * holds a read transaction. The next run prepares them again. */
void ir_plan_release_primed(ir_plan *p);

/* Steps of ir_build, separately testable. */
ir_plan *ir_bind(const struct fe_pipeline *p, const char *text, ir_env *env, rt_err *err);
void ir_live(ir_plan *p);
void ir_segment_plan(ir_plan *p);

/* The columns of the buffer a sink writes, in buffer order; for a
 * breaker, the next segment's SCAN_BUF reads them under these ids:
 *   SORT, TREE_ORDER, IV_BUFFER  carry (which holds the sort keys, the
 *                                node columns);
 *   AGGREGATE                    group_out, then the live aggregates'
 *                                out_col;
 *   WINDOW                       carry, then the live calls' out_col
 *                                (computed when the input ends);
 *   OUTPUT                       out.
 * Fills cols (room for ir_buf_layout_max(op) entries; NULL: just count
 * that maximum) and returns how many; 0 for an op that is not a sink. */
int ir_buf_layout(const ir_op *op, int *cols);
int ir_buf_layout_max(const ir_op *op);
/* The columns the backends append to a sink's buffer row by row, when
 * the op keeps them as one array (every sink but AGGREGATE; for WINDOW
 * its carry, without the results): that array and *n its length; else
 * NULL and 0. */
const int *ir_buf_cols(const ir_op *op, int *n);

/* The columns a source serves, in its batch order (a scan's out_cols, an
 * interval source's): that array and *n its length; NULL and 0 for an op
 * that is not a source. */
const int *ir_source_cols(const ir_op *op, int *n);

/* How big op is for the JIT's cost model (codegen/cg.h cg_plan_size):
 * its expression nodes plus the columns and aggregates it lists. */
int64_t ir_op_size(const ir_op *op);

/* Marks in need[] every column op reads (expressions, keys, carried and
 * aggregated columns, interval bounds …), whatever its kind. */
void ir_op_need(const ir_op *op, bool *need);

/* Adds a column; returns its id. */
int ir_col_new(ir_plan *p, const char *name, rt_type type, bool nullable);
/* n zeroed bytes from the plan's arena. Out of memory, it jumps to
 * p->oom_jmp when the binder set one (so the binder's code never sees
 * NULL), else returns NULL. */
void *ir_palloc(ir_plan *p, size_t n);
/* Out of memory in a pass after binding (liveness, segments): jumps to
 * p->oom_jmp, which ir_build sets around them; the statement fails with
 * "out of memory". */
_Noreturn void ir_plan_oom(ir_plan *p);

/* Appends `name` as a SQL identifier: "a""b" (added by ir/). */
void ir_sql_quote(rt_buf *out, const char *name);

/* Appends a human-readable plan (segments, steps, live columns) to out. */
void ir_print(const ir_plan *p, rt_buf *out);
/* Marks the columns whose name another column shares (the printer shows
 * them with their id); ir_build does it last. */
void ir_mark_names(ir_plan *p);
void ir_print_expr(const ir_plan *p, const ir_expr *e, rt_buf *out);

/* Checks structural invariants (every column used is defined before, types
 * are uniform per ExprKind, …); returns 0 and fills err when broken. */
int ir_verify(const ir_plan *p, rt_err *err);

#endif
