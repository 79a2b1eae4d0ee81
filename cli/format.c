/*
 * format.c — prints result sets as an aligned table (for people), CSV
 * (RFC 4180) or JSON (an array of objects).
 *
 * Doubles: table and CSV print them as SQLite does ("%!.15g", so 2.0 shows
 * as 2.0 and 0.1 as 0.1); JSON prints the shortest text that reads back to
 * the same double, keeping a ".0" on integral values so they stay doubles.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"

/* ---- cells ------------------------------------------------------------- */

static int is_number_type(pj_type t) { return t != PJ_TYPE_STRING; }

/* Formats a non-NULL, non-string cell into buf (SQLite's text of it). */
static const char *number_text(const pj_result *r, int64_t row, int col, char *buf, size_t n) {
  if (pj_result_column_type(r, col) == PJ_TYPE_DOUBLE)
    sqlite3_snprintf((int)n, buf, "%!.15g", pj_result_double(r, row, col));
  else sqlite3_snprintf((int)n, buf, "%lld", (long long)pj_result_int64(r, row, col));
  return buf;
}

/* Text of a cell for table and CSV output: NULL gives NULL. */
static const char *cell_text(const pj_result *r, int64_t row, int col, char *buf, size_t n,
                             size_t *len) {
  if (pj_result_is_null(r, row, col)) return NULL;
  if (pj_result_column_type(r, col) == PJ_TYPE_STRING) return pj_result_text(r, row, col, len);
  const char *s = number_text(r, row, col, buf, n);
  *len = strlen(s);
  return s;
}

/* Display width: UTF-8 code points. */
static size_t width(const char *s, size_t len) {
  size_t w = 0;
  for (size_t i = 0; i < len; i++) w += ((unsigned char)s[i] & 0xC0) != 0x80;
  return w;
}

static void pad(FILE *out, size_t n) {
  while (n--) fputc(' ', out);
}

/* True when printing must end: polled once per 256 cells. */
typedef struct poll {
  const volatile sig_atomic_t *stop;
  unsigned cells;
} poll;

static int stopped(poll *p) {
  if ((p->cells++ & 255) != 0) return 0;
  return p->stop && *p->stop;
}

/* ---- table -------------------------------------------------------------- */

static int print_table(FILE *out, const pj_result *r, poll *pl) {
  int nc = pj_result_column_count(r);
  int64_t nr = pj_result_row_count(r);
  size_t *w = calloc((size_t)nc + 1, sizeof *w);
  char buf[64];
  if (!w) return 0;
  for (int c = 0; c < nc; c++) {
    const char *name = pj_result_column_name(r, c);
    w[c] = width(name, strlen(name));
    for (int64_t i = 0; i < nr; i++) {
      if (stopped(pl)) {
        free(w);
        return 1;
      }
      size_t len = 0;
      const char *s = cell_text(r, i, c, buf, sizeof buf, &len);
      size_t cw = s ? width(s, len) : 4;
      if (cw > w[c]) w[c] = cw;
    }
  }
  /* Numbers align right, everything else left; the last column is not
   * padded on the right, so lines carry no trailing blanks. */
  for (int c = 0; c < nc; c++) {
    const char *name = pj_result_column_name(r, c);
    size_t nw = width(name, strlen(name));
    int right = is_number_type(pj_result_column_type(r, c));
    if (c) fputs("  ", out);
    if (right) pad(out, w[c] - nw);
    fputs(name, out);
    if (!right && c + 1 < nc) pad(out, w[c] - nw);
  }
  fputc('\n', out);
  for (int c = 0; c < nc; c++) {
    if (c) fputs("  ", out);
    for (size_t k = 0; k < w[c]; k++) fputc('-', out);
  }
  fputc('\n', out);
  for (int64_t i = 0; i < nr; i++) {
    for (int c = 0; c < nc; c++) {
      if (stopped(pl)) {
        free(w);
        return 1;
      }
      size_t len = 0;
      const char *s = cell_text(r, i, c, buf, sizeof buf, &len);
      if (!s) s = "NULL", len = 4;
      size_t cw = width(s, len);
      int right = is_number_type(pj_result_column_type(r, c));
      if (c) fputs("  ", out);
      if (right) pad(out, w[c] - cw);
      fwrite(s, 1, len, out);
      if (!right && c + 1 < nc) pad(out, w[c] - cw);
    }
    fputc('\n', out);
  }
  free(w);
  return 0;
}

/* ---- CSV ---------------------------------------------------------------- */

/* RFC 4180: a field with a comma, quote, CR or LF is quoted with quotes
 * doubled; an empty string is quoted so it differs from NULL (an empty
 * unquoted field). */
static void csv_field(FILE *out, const char *s, size_t len) {
  if (!s) return;
  int quote = len == 0;
  for (size_t i = 0; i < len && !quote; i++)
    quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
  if (!quote) {
    fwrite(s, 1, len, out);
    return;
  }
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '"') fputc('"', out);
    fputc(s[i], out);
  }
  fputc('"', out);
}

static int print_csv(FILE *out, const pj_result *r, poll *pl) {
  int nc = pj_result_column_count(r);
  int64_t nr = pj_result_row_count(r);
  char buf[64];
  for (int c = 0; c < nc; c++) {
    if (c) fputc(',', out);
    const char *name = pj_result_column_name(r, c);
    csv_field(out, name, strlen(name));
  }
  fputc('\n', out);
  for (int64_t i = 0; i < nr; i++) {
    for (int c = 0; c < nc; c++) {
      if (stopped(pl)) return 1;
      if (c) fputc(',', out);
      size_t len = 0;
      const char *s = cell_text(r, i, c, buf, sizeof buf, &len);
      csv_field(out, s, len);
    }
    fputc('\n', out);
  }
  return 0;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_string(FILE *out, const char *s, size_t len) {
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)s[i];
    switch (ch) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\b': fputs("\\b", out); break;
    case '\f': fputs("\\f", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
      if (ch < 0x20) fprintf(out, "\\u%04x", ch);
      else fputc(ch, out);
    }
  }
  fputc('"', out);
}

/* The shortest of %.15g/%.16g/%.17g that reads back as d; integral values
 * keep a ".0" so readers see a double. JSON has no NaN or infinity: null. */
static void json_double(FILE *out, double d) {
  if (!isfinite(d)) {
    fputs("null", out);
    return;
  }
  char buf[40];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (strtod(buf, NULL) == d) break;
  }
  fputs(buf, out);
  if (!strpbrk(buf, ".eE")) fputs(".0", out);
}

static int print_json(FILE *out, const pj_result *r, poll *pl) {
  int nc = pj_result_column_count(r);
  int64_t nr = pj_result_row_count(r);
  fputc('[', out);
  for (int64_t i = 0; i < nr; i++) {
    fputs(i ? ",\n  {" : "\n  {", out);
    for (int c = 0; c < nc; c++) {
      if (stopped(pl)) return 1;
      if (c) fputs(", ", out);
      const char *name = pj_result_column_name(r, c);
      json_string(out, name, strlen(name));
      fputs(": ", out);
      pj_type t = pj_result_column_type(r, c);
      if (pj_result_is_null(r, i, c)) fputs("null", out);
      else if (t == PJ_TYPE_STRING) {
        size_t len = 0;
        const char *s = pj_result_text(r, i, c, &len);
        json_string(out, s, len);
      } else if (t == PJ_TYPE_DOUBLE) json_double(out, pj_result_double(r, i, c));
      else fprintf(out, "%lld", (long long)pj_result_int64(r, i, c));
    }
    fputc('}', out);
  }
  fputs(nr ? "\n]\n" : "]\n", out);
  return 0;
}

int cli_print_result(FILE *out, const pj_result *r, cli_format fmt,
                     const volatile sig_atomic_t *stop) {
  poll pl = {stop, 0};
  switch (fmt) {
  case CLI_CSV: return print_csv(out, r, &pl);
  case CLI_JSON: return print_json(out, r, &pl);
  default: return print_table(out, r, &pl);
  }
}
