/*
 * bind_setop.c — binds `|> UNION ALL (q), …`, `|> UNION [DISTINCT] (q), …`,
 * `|> INTERSECT [ALL | DISTINCT] (q), …` and `|> EXCEPT [ALL | DISTINCT]
 * (q), …` (LANGUAGE.md §8).
 *
 * Every relation — the input, then each operand bound inline like a FROM
 * (…) subpipeline — ends in an IV_BUFFER sink carrying its columns in
 * position order; the SETOP source after the last buffer combines them
 * (exec/driver_setop.c) and serves its output columns. Columns match by
 * position and their counts must agree; integers with doubles give
 * doubles, strings only go with strings; names come from the input and
 * aliases are cleared.
 */
#include <stdio.h>

#include "bind.h"

/* 0 a bare NULL (goes with anything), 1 integer, 2 double, 3 string. */
static int kind_of(const ir_col *c) {
  return c->untyped ? 0 : c->type == RT_F64 ? 2 : c->type == RT_STR ? 3 : 1;
}

static const char *ordinal(int i, char *buf, size_t n) {
  static const char *const w[] = {"first", "second", "third", "fourth", "fifth",
                                  "sixth", "seventh", "eighth", "ninth", "tenth"};
  if (i < 10) return w[i];
  snprintf(buf, n, "%dth", i + 1);
  return buf;
}

/* The bare entries of the row: the relation's columns in position order. */
static int rel_cols(ir_binder *b, int **cols, const char ***names) {
  *cols = ir_alloc(b, sizeof(int) * ((size_t)b->row.n + 1));
  *names = ir_alloc(b, sizeof(char *) * ((size_t)b->row.n + 1));
  int n = 0;
  for (int i = 0; i < b->row.n; i++) {
    if (b->row.e[i].qonly) continue;
    (*names)[n] = b->row.e[i].name;
    (*cols)[n++] = b->row.e[i].col;
  }
  return n;
}

int ir_bind_setop(ir_binder *b, const fe_stage *st) {
  ir_plan *p = b->p;
  const char *stage = b->stage;
  int nrel = st->nsrcs + 1;
  int **cols = ir_alloc(b, sizeof(int *) * (size_t)nrel);
  ir_op **bufs = ir_alloc(b, sizeof(ir_op *) * (size_t)nrel);
  const char **names;
  int n = rel_cols(b, &cols[0], &names);
  bufs[0] = ir_add_ivbuf(b, st->pos, n, cols[0]);
  for (int j = 1; j < nrel; j++) {
    const fe_source *src = st->srcs[j - 1];
    b->any_names = true;
    int ok = ir_bind_source(b, src, stage);
    b->any_names = false;
    if (!ok) return 0;
    b->stage = stage;
    const char **nm;
    int nj = rel_cols(b, &cols[j], &nm);
    char o[16];
    if (nj != n)
      return ir_fail(b, src->pos, "expected %d column%s, but the %s query has %d", n,
                     n == 1 ? "" : "s", ordinal(j, o, sizeof o), nj);
    bufs[j] = ir_add_ivbuf(b, src->pos, nj, cols[j]);
  }
  /* one type per position */
  ir_op *op = ir_op_add(b, IR_SETOP, st->pos);
  int *out = ir_alloc(b, sizeof(int) * ((size_t)n + 1));
  for (int k = 0; k < n; k++) {
    int kind = 0, first = -1;
    bool nullable = false, allbool = true;
    for (int j = 0; j < nrel; j++) {
      const ir_col *c = &p->cols[cols[j][k]];
      int kj = kind_of(c);
      nullable |= c->nullable || c->untyped;
      allbool &= c->type == RT_BOOL || c->untyped;
      if (kj == 0) continue;
      if (first < 0) first = j;
      if ((kj == 3) != (kind == 3) && kind != 0) {
        char o1[16], o2[16];
        return ir_fail(b, j ? st->srcs[j - 1]->pos : st->pos,
                       "expected column %d ('%s') to be a string in every query or in none, but "
                       "it is %s in the %s query and %s in the %s",
                       k + 1, names[k], kind == 3 ? "a string" : "a number", ordinal(first, o1, sizeof o1),
                       kj == 3 ? "a string" : "a number", ordinal(j, o2, sizeof o2));
      }
      if (kj > kind) kind = kj;
    }
    rt_type t = kind == 2 ? RT_F64 : kind == 3 ? RT_STR : allbool && kind ? RT_BOOL : RT_I64;
    out[k] = ir_col_new(p, names[k], t, nullable);
    p->cols[out[k]].untyped = kind == 0;
  }
  static const ir_setkind kinds[] = {[ST_UNION] = IR_SET_UNION, [ST_INTERSECT] = IR_SET_INTERSECT,
                                     [ST_EXCEPT] = IR_SET_EXCEPT};
  op->setop = (struct ir_setop){.kind = (int)kinds[st->kind], .all = st->all, .nrel = nrel,
                                .ncols = n, .bufs = bufs, .cols = cols, .out = out};
  for (int j = 0; j < nrel; j++) bufs[j]->ivbuf.user = op;
  ir_rowb rb = {0};
  for (int k = 0; k < n; k++) ir_rowb_add(b, &rb, names[k], out[k], false);
  b->row = ir_rowb_done(&rb);
  ir_alias_set_one(b, NULL, b->row);
  return 1;
}
