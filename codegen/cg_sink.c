/*
 * cg_sink.c — the OUTPUT and SORT sinks: append the row to s->buf.
 *
 * Once per batch the buffer is grown for every row that could pass
 * (rt_rowbuf_reserve, which leaves new rows zero and NULL), and its column
 * pointers are loaded; per passing row the values are stored inline and a
 * validity bit is or-ed in for each non-NULL value. nrows is kept in a
 * register and written back after the loop. A NULL is stored as 0, as the
 * interpreter stores it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "emit.h"

struct cg_bufstate {
  int n;
  const int *cols;
  rt_type *types;         /* stored type per buffer column */
  LLVMValueRef buf;
  LLVMValueRef *data, *valid;
  /* A wide buffer (more than CG_WIDE_BUF columns) loads each column's
   * pointers where it stores, from these two arrays: kept live across
   * the loop, thousands of pointers made the register allocator's work
   * grow faster than the code (a 2,500-column EXTEND). */
  LLVMValueRef datas, valids;
  LLVMValueRef nrows;     /* alloca i64 */
  /* After a JOIN the rows of a batch are not bounded by its size: each
   * append checks the capacity, grows the buffer when full and reloads
   * the column pointers. */
  bool grow;
};

#define CG_WIDE_BUF 64

/* The columns a SORT or OUTPUT sink appends to its buffer: OUTPUT's in
 * output order, else the carried ones. */
int cg_buf_cols(const ir_op *op, const int **cols) {
  int n = 0;
  *cols = ir_buf_cols(op, &n);
  return n;
}

cg_bufstate *cg_buf_prologue(cg_ctx *cx, const ir_op *op, LLVMValueRef count,
                             LLVMBasicBlockRef fallback) {
  cg_bufstate *bs = cg_alloc(cx, sizeof *bs);
  if (!bs) return NULL;
  bs->n = cg_buf_cols(op, &bs->cols);
  bs->types = cg_alloc(cx, ((size_t)bs->n + 1) * sizeof *bs->types);
  bs->data = cg_alloc(cx, ((size_t)bs->n + 1) * sizeof *bs->data);
  bs->valid = cg_alloc(cx, ((size_t)bs->n + 1) * sizeof *bs->valid);
  if (!bs->types || !bs->data || !bs->valid) return NULL;
  for (int j = 0; j < bs->n; j++) bs->types[j] = rt_store_type(cx->plan->cols[bs->cols[j]].type);
  for (int k = 0; k < cx->seg->nsteps; k++)
    bs->grow |= !cx->seg->steps[k]->dead && cx->seg->steps[k]->kind == IR_JOIN_PROBE;

  /* The driver must have laid out the buffer as the plan says; otherwise
   * leave the batch to the interpreter. */
  LLVMValueRef nbuf = cg_load_field(cx, cx->st.seg, cx->s, CG_SEG_NBUF, cx->t_i32, "nbuf");
  LLVMValueRef ok = LLVMBuildICmp(cx->b, LLVMIntEQ, nbuf, cg_i32(cx, bs->n), "");
  LLVMValueRef bcols = cg_load_field(cx, cx->st.seg, cx->s, CG_SEG_BUF_COLS, cx->t_ptr, "buf.cols");
  LLVMBasicBlockRef check = cg_block(cx, "buf.check"), grow = cg_block(cx, "buf.grow");
  LLVMBuildCondBr(cx->b, ok, check, fallback);
  cg_at(cx, check);
  ok = cg_i1(cx, 1);
  for (int j = 0; j < bs->n; j++) {
    LLVMValueRef c = cg_load_elem(cx, cx->t_i32, bcols, cg_i64(cx, j), "");
    ok = LLVMBuildAnd(cx->b, ok, LLVMBuildICmp(cx->b, LLVMIntEQ, c, cg_i32(cx, bs->cols[j]), ""), "");
  }
  LLVMBuildCondBr(cx->b, ok, grow, fallback);

  cg_at(cx, grow);
  bs->buf = cg_load_field(cx, cx->st.seg, cx->s, CG_SEG_BUF, cx->t_ptr, "buf");
  LLVMValueRef args[2] = {bs->buf, LLVMBuildZExt(cx->b, count, cx->t_i64, "")};
  cg_call(cx, "rt_rowbuf_reserve", args, 2, "");
  LLVMValueRef nrows = cg_load_field(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_NROWS, cx->t_i64, "buf.nrows");
  LLVMValueRef cap = cg_load_field(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_CAP, cx->t_i64, "buf.cap");
  /* out of memory leaves the capacity short: the interpreter copes */
  LLVMValueRef room = LLVMBuildICmp(cx->b, LLVMIntSGE, LLVMBuildSub(cx->b, cap, nrows, ""), args[1], "");
  LLVMBasicBlockRef ready = cg_block(cx, "buf.ready");
  LLVMBuildCondBr(cx->b, room, ready, fallback);
  cg_at(cx, ready);
  LLVMValueRef datas = cg_load_field(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_DATA, cx->t_ptr, "");
  LLVMValueRef valids = cg_load_field(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_VALID, cx->t_ptr, "");
  bs->datas = datas;
  bs->valids = valids;
  for (int j = 0; j < bs->n && bs->n <= CG_WIDE_BUF && !bs->grow; j++) {
    char nm[96], buf[128];
    cg_colname(cx, bs->cols[j], nm, sizeof nm);
    snprintf(buf, sizeof buf, "out.%s", nm);
    bs->data[j] = cg_load_elem(cx, cx->t_ptr, datas, cg_i64(cx, j), buf);
    snprintf(buf, sizeof buf, "out.%s.valid", nm);
    bs->valid[j] = cg_load_elem(cx, cx->t_ptr, valids, cg_i64(cx, j), buf);
  }
  bs->nrows = cg_slot(cx, cx->t_i64, "nrows.slot");
  LLVMBuildStore(cx->b, nrows, bs->nrows);
  return bs;
}

void cg_buf_append(cg_ctx *cx, cg_bufstate *bs) {
  for (int j = 0; j < bs->n; j++) cg_column(cx, bs->cols[j]);   /* sources not yet read */
  LLVMValueRef r = LLVMBuildLoad2(cx->b, cx->t_i64, bs->nrows, "out.row");
  LLVMValueRef datas = bs->datas, valids = bs->valids;
  if (bs->grow) {
    LLVMValueRef cap = cg_load_field(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_CAP, cx->t_i64, "buf.cap");
    LLVMBasicBlockRef full = cg_block(cx, "buf.full"), room = cg_block(cx, "buf.room");
    LLVMBuildCondBr(cx->b, LLVMBuildICmp(cx->b, LLVMIntSGE, r, cap, ""), full, room);
    cg_at(cx, full);
    LLVMBuildStore(cx->b, r, cg_field_ptr(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_NROWS, ""));
    LLVMValueRef args[2] = {bs->buf, cg_i64(cx, RT_BATCH)};
    cg_call(cx, "rt_rowbuf_reserve", args, 2, "");
    LLVMValueRef cap2 = cg_load_field(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_CAP, cx->t_i64, "");
    cg_fail_if(cx, LLVMBuildICmp(cx->b, LLVMIntSGE, r, cap2, ""), CG_ERR_NOMEM, "buf.grown");
    LLVMBuildBr(cx->b, room);
    cg_at(cx, room);
    datas = cg_load_field(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_DATA, cx->t_ptr, "");
    valids = cg_load_field(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_VALID, cx->t_ptr, "");
  }
  for (int j = 0; j < bs->n; j++) {
    rt_type t = bs->types[j];
    cg_val v = cg_coerce(cx, cg_column(cx, bs->cols[j]), t);
    LLVMTypeRef ty = cg_llty(cx, t);
    LLVMValueRef val = v.v;
    if (!cg_is_false(v.null)) val = LLVMBuildSelect(cx->b, v.null, LLVMConstNull(ty), val, "");
    LLVMValueRef data = bs->data[j], valid = bs->valid[j];
    if (bs->n > CG_WIDE_BUF || bs->grow) {
      data = cg_load_elem(cx, cx->t_ptr, datas, cg_i64(cx, j), "");
      valid = cg_load_elem(cx, cx->t_ptr, valids, cg_i64(cx, j), "");
    }
    LLVMBuildStore(cx->b, val, cg_elem_ptr(cx, ty, data, r, ""));
    /* bit r |= !null, without a branch */
    LLVMValueRef wp = cg_elem_ptr(cx, cx->t_i64, valid, LLVMBuildLShr(cx->b, r, cg_i64(cx, 6), ""), "");
    LLVMValueRef set = LLVMBuildZExt(cx->b, LLVMBuildNot(cx->b, v.null, ""), cx->t_i64, "");
    LLVMValueRef bit = LLVMBuildShl(cx->b, set, LLVMBuildAnd(cx->b, r, cg_i64(cx, 63), ""), "");
    LLVMValueRef w = LLVMBuildLoad2(cx->b, cx->t_i64, wp, "");
    LLVMBuildStore(cx->b, LLVMBuildOr(cx->b, w, bit, ""), wp);
  }
  LLVMBuildStore(cx->b, LLVMBuildAdd(cx->b, r, cg_i64(cx, 1), ""), bs->nrows);
}

void cg_buf_epilogue(cg_ctx *cx, cg_bufstate *bs) {
  LLVMValueRef nrows = LLVMBuildLoad2(cx->b, cx->t_i64, bs->nrows, "");
  LLVMBuildStore(cx->b, nrows, cg_field_ptr(cx, cx->st.rowbuf, bs->buf, CG_ROWBUF_NROWS, ""));
}

