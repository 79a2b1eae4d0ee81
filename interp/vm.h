/*
 * vm.h — the vectorized interpreter (interp/): its entry (vm_run_batch,
 * vm_backend), then the internals its files share.
 *
 * The interpreter runs a segment's steps one at a time over the whole batch.
 * Expressions evaluate column-at-a-time into position-indexed vectors: the
 * value for batch position i lives at index i, and only the positions of
 * the current active set (vm_set) are defined. Every node kind has tight
 * loops per operand type; the switch over node kinds happens once per node
 * per batch, never per row.
 *
 * Invariant: a NULL slot of a vector holds zero (0, 0.0 or string id 0).
 * Arithmetic on NULL slots therefore never overflows or divides by a
 * garbage value, and ops whose result of zeros is zero need no masking.
 *
 * Scratch memory (vectors, index buffers) is malloc'd on first use and kept
 * in the segment's vm state across batches, so steady state allocates
 * nothing.
 */
#ifndef PJ_VM_H
#define PJ_VM_H

#include "exec/backend.h"

/* ---- the entry: what the rest of the engine calls ----------------------- */

/* Runs one batch through segment s (an ex_batch_fn): 0, or -1 with
 * s->run->err set. Generated code calls it too, for segments it does not
 * compile. */
int vm_run_batch(ex_seg *s, rt_batch *b);
/* The same from step `step` on (the steps before it are skipped): RIGHT
 * and FULL JOIN's unmatched rows enter after their probe (ex_run.run_from);
 * vm_run_batch is vm_run_from(s, b, 0). */
int vm_run_from(ex_seg *s, rt_batch *b, int step);
/* Frees the scratch vm_run_batch keeps in s (the run's seg_free). */
void vm_seg_free(ex_seg *s);
/* The interpreter as an exec/ backend (vm_backend.c). */
extern const ex_backend vm_backend;

/* ---- internals of interp/ ------------------------------------------------ */

/* Value representation of a vector. */
enum { VT_I64 = 0, VT_F64 = 1, VT_STR = 2 };

typedef struct vm_vec vm_vec;
struct vm_vec {
  int vt;            /* VT_I64 (every int kind and bool), VT_F64, VT_STR */
  void *v;           /* int64_t / double / uint32_t by position (maybe borrowed) */
  uint8_t *nul;      /* 1 = NULL, by position; meaningful only when anynull */
  bool anynull;      /* false: no active position is NULL */
  void *own_v;       /* owned storage: RT_BATCH 8-byte slots */
  uint8_t *own_nul;  /* owned storage: RT_BATCH bytes */
  vm_vec *next;      /* free-list link */
};

/* A set of batch positions, ascending. idx NULL means 0..n-1. */
typedef struct vm_set {
  const uint32_t *idx;
  uint32_t n;
} vm_set;

typedef struct vm_idxbuf vm_idxbuf;
struct vm_idxbuf {
  uint32_t *p;       /* RT_BATCH entries */
  vm_idxbuf *next;
};

typedef struct vm {
  ex_seg *s;
  const ir_plan *plan;
  rt_strpool *sp;
  rt_err *err;
  const ir_op *op;       /* step being run: its stage prefixes errors */
  rt_batch *batch;       /* batch being run: IX_COL reads its views */
  /* pools: every object ever made is on `all*` for freeing */
  vm_vec *free_vecs;
  vm_vec **all_vecs;
  int nall_vecs, cap_vecs;
  vm_idxbuf *free_idx;
  vm_idxbuf **all_idx;
  int nall_idx, cap_idx;
  /* COMPUTE results held until the end of the batch */
  vm_vec **held;
  int nheld;
  vm_vec **colvec;       /* by column id: the held vector of a computed column */
  uint64_t **bits;       /* by step: validity bits of a COMPUTE's output view */
  uint64_t **colbits;    /* by column id: validity bits of a TREE_ACC output view */
  uint32_t *active;      /* the batch's active list after FILTER/LIMIT */
  /* AGGREGATE scratch */
  int64_t *groups;       /* group number by position */
  int64_t *keyvals;      /* one tuple */
  uint8_t *keynull;
  /* JOIN_PROBE scratch, by step index (vm_join.c) */
  struct vm_jstate **jn;
} vm;

/* Iterates position `i` over a vm_set; the body is a tight loop in both the
 * dense and the indexed case. */
#define VM_EACH(set, i, ...)                                                   \
  do {                                                                         \
    const vm_set *vm_s_ = (set);                                               \
    if (!vm_s_->idx) {                                                         \
      for (uint32_t i = 0; i < vm_s_->n; i++) { __VA_ARGS__ }                  \
    } else {                                                                   \
      const uint32_t *vm_ix_ = vm_s_->idx;                                     \
      for (uint32_t vm_k_ = 0; vm_k_ < vm_s_->n; vm_k_++) {                    \
        uint32_t i = vm_ix_[vm_k_];                                            \
        __VA_ARGS__                                                            \
      }                                                                        \
    }                                                                          \
  } while (0)

/* vm_pool.c: pools and errors. The getters return NULL when out of
 * memory, with the run's error set. */
vm_vec *vm_vec_get(vm *m, int vt);         /* owned storage, anynull = false */
void vm_vec_put(vm *m, vm_vec *v);
uint32_t *vm_idx_get(vm *m);
void vm_idx_put(vm *m, uint32_t *p);
int vm_vt_of(rt_type t);
/* Sets "<STAGE>: <msg>" on the run's error; returns NULL for chaining. */
void *vm_fail(vm *m, const char *msg);

/* vm_expr.c: evaluates e over the positions of `set`; returns a vector to
 * be released with vm_vec_put, or NULL on error (m->err set). */
vm_vec *vm_eval(vm *m, const ir_expr *e, const vm_set *set);
/* Loads a batch column over `set` (zeroing NULL slots). */
vm_vec *vm_load_view(vm *m, const rt_view *view, const vm_set *set);
/* Converts v to representation vt (int → double, …) over set; consumes v. */
vm_vec *vm_coerce(vm *m, vm_vec *v, int vt, const vm_set *set);
/* Splits set by truth of v (non-NULL and non-zero): true positions into
 * `yes` (may be NULL), the rest into `no` (may be NULL); returns counts via
 * the set sizes. The buffers must hold set->n entries. */
void vm_split_truth(const vm_vec *v, const vm_set *set, uint32_t *yes, uint32_t *nyes,
                    uint32_t *no, uint32_t *nno);

/* vm_str.c: string functions and casts (through runtime/strfn.h). */
vm_vec *vm_eval_strfn(vm *m, const ir_expr *e, const vm_set *set);
vm_vec *vm_eval_printf(vm *m, const ir_expr *e, const vm_set *set);

/* vm_callout.c: IX_CALLOUT (the engine's functions, through ex_callout). */
vm_vec *vm_eval_callout(vm *m, const ir_expr *e, const vm_set *set);

/* vm_agg.c: the AGGREGATE sink over the batch's active rows. */
int vm_agg_update(vm *m, rt_batch *b);

/* vm_pool.c: validity bits for the active positions of v, in the buffer
 * *slot (made on first use and kept across batches: m->bits[step] for a
 * COMPUTE, m->colbits[col] for a TREE_ACC output); NULL when out of
 * memory (error set). */
uint64_t *vm_bits(vm *m, uint64_t **slot, const vm_vec *v, const vm_set *set, uint32_t n);

/* vm_tree.c: TREE ACCUMULATE's streaming steps (runtime/tree/tree.h). Output
 * vectors of TREE_ACC are put on m->held until the end of the batch. */
int vm_tree_number(vm *m, const ir_op *op, rt_batch *b);
int vm_tree_acc(vm *m, const ir_op *op, rt_batch *b);

/* vm.c: steps k0.. and the sink over b (nlimit: LIMIT steps before k0);
 * vm_release puts back what steps k0.. hold, down to `held` entries. */
int vm_rest(vm *m, rt_batch *b, int k0, int nlimit);
void vm_release(vm *m, int k0, int held);

/* vm_join.c: JOIN_PROBE step k over b: runs the rest of the segment on
 * each chunk of its output (at most RT_BATCH rows). */
int vm_join_probe(vm *m, const ir_op *op, int k, rt_batch *b, int nlimit);
void vm_join_free(vm *m);

#endif
