/*
 * emit.h — the codegen's internal context and the small LLVM helpers every
 * operator file uses (constants, struct field loads, checked arithmetic,
 * if/else blocks, runtime calls), so that cg_expr.c, cg_segment.c and
 * cg_agg.c read as what the query does rather than as LLVM boilerplate.
 *
 * Values: a cg_val is an SQL value in registers: `v` (i64 for every integer
 * kind and booleans, double, or i32 string id) and `null` (an i1; the
 * constant false when the value can never be NULL). A NULL value's `v` is
 * always a defined value (0 where we make it up), so arithmetic on it never
 * traps and never produces poison that a branch could observe.
 *
 * Errors inside the row loop do not leave the loop at once: the row is
 * dropped, the smallest failing step is remembered and reported after the
 * batch (see cg_segment.c for why this matches the interpreter).
 */
#ifndef PJ_CG_EMIT_H
#define PJ_CG_EMIT_H

#include <llvm-c/Core.h>

#include "cg.h"
#include "cg_layout.h"

/* Struct types of the runtime, for one LLVM context. */
typedef struct cg_types {
  LLVMTypeRef view, batch, seg, run, value, rowbuf, agg, aggtab, arena;
  LLVMTypeRef treenum, treeagg, treeacc, jointab;
} cg_types;
void cg_types_init(cg_types *t, LLVMContextRef c);

/* Error kinds reported by generated code (cg_rt_fail). CG_ERR_RUNTIME: a
 * runtime function the row called has already set the message (TREE
 * ACCUMULATE's numbering); CG_ERR_TREE_NODE: a node number outside the
 * per-node arrays (the interpreter's "internal error" for the same);
 * CG_ERR_STRING: a string helper returned RT_STR_FAILED (the pool says
 * why: too long, out of memory). */
enum {
  CG_ERR_OVERFLOW = 0, CG_ERR_NOMEM = 1, CG_ERR_RUNTIME = 2, CG_ERR_TREE_NODE = 3,
  CG_ERR_STRING = 4, CG_ERR_KINDS = 5
};
/* The runtime function the generated code calls after a failed batch: sets
 * "<STAGE>: <message>" on s->run->err, where the stage is that of step
 * `code / CG_ERR_KINDS` of the segment (== nsteps: the sink); returns -1. */
int cg_rt_fail(ex_seg *s, int code);

/* Runtime functions generated code may call, with their signatures:
 * "ret:args", one letter per type: v void, i i32, l i64, d double, p ptr. */
typedef struct cg_rtfn {
  const char *name;
  const char *sig;
  void *addr;
} cg_rtfn;
extern const cg_rtfn cg_rtfns[];
extern const int cg_nrtfns;

/* One source column as the batch holds it, loaded once per batch. */
typedef struct cg_colsrc {
  bool used;             /* read in this segment from the batch */
  rt_type vtype;         /* view type the code was compiled for */
  bool nullable;
  LLVMValueRef data, valid, sel, base;
  LLVMValueRef wmask;    /* i64: -1 when the view has validity bits, else 0 */
  LLVMValueRef rowidx;   /* a JOIN's column: the relation row it reads now
                            (i32; cg_join.c), instead of the batch position */
  LLVMValueRef gcache;   /* a JOIN's column that is the segment's single
                            AGGREGATE key: int64 group per relation row */
} cg_colsrc;

typedef struct cg_val {
  LLVMValueRef v;
  LLVMValueRef null;     /* i1 */
  rt_type type;          /* RT_I64/BOOL/… (i64), RT_F64, RT_STR, RT_NULLT */
} cg_val;

typedef struct cg_ctx {
  LLVMContextRef c;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  LLVMTypeRef t_i1, t_i8, t_i32, t_i64, t_f64, t_ptr, t_void;
  cg_types st;
  const ir_plan *plan;

  /* the function being built */
  const ir_segment *seg;
  int segidx;
  LLVMValueRef fn, s, batch;
  LLVMValueRef run, strings;
  LLVMValueRef pos;            /* current batch position i (i32) */
  int step;                    /* step being emitted; nsteps = the sink */
  LLVMBasicBlockRef next_row;  /* a dropped row continues here (after a JOIN:
                                  with the next match) */
  LLVMBasicBlockRef loop_exit; /* after the row loop */
  bool joined;                 /* a JOIN_PROBE was emitted before this step */
  LLVMBasicBlockRef err_block; /* row failed: phi of error codes */
  LLVMValueRef err_phi;
  LLVMValueRef err_slot;       /* alloca i32: smallest error code of the batch */
  bool general_sel;            /* rows may come through selection indexes */
  cg_colsrc *src;              /* by column id */
  cg_val *row;                 /* by column id: value in the current row */
  bool *have;                  /* by column id: row[c] is set */
  cg_val *params;              /* 1-based, loaded in the prologue */
  /* Straight-line mode (cg_vagg.c's vector loop): no step branches. A
   * dropped row clears vpass (i1, the row still counts), a failing row
   * (cg_fail_if) sets the alloca i1 vfail when vpass holds, and AND/OR
   * evaluate both sides. vector_loops: some segment of the module has
   * such a loop (jit.c then runs the loop vectorizer). */
  bool vmode;
  LLVMValueRef vpass, vfail;
  bool vector_loops;
  rt_err *err;
  /* What emitting one segment needs besides LLVM's own objects (sink,
   * tree and LIMIT state, the columns it uses): allocated with cg_alloc,
   * freed at once when the segment is emitted (cg_emit_segment). */
  rt_arena arena;
} cg_ctx;

/* ---- constants and types ---------------------------------------------- */
LLVMValueRef cg_i1(cg_ctx *cx, int v);
LLVMValueRef cg_i32(cg_ctx *cx, int64_t v);
LLVMValueRef cg_i64(cg_ctx *cx, int64_t v);
LLVMValueRef cg_f64(cg_ctx *cx, double v);
LLVMTypeRef cg_llty(cg_ctx *cx, rt_type t);   /* i64 / double / i32 */
cg_val cg_notnull(LLVMValueRef v, rt_type t);
cg_val cg_nullval(cg_ctx *cx, rt_type t);      /* a typed NULL */
bool cg_is_false(LLVMValueRef v);              /* constant false i1 */

/* ---- memory ----------------------------------------------------------- */
/* Loads field `idx` of struct type `sty` at `p`. */
LLVMValueRef cg_load_field(cg_ctx *cx, LLVMTypeRef sty, LLVMValueRef p, int idx,
                           LLVMTypeRef fty, const char *name);
LLVMValueRef cg_field_ptr(cg_ctx *cx, LLVMTypeRef sty, LLVMValueRef p, int idx,
                          const char *name);
/* &base[i] and base[i] for element type ety. */
LLVMValueRef cg_elem_ptr(cg_ctx *cx, LLVMTypeRef ety, LLVMValueRef base, LLVMValueRef i,
                         const char *name);
LLVMValueRef cg_load_elem(cg_ctx *cx, LLVMTypeRef ety, LLVMValueRef base, LLVMValueRef i,
                          const char *name);
/* An alloca in the entry block (so mem2reg can promote it). */
LLVMValueRef cg_slot(cg_ctx *cx, LLVMTypeRef t, const char *name);

/* ---- control flow ----------------------------------------------------- */
LLVMBasicBlockRef cg_block(cg_ctx *cx, const char *name);
void cg_at(cg_ctx *cx, LLVMBasicBlockRef bb);
LLVMBasicBlockRef cg_here(cg_ctx *cx);
/* Drops the current row when cond holds (branches to next_row; in
 * straight-line mode clears vpass). */
void cg_drop_row_if(cg_ctx *cx, LLVMValueRef cond, const char *keep_name);
/* Fails the row with `kind` at the current step when cond holds (in
 * straight-line mode: sets vfail when the row has not been dropped). */
void cg_fail_if(cg_ctx *cx, LLVMValueRef cond, int kind, const char *ok_name);
/* One phi of type ty over the values va (from block a) and vb (from b). */
LLVMValueRef cg_phi2_raw(cg_ctx *cx, LLVMTypeRef ty, LLVMValueRef va, LLVMBasicBlockRef a,
                        LLVMValueRef vb, LLVMBasicBlockRef b, const char *name);
/* Merges two values flowing in from blocks a and b into a phi. */
cg_val cg_phi2(cg_ctx *cx, cg_val va, LLVMBasicBlockRef a, cg_val vb, LLVMBasicBlockRef b,
               rt_type t, const char *name);

/* ---- arithmetic ------------------------------------------------------- */
/* a op b with llvm.s{add,sub,mul}.with.overflow; overflow of a non-NULL
 * result fails the row with "integer overflow". op: 'a', 's', 'm'. */
LLVMValueRef cg_checked(cg_ctx *cx, char op, LLVMValueRef a, LLVMValueRef b,
                        LLVMValueRef isnull, const char *name);
LLVMValueRef cg_intrinsic(cg_ctx *cx, const char *name, LLVMTypeRef *tys, int ntys,
                          LLVMValueRef *args, int nargs, const char *vname);
/* Converts v to type t (NULL literal → typed NULL, int → double). */
cg_val cg_coerce(cg_ctx *cx, cg_val v, rt_type t);
/* The truth of a predicate value: non-NULL and non-zero. */
LLVMValueRef cg_truth(cg_ctx *cx, cg_val v, const char *name);

/* ---- runtime calls ------------------------------------------------------ */
/* Calls runtime function `fn` (declared on first use from cg_rtfns). */
LLVMValueRef cg_call(cg_ctx *cx, const char *fn, LLVMValueRef *args, int nargs,
                     const char *name);

/* ---- values and names --------------------------------------------------- */
/* The column's user-facing name made safe for LLVM value names. */
const char *cg_colname(cg_ctx *cx, int col, char *buf, size_t n);

/* cg_expr.c: evaluates an expression for the current row. */
cg_val cg_expr(cg_ctx *cx, const ir_expr *e, const char *name);
/* Makes sure every batch column e reads is loaded for the current row (so
 * the load dominates every later use, even inside CASE branches). */
void cg_preload(cg_ctx *cx, const ir_expr *e);
/* Value of column c in the current row (loading it from the batch). */
cg_val cg_column(cg_ctx *cx, int c);

/* cg_agg.c: the AGGREGATE sink. prologue once per batch, update per row,
 * epilogue after the loop. */
typedef struct cg_aggstate cg_aggstate;
cg_aggstate *cg_agg_prologue(cg_ctx *cx, const ir_op *op, LLVMBasicBlockRef fallback);
void cg_agg_update(cg_ctx *cx, cg_aggstate *a, const ir_op *op);
/* cg_vagg.c: the straight-line (vector) loop of an AGGREGATE without
 * GROUP BY. wanted: the segment's steps and aggregates have that form;
 * begin (before the loop): registers; row (in the loop, cx->vmode): one
 * row's contribution; end (after it): commit to the table, or go to `rows`
 * (the row loop redoes the batch) when a row failed or a sum may have
 * overflowed; leaves the builder after the commit. */
typedef struct cg_vagg cg_vagg;
bool cg_vagg_wanted(const cg_ctx *cx, const ir_segment *seg);
cg_vagg *cg_vagg_begin(cg_ctx *cx, cg_aggstate *a);
void cg_vagg_row(cg_ctx *cx, cg_vagg *v);
void cg_vagg_end(cg_ctx *cx, cg_vagg *v, LLVMBasicBlockRef rows);
/* cg_aggkey.c: rt_hash_i64 inline; the inlined tuple probe for 2 to
 * CG_AGG_INLINE_KEYS keys of any type (cg_agg_tuple_inline says when it
 * applies) and for one non-NULL double key: the group number of the key
 * values v[0..nk), or the row fails out of memory. */
#define CG_AGG_INLINE_KEYS 8
/* The runtime's linear probe over slots (group+1, 0 empty) from slot
 * `start`: open leaves the builder where g is the group of a used slot;
 * the caller branches to `step` when it is not the key (or on to its hit
 * block); close emits the step back into the loop. An empty slot goes
 * to `miss`. */
typedef struct cg_probe {
  LLVMValueRef slot, g, start, mask;
  LLVMBasicBlockRef entry, probe, step, miss;
} cg_probe;
void cg_probe_open(cg_ctx *cx, LLVMValueRef slots, LLVMValueRef start, LLVMValueRef mask, cg_probe *p);
void cg_probe_close(cg_ctx *cx, cg_probe *p);
LLVMValueRef cg_hash_i64(cg_ctx *cx, LLVMValueRef h);
bool cg_agg_tuple_inline(const ir_op *op);
/* direct: the table's direct array (t->direct) for two integer or string
 * keys, looked in first; NULL for any other shape. */
LLVMValueRef cg_agg_group_tuple(cg_ctx *cx, LLVMValueRef t, LLVMValueRef direct, int nk, const cg_val *v);

/* cg_tree.c: TREE ACCUMULATE's streaming steps (runtime/tree/tree.h).
 * cg_tree_supported: the step can be lowered (else the segment is left to
 * the interpreter). cg_tree_prologue, once per batch before the loop:
 * loads the state of every tree step of the segment (branching to
 * `fallback` when it is missing or not shaped as the plan says);
 * cg_tree_step per row; cg_tree_epilogue after the loop writes back the
 * counters kept in registers. */
typedef struct cg_treestate cg_treestate;
bool cg_tree_supported(const ir_op *op);
cg_treestate *cg_tree_prologue(cg_ctx *cx, LLVMBasicBlockRef fallback);
void cg_tree_step(cg_ctx *cx, cg_treestate *ts, const ir_op *op);
void cg_tree_epilogue(cg_ctx *cx, cg_treestate *ts);
/* The out-of-line numbering of one row (rt_treenum_row with int flags,
 * so the call needs no bool ABI). */
int cg_rt_treenum_row(rt_treenum *t, int64_t id, int32_t idnull, int64_t parent,
                      int32_t pnull, uint32_t *node, uint32_t *pnode);
/* The batch numbering of the hash tier (rt_treenum_batch over columns
 * idcol / pcol of b, at its active positions, exactly as the interpreter
 * calls it): results in t->node_out / t->pnode_out by position. 0 or -1
 * (error set). */
int cg_rt_treenum_batch(rt_treenum *t, const rt_batch *b, int32_t idcol, int32_t pcol);

/* cg_join.c: JOIN_PROBE inside the row loop (runtime/jointab.h).
 * cg_join_prologue, once per batch: finds every probe's table (branching
 * to `fallback` when one is missing) and points the relation's columns at
 * its buffer (its state from cg_alloc: NULL, error set, when out of
 * memory); cg_join_step per row: looks the keys up and leaves the
 * builder in the body of a loop over the matches (cx->next_row: the next
 * match), where the rest of the segment is emitted. */
typedef struct cg_joinstate cg_joinstate;
cg_joinstate *cg_join_prologue(cg_ctx *cx, LLVMBasicBlockRef fallback);
void cg_join_step(cg_ctx *cx, cg_joinstate *js, const ir_op *op);
/* The JOIN_PROBE's table (its build's), for generated code. */
rt_jointab *cg_rt_join_tab(ex_seg *s, int32_t build_op);

/* cg_sink.c: OUTPUT / SORT append into s->buf. */
typedef struct cg_bufstate cg_bufstate;
cg_bufstate *cg_buf_prologue(cg_ctx *cx, const ir_op *op, LLVMValueRef nrows_in,
                             LLVMBasicBlockRef fallback);
void cg_buf_append(cg_ctx *cx, cg_bufstate *bs);
void cg_buf_epilogue(cg_ctx *cx, cg_bufstate *bs);
/* Columns an OUTPUT or SORT sink writes, in buffer order. */
int cg_buf_cols(const ir_op *op, const int **cols);

/* cg_segment.c: emits the whole plan into cx->m, one function per wanted
 * segment named "<prefix>seg<N>". Returns 0 and sets err on failure. */
/* A segment is worth compiling unless it only copies its source into a
 * buffer (no steps, OUTPUT or SORT sink): the interpreter does that with
 * memcpy, and machine code for it would cost milliseconds of compile time
 * for nothing (e.g. the segment that outputs an AGGREGATE's groups). */
bool cg_segment_wanted(const ir_segment *seg);
int cg_emit_plan(cg_ctx *cx, const char *prefix);
void cg_ctx_init(cg_ctx *cx, LLVMContextRef c, LLVMModuleRef m, const ir_plan *p, rt_err *err);
void cg_ctx_dispose(cg_ctx *cx);
/* n zeroed bytes from the segment's arena (cx->arena), or NULL with
 * "JIT: out of memory" set on cx->err: the prologues then return NULL
 * and the segment (and with it the module) is given up. */
void *cg_alloc(cg_ctx *cx, size_t n);

#endif
