/*
 * rowdiff.h — what the randomized tests that check pipejit against a
 * reference (SQLite, a brute force) share: a seeded splitmix64 generator,
 * growing text buffers, and result rows as text compared in order or as
 * sorted lists. Header-only (static inline): each test is its own
 * executable and takes what it uses.
 *
 * Cells print as: N (NULL), integers by value, doubles by value too (so 3
 * and 3.0 agree), strings quoted; each followed by '|'.
 */
#ifndef PJ_TEST_ROWDIFF_H
#define PJ_TEST_ROWDIFF_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "pipejit.h"

/* ---- deterministic random numbers (splitmix64; seed g_rng) --------------- */

static uint64_t g_rng;
static inline uint64_t next_u64(void) {
  uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline int rnd(int n) { return (int)(next_u64() % (uint64_t)n); }
static inline int chance(int percent) { return rnd(100) < percent; }

/* ---- text buffers -------------------------------------------------------- */

typedef struct buf {
  char *s;
  size_t n, cap;
} buf;

static inline void bprintf(buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->n + (size_t)n + 1 > b->cap) {
    b->cap = (b->n + (size_t)n + 1) * 2;
    b->s = realloc(b->s, b->cap);
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}

static inline char *bdone(buf *b) { return b->s ? b->s : strdup(""); }

/* ---- rows as text --------------------------------------------------------- */

typedef struct rows {
  int n, cap;
  char **r;
  int ncols;
  char names[512];   /* "a,b," from sql_rows / result_rows */
} rows;

static inline void rows_free(rows *r) {
  for (int i = 0; i < r->n; i++) free(r->r[i]);
  free(r->r);
  memset(r, 0, sizeof *r);
}

/* Doubling: a join's reference can have most of a million rows, and a
 * realloc per row copies them all each time under ASan. */
static inline void rows_add(rows *r, char *s) {
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->r = realloc(r->r, sizeof *r->r * (size_t)r->cap);
  }
  r->r[r->n++] = s;
}

static inline void cell_num(buf *b, double f) {
  if (f == floor(f) && fabs(f) < 1e15) bprintf(b, "%lld|", (long long)f);
  else bprintf(b, "%.17g|", f);
}

/* Cell c of row i of a pipejit result. */
static inline void result_cell(buf *b, const pj_result *r, int64_t i, int c) {
  if (pj_result_is_null(r, i, c)) bprintf(b, "N|");
  else if (pj_result_column_type(r, c) == PJ_TYPE_STRING) bprintf(b, "'%s'|", pj_result_text(r, i, c, NULL));
  else if (pj_result_column_type(r, c) == PJ_TYPE_DOUBLE) cell_num(b, pj_result_double(r, i, c));
  else bprintf(b, "%lld|", (long long)pj_result_int64(r, i, c));
}

/* The reference's rows (the test fails when the SQL does). */
static inline void sql_rows(sqlite3 *db, const char *sql, rows *out) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    fail_msg("reference SQL does not prepare: %s\n%s", sqlite3_errmsg(db), sql);
  out->ncols = sqlite3_column_count(st);
  size_t pos = 0;
  for (int c = 0; c < out->ncols; c++)
    pos += (size_t)snprintf(out->names + pos, sizeof out->names - pos, "%s,", sqlite3_column_name(st, c));
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    buf b = {0};
    for (int c = 0; c < out->ncols; c++) {
      switch (sqlite3_column_type(st, c)) {
      case SQLITE_NULL: bprintf(&b, "N|"); break;
      case SQLITE_INTEGER: bprintf(&b, "%lld|", (long long)sqlite3_column_int64(st, c)); break;
      case SQLITE_FLOAT: cell_num(&b, sqlite3_column_double(st, c)); break;
      default: bprintf(&b, "'%s'|", (const char *)sqlite3_column_text(st, c)); break;
      }
    }
    rows_add(out, bdone(&b));
  }
  if (rc != SQLITE_DONE) fail_msg("reference SQL fails: %s\n%s", sqlite3_errmsg(db), sql);
  sqlite3_finalize(st);
}

static inline void result_rows(const pj_result *r, rows *out) {
  out->ncols = pj_result_column_count(r);
  size_t pos = 0;
  for (int c = 0; c < out->ncols; c++)
    pos += (size_t)snprintf(out->names + pos, sizeof out->names - pos, "%s,", pj_result_column_name(r, c));
  for (int64_t i = 0; i < pj_result_row_count(r); i++) {
    buf b = {0};
    for (int c = 0; c < out->ncols; c++) result_cell(&b, r, i, c);
    rows_add(out, bdone(&b));
  }
}

static inline int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* NULL when equal, else a description (malloc'd). Unordered: as sorted
 * lists (both are sorted in place); names: the column names too. */
static inline char *diff_rows(rows *want, rows *got, int ordered, int names) {
  buf b = {0};
  if (names && strcmp(want->names, got->names))
    bprintf(&b, "columns differ: reference %s vs pipejit %s\n", want->names, got->names);
  if (!ordered) {
    if (want->n) qsort(want->r, (size_t)want->n, sizeof *want->r, cmp_str);
    if (got->n) qsort(got->r, (size_t)got->n, sizeof *got->r, cmp_str);
  }
  if (want->n != got->n) bprintf(&b, "row counts differ: reference %d vs pipejit %d\n", want->n, got->n);
  int shown = 0;
  for (int i = 0; i < want->n && i < got->n && shown < 5; i++)
    if (strcmp(want->r[i], got->r[i])) {
      bprintf(&b, "row %d: reference %s vs pipejit %s\n", i, want->r[i], got->r[i]);
      shown++;
    }
  return b.s;
}

#endif
