/*
 * cg_runtime.c — the C functions generated code calls, in one table: the
 * runtime's (row buffers, aggregation table, string pool, string
 * functions, tree numbering), the interpreter's batch function (the fallback when a batch
 * does not look like what the code was compiled for), and the two small
 * helpers below that exist only for generated code. jit.c exposes every
 * entry to the JIT as an absolute symbol; emit.c declares them in a module
 * on first use from the signature string.
 */
#include "../runtime/strfn.h"
#include "emit.h"
#include "interp/vm.h"

int cg_rt_fail(ex_seg *s, int code) {
  const ir_segment *seg = s->seg;
  int step = code / CG_ERR_KINDS;
  const ir_op *op = step < seg->nsteps ? seg->steps[step] : seg->sink;
  const char *stage = op && op->stage ? op->stage : "RUN";
  int kind = code % CG_ERR_KINDS;
  if (kind == CG_ERR_RUNTIME) {
    /* the runtime function that failed has written its own message */
    if (!s->run->err.set) rt_errorf(&s->run->err, op ? op->pos : -1, "%s: internal error", stage);
    return -1;
  }
  /* An error already set comes from a runtime call of a later step in
   * this batch (only CG_ERR_RUNTIME steps set one while the loop runs);
   * the interpreter, running step by step, would have stopped at this
   * earlier step first, so its error wins. */
  s->run->err.set = 0;
  switch (kind) {
  case CG_ERR_TREE_NODE:
    rt_errorf(&s->run->err, op ? op->pos : -1, "%s: internal error: a node number is out of range",
              stage);
    break;
  case CG_ERR_NOMEM:
    rt_errorf(&s->run->err, op ? op->pos : -1, "%s: out of memory", stage);
    break;
  case CG_ERR_STRING:
    rt_errorf(&s->run->err, op ? op->pos : -1, "%s: %s", stage, rt_strpool_error(s->run->strings));
    break;
  case CG_ERR_OVERFLOW:
  default:
    rt_errorf(&s->run->err, op ? op->pos : -1, "%s: integer overflow", stage);
    break;
  }
  return -1;
}

int cg_rt_treenum_row(rt_treenum *t, int64_t id, int32_t idnull, int64_t parent, int32_t pnull,
                      uint32_t *node, uint32_t *pnode) {
  return rt_treenum_row(t, id, idnull != 0, parent, pnull != 0, node, pnode);
}

rt_jointab *cg_rt_join_tab(ex_seg *s, int32_t build_op) {
  return build_op >= 0 && build_op < s->run->plan->nops && s->run->joins ? s->run->joins[build_op] : NULL;
}

int cg_rt_treenum_batch(rt_treenum *t, const rt_batch *b, int32_t idcol, int32_t pcol) {
  return rt_treenum_batch(t, &b->cols[idcol], &b->cols[pcol], b->active, b->nactive);
}

#define FN(name, sig) {#name, sig, (void *)&name}
const cg_rtfn cg_rtfns[] = {
    FN(cg_rt_fail, "i:pi"),
    FN(vm_run_batch, "i:pp"),
    FN(ex_callout, "l:piplp"),
    FN(cg_rt_treenum_row, "i:plilipp"),
    FN(cg_rt_treenum_batch, "i:ppii"),
    FN(rt_rowbuf_reserve, "v:pl"),
    FN(cg_rt_join_tab, "p:pi"),
    FN(rt_jointab_find, "i:pp"),
    FN(rt_jointab_gcache, "p:p"),
    FN(rt_jointab_memo, "p:pl"),
    FN(rt_aggtab_insert_i64, "l:pll"),
    FN(rt_aggtab_group_null, "l:p"),
    FN(rt_aggtab_group, "l:ppp"),
    FN(rt_aggtab_insert_tuple, "l:pppl"),
    FN(rt_aggtab_ensure_one, "v:p"),
    FN(rt_aggtab_refold, "v:pl"),
    FN(rt_agg_add, "i:pillili"),
    FN(rt_str_cmp, "i:pii"),
    FN(rt_fn_like, "i:pii"),
    FN(rt_fn_like_esc, "i:piii"),
    FN(rt_fn_glob, "i:pii"),
    FN(rt_fn_lower, "i:pi"),
    FN(rt_fn_upper, "i:pi"),
    FN(rt_fn_length, "l:pi"),
    FN(rt_fn_substr2, "i:pil"),
    FN(rt_fn_substr3, "i:pill"),
    FN(rt_fn_instr, "l:pii"),
    FN(rt_fn_trim, "i:pii"),
    FN(rt_fn_trim_set, "i:piii"),
    FN(rt_fn_concat, "i:pii"),
    FN(rt_fn_i64_to_str, "i:pl"),
    FN(rt_fn_f64_to_str, "i:pd"),
    FN(rt_fn_str_to_i64, "l:pi"),
    FN(rt_fn_str_to_f64, "d:pi"),
    FN(rt_fn_f64_to_i64, "l:d"),
    FN(rt_fn_round, "d:dl"),
    FN(rt_fn_sign, "l:d"),
    FN(rt_fn_replace, "i:piii"),
    FN(rt_fn_hex, "i:pi"),
    FN(rt_fn_unicode, "l:pi"),
    FN(rt_fn_char, "i:pl"),
    FN(rt_fn_printf, "i:pipi"),
    FN(rt_fn_shl, "l:ll"),
    FN(rt_fn_shr, "l:ll"),
};
#undef FN
const int cg_nrtfns = (int)(sizeof cg_rtfns / sizeof cg_rtfns[0]);
