/*
 * tshape.c — the §9.4 tree operators over buffered columns (tshape.h).
 *
 * Every form is a few passes over the tree in a parent-first visit order:
 * the input order itself when every parent comes before its children
 * (trace tables: a slice starts after its parent), else rt_tree_order's
 * walk from the roots. Per tree row x with parent row p:
 *
 *   DESCENDANT OF S   cond[x] = x in S, or cond[p]             (forwards)
 *   ANCESTOR OF S     cond = S, then cond[p] |= cond[x]         (backwards)
 *   KEEP / DROP       keep = cond / not cond (PRUNE = DROP IF DESCENDANT)
 *   CONTRACT AT S     keep = not in S
 *   ABSORB AT S       top[x] = top[p], else x when x in S; keep = no top
 *                     or top[x] = x
 *   MERGE INTO PARENT tgt[x] = tgt[p] when BY(x) = BY(p), else x; keep =
 *                     tgt[x] = x
 *   REPARENT IN S     every row comes out; "kept" = in S
 * and then the nearest kept strict ancestor, anc[x] = p when p is kept,
 * else anc[p] (forwards), which is every output row's new parent. A
 * removed row folds into: CONTRACT its anc (none for a removed root's
 * subtree top: lost), ABSORB its top, MERGE INTO its tgt.
 *
 * MERGE SIBLINGS numbers groups in level order (by depth, each level in
 * input order: parents first, siblings in first-seen order): a row's group is the one
 * keyed by (its parent's group, its BY values) — a hash map of group
 * numbers, compared against each group's first row — or, with ORDERED,
 * the last group made under that parent group when its BY values are
 * equal, else a new one. BY values compare as PER keys do: NULL equals
 * NULL, -0.0 equals 0.0, NaN equals NaN, strings by their interned id.
 */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/budget.h"
#include "tshape.h"

#define NONE RT_TREE_NONE

static int tfail(rt_err *err, int pos, const char *stage, const char *msg) {
  rt_errorf(err, pos, "%s: %s", stage, msg);
  return -1;
}

/* ---- the tree -------------------------------------------------------------- */

typedef struct tforest {
  uint32_t n;
  uint32_t *par;      /* parent row, NONE for roots */
  uint32_t *order;    /* parent-first visit order (rt_mem_*); NULL: rows in order */
  uint32_t *row_of;   /* node → row; NULL when node numbers are rows */
  rt_treenum num;     /* keeps the id → node map */
  bool num_open;
} tforest;

static void forest_free(tforest *f) {
  rt_mem_free(f->par);
  rt_mem_free(f->order);   /* rt_tree_order allocates it so */
  rt_mem_free(f->row_of);
  if (f->num_open) rt_treenum_free(&f->num);
  memset(f, 0, sizeof *f);
}

static rt_view col_view(const rt_tcol *c, uint32_t start) {
  size_t sz = c->type == RT_STR ? 4 : 8;
  return (rt_view){.type = c->type == RT_STR ? RT_STR : RT_I64,
                   .data = (const char *)c->data + (size_t)start * sz,
                   .valid = c->valid ? c->valid + start / 64 : NULL};
}

/* Numbers the n rows of (id, parent) and puts them in parent-first order. */
static int forest_build(tforest *f, const rt_tcol *id, const rt_tcol *parent, uint32_t n,
                        bool str_ids, rt_err *err, const char *stage, int pos,
                        const rt_strpool *sp) {
  memset(f, 0, sizeof *f);
  f->n = n;
  if (!rt_treenum_init(&f->num, RT_TREE_TIER_DENSE, 0, str_ids, err, stage, pos, sp)) {
    rt_treenum_free(&f->num);
    return tfail(err, pos, stage, "out of memory");
  }
  f->num_open = true;
  f->num.keep_map = true;
  f->num.size_hint = n;
  uint32_t *node = rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1));
  f->par = rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1));
  if (!node || !f->par) {
    rt_mem_free(node);
    return tfail(err, pos, stage, "out of memory");
  }
  for (uint32_t start = 0; start < n; start += RT_BATCH) {
    uint32_t k = n - start < RT_BATCH ? n - start : RT_BATCH;
    rt_view iv = col_view(id, start), pv = col_view(parent, start);
    if (rt_treenum_batch(&f->num, &iv, &pv, NULL, k) < 0) {
      rt_mem_free(node);
      return -1;
    }
    memcpy(node + start, f->num.node_out, sizeof(uint32_t) * k);
    memcpy(f->par + start, f->num.pnode_out, sizeof(uint32_t) * k);
  }
  if (rt_treenum_finish(&f->num) < 0) {
    rt_mem_free(node);
    return -1;
  }
  /* Node numbers are row numbers unless the map was needed. */
  bool ident = true;
  for (uint32_t r = 0; r < n && ident; r++) ident = node[r] == r;
  if (!ident) {
    f->row_of = rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1));
    if (!f->row_of) {
      rt_mem_free(node);
      return tfail(err, pos, stage, "out of memory");
    }
    for (uint32_t r = 0; r < n; r++) f->row_of[node[r]] = r;
    for (uint32_t r = 0; r < n; r++)
      if (f->par[r] != NONE) f->par[r] = f->row_of[f->par[r]];
  }
  rt_mem_free(node);
  bool sorted = true;
  for (uint32_t r = 0; r < n && sorted; r++) sorted = f->par[r] == NONE || f->par[r] < r;
  if (sorted) return 0;   /* parents first already (and so no cycle) */
  int64_t *nd = rt_mem_alloc(sizeof(int64_t) * n), *pn = rt_mem_alloc(sizeof(int64_t) * n);
  int path = 0;
  if (nd && pn) {
    for (uint32_t r = 0; r < n; r++) {
      nd[r] = r;
      pn[r] = f->par[r] == NONE ? (int64_t)RT_TREE_NONE : (int64_t)f->par[r];
    }
    f->order = rt_tree_order(nd, pn, n, n, false, &path, err, stage, pos);
  }
  rt_mem_free(nd);
  rt_mem_free(pn);
  if (!nd || !pn) return tfail(err, pos, stage, "out of memory");
  return path < 0 ? -1 : 0;
}

/* The row of the tree with id `id`, or NONE. */
static uint32_t forest_find(const tforest *f, int64_t id) {
  uint32_t node = rt_treenum_find(&f->num, id);
  if (node == NONE || node >= f->n) return NONE;
  return f->row_of ? f->row_of[node] : node;
}

static int id_fail(const tforest *f, rt_err *err, int pos, const char *stage, const char *fmt,
                   int64_t id) {
  char idb[256], msg[400];
  rt_treenum_id_text(&f->num, id, idb, sizeof idb);
  snprintf(msg, sizeof msg, fmt, idb);
  return tfail(err, pos, stage, msg);
}

/* ---- BY values ---------------------------------------------------------------- */

static uint64_t by_bits(const rt_tcol *c, uint32_t r) {
  uint64_t v = (uint64_t)rt_tcol_bits(c, r);
  if (c->type == RT_F64) {
    double d;
    memcpy(&d, &v, 8);
    if (d == 0) return 0;
    if (d != d) return 0x7ff8000000000000ull;
  }
  return v;
}

static bool by_eq(const rt_tshape_in *in, uint32_t a, uint32_t b) {
  for (int k = 0; k < in->nby; k++) {
    const rt_tcol *c = &in->by[k];
    bool na = rt_tcol_null(c, a), nb = rt_tcol_null(c, b);
    if (na != nb) return false;
    if (!na && by_bits(c, a) != by_bits(c, b)) return false;
  }
  return true;
}

static uint64_t by_hash(const rt_tshape_in *in, uint32_t pg, uint32_t r) {
  uint64_t h = rt_hash_i64((uint64_t)pg + 0x9e3779b97f4a7c15ull);
  for (int k = 0; k < in->nby; k++) {
    const rt_tcol *c = &in->by[k];
    uint64_t x = rt_tcol_null(c, r) ? 0x5bd1e9955bd1e995ull : by_bits(c, r);
    h = rt_hash_i64(h ^ x) + (uint64_t)k;
  }
  return h;
}

/* ---- MERGE SIBLINGS ------------------------------------------------------------ */

/* One slot of the (parent group, BY values) → group map, probed linearly:
 * with one BY column `key` is its value bits (NULL: a sentinel, told from
 * a real value equal to it by the group's bit in `gnull`), so a probe
 * compares in the slot without reading the group's row; with several,
 * `key` is the tuple's hash and a match is confirmed on the first row. */
typedef struct sibslot {
  uint64_t key;
  uint32_t pg;       /* parent group, NONE for roots */
  uint32_t g1;       /* group + 1, 0 = empty */
} sibslot;

typedef struct sibmap {
  sibslot *s;
  uint64_t mask;
  uint64_t *gnull;   /* one BY column: bit per group, its key is NULL */
} sibmap;

#define SIB_NULL 0x6a09e667f3bcc909ull

static uint64_t sib_key(const rt_tshape_in *in, uint32_t pg, uint32_t r, bool *isnull) {
  if (in->nby == 1) {
    *isnull = rt_tcol_null(&in->by[0], r);
    return *isnull ? SIB_NULL : by_bits(&in->by[0], r);
  }
  *isnull = false;
  return by_hash(in, pg, r);
}

static uint64_t sib_hash(uint64_t key, uint32_t pg) {
  return rt_hash_i64(key ^ rt_hash_i64((uint64_t)pg + 0x9e3779b97f4a7c15ull));
}

static bool sib_grow(sibmap *m, uint64_t nslots) {
  sibslot *ns = rt_mem_calloc(nslots, sizeof *ns);
  if (!ns) return false;
  uint64_t mask = nslots - 1;
  for (uint64_t i = 0; m->s && i <= m->mask; i++) {
    if (!m->s[i].g1) continue;
    uint64_t h = sib_hash(m->s[i].key, m->s[i].pg) & mask;
    while (ns[h].g1) h = (h + 1) & mask;
    ns[h] = m->s[i];
  }
  rt_mem_free(m->s);
  m->s = ns;
  m->mask = mask;
  return true;
}

/* Rows in level order: by depth, each level in input order (a stable
 * counting sort by depth). Every parent comes before its children, and
 * when a level is reached every parent's group is known, so the map's
 * slots can be fetched ahead (the map is far larger than the caches). */
static uint32_t *level_order(const tforest *f) {
  uint32_t n = f->n, maxd = 0;
  uint32_t *depth = rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1));
  uint32_t *lv = rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1));
  uint32_t *cnt = NULL;
  if (depth && lv) {
    for (uint32_t i = 0; i < n; i++) {
      uint32_t x = f->order ? f->order[i] : i, p = f->par[x];
      depth[x] = p == NONE ? 0 : depth[p] + 1;
      if (depth[x] > maxd) maxd = depth[x];
    }
    cnt = rt_mem_calloc((size_t)maxd + 2, sizeof *cnt);
  }
  if (!cnt) {
    rt_mem_free(depth);
    rt_mem_free(lv);
    return NULL;
  }
  for (uint32_t x = 0; x < n; x++) cnt[depth[x] + 1]++;
  for (uint32_t d = 0; d <= maxd; d++) cnt[d + 1] += cnt[d];
  for (uint32_t x = 0; x < n; x++) lv[cnt[depth[x]]++] = x;
  rt_mem_free(depth);
  rt_mem_free(cnt);
  return lv;
}

static int merge_siblings(const rt_tshape_in *in, const tforest *f, rt_tshape_out *out,
                          rt_err *err, const char *stage, int pos) {
  uint32_t n = f->n;
  uint32_t *g = out->group, *rep = out->rows, *gpar = out->prow;
  uint32_t ng = 0;
  sibmap m = {0};
  uint32_t *last = NULL, *lv = level_order(f);
  bool one = in->nby == 1;
  if (!lv) return tfail(err, pos, stage, "out of memory");
  if (in->ordered) {
    last = rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1));   /* per group + 1; [0]: roots */
    if (last) memset(last, 0xff, sizeof(uint32_t) * ((size_t)n + 1));
  } else {
    m.gnull = one ? rt_mem_calloc(RT_BITWORDS((size_t)n + 1), 8) : NULL;
    /* Sized for half the rows as groups (a flamegraph of a trace merges
     * about that many): no rehash below that. */
    uint64_t want = 1024;
    while (want < n) want *= 2;
    if (!sib_grow(&m, want)) m.mask = 0;
  }
  if (in->ordered ? !last : (!m.s || (one && !m.gnull))) {
    rt_mem_free(m.s);
    rt_mem_free(m.gnull);
    rt_mem_free(lv);
    return tfail(err, pos, stage, "out of memory");
  }
  memset(g, 0xff, sizeof(uint32_t) * n);
  enum { AHEAD = 16 };
  for (uint32_t i = 0; i < n; i++) {
    uint32_t x = lv[i], p = f->par[x];
    uint32_t pg = p == NONE ? NONE : g[p], grp = NONE;
    if (in->ordered) {
      uint32_t *l = &last[pg == NONE ? 0 : pg + 1];
      if (*l != NONE && by_eq(in, rep[*l], x)) {
        grp = *l;
      } else {
        grp = ng++;
        *l = grp;
        rep[grp] = x;
        gpar[grp] = pg;
      }
      g[x] = grp;
      continue;
    }
    /* Two steps ahead the parent's group, one step ahead the slot. */
    if (i + 2 * AHEAD < n) {
      uint32_t q = f->par[lv[i + 2 * AHEAD]];
      if (q != NONE) __builtin_prefetch(&g[q]);
    }
    if (i + AHEAD < n) {
      uint32_t y = lv[i + AHEAD], q = f->par[y];
      uint32_t qg = q == NONE ? NONE : g[q];
      if (q == NONE || qg != NONE) {
        bool yn;
        __builtin_prefetch(&m.s[sib_hash(sib_key(in, qg, y, &yn), qg) & m.mask]);
      }
    }
    bool isnull;
    uint64_t key = sib_key(in, pg, x, &isnull), h = sib_hash(key, pg) & m.mask;
    for (;;) {
      const sibslot *sl = &m.s[h];
      if (!sl->g1) break;
      uint32_t c = sl->g1 - 1;
      if (sl->key == key && sl->pg == pg &&
          (one ? rt_bit(m.gnull, c) == isnull : by_eq(in, rep[c], x))) {
        grp = c;
        break;
      }
      h = (h + 1) & m.mask;
    }
    if (grp == NONE) {
      grp = ng++;
      m.s[h] = (sibslot){.key = key, .pg = pg, .g1 = grp + 1};
      if (one && isnull) rt_bit_set(m.gnull, grp);
      rep[grp] = x;
      gpar[grp] = pg;
      if ((uint64_t)ng * 2 > m.mask + 1 && !sib_grow(&m, (m.mask + 1) * 4)) {
        rt_mem_free(m.s);
        rt_mem_free(m.gnull);
        rt_mem_free(lv);
        return tfail(err, pos, stage, "out of memory");
      }
    }
    g[x] = grp;
  }
  rt_mem_free(m.s);
  rt_mem_free(m.gnull);
  rt_mem_free(last);
  rt_mem_free(lv);
  out->n = ng;
  return 0;
}

/* ---- the filtering and folding forms ------------------------------------------ */

static bool folds(rt_tshape_kind k) {
  return k == RT_TS_CONTRACT || k == RT_TS_ABSORB || k == RT_TS_MERGE_INTO ||
         k == RT_TS_MERGE_SIBLINGS;
}

/* keep[x] for every tree row (see the banner); aux gets ABSORB's top or
 * MERGE INTO's tgt. */
static void decide(const rt_tshape_in *in, const tforest *f, const uint8_t *mark,
                   const uint32_t *in_of, uint8_t *keep, uint32_t *aux) {
  uint32_t n = f->n;
  rt_tshape_kind k = in->kind;
#define VISIT(i) (f->order ? f->order[i] : (i))
  switch (k) {
  case RT_TS_KEEP_DESC: case RT_TS_DROP_DESC: case RT_TS_PRUNE:
    for (uint32_t i = 0; i < n; i++) {
      uint32_t x = VISIT(i), p = f->par[x];
      keep[x] = mark[x] || (p != NONE && keep[p]);
    }
    break;
  case RT_TS_KEEP_ANC: case RT_TS_DROP_ANC:
    for (uint32_t x = 0; x < n; x++) keep[x] = mark[x];
    for (uint32_t i = n; i-- > 0;) {
      uint32_t x = VISIT(i), p = f->par[x];
      if (keep[x] && p != NONE) keep[p] = 1;
    }
    break;
  case RT_TS_CONTRACT:
    for (uint32_t x = 0; x < n; x++) keep[x] = !mark[x];
    break;
  case RT_TS_REPARENT:
    for (uint32_t x = 0; x < n; x++) keep[x] = mark[x];
    break;
  case RT_TS_ABSORB:
    for (uint32_t i = 0; i < n; i++) {
      uint32_t x = VISIT(i), p = f->par[x];
      aux[x] = p != NONE && aux[p] != NONE ? aux[p] : mark[x] ? x : NONE;
      keep[x] = aux[x] == NONE || aux[x] == x;
    }
    break;
  case RT_TS_MERGE_INTO:
    for (uint32_t i = 0; i < n; i++) {
      uint32_t x = VISIT(i), p = f->par[x];
      aux[x] = p != NONE && by_eq(in, x, p) ? aux[p] : x;
      keep[x] = aux[x] == x;
    }
    break;
  case RT_TS_MERGE_SIBLINGS: break;
  }
  if (k == RT_TS_DROP_DESC || k == RT_TS_DROP_ANC || k == RT_TS_PRUNE)
    for (uint32_t x = 0; x < n; x++) keep[x] = !keep[x];
  if (k <= RT_TS_PRUNE)
    for (uint32_t x = 0; x < n; x++) keep[x] = keep[x] && in_of[x] != NONE;
#undef VISIT
}

static int reshape(const rt_tshape_in *in, const tforest *f, const uint8_t *mark,
                   const uint32_t *in_of, const uint32_t *tree_of, rt_tshape_out *out,
                   rt_err *err, const char *stage, int pos) {
  uint32_t n = f->n;
  uint8_t *keep = rt_mem_calloc((size_t)n + 1, 1);
  uint32_t *aux = rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1));
  uint32_t *anc = rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1));
  uint32_t *outidx = folds(in->kind) ? rt_mem_alloc(sizeof(uint32_t) * ((size_t)n + 1)) : NULL;
  if (!keep || !aux || !anc || (folds(in->kind) && !outidx)) {
    rt_mem_free(keep);
    rt_mem_free(aux);
    rt_mem_free(anc);
    rt_mem_free(outidx);
    return tfail(err, pos, stage, "out of memory");
  }
  decide(in, f, mark, in_of, keep, aux);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t x = f->order ? f->order[i] : i, p = f->par[x];
    anc[x] = p == NONE ? NONE : keep[p] ? p : anc[p];
  }
  uint32_t k = 0;
  for (uint32_t r = 0; r < in->n; r++) {
    uint32_t x = tree_of ? tree_of[r] : r;
    if (in->kind != RT_TS_REPARENT && !keep[x]) continue;
    if (outidx) outidx[x] = k;
    out->rows[k] = r;
    out->prow[k] = anc[x];
    k++;
  }
  out->n = k;
  if (outidx)
    for (uint32_t x = 0; x < n; x++) {
      uint32_t t = keep[x] ? x : in->kind == RT_TS_CONTRACT ? anc[x] : aux[x];
      out->group[x] = t == NONE ? NONE : outidx[t];
    }
  rt_mem_free(keep);
  rt_mem_free(aux);
  rt_mem_free(anc);
  rt_mem_free(outidx);
  return 0;
}

/* ---- entry ---------------------------------------------------------------------- */

void rt_tshape_free(rt_tshape_out *out) {
  rt_mem_free(out->rows);
  rt_mem_free(out->prow);
  rt_mem_free(out->group);
  memset(out, 0, sizeof *out);
}

int rt_tshape_run(const rt_tshape_in *in, rt_tshape_out *out, rt_err *err, const char *stage,
                  int pos, const rt_strpool *sp) {
  memset(out, 0, sizeof *out);
  tforest f;
  const rt_tcol *tid = in->has_over ? &in->over_id : &in->id;
  uint32_t tn = in->has_over ? in->over_n : in->n;
  int rc = forest_build(&f, tid, in->has_over ? &in->over_parent : &in->parent, tn, in->str_ids,
                        err, stage, pos, sp);
  uint8_t *mark = NULL;
  uint32_t *in_of = NULL, *tree_of = NULL;
  size_t nrows = (size_t)(in->n > tn ? in->n : tn) + 1;
  if (rc == 0) {
    mark = rt_mem_calloc((size_t)tn + 1, 1);
    in_of = rt_mem_alloc(sizeof(uint32_t) * ((size_t)tn + 1));
    out->rows = rt_mem_alloc(sizeof(uint32_t) * nrows);
    out->prow = rt_mem_alloc(sizeof(uint32_t) * nrows);
    if (folds(in->kind)) out->group = rt_mem_alloc(sizeof(uint32_t) * nrows);
    if (!mark || !in_of || !out->rows || !out->prow || (folds(in->kind) && !out->group))
      rc = tfail(err, pos, stage, "out of memory");
  }
  /* With OVER the input's rows are nodes of that tree, each at most once. */
  if (rc == 0 && in->has_over) {
    memset(in_of, 0xff, sizeof(uint32_t) * ((size_t)tn + 1));
    if (!(tree_of = rt_mem_alloc(sizeof(uint32_t) * ((size_t)in->n + 1))))
      rc = tfail(err, pos, stage, "out of memory");
    for (uint32_t r = 0; rc == 0 && r < in->n; r++) {
      if (rt_tcol_null(&in->id, r)) {
        char msg[200];
        snprintf(msg, sizeof msg, "a row has no id: row %u of the input", r + 1);
        rc = tfail(err, pos, stage, msg);
        break;
      }
      int64_t id = rt_tcol_bits(&in->id, r);
      uint32_t x = forest_find(&f, id);
      if (x == NONE)
        rc = id_fail(&f, err, pos, stage, "the row with id %s is not a node of the OVER tree", id);
      else if (in_of[x] != NONE)
        rc = id_fail(&f, err, pos, stage, "two rows have the id %s", id);
      else
        in_of[x] = r, tree_of[r] = x;
    }
  } else if (rc == 0) {
    for (uint32_t x = 0; x < tn; x++) in_of[x] = x;
  }
  for (uint32_t r = 0; rc == 0 && in->has_set && r < in->set_n; r++) {
    if (rt_tcol_null(&in->set_id, r)) continue;
    uint32_t x = forest_find(&f, rt_tcol_bits(&in->set_id, r));
    if (x != NONE) mark[x] = 1;
  }
  if (rc == 0) {
    if (in->kind == RT_TS_MERGE_SIBLINGS) rc = merge_siblings(in, &f, out, err, stage, pos);
    else rc = reshape(in, &f, mark, in_of, tree_of, out, err, stage, pos);
  }
  rt_mem_free(mark);
  rt_mem_free(in_of);
  rt_mem_free(tree_of);
  forest_free(&f);
  if (rc < 0) rt_tshape_free(out);
  return rc;
}
