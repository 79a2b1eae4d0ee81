/*
 * bind_fork.c — binds `|> FORK AS name` (LANGUAGE.md §8) and the reads of
 * the name by later stages (JOIN f, UNION ALL (FROM f |> …), INTERVAL
 * JOIN f, …).
 *
 * The stream is buffered once, at the fork, by a FORK breaker: the
 * pipeline goes on from its buffer (the SCAN_BUF segment.c puts after
 * it) with the row and aliases unchanged, and each read of the name is a
 * SCAN_FORK source over the same buffer. A read serves fresh column ids
 * (a join's two sides must never share one), copies of the fork's bare
 * columns, under the read's alias or else the fork's name. The buffer is
 * written before any read: a read is always bound after its fork, and a
 * segment runs once its sources' buffers are complete (segment.c orders
 * a JOIN's relation before the probe's segment goes on).
 *
 * Scope: the later stages of the pipeline the fork is in, including the
 * pipelines nested in those stages; a fork inside a nested pipeline is
 * gone when that pipeline ends (ir_bind_pipeline), and a view or function
 * body sees no fork of its caller. A fork name shadows a table of the same
 * name, as a CTE does in SQL. Forks before a SQL stage belong to the
 * stage's input (bind_sql.c), and reading one after it is an error.
 */
#include "bind.h"

const ir_forkname *ir_fork_find(const ir_binder *b, const char *name) {
  for (int i = b->nforks - 1; i >= 0; i--)
    if (ir_name_eq(b->forks[i].name, name)) return &b->forks[i];
  return NULL;
}

int ir_bind_fork(ir_binder *b, const fe_stage *st) {
  const fe_name *nm = &st->alias;
  const ir_forkname *old = ir_fork_find(b, nm->name);
  if (old && old->op)   /* one before a SQL stage is another stream's */
    return ir_fail(b, nm->pos, "the name '%s' is already taken by an earlier FORK", nm->name);
  ir_op *op = ir_op_add(b, IR_FORK, st->pos);
  op->fork.name = ir_strdup(b, nm->name);
  /* Everything still reachable: the stream goes on from this buffer.
   * live.c trims it to what is read later, through the name or not. */
  op->fork.ncarry = ir_row_all_cols(b, &op->fork.carry);
  ir_rowb rb = {0};
  for (int i = 0; i < b->row.n; i++)
    if (!b->row.e[i].qonly) ir_rowb_add(b, &rb, b->row.e[i].name, b->row.e[i].col, false);
  ir_forkname *v = ir_alloc(b, sizeof *v * ((size_t)b->nforks + 1));
  if (b->nforks) memcpy(v, b->forks, sizeof *v * (size_t)b->nforks);
  v[b->nforks] = (ir_forkname){op->fork.name, nm->pos, op, ir_rowb_done(&rb)};
  b->forks = v;
  b->nforks++;
  return 1;
}

int ir_bind_fork_source(ir_binder *b, const fe_source *src, const ir_forkname *f) {
  ir_plan *p = b->p;
  if (!f->op)   /* bind_sql.c: before a SQL stage */
    return ir_fail(b, src->pos,
                   "the FORK '%s' comes before a SQL stage, whose result is a new stream: only "
                   "a FORK after the last SQL stage can be read after it",
                   f->name);
  int n = f->row.n;
  ir_op *op = ir_op_add(b, IR_SCAN_FORK, src->pos);
  op->scan.buf_op = f->op;
  op->scan.table_name = f->name;
  op->scan.nscan = n;
  op->scan.out_cols = ir_alloc(b, sizeof(int) * ((size_t)n + 1));
  op->scan.table_cols = ir_alloc(b, sizeof(int) * ((size_t)n + 1));
  ir_rowb rb = {0};
  for (int i = 0; i < n; i++) {
    const ir_entry *e = &f->row.e[i];
    ir_col c = p->cols[e->col];   /* a copy: ir_col_new may move the array */
    int col = ir_col_new(p, e->name, c.type, c.nullable);
    p->cols[col].untyped = c.untyped;
    op->scan.table_cols[i] = e->col;
    op->scan.out_cols[i] = col;
    ir_rowb_add(b, &rb, e->name, col, false);
  }
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, src->alias.name ? src->alias.name : f->name, b->row);
  return 1;
}
