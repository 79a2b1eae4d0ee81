/*
 * dot.c — the shell's dot-commands: .tables, .schema NAME, .mode,
 * .timing, .dump, .help, .quit. Tables and schemas come from SQLite's
 * catalog, where columnar tables appear as temp virtual tables, so both
 * kinds are listed alike.
 */
#include <string.h>

#include <sqlite3.h>

#include "shell.h"

static const char help_text[] =
    ".tables               list tables and views (columnar and SQLite)\n"
    ".schema NAME          the columns of a table or view\n"
    ".mode table|csv|json  result format\n"
    ".timing on|off        per-statement timings on standard error\n"
    ".dump plan|llvm|off   print each pipeline's plan or LLVM IR before its rows\n"
    ".help                 this list\n"
    ".quit                 leave (also .exit or Ctrl-D)\n"
    "Statements end with ';' and may span lines.\n";

/* Splits "cmd arg1 arg2" into at most 3 words (in place, in buf). */
static int split_words(char *buf, char **w, int max) {
  int n = 0;
  for (char *p = buf; *p && n < max;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) break;
    w[n++] = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
    if (*p) *p++ = 0;
  }
  return n;
}

static void list_tables(struct cli *c, FILE *out) {
  sqlite3 *db = pj_engine_sqlite(c->e);
  sqlite3_stmt *st = NULL;
  const char *sql = "SELECT name FROM sqlite_temp_schema WHERE type IN ('table','view') "
                    "UNION SELECT name FROM sqlite_schema WHERE type IN ('table','view') "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY 1";
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return;
  while (sqlite3_step(st) == SQLITE_ROW) fprintf(out, "%s\n", sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
}

/* Prints CREATE TABLE name(col TYPE, …) from the columns SQLite reports;
 * returns 0 when there is no such table or view. */
static int show_schema(struct cli *c, const char *name, FILE *out) {
  sqlite3 *db = pj_engine_sqlite(c->e);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "SELECT name, type FROM pragma_table_info(?1)", -1, &st, NULL) !=
      SQLITE_OK)
    return 0;
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *col = (const char *)sqlite3_column_text(st, 0);
    const char *type = (const char *)sqlite3_column_text(st, 1);
    if (n) fputs(",\n  ", out);
    else fprintf(out, "CREATE TABLE %s(\n  ", name);
    fputs(col ? col : "", out);
    if (type && *type) fprintf(out, " %s", type);
    n++;
  }
  sqlite3_finalize(st);
  if (n) fputs("\n);\n", out);
  return n > 0;
}

cli_dot_result cli_dot_command(struct cli *c, const char *line, FILE *out, FILE *err) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", line);
  char *w[3] = {0};
  int n = split_words(buf, w, 3);
  if (n == 0) return CLI_DOT_OK;
  const char *cmd = w[0], *arg = n > 1 ? w[1] : NULL;
  if (n > 2) {
    fprintf(err, "error: %s takes at most one argument\n", cmd);
    return CLI_DOT_ERROR;
  }
  if (!strcmp(cmd, ".quit") || !strcmp(cmd, ".exit")) return CLI_DOT_QUIT;
  if (!strcmp(cmd, ".help")) {
    fputs(help_text, out);
    return CLI_DOT_OK;
  }
  if (!strcmp(cmd, ".tables")) {
    list_tables(c, out);
    return CLI_DOT_OK;
  }
  if (!strcmp(cmd, ".schema")) {
    if (!arg) {
      fputs("error: usage: .schema NAME\n", err);
      return CLI_DOT_ERROR;
    }
    if (show_schema(c, arg, out)) return CLI_DOT_OK;
    fprintf(err, "error: no such table or view: %s\n", arg);
    return CLI_DOT_ERROR;
  }
  if (!strcmp(cmd, ".mode")) {
    static const char *const modes[] = {"table", "csv", "json"};
    if (!arg) {
      fprintf(out, "%s\n", modes[c->fmt]);
      return CLI_DOT_OK;
    }
    for (int i = 0; i < 3; i++)
      if (!strcmp(arg, modes[i])) {
        c->fmt = (cli_format)i;
        return CLI_DOT_OK;
      }
    fprintf(err, "error: usage: .mode table|csv|json\n");
    return CLI_DOT_ERROR;
  }
  if (!strcmp(cmd, ".timing")) {
    if (arg && (!strcmp(arg, "on") || !strcmp(arg, "off"))) {
      c->timing = !strcmp(arg, "on");
      return CLI_DOT_OK;
    }
    fputs("error: usage: .timing on|off\n", err);
    return CLI_DOT_ERROR;
  }
  if (!strcmp(cmd, ".dump")) {
    static const char *const dumps[] = {"plan", "llvm", "llvm-raw", "asm"};
    if (arg && !strcmp(arg, "off")) {
      c->dump = NULL;
      return CLI_DOT_OK;
    }
    for (int i = 0; arg && i < 4; i++)
      if (!strcmp(arg, dumps[i])) {
        c->dump = dumps[i];   /* static storage: outlives the line */
        return CLI_DOT_OK;
      }
    fputs("error: usage: .dump plan|llvm|llvm-raw|asm|off\n", err);
    return CLI_DOT_ERROR;
  }
  fprintf(err, "error: unknown command %s (see .help)\n", cmd);
  return CLI_DOT_ERROR;
}
