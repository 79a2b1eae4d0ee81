/*
 * tree.h — runtime of TREE ACCUMULATE (LANGUAGE.md; seed notes "TREE
 * ACCUMULATE"): node numbering, tree ordering and the per-node running
 * values of the accumulation. Both backends use these structures; the
 * layouts marked "read by generated code" must match the JIT's
 * declarations (codegen/) and change together with them.
 *
 * A stage lowers to three IR ops (ir/ops.def):
 *
 *   TREE_NUMBER (step)  id, parent_id  → node, parent node (dense uint32)
 *   TREE_ORDER  (sink)  buffers the rows; at the end a permutation that
 *                       puts them child-first (UP) or parent-first (DOWN)
 *   TREE_ACC    (step)  per row, in that order, the running aggregates
 *
 * Node numbers are dense (0 .. rows-1 once the input is known to be a
 * tree), so every per-node array is sized by the row count, never by the
 * largest id. A root's parent node is RT_TREE_NONE.
 */
#ifndef PJ_TREE_H
#define PJ_TREE_H

#include "runtime/store.h"

/* CHANGED: rt_treenum's HASH tier keeps each id next to its node number
 * in `map` (rt_treeslot, added at the end of the struct) so a probe
 * touches one cache line. The documented `keys` and `slots` members stay
 * in the layout but are no longer allocated (always NULL); `mask` is now
 * the mask of `map`. Nothing outside runtime/tree/tree_number.c read them.
 * Added (no existing declaration changed): rt_treenum.map, .size_hint;
 * the streaming DOWN order rt_treedown_* below. */

#define RT_TREE_NONE UINT32_MAX

/* One slot of the numbering's hash map: the id and its node + 1 (0 =
 * empty slot). */
typedef struct rt_treeslot {
  int64_t key;
  uint32_t node1;
  uint32_t pad;
} rt_treeslot;

/* ---- node numbering -------------------------------------------------------- */

/* Tiers, in the order a run may move through them (never backwards):
 *
 *  RT_TREE_TIER_TABLE  chosen at compile time: the input is an unfiltered
 *      scan of a columnar table whose id column is the 0..n-1 row index
 *      (RT_ID). node = id; parent node = parent_id, which must lie in
 *      [0, table_rows) (else it names no row) and differ from id. No
 *      hashing, no duplicate check (row indices are distinct).
 *  RT_TREE_TIER_DENSE  integer ids that are, so far, exactly 0, 1, 2, … in
 *      arrival order, each parent already seen (0 <= parent_id < rows).
 *      node = id, parent node = parent_id: no hash map.
 *  RT_TREE_TIER_HASH   from the first row that breaks the dense rule (and
 *      from the start for string ids): a hash map id → node. The map is
 *      back-filled with ids 0..rows-1 → themselves, so numbers already
 *      handed out stay valid. A parent not seen yet gets the next node
 *      number on sight; the row with that id takes it when it arrives.
 *
 * Per row (every tier): NULL id → "a row has no id"; an id seen before as
 * a row → "two rows have the id X"; parent_id = id → "the row with id X is
 * its own parent". At the end (rt_treenum_finish) a parent that never
 * arrived as a row → "a row names a parent which is not itself a row in
 * the input". Messages are "<stage>: …" with offset `pos`.
 *
 * Layout read by generated code (the dense tiers are inlined; anything
 * else calls rt_treenum_row):
 *   tier    current tier
 *   nrows   rows numbered so far (= the next dense id)
 *   limit   TABLE tier: table row count (parents must be below it)
 * Inline rule per row, with id / parent_id as int64 and their NULL flags:
 *   TABLE: node = id; pnode = pnull ? NONE : parent;
 *          if (!pnull && ((uint64)parent >= limit || parent == id)) call
 *          rt_treenum_row instead (it reports the error); nrows++.
 *   DENSE: if (!idnull && id == nrows && (pnull || (uint64)parent < nrows))
 *          { node = id; pnode = pnull ? NONE : parent; nrows++; }
 *          else call rt_treenum_row (which may switch to HASH).
 *   HASH:  call rt_treenum_row.
 */
typedef enum rt_treetier {
  RT_TREE_TIER_TABLE = 0,
  RT_TREE_TIER_DENSE = 1,
  RT_TREE_TIER_HASH = 2,
} rt_treetier;

typedef struct rt_treenum {
  int32_t tier;          /* rt_treetier */
  uint32_t nrows;        /* rows numbered */
  uint64_t limit;        /* TABLE tier: table rows */
  uint32_t nnodes;       /* node numbers handed out (rows + parents awaited) */
  uint32_t awaited;      /* HASH: nodes named as a parent with no row yet */
  bool str_ids;          /* ids are string ids (message formatting) */
  /* HASH tier: id of each node (keys[node]) and an open-addressed table of
   * node+1 (0 = empty) probed linearly from rt_hash_i64(id) & mask. */
  int64_t *keys;
  uint64_t *hasrow;      /* bit per node: a row with this id arrived */
  uint32_t cap;          /* capacity of keys / hasrow, in nodes */
  uint32_t *slots;
  uint64_t mask;
  /* Output of rt_treenum_batch, by batch position (RT_BATCH each). */
  uint32_t *node_out;
  uint32_t *pnode_out;
  /* errors */
  rt_err *err;
  const char *stage;
  int pos;
  const rt_strpool *sp;
  /* HASH tier map (mask + 1 slots; see rt_treeslot), and the number of
   * rows the caller expects (0 = unknown): when the run moves to the HASH
   * tier the map is sized for it once instead of doubling. */
  rt_treeslot *map;
  uint64_t size_hint;
  /* TABLE tier ordered in place (rt_tree_table_order): the parent node of
   * every table row, by row index (RT_TREE_NONE for roots), read by the
   * next segment as its parent-node column. Owned here (freed by
   * rt_treenum_free); table_pnode_bytes is its rt_tree_big_alloc size. */
  uint32_t *table_pnode;
  size_t table_pnode_bytes;
  /* Set before rt_treenum_finish to keep the HASH map for rt_treenum_find
   * (the §9.4 operators look node sets up in it); rt_treenum_free frees it. */
  bool keep_map;
  /* TABLE tier ordered in place: per 64-row block of table_pnode, the
   * least parent (RT_TREE_NONE: none) and 1 + the greatest (0: none),
   * found by the same pass (rt_tree_morsels' cuts read them); malloc'd,
   * freed by rt_treenum_free. */
  uint64_t *table_bmin, *table_bmax;
} rt_treenum;

/* tier is RT_TREE_TIER_TABLE (then table_rows is the table's row count) or
 * RT_TREE_TIER_DENSE (which itself moves to HASH for string ids or the
 * first id that breaks density). Returns 0 on out of memory. */
int rt_treenum_init(rt_treenum *t, rt_treetier tier, uint64_t table_rows, bool str_ids,
                    rt_err *err, const char *stage, int pos, const rt_strpool *sp);
void rt_treenum_free(rt_treenum *t);

/* Numbers one row (any tier; the out-of-line path of generated code).
 * id/parent are int64 values (string ids for string ids). Returns 0, or
 * -1 with the error set. */
int rt_treenum_row(rt_treenum *t, int64_t id, bool idnull, int64_t parent, bool pnull,
                   uint32_t *node, uint32_t *pnode);

/* Numbers the active positions of a batch: node_out[i], pnode_out[i] for
 * each active position i (active NULL = 0..n-1). 0 or -1 (error set). */
int rt_treenum_batch(rt_treenum *t, const rt_view *id, const rt_view *parent,
                     const uint32_t *active, uint32_t nactive);

/* The node of a row with id `id` (after every row was numbered), or
 * RT_TREE_NONE when no row has it (DENSE: ids 0..nrows-1 are their own
 * nodes; HASH: the map, kept by keep_map). */
uint32_t rt_treenum_find(const rt_treenum *t, int64_t id);
/* An id as messages show it: 7, or 'name' for string ids. */
void rt_treenum_id_text(const rt_treenum *t, int64_t id, char *buf, size_t n);

/* End of input: checks every named parent arrived (else the missing
 * parent error) and frees the hash map; nnodes == nrows afterwards.
 * 0 or -1. */
int rt_treenum_finish(rt_treenum *t);

/* Zeroed memory for large per-row arrays (runtime/tree/tree_mem.c): blocks of
 * 4 MiB and more are mapped 2 MiB-aligned and advised as huge pages;
 * smaller ones come from calloc. Free with the same byte count. NULL on
 * out of memory. */
void *rt_tree_big_alloc(size_t bytes);
/* The same but of unspecified contents, for arrays written before they
 * are read: big blocks may be ones freed earlier (tree_mem.c's cache). */
void *rt_tree_big_alloc_any(size_t bytes);
void rt_tree_big_free(void *p, size_t bytes);
/* Test knob: rt_tree_big_alloc_any fills what it returns with 0xa5 bytes,
 * so a test sees any array that is read before it is written. */
extern bool rt_tree_big_junk;

/* ---- ordering -------------------------------------------------------------- */

typedef enum rt_treeorder_path {
  RT_TREE_ORDER_KEPT,      /* already in the wanted order: no permutation */
  RT_TREE_ORDER_REVERSED,  /* in the opposite order: served reversed */
  RT_TREE_ORDER_WALKED,    /* CSR child lists + stack walk from the roots */
  RT_TREE_ORDER_STREAMED,  /* DOWN: streamed by rt_treedown, no permutation */
} rt_treeorder_path;

/* Orders n buffered rows whose node / parent-node numbers are node[r] and
 * pnode[r] (int64, RT_TREE_NONE for roots; every number < nnodes, each
 * node the number of exactly one row) child-first (up) or parent-first.
 * Returns the permutation to read the rows through (malloc'd, n entries)
 * or NULL when the rows are already in order (or n == 0); *path says
 * which. When rows are unreachable from the roots, sets "<stage>: the
 * rows are not a tree, because N of them are in a cycle" (N counts the
 * rows on cycles, not the rows hanging below them) and returns NULL with
 * *path = -1. */
uint32_t *rt_tree_order(const int64_t *node, const int64_t *pnode, int64_t n, uint32_t nnodes,
                        bool up, int *path, rt_err *err, const char *stage, int pos);

/* In-place order of an unfiltered table scan numbered by row index (the
 * TABLE tier; ir/plan.h tree_table): the rows are the table's n rows and
 * node r is row r, so ordering needs no buffer. One sequential pass over
 * `parent` (the parent_id column as a view of the whole table: position r
 * is row r; any integer type, NULL = root) checks each parent exactly as
 * the numbering does (the first bad row gets the numbering's own error,
 * through rt_treenum_row on `num`, which must be a TABLE-tier state with
 * limit n), writes num->table_pnode (n entries: parent or RT_TREE_NONE)
 * and finds whether parents precede children, children precede parents,
 * or neither:
 *   wanted order already (parent-first for DOWN, child-first for UP)
 *            → RT_TREE_ORDER_KEPT: read the table forwards;
 *   the opposite one → RT_TREE_ORDER_REVERSED: read it backwards;
 *   neither  → RT_TREE_ORDER_WALKED: *perm (malloc'd, n row indices) from
 *              rt_tree_order's child-list walk, or its cycle error.
 * Afterwards num has numbered all n rows (rt_treenum_finish may follow).
 * Returns the path, or -1 with the error set (err is num's). */
int rt_tree_table_order(rt_treenum *num, const rt_view *parent, int64_t n, bool up,
                        uint32_t **perm);
/* The same with the pass over parent_id cut into pieces of 256K rows run
 * on par's workers (runtime/par.h; NULL: the caller alone): the same
 * parent nodes, path and first bad row (its error) whatever ran them. */
struct rt_par;
int rt_tree_table_order_par(rt_treenum *num, const rt_view *parent, int64_t n, bool up,
                            uint32_t **perm, const struct rt_par *par);

/* ---- streaming DOWN order (runtime/tree/tree_down.c) ------------------------------ */

/* Parent-first order without a breaker. Per batch: rows that are roots or
 * whose parent was emitted pass (pass[0..npass), positions in input
 * order; npass == nactive means the batch goes on untouched); rows that
 * arrive before their parent are copied into `side` and wait in their
 * parent's list; after the batch the lists of the rows that passed are
 * released breadth-first: rel[0..nrel) are rows of `side`, to be emitted
 * after the passing rows, in that order. Memory: a bit per node, plus —
 * only once a row arrives early — two uint32 per node and the early rows.
 * `buffered` counts the rows ever copied, `waiting` those not released. */
typedef struct rt_treedown {
  int ncols;             /* columns of the rows (carried columns) */
  rt_type *types;        /* their stored types (side buffer) */
  uint64_t *emitted;     /* bit per node */
  uint32_t ncap;         /* per-node arrays cover nodes below ncap */
  uint32_t *head, *tail; /* per parent node: waiting side row + 1 (0 none) */
  rt_rowbuf side;        /* early rows */
  bool side_open;
  uint32_t *snext, *snode, *spnode;  /* per side row: next in list + 1, node, parent */
  int64_t scap;
  uint32_t *rel;         /* released side rows of the last batch */
  int64_t nrel;
  uint32_t *pass;        /* RT_BATCH entries */
  uint32_t npass;
  int64_t waiting, buffered;
} rt_treedown;

int rt_treedown_init(rt_treedown *d, int ncols, const rt_type *types);  /* 0 on OOM */
void rt_treedown_free(rt_treedown *d);
/* One batch: node / parent-node views (any integer kind; RT_TREE_NONE for
 * roots) and the row's columns (ncols views, copied for early rows) at the
 * active positions. 0, or -1 on out of memory / bad node numbers. */
int rt_treedown_batch(rt_treedown *d, const rt_view *node, const rt_view *pnode,
                      const rt_view *cols, const uint32_t *active, uint32_t nactive);
/* End of input (after the numbering's missing-parent check): rows never
 * released are on or below a cycle: "<stage>: the rows are not a tree,
 * because N of them are in a cycle" (N = rows on cycles). 0 or -1. */
int rt_treedown_finish(rt_treedown *d, rt_err *err, const char *stage, int pos);

/* ---- accumulation ---------------------------------------------------------- */

/* Per-node running values of one aggregate (read by generated code).
 *   SUM (ints) / COUNT_STAR / COUNT: i[node] (checked int64 adds)
 *   SUM (doubles): f[node]
 *   MIN / MAX: i[node] or f[node], valid when has[node] = 1
 * All arrays have nnodes entries, zeroed at start.
 *
 * Per row, in ordered input, with value v (COUNT(*): v = 1; COUNT(x): v =
 * x IS NOT NULL; SUM: NULL → 0; MIN/MAX: NULL → no value) and node n, parent node p:
 *   UP:   total = v ⊕ acc[n]            (⊕: + for SUM/COUNT, min/max)
 *         if p != NONE: acc[p] = acc[p] ⊕ total
 *   DOWN: total = v ⊕ (p != NONE ? acc[p] : nothing)
 *         acc[n] = total
 * and total is the row's output (NULL for MIN/MAX with no value at all).
 * UP works because child-first order brings every child (which already
 * folded its subtree into its own total) before its parent; DOWN because
 * parent-first order has stored the parent's path total before a child. */
/* The aggregates of §9.4 (vm_tree.c and cg_tree.c, on these arrays):
 *   AVG(x): f[node] = running sum (as double) of the non-NULL values,
 *     i[node] = their count; output sum / count, NULL for no value.
 *   ARG_MAX(o, x) / ARG_MIN: i[node] or f[node] = the best ordering (in
 *     = its type), v[node] = the bits of its row's x, has[node] = 1 a
 *     value is there | 2 that x is NULL. A NULL ordering brings nothing;
 *     ties keep the row nearest the root (UP: the node over its subtree,
 *     and among children's subtrees the first accumulated).
 *   FIRST(x) / LAST(x), DOWN only: i[node] = the bits of the non-NULL x
 *     nearest the root / nearest the node on its path, has[node] = 1
 *     when there is one. */
typedef struct rt_treeagg {
  rt_aggkind kind;       /* RT_AGG_SUM, COUNT_STAR, COUNT, MIN, MAX, AVG, ARG_MAX, ARG_MIN, FIRST, LAST */
  rt_type in;            /* RT_I64 or RT_F64 */
  int64_t *i;
  double *f;
  uint8_t *has;
  int64_t *v;            /* ARG_MAX / ARG_MIN: the value's bits */
} rt_treeagg;

typedef struct rt_treeacc {
  int32_t up;            /* 1 = UP, 0 = DOWN */
  uint32_t nnodes;
  int32_t naggs;         /* the live aggregates, in op order */
  rt_treeagg *aggs;
  uint32_t cap;          /* entries allocated per array (>= nnodes) */
} rt_treeacc;

/* Allocates the per-node arrays (nnodes of each). 0 on out of memory. */
int rt_treeacc_init(rt_treeacc *a, bool up, uint32_t nnodes, int naggs,
                    const rt_aggkind *kinds, const rt_type *in);
void rt_treeacc_free(rt_treeacc *a);
/* Grows the per-node arrays to at least nnodes (new entries zeroed): a
 * DOWN stage fed by the streaming order starts before the numbering has
 * finished, so the driver grows them between batches. Code that runs a
 * batch must load the array pointers per batch, not keep them across
 * batches. 0 on out of memory. */
int rt_treeacc_reserve(rt_treeacc *a, uint32_t nnodes);

/* ---- morsels of whole subtrees (runtime/tree/tree_par.c) ------------------------ */

/* The rows of a finished tree order as the accumulating segment reads
 * them: position k (0 <= k < n) is row rt_treesrc_row(s, k), which is
 * perm[k] (a walk's or a reversal's permutation), n-1-k (reversed), or k.
 * node and pnode are indexed by row (sel NULL), any integer kind,
 * RT_TREE_NONE for roots. path is the order's rt_treeorder_path. */
typedef struct rt_treesrc {
  int64_t n;
  int path;
  const uint32_t *perm;
  bool reversed;
  rt_view node, pnode;
  bool node_is_row;    /* node = row index (an in-place table's order) */
  /* an in-place table's per-block parent bounds (rt_treenum.table_bmin /
   * table_bmax), or NULL */
  const uint64_t *bmin, *bmax;
} rt_treesrc;

static inline int64_t rt_treesrc_row(const rt_treesrc *s, int64_t k) {
  return s->perm ? s->perm[k] : s->reversed ? s->n - 1 - k : k;
}

/* The morsels of a segment that accumulates a finished tree order, on
 * one thread or several (exec/driver_treepar.c): ranges of positions
 * that hold whole subtrees (no row in one has its parent's row in
 * another), so that the morsels can run at the same time and each node's
 * running values still see one thread's operations in one thread's order.
 * Greedy from position 0: a morsel ends at the last cut at most `target`
 * positions on, or, when there is none, at the first cut after that (a
 * subtree bigger than a morsel makes a bigger morsel; one root holding
 * every row makes one morsel). *bounds (malloc'd, count + 1 entries):
 * bounds[0] = 0 < … < bounds[count] = n. Returns count, 0 when the
 * parents' positions are not known (a buffered order kept or reversed
 * whose node numbers are not its row indices: no morsels, *bounds NULL),
 * or -1 on out of memory. An in-place table's per-block bounds are
 * found on par's workers (NULL: the caller); the morsels are the same. */
int64_t rt_tree_morsels(const rt_treesrc *s, bool up, int64_t target, int64_t **bounds,
                        const struct rt_par *par);

#endif
