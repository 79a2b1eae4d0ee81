/*
 * format.c — prints result sets in the formats of format.h: aligned
 * columns (table, box, markdown), one line per cell (line), separated
 * values (csv as RFC 4180, list with '|', tabs) and JSON (one array per
 * result set, or JSON Lines). The names live in one table here, which
 * --format, .mode and the shell's completion all read.
 *
 * Doubles: every format but JSON prints them as SQLite does ("%!.15g",
 * so 2.0 shows as 2.0 and 0.1 as 0.1); JSON prints the shortest text that
 * reads back to the same double, keeping a ".0" on integral values so
 * they stay doubles. NULL is "NULL" where people read (table, box,
 * markdown, line), an empty field in csv, list and tabs, null in JSON.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "format.h"

const char *const cli_format_names[CLI_FORMAT_COUNT + 1] = {
    "table", "box", "markdown", "line", "csv", "json", "jsonl", "list", "tabs", NULL,
};

/* sqlite3's name of the layout `table` prints (sqlite3's own `table` is
 * our `box`), accepted so `.mode column` does what a sqlite3 user means. */
static const struct {
  const char *name;
  cli_format fmt;
} aliases[] = {{"column", CLI_TABLE}};

int cli_format_find(const char *name) {
  for (int i = 0; name && i < CLI_FORMAT_COUNT; i++)
    if (!strcmp(name, cli_format_names[i])) return i;
  for (size_t i = 0; name && i < sizeof aliases / sizeof *aliases; i++)
    if (!strcmp(name, aliases[i].name)) return (int)aliases[i].fmt;
  return -1;
}

const char *cli_format_choices(void) {
  static char buf[128];
  if (!buf[0]) {
    size_t n = 0;
    for (int i = 0; i < CLI_FORMAT_COUNT; i++)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? "|" : "", cli_format_names[i]);
  }
  return buf;
}

int cli_format_separated(cli_format fmt) { return fmt != CLI_JSONL; }

/* ---- cells ------------------------------------------------------------- */

static int is_number_type(pj_type t) { return t != PJ_TYPE_STRING; }

/* Formats a non-NULL, non-string cell into buf (SQLite's text of it). */
static const char *number_text(const pj_result *r, int64_t row, int col, char *buf, size_t n) {
  if (pj_result_column_type(r, col) == PJ_TYPE_DOUBLE)
    sqlite3_snprintf((int)n, buf, "%!.15g", pj_result_double(r, row, col));
  else sqlite3_snprintf((int)n, buf, "%lld", (long long)pj_result_int64(r, row, col));
  return buf;
}

/* Text of a cell for the text formats: NULL gives NULL. */
static const char *cell_text(const pj_result *r, int64_t row, int col, char *buf, size_t n,
                             size_t *len) {
  if (pj_result_is_null(r, row, col)) return NULL;
  if (pj_result_column_type(r, col) == PJ_TYPE_STRING) return pj_result_text(r, row, col, len);
  const char *s = number_text(r, row, col, buf, n);
  *len = strlen(s);
  return s;
}

static void pad(FILE *out, size_t n) {
  while (n--) fputc(' ', out);
}

static void repeat(FILE *out, const char *s, size_t n) {
  while (n--) fputs(s, out);
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

/* ---- aligned columns: table, box, markdown ------------------------------- */

/* Display width of byte i of s: UTF-8 code points count 1, continuation
 * bytes 0; in markdown '|' is written "\|" and a line break "<br>". */
static size_t units(cli_format fmt, unsigned char ch) {
  if ((ch & 0xC0) == 0x80) return 0;
  if (fmt == CLI_MARKDOWN && ch == '|') return 2;
  if (fmt == CLI_MARKDOWN && ch == '\n') return 4;
  return 1;
}

static size_t text_width(cli_format fmt, const char *s, size_t len) {
  size_t w = 0;
  for (size_t i = 0; i < len; i++) w += units(fmt, (unsigned char)s[i]);
  return w;
}

static void put_text(FILE *out, cli_format fmt, const char *s, size_t len) {
  if (fmt != CLI_MARKDOWN) {
    fwrite(s, 1, len, out);
    return;
  }
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '|') fputs("\\|", out);
    else if (s[i] == '\n') fputs("<br>", out);
    else fputc(s[i], out);
  }
}

typedef struct grid {
  cli_format fmt;
  int nc;
  size_t *w;   /* display width of each column */
  char *right; /* right aligned */
  char *cut;   /* a width from .width: longer values are cut */
} grid;

/* Writes one cell padded to its column (no padding after a left-aligned
 * last column of a table: lines carry no trailing blanks). A value wider
 * than a .width is cut to width-1 characters and "…". */
static void put_cell(FILE *out, const grid *g, int c, const char *s, size_t len) {
  size_t w = g->w[c], tw = text_width(g->fmt, s, len);
  if (tw > w && g->cut[c]) {
    size_t keep = 0, kw = 0;
    while (keep < len) {
      size_t u = units(g->fmt, (unsigned char)s[keep]);
      if (kw + u + 1 > w && u) break;
      kw += u;
      keep++;
    }
    while (keep < len && ((unsigned char)s[keep] & 0xC0) == 0x80) keep++;
    if (g->right[c]) pad(out, w - kw - (w > 0));
    put_text(out, g->fmt, s, keep);
    if (w > 0) fputs("\xe2\x80\xa6", out);
    if (!g->right[c] && (g->fmt != CLI_TABLE || c + 1 < g->nc)) pad(out, w - kw - (w > 0));
    return;
  }
  size_t fill = tw < w ? w - tw : 0;
  if (g->right[c]) pad(out, fill);
  put_text(out, g->fmt, s, len);
  if (!g->right[c] && (g->fmt != CLI_TABLE || c + 1 < g->nc)) pad(out, fill);
}

/* Cell separators of a row and its ends. */
static void row_begin(FILE *out, cli_format fmt) {
  if (fmt == CLI_BOX) fputs("\xe2\x94\x82 ", out);   /* "│ " */
  else if (fmt == CLI_MARKDOWN) fputs("| ", out);
}

static void row_sep(FILE *out, cli_format fmt) {
  if (fmt == CLI_BOX) fputs(" \xe2\x94\x82 ", out);
  else if (fmt == CLI_MARKDOWN) fputs(" | ", out);
  else fputs("  ", out);
}

static void row_end(FILE *out, cli_format fmt) {
  if (fmt == CLI_BOX) fputs(" \xe2\x94\x82", out);
  else if (fmt == CLI_MARKDOWN) fputs(" |", out);
  fputc('\n', out);
}

/* A rule across the table: box's top ("┌─┬─┐"), middle and bottom,
 * markdown's header line ("|---|--:|"), table's dashes. */
enum { RULE_TOP, RULE_MID, RULE_BOTTOM };

static void rule(FILE *out, const grid *g, int which) {
  if (g->fmt == CLI_TABLE) {
    for (int c = 0; c < g->nc; c++) {
      if (c) fputs("  ", out);
      repeat(out, "-", g->w[c]);
    }
  } else if (g->fmt == CLI_MARKDOWN) {
    fputc('|', out);
    for (int c = 0; c < g->nc; c++) {
      repeat(out, "-", g->w[c] + 1);
      fputs(g->right[c] ? ":|" : "-|", out);
    }
  } else {
    static const char *const ends[3][3] = {
        {"\xe2\x94\x8c", "\xe2\x94\xac", "\xe2\x94\x90"},   /* ┌ ┬ ┐ */
        {"\xe2\x94\x9c", "\xe2\x94\xbc", "\xe2\x94\xa4"},   /* ├ ┼ ┤ */
        {"\xe2\x94\x94", "\xe2\x94\xb4", "\xe2\x94\x98"},   /* └ ┴ ┘ */
    };
    fputs(ends[which][0], out);
    for (int c = 0; c < g->nc; c++) {
      if (c) fputs(ends[which][1], out);
      repeat(out, "\xe2\x94\x80", g->w[c] + 2);   /* ─ */
    }
    fputs(ends[which][2], out);
  }
  fputc('\n', out);
}

static int print_grid(FILE *out, const pj_result *r, cli_format fmt, const cli_style *st,
                      poll *pl) {
  int nc = pj_result_column_count(r);
  int64_t nr = pj_result_row_count(r);
  int headers = !st->headers_off || fmt == CLI_MARKDOWN;   /* markdown needs its header */
  grid g = {fmt, nc, calloc((size_t)nc + 1, sizeof *g.w), calloc((size_t)nc + 1, 1),
            calloc((size_t)nc + 1, 1)};
  char buf[64];
  int rc = 0;
  if (!g.w || !g.right || !g.cut) goto done;
  for (int c = 0; c < nc; c++) {
    int set = c < st->nwidths ? st->widths[c] : 0;
    g.right[c] = set ? set < 0 : is_number_type(pj_result_column_type(r, c));
    if (set) {
      g.w[c] = (size_t)(set < 0 ? -(long)set : set);
      g.cut[c] = 1;
      continue;
    }
    const char *name = pj_result_column_name(r, c);
    g.w[c] = headers ? text_width(fmt, name, strlen(name)) : 0;
    if (fmt == CLI_MARKDOWN && g.w[c] < 1) g.w[c] = 1;
    for (int64_t i = 0; i < nr; i++) {
      if (stopped(pl)) {
        rc = 1;
        goto done;
      }
      size_t len = 0;
      const char *s = cell_text(r, i, c, buf, sizeof buf, &len);
      size_t cw = s ? text_width(fmt, s, len) : 4;
      if (cw > g.w[c]) g.w[c] = cw;
    }
  }
  if (fmt == CLI_BOX) rule(out, &g, RULE_TOP);
  if (headers) {
    row_begin(out, fmt);
    for (int c = 0; c < nc; c++) {
      const char *name = pj_result_column_name(r, c);
      if (c) row_sep(out, fmt);
      put_cell(out, &g, c, name, strlen(name));
    }
    row_end(out, fmt);
    rule(out, &g, RULE_MID);
  }
  for (int64_t i = 0; i < nr; i++) {
    row_begin(out, fmt);
    for (int c = 0; c < nc; c++) {
      if (stopped(pl)) {
        rc = 1;
        goto done;
      }
      size_t len = 0;
      const char *s = cell_text(r, i, c, buf, sizeof buf, &len);
      if (!s) s = "NULL", len = 4;
      if (c) row_sep(out, fmt);
      put_cell(out, &g, c, s, len);
    }
    row_end(out, fmt);
  }
  if (fmt == CLI_BOX) rule(out, &g, RULE_BOTTOM);
done:
  free(g.w);
  free(g.right);
  free(g.cut);
  return rc;
}

/* ---- line --------------------------------------------------------------- */

/* sqlite3's line mode: "name = value" with the names right-aligned, a
 * blank line between rows. */
static int print_line(FILE *out, const pj_result *r, poll *pl) {
  int nc = pj_result_column_count(r);
  int64_t nr = pj_result_row_count(r);
  size_t nw = 0;
  char buf[64];
  for (int c = 0; c < nc; c++) {
    const char *name = pj_result_column_name(r, c);
    size_t w = text_width(CLI_LINE, name, strlen(name));
    if (w > nw) nw = w;
  }
  for (int64_t i = 0; i < nr; i++) {
    if (i) fputc('\n', out);
    for (int c = 0; c < nc; c++) {
      if (stopped(pl)) return 1;
      const char *name = pj_result_column_name(r, c);
      size_t len = 0;
      const char *s = cell_text(r, i, c, buf, sizeof buf, &len);
      if (!s) s = "NULL", len = 4;
      pad(out, nw - text_width(CLI_LINE, name, strlen(name)));
      fprintf(out, "%s = ", name);
      fwrite(s, 1, len, out);
      fputc('\n', out);
    }
  }
  return 0;
}

/* ---- separated values: csv, list, tabs ---------------------------------- */

/* RFC 4180: a field with a comma, quote, CR or LF is quoted with quotes
 * doubled; an empty string is quoted so it differs from NULL (an empty
 * unquoted field). list and tabs write fields as they are. */
static void sv_field(FILE *out, cli_format fmt, const char *s, size_t len) {
  if (!s) return;
  int quote = fmt == CLI_CSV && len == 0;
  for (size_t i = 0; fmt == CLI_CSV && i < len && !quote; i++)
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

static int print_separated(FILE *out, const pj_result *r, cli_format fmt, const cli_style *st,
                           poll *pl) {
  int nc = pj_result_column_count(r);
  int64_t nr = pj_result_row_count(r);
  char sep = fmt == CLI_CSV ? ',' : fmt == CLI_TABS ? '\t' : '|';
  char buf[64];
  if (!st->headers_off) {
    for (int c = 0; c < nc; c++) {
      if (c) fputc(sep, out);
      const char *name = pj_result_column_name(r, c);
      sv_field(out, fmt, name, strlen(name));
    }
    fputc('\n', out);
  }
  for (int64_t i = 0; i < nr; i++) {
    for (int c = 0; c < nc; c++) {
      if (stopped(pl)) return 1;
      if (c) fputc(sep, out);
      size_t len = 0;
      const char *s = cell_text(r, i, c, buf, sizeof buf, &len);
      sv_field(out, fmt, s, len);
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

/* One row as a JSON object: {"name": value, …}. */
static int json_object(FILE *out, const pj_result *r, int64_t i, poll *pl) {
  int nc = pj_result_column_count(r);
  fputc('{', out);
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
  return 0;
}

/* json: one document per result set, an array of row objects; jsonl: a
 * line per row object and nothing else. */
static int print_json(FILE *out, const pj_result *r, cli_format fmt, poll *pl) {
  int64_t nr = pj_result_row_count(r);
  if (fmt == CLI_JSON) fputc('[', out);
  for (int64_t i = 0; i < nr; i++) {
    if (fmt == CLI_JSON) fputs(i ? ",\n  " : "\n  ", out);
    if (json_object(out, r, i, pl)) return 1;
    if (fmt == CLI_JSONL) fputc('\n', out);
  }
  if (fmt == CLI_JSON) fputs(nr ? "\n]\n" : "]\n", out);
  return 0;
}

int cli_print_result(FILE *out, const pj_result *r, cli_format fmt, const cli_style *st,
                     const volatile sig_atomic_t *stop) {
  static const cli_style defaults;
  poll pl = {stop, 0};
  if (!st) st = &defaults;
  switch (fmt) {
  case CLI_TABLE:
  case CLI_BOX:
  case CLI_MARKDOWN: return print_grid(out, r, fmt, st, &pl);
  case CLI_LINE: return print_line(out, r, &pl);
  case CLI_CSV:
  case CLI_LIST:
  case CLI_TABS: return print_separated(out, r, fmt, st, &pl);
  case CLI_JSON:
  case CLI_JSONL: return print_json(out, r, fmt, &pl);
  case CLI_FORMAT_COUNT: break;
  }
  return print_grid(out, r, CLI_TABLE, st, &pl);
}
