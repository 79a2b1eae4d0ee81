/*
 * vm_join.c — the interpreter's JOIN_PROBE (LANGUAGE.md §8; the table is
 * runtime/jointab.h, built by the driver when the relation's segment
 * ended).
 *
 * A probe multiplies rows, so it cannot narrow the batch like FILTER: it
 * collects (input position, relation row) pairs in order — the matches of
 * each input row in the relation's order, a LEFT/FULL row without a match
 * paired with the relation's NULL row — and every RT_BATCH pairs runs the
 * rest of the segment (vm_rest) on a batch of its own whose columns are
 * views: the input's through a selection of the pair's positions
 * (composed with the input view's own selection), the relation's through
 * a selection of its buffer's rows.
 *
 * With a residual (the part of ON that is not an equality key) the pairs
 * first gather as candidates; each RT_BATCH of them the residual runs
 * over a candidate batch built the same way, and the survivors go on. A
 * LEFT/FULL input row gets a marker after its candidates, which becomes
 * its NULL-row pair when none of them survived.
 */
#include <stdlib.h>

#include "vm.h"

typedef struct vm_jbatch {
  rt_batch b;             /* own column array */
  uint32_t *in, *row;     /* pairs */
  uint32_t n;
  uint32_t **sel;         /* per pass column: composed selection */
} vm_jbatch;

typedef struct vm_jstate {
  int npass, *pass;       /* input columns the rest (or the residual) reads */
  int nsrc, *src;         /* served columns = buffer columns 0..nsrc */
  uint32_t *act;          /* the input batch's active positions */
  vm_jbatch out, cand;
  uint32_t *yes;          /* residual survivors */
  vm_vec **saved;         /* colvec of pass columns while a chunk runs */
  bool cur_matched;
} vm_jstate;

#define VM_JMARK UINT32_MAX   /* candidate row: "no survivor yet → NULL row" */

/* Scratch that lives as long as the segment's vm state; NULL when out
 * of memory (jstate then fails the step). */
static void *vm_jalloc(bool *ok, size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p) *ok = false;
  return p;
}

static void jbatch_init(bool *ok, vm_jbatch *jb, const ir_plan *p, int npass) {
  jb->b.ncols = p->ncols;
  jb->b.cols = vm_jalloc(ok, sizeof(rt_view) * ((size_t)p->ncols + 1));
  jb->in = vm_jalloc(ok, sizeof(uint32_t) * RT_BATCH);
  jb->row = vm_jalloc(ok, sizeof(uint32_t) * RT_BATCH);
  jb->sel = vm_jalloc(ok, sizeof(uint32_t *) * ((size_t)npass + 1));
  for (int i = 0; i < npass && jb->sel; i++) jb->sel[i] = vm_jalloc(ok, sizeof(uint32_t) * RT_BATCH);
}

static void jbatch_free(vm_jbatch *jb, int npass) {
  if (!jb->b.cols && !jb->sel) return;
  free(jb->b.cols);
  free(jb->in);
  free(jb->row);
  for (int i = 0; jb->sel && i < npass; i++) free(jb->sel[i]);
  free(jb->sel);
}

static void jstate_free(vm_jstate *st) {
  jbatch_free(&st->out, st->npass);
  jbatch_free(&st->cand, st->npass);
  free(st->pass);
  free(st->act);
  free(st->yes);
  free(st->saved);
  free(st);
}

/* The columns step k's output batches need from its input: read by a
 * later step, the sink or the residual, not defined after the probe. */
static vm_jstate *jstate(vm *m, const ir_op *op, int k) {
  if (!m->jn) return vm_fail(m, "out of memory");   /* gave up after a failed allocation */
  if (m->jn[k]) return m->jn[k];
  const ir_plan *p = m->plan;
  const ir_segment *seg = m->s->seg;
  bool ok = true;
  vm_jstate *st = vm_jalloc(&ok, sizeof *st);
  bool *need = vm_jalloc(&ok, (size_t)p->ncols + 1), *def = vm_jalloc(&ok, (size_t)p->ncols + 1);
  if (!ok) {
    free(st);
    free(need);
    free(def);
    return vm_fail(m, "out of memory");
  }
  for (int j = k + 1; j < seg->nsteps; j++) {
    const ir_op *o = seg->steps[j];
    if (o->dead) continue;
    ir_op_need(o, need);
    if (o->kind == IR_COMPUTE) def[o->compute.out_col] = true;
    if (o->kind == IR_TREE_NUMBER) def[o->tree.node_col] = def[o->tree.pnode_col] = true;
    if (o->kind == IR_TREE_ACC)
      for (int a = 0; a < o->tree.naggs; a++) def[o->tree.aggs[a].out_col] = true;
    if (o->kind == IR_JOIN_PROBE)
      for (int a = 0; a < o->join.build->join.ncarry; a++) def[o->join.build->join.carry[a]] = true;
  }
  ir_op_need(seg->sink, need);
  ir_op_need(op, need);   /* keys (harmless) and the residual */
  const ir_op *bld = op->join.build;
  for (int a = 0; a < bld->join.ncarry; a++) def[bld->join.carry[a]] = true;
  m->jn[k] = st;   /* freed with the vm state from here on, whatever fails */
  st->pass = vm_jalloc(&ok, sizeof(int) * ((size_t)p->ncols + 1));
  for (int c = 0; c < p->ncols && st->pass; c++)
    if (need[c] && !def[c]) st->pass[st->npass++] = c;
  free(need);
  free(def);
  st->nsrc = bld->join.ncarry;
  st->src = bld->join.carry;
  st->act = vm_jalloc(&ok, sizeof(uint32_t) * RT_BATCH);
  st->yes = vm_jalloc(&ok, sizeof(uint32_t) * RT_BATCH);
  st->saved = vm_jalloc(&ok, sizeof(vm_vec *) * ((size_t)st->npass + 1));
  jbatch_init(&ok, &st->out, p, st->npass);
  if (op->join.residual) jbatch_init(&ok, &st->cand, p, st->npass);
  if (!ok) {
    /* only this step's state goes: a probe before it may be running */
    jstate_free(st);
    m->jn[k] = NULL;
    return vm_fail(m, "out of memory");
  }
  return st;
}

void vm_join_free(vm *m) {
  if (!m->jn) return;
  for (int k = 0; k < m->s->seg->nsteps; k++) {
    if (m->jn[k]) jstate_free(m->jn[k]);
  }
  free(m->jn);
  m->jn = NULL;
}

/* Views of jb's pairs: input columns through the pair positions, the
 * relation's through its rows (a marker reads the NULL row). */
static void jbatch_views(vm_jstate *st, vm_jbatch *jb, const rt_batch *in, const rt_jointab *t) {
  for (int i = 0; i < st->npass; i++) {
    const rt_view *v = &in->cols[st->pass[i]];
    rt_view *o = &jb->b.cols[st->pass[i]];
    uint32_t *sel = jb->sel[i];
    *o = *v;
    if (v->sel)
      for (uint32_t j = 0; j < jb->n; j++) sel[j] = v->sel[jb->in[j]];
    else
      memcpy(sel, jb->in, sizeof(uint32_t) * jb->n);
    o->sel = sel;
  }
  for (uint32_t j = 0; j < jb->n; j++)
    if (jb->row[j] == VM_JMARK) jb->row[j] = (uint32_t)t->nrows;
  for (int i = 0; i < st->nsrc; i++) {
    rt_view *o = &jb->b.cols[st->src[i]];
    *o = (rt_view){.type = t->buf->types[i], .data = t->buf->data[i], .valid = t->buf->valid[i],
                   .sel = jb->row};
  }
  jb->b.n = jb->b.nactive = jb->n;
  jb->b.active = NULL;
}

/* A LIMIT after the probe (LIMIT index nlimit on) has nothing left: no
 * more output can pass. (s->done also says a LIMIT before the probe was
 * satisfied, which must not stop this batch's matches.) */
static bool later_limit_done(const ex_seg *s, int nlimit) {
  for (int j = nlimit; j < s->nlimits; j++)
    if (s->limit_left[j] == 0) return true;
  return false;
}

typedef struct jrun {
  vm *m;
  const ir_op *op;
  int k, nlimit;
  rt_batch *in;
  const rt_jointab *t;
  vm_jstate *st;
} jrun;

/* Runs the rest of the segment on the output pairs gathered so far. */
static int flush_out(jrun *r) {
  vm_jstate *st = r->st;
  vm *m = r->m;
  if (st->out.n == 0) return 0;
  jbatch_views(st, &st->out, r->in, r->t);
  for (int i = 0; i < st->npass; i++) {
    st->saved[i] = m->colvec[st->pass[i]];
    m->colvec[st->pass[i]] = NULL;   /* a borrowed vector is by the input's positions */
  }
  int held = m->nheld;
  m->batch = &st->out.b;
  int rc = vm_rest(m, &st->out.b, r->k + 1, r->nlimit);
  vm_release(m, r->k + 1, held);
  for (int i = 0; i < st->npass; i++) m->colvec[st->pass[i]] = st->saved[i];
  m->batch = r->in;
  m->op = r->op;
  st->out.n = 0;
  return rc;
}

static int push_out(jrun *r, uint32_t in, uint32_t row) {
  vm_jbatch *o = &r->st->out;
  o->in[o->n] = in;
  o->row[o->n] = row;
  if (row != VM_JMARK && r->t->matched) r->t->matched[row] = 1;
  return ++o->n == RT_BATCH ? flush_out(r) : 0;
}

/* The residual over the gathered candidates; survivors (and unmatched
 * markers) become output pairs in order. */
static int flush_cand(jrun *r) {
  vm_jstate *st = r->st;
  vm *m = r->m;
  vm_jbatch *c = &st->cand;
  if (c->n == 0) return 0;
  /* markers keep their meaning through jbatch_views' NULL-row rewrite */
  uint32_t nmark = 0;
  for (uint32_t j = 0; j < c->n; j++) nmark += c->row[j] == VM_JMARK;
  bool ok = true;
  uint8_t *mark = nmark ? vm_jalloc(&ok, c->n) : NULL;
  if (!ok) return vm_fail(m, "out of memory"), -1;
  for (uint32_t j = 0; j < c->n && mark; j++) mark[j] = c->row[j] == VM_JMARK;
  jbatch_views(st, c, r->in, r->t);
  for (int i = 0; i < st->npass; i++) {
    st->saved[i] = m->colvec[st->pass[i]];
    m->colvec[st->pass[i]] = NULL;
  }
  m->batch = &c->b;
  vm_set set = {NULL, c->n};
  vm_vec *v = vm_eval(m, r->op->join.residual, &set);
  uint32_t ny = 0;
  if (v) vm_split_truth(v, &set, st->yes, &ny, NULL, NULL);
  vm_vec_put(m, v);
  for (int i = 0; i < st->npass; i++) m->colvec[st->pass[i]] = st->saved[i];
  m->batch = r->in;
  int rc = v ? 0 : -1;
  uint32_t y = 0, n = c->n;
  c->n = 0;
  for (uint32_t j = 0; j < n && rc == 0; j++) {
    bool pass = y < ny && st->yes[y] == j;
    if (pass) y++;
    if (mark && mark[j]) {
      if (!st->cur_matched) rc = push_out(r, c->in[j], (uint32_t)r->t->nrows);
      st->cur_matched = false;
    } else if (pass) {
      st->cur_matched = true;
      rc = push_out(r, c->in[j], c->row[j]);
    }
  }
  free(mark);
  return rc;
}

static int push_cand(jrun *r, uint32_t in, uint32_t row) {
  vm_jbatch *c = &r->st->cand;
  c->in[c->n] = in;
  c->row[c->n] = row;
  return ++c->n == RT_BATCH ? flush_cand(r) : 0;
}

int vm_join_probe(vm *m, const ir_op *op, int k, rt_batch *b, int nlimit) {
  const rt_jointab *t = ex_join_tab(m->s->run, op);
  if (!t) return vm_fail(m, "the joined relation was not built"), -1;
  vm_jstate *st = jstate(m, op, k);
  if (!st) return -1;
  jrun r = {m, op, k, nlimit, b, t, st};
  uint32_t na = b->nactive;
  if (b->active) memcpy(st->act, b->active, sizeof(uint32_t) * na);
  else
    for (uint32_t i = 0; i < na; i++) st->act[i] = i;
  int nk = op->join.nkeys;
  bool left = op->join.kind == RT_JOIN_LEFT || op->join.kind == RT_JOIN_FULL;
  bool resid = op->join.residual != NULL;
  int64_t w[nk > 0 ? nk : 1];
  st->cur_matched = false;
  st->out.n = st->cand.n = 0;
  int rc = 0;
  for (uint32_t a = 0; a < na && rc == 0 && !later_limit_done(m->s, nlimit); a++) {
    uint32_t i = st->act[a];
    bool ok = true;
    for (int j = 0; j < nk && ok; j++) {
      const rt_view *v = &b->cols[op->join.in_keys[j]];
      if (rt_view_is_null(v, i)) ok = false;
      else if (t->kinds[j] == RT_F64) ok = rt_join_f64_word(rt_view_f64(v, i), &w[j]);
      else if (t->kinds[j] == RT_STR) w[j] = rt_view_str(v, i);
      else w[j] = rt_view_i64(v, i);
    }
    uint32_t head = ok ? rt_jointab_find(t, w) : RT_JOIN_END;
    for (uint32_t row = head; row != RT_JOIN_END && rc == 0; row = t->next[row])
      rc = resid ? push_cand(&r, i, row) : push_out(&r, i, row);
    if (rc == 0 && left) {
      if (resid) rc = push_cand(&r, i, VM_JMARK);
      else if (head == RT_JOIN_END) rc = push_out(&r, i, (uint32_t)t->nrows);
    }
  }
  if (rc == 0 && resid) rc = flush_cand(&r);
  if (rc == 0) rc = flush_out(&r);
  return rc;
}
