/*
 * ptype.c — the type names of PerfettoSQL signatures and schemas
 * (LANGUAGE.md §7), and converting SQLite values to them.
 *
 * Every trace type (TIMESTAMP, DURATION, ARGSETID, ID, JOINID(t.c),
 * ID(t.c)) is a 64-bit integer, as in trace_processor; BOOL is an integer
 * 0 or 1. The table reference of JOINID/ID is not checked: it documents a
 * join, as it does in Perfetto.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "defs.h"

/* NAME(table.column) with a name before '.' and after it. */
static int is_ref_type(const char *text, const char *word) {
  size_t n = strlen(word);
  if (!rt_strnieq(text, word, n)) return 0;
  const char *p = text + n;
  while (*p == ' ') p++;
  if (*p++ != '(') return 0;
  const char *dot = strchr(p, '.'), *close = strchr(p, ')');
  if (!dot || !close || dot > close || dot == p || close == dot + 1) return 0;
  for (const char *q = close + 1; *q; q++)
    if (*q != ' ') return 0;
  return 1;
}

int pj__ptype_parse(const char *text, pj_ptype *out) {
  static const char *const ints[] = {"LONG", "INT", "INTEGER", "UINT32", "INT64", "BIGINT",
                                     "TIMESTAMP", "DURATION", "ARGSETID", "ID"};
  static const char *const reals[] = {"DOUBLE", "REAL", "FLOAT"};
  static const char *const strs[] = {"STRING", "TEXT"};
  memset(out, 0, sizeof *out);
  out->name = text;
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
    if (rt_strieq(text, ints[i])) return out->t = RT_I64, 1;
  for (size_t i = 0; i < sizeof reals / sizeof *reals; i++)
    if (rt_strieq(text, reals[i])) return out->t = RT_F64, 1;
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
    if (rt_strieq(text, strs[i])) return out->t = RT_STR, 1;
  if (rt_strieq(text, "BOOL") || rt_strieq(text, "BOOLEAN")) return out->t = RT_BOOL, 1;
  if (rt_strieq(text, "BYTES")) return out->t = RT_STR, out->bytes = true, 1;
  if (is_ref_type(text, "JOINID") || is_ref_type(text, "ID")) return out->t = RT_I64, 1;
  return 0;
}

const char *pj__ptype_class_name(rt_type t) {
  switch (t) {
  case RT_F64: return "DOUBLE";
  case RT_STR: return "STRING";
  case RT_BOOL: return "BOOL";
  default: return "LONG";
  }
}

bool pj__ptype_fits(const pj_ptype *want, rt_type have) {
  if (have == RT_NULLT) return true;
  if (want->t == RT_F64) return have == RT_F64;
  if (want->t == RT_STR) return have == RT_STR;
  return rt_type_is_int(have);
}

/* A whole number that fits int64 (so the conversion loses nothing). */
static int whole(double d, int64_t *out) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d)) return 0;
  *out = (int64_t)d;
  return 1;
}

static int text_number(const char *s, int n, pj_cval *out) {
  char buf[64];
  while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n')) s++, n--;
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n')) n--;
  if (n <= 0 || n >= (int)sizeof buf) return 0;
  memcpy(buf, s, (size_t)n);
  buf[n] = 0;
  char *end;
  long long i = strtoll(buf, &end, 10);
  if (*end == 0) {
    out->kind = SQLITE_INTEGER;
    out->i = i;
    return 1;
  }
  double d = strtod(buf, &end);
  if (*end || isnan(d)) return 0;
  out->kind = SQLITE_FLOAT;
  out->f = d;
  return 1;
}

static int refuse(const pj_ptype *t, sqlite3_value *v, char *why, size_t whylen) {
  const unsigned char *s = sqlite3_value_text(v);
  if (sqlite3_value_type(v) == SQLITE_BLOB)
    snprintf(why, whylen, "expected %s, but got a blob", t->name);
  else
    snprintf(why, whylen, "expected %s, but got '%.40s'", t->name, s ? (const char *)s : "");
  return 0;
}

int pj__convert_value(sqlite3_value *v, const pj_ptype *t, pj_cval *out, char *why,
                      size_t whylen) {
  memset(out, 0, sizeof *out);
  int kind = sqlite3_value_type(v);
  if (kind == SQLITE_NULL) return out->kind = SQLITE_NULL, 1;
  if (t->bytes || t->t == RT_STR) {
    if (kind == SQLITE_BLOB && !t->bytes) return refuse(t, v, why, whylen);
    out->kind = t->bytes ? SQLITE_BLOB : SQLITE_TEXT;
    if (kind == SQLITE_INTEGER || kind == SQLITE_FLOAT) {
      /* as SQLite prints it (CAST(x AS TEXT)) */
      const unsigned char *s = sqlite3_value_text(v);
      snprintf(out->buf, sizeof out->buf, "%s", s ? (const char *)s : "");
      out->s = out->buf;
      out->n = (int)strlen(out->buf);
      return 1;
    }
    out->s = t->bytes && kind == SQLITE_BLOB ? (const char *)sqlite3_value_blob(v)
                                             : (const char *)sqlite3_value_text(v);
    out->n = sqlite3_value_bytes(v);
    if (!out->s) out->s = "";
    return 1;
  }
  pj_cval num = {0};
  if (kind == SQLITE_INTEGER) num.kind = SQLITE_INTEGER, num.i = sqlite3_value_int64(v);
  else if (kind == SQLITE_FLOAT) num.kind = SQLITE_FLOAT, num.f = sqlite3_value_double(v);
  else if (kind != SQLITE_TEXT ||
           !text_number((const char *)sqlite3_value_text(v), sqlite3_value_bytes(v), &num))
    return refuse(t, v, why, whylen);
  if (t->t == RT_F64) {
    out->kind = SQLITE_FLOAT;
    out->f = num.kind == SQLITE_FLOAT ? num.f : (double)num.i;
    return 1;
  }
  out->kind = SQLITE_INTEGER;
  if (num.kind == SQLITE_FLOAT && !whole(num.f, &num.i)) return refuse(t, v, why, whylen);
  out->i = t->t == RT_BOOL ? num.i != 0 : num.i;
  return 1;
}

void pj__result_cval(sqlite3_context *ctx, const pj_cval *v) {
  switch (v->kind) {
  case SQLITE_INTEGER: sqlite3_result_int64(ctx, v->i); break;
  case SQLITE_FLOAT: sqlite3_result_double(ctx, v->f); break;
  case SQLITE_TEXT: sqlite3_result_text(ctx, v->s, v->n, SQLITE_TRANSIENT); break;
  case SQLITE_BLOB: sqlite3_result_blob(ctx, v->s, v->n, SQLITE_TRANSIENT); break;
  default: sqlite3_result_null(ctx); break;
  }
}
