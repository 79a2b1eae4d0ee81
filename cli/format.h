/*
 * format.h — the tool's result formats (format.c): one enum and one table
 * of names, read by --format (main.c), .mode (dot.c), the shell's
 * completion (complete.c) and the printers.
 */
#ifndef PJ_CLI_FORMAT_H
#define PJ_CLI_FORMAT_H

#include <signal.h>
#include <stdio.h>

#include "pipejit.h"

/* In the order of cli_format_names. */
typedef enum cli_format {
  CLI_TABLE,      /* aligned columns under a dashed rule (the default) */
  CLI_BOX,        /* aligned columns in Unicode box-drawing lines */
  CLI_MARKDOWN,   /* a GitHub markdown table */
  CLI_LINE,       /* one "column = value" line per cell, rows apart */
  CLI_CSV,        /* RFC 4180 */
  CLI_JSON,       /* one JSON array of objects per result set */
  CLI_JSONL,      /* JSON Lines: one object per row */
  CLI_LIST,       /* cells separated by '|' */
  CLI_TABS,       /* cells separated by tabs */
  CLI_FORMAT_COUNT
} cli_format;

/* Names by cli_format ("table", "box", …), NULL-terminated. */
extern const char *const cli_format_names[CLI_FORMAT_COUNT + 1];

/* The format of a name (or of "column", sqlite3's name for table), or -1. */
int cli_format_find(const char *name);

/* "table|box|markdown|…", for usage lines and errors. */
const char *cli_format_choices(void);

/* What .headers and .width change; all zero is the default (headers on,
 * widths from the data). widths[i] is column i's width in characters
 * (table, box, markdown): 0 = from the data, negative = that width, right
 * aligned. Longer values are cut and end in "…". */
typedef struct cli_style {
  int headers_off;
  int nwidths;
  int *widths;   /* owned by whoever filled it (dot.c: malloc'd) */
} cli_style;

/* 1 when result sets in this format are set apart by a blank line (not
 * in JSON Lines, whose every line is a JSON value). */
int cli_format_separated(cli_format fmt);

/* Prints one result set in the given format (no separating blank line:
 * the caller prints those between result sets, see cli_format_separated).
 * st may be NULL (the defaults). Time is linear in the cells. `stop`
 * (may be NULL) is polled every 256 cells: once it is set, printing ends
 * where it is (Ctrl-C and --timeout stop the printing of a huge result
 * too) and 1 is returned; else 0. */
int cli_print_result(FILE *out, const pj_result *r, cli_format fmt, const cli_style *st,
                     const volatile sig_atomic_t *stop);

#endif
