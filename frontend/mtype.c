/*
 * mtype.c — the names of the macro argument and return types of
 * LANGUAGE.md §7.3 (Expr, TableOrSubquery, ColumnName, Pipeline), read by
 * the parser of CREATE PERFETTO MACRO and named by the expander's errors.
 */
#include "ast.h"

static const char *const k_mtype_names[] = {
  [FE_MT_EXPR] = "Expr",
  [FE_MT_TABLE] = "TableOrSubquery",
  [FE_MT_COLUMN] = "ColumnName",
  [FE_MT_PIPELINE] = "Pipeline",
};

int fe_mtype_parse(const char *word, fe_mtype *out) {
  for (int i = 0; i <= FE_MT_PIPELINE; i++)
    if (rt_strieq(word, k_mtype_names[i])) return *out = (fe_mtype)i, 1;
  return 0;
}

const char *fe_mtype_name(fe_mtype t) { return k_mtype_names[t]; }
