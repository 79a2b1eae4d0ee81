/*
 * affinity.c — the type a SQLite declared type stands for (sqlsrc.h): one
 * reading of SQLite's affinity rules for every place that meets a type
 * name (SQLite sources, SQL results, loaded tables, CAST).
 */
#include <string.h>

#include "sqlsrc.h"

static int ci_contains(const char *s, const char *needle) {
  size_t n = strlen(needle);
  for (; *s; s++)
    if (rt_strnieq(s, needle, n)) return 1;
  return 0;
}

rt_affinity rt_sql_affinity(const char *decl) {
  if (!decl) return RT_AFF_BLOB;
  if (ci_contains(decl, "INT")) return RT_AFF_INTEGER;
  if (ci_contains(decl, "CHAR") || ci_contains(decl, "CLOB") || ci_contains(decl, "TEXT"))
    return RT_AFF_TEXT;
  if (!*decl || ci_contains(decl, "BLOB")) return RT_AFF_BLOB;
  if (ci_contains(decl, "REAL") || ci_contains(decl, "FLOA") || ci_contains(decl, "DOUB"))
    return RT_AFF_REAL;
  return RT_AFF_NUMERIC;
}

rt_type rt_sql_decl_type(const char *decl) {
  rt_affinity a = rt_sql_affinity(decl);
  if (a == RT_AFF_INTEGER) return RT_I64;
  /* STRING ranks with the text words, before BLOB and REAL. */
  if (a == RT_AFF_TEXT || (decl && ci_contains(decl, "STRING"))) return RT_STR;
  return a == RT_AFF_REAL ? RT_F64 : RT_NULLT;
}
