/*
 * dot.c — the shell's dot-commands (.mode, .output, .param, …), one table
 * that the dispatcher, .help and the shell's completion (complete.c) all
 * read, so a command cannot exist without its help line or its argument
 * words. Commands may be abbreviated to any unique prefix (.h on for
 * .headers on), as sqlite3 allows. They print to `out`, which is
 * standard output in the shell and in scripts: .output and .once move
 * standard output itself (its descriptor), so results, dumps and
 * dot-command output all follow, as in sqlite3.
 *
 * Tables and schemas come from SQLite's catalog, where columnar tables
 * appear as temp virtual tables, so both kinds are listed alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "shell.h"

/* ---- arguments ---------------------------------------------------------- */

/* Splits a dot-command line into words (in place, in buf): blanks
 * separate them, '…' and "…" quote a word with blanks. raw[i] is where
 * word i starts in the line as typed (.param set keeps its value's
 * quotes). */
static int split_words(char *buf, const char *line, cli_dot_args *a) {
  a->n = 0;
  for (char *p = buf; *p && a->n < CLI_DOT_MAXARGS;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) break;
    a->raw[a->n] = line + (p - buf);
    if (*p == '\'' || *p == '"') {
      char q = *p++;
      a->w[a->n++] = p;
      while (*p && *p != q) p++;
    } else {
      a->w[a->n++] = p;
      while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
    }
    if (*p) *p++ = 0;
  }
  return a->n;
}

/* "on" / "off" (also 1/0, yes/no, true/false as sqlite3 takes): 1, 0, or
 * -1 with a message. */
static int on_off(const cli_dot_args *a, FILE *err) {
  static const char *const yes[] = {"on", "1", "yes", "true"}, *const no[] = {"off", "0", "no", "false"};
  for (int i = 0; i < 4; i++) {
    if (!strcmp(a->w[1], yes[i])) return 1;
    if (!strcmp(a->w[1], no[i])) return 0;
  }
  fprintf(err, "error: %s: expected on or off, not '%s'\n", a->w[0], a->w[1]);
  return -1;
}

/* ---- output redirection ------------------------------------------------- */

void cli_output_reset(struct cli *c) {
  if (!c->out_saved) return;
  fflush(stdout);
  dup2(c->out_saved - 1, 1);
  close(c->out_saved - 1);
  c->out_saved = 0;
  if (c->out_file) {
    if (c->out_pipe) pclose(c->out_file);
    else fclose(c->out_file);
  }
  c->out_file = NULL;
  c->out_pipe = c->out_once = 0;
  c->printed = 0;   /* no blank line before the first block on the terminal */
}

void cli_output_end_once(struct cli *c) {
  if (c->out_once) cli_output_reset(c);
}

/* Standard output to path ("|cmd": a command's input) until reset. */
static int output_to(struct cli *c, const char *path, int once, FILE *err) {
  cli_output_reset(c);
  int pipe = path[0] == '|';
  FILE *f = pipe ? popen(path + 1, "w") : fopen(path, "w");
  if (!f) {
    fprintf(err, "error: cannot open '%s': %s\n", path, strerror(errno));
    return 1;
  }
  fflush(stdout);
  int saved = dup(1);
  if (saved < 0 || dup2(fileno(f), 1) < 0) {
    fprintf(err, "error: cannot write to '%s': %s\n", path, strerror(errno));
    if (saved >= 0) close(saved);
    if (pipe) pclose(f);
    else fclose(f);
    return 1;
  }
  c->out_saved = saved + 1;
  c->printed = 0;   /* the file starts with its first block */
  c->out_file = f;
  c->out_pipe = pipe;
  c->out_once = once;
  return 0;
}

/* ---- the catalog -------------------------------------------------------- */

/* Tables and views of both schemas whose names match the LIKE pattern
 * (NULL: all), by name; columnar tables are temp virtual tables. The
 * engine's own helper tables (__pj_…) are left out. */
const char cli_catalog_sql[] =
    "SELECT name, type, sql, schema FROM ("
    " SELECT name, type, sql, 'temp' AS schema FROM sqlite_temp_schema"
    " UNION ALL SELECT name, type, sql, 'main' FROM sqlite_schema)"
    " WHERE type IN ('table','view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
    " AND name NOT LIKE '\\_\\_pj\\_%' ESCAPE '\\' AND (?1 IS NULL OR name LIKE ?1)"
    " ORDER BY name";

static sqlite3_stmt *catalog(struct cli *c, const char *pattern) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(pj_engine_sqlite(c->e), cli_catalog_sql, -1, &st, NULL) != SQLITE_OK)
    return NULL;
  if (pattern) sqlite3_bind_text(st, 1, pattern, -1, SQLITE_TRANSIENT);
  return st;
}

/* A columnar table (or any temp virtual table) has no SQL of its own to
 * show or replay: its columns stand in for it. */
static int is_virtual(const char *sql) {
  return sql && !sqlite3_strnicmp(sql, "CREATE VIRTUAL TABLE", 20);
}

/* CREATE TABLE name(col TYPE, …) from the columns SQLite reports. */
static int columns_ddl(struct cli *c, const char *name, FILE *out) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(pj_engine_sqlite(c->e), "SELECT name, type FROM pragma_table_info(?1)",
                         -1, &st, NULL) != SQLITE_OK)
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

/* ---- the commands ------------------------------------------------------- */

static cli_dot_result dot_quit(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  return CLI_DOT_QUIT;
}

static cli_dot_result dot_help(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  int shown = 0;
  for (int i = 0; i < cli_ndot_cmds; i++) {
    const cli_dot_cmd *d = &cli_dot_cmds[i];
    if (a->n > 1 && strcmp(d->name + 1, a->w[1] + (a->w[1][0] == '.'))) continue;
    char head[64];
    snprintf(head, sizeof head, "%s%s%s", d->name, d->args[0] ? " " : "", d->args);
    fprintf(out, "%-34s %s\n", head, cli_dot_help(d));
    shown++;
  }
  if (!shown) {
    fprintf(err, "error: .help: no command %s\n", a->w[1]);
    return CLI_DOT_ERROR;
  }
  if (a->n == 1)
    fputs("Statements end with ';' and may span lines; Ctrl-C clears the input or stops the\n"
          "running statement. A command may be shortened to a unique prefix (.h on).\n",
          out);
  return CLI_DOT_OK;
}

static cli_dot_result dot_tables(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  sqlite3_stmt *st = catalog(c, a->n > 1 ? a->w[1] : NULL);
  if (!st) return CLI_DOT_ERROR;
  while (sqlite3_step(st) == SQLITE_ROW) fprintf(out, "%s\n", sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return CLI_DOT_OK;
}

/* SQLite's own tables and views show their CREATE text, as in sqlite3;
 * columnar tables their columns. */
static cli_dot_result dot_schema(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  sqlite3_stmt *st = catalog(c, a->n > 1 ? a->w[1] : NULL);
  if (!st) return CLI_DOT_ERROR;
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    const char *sql = (const char *)sqlite3_column_text(st, 2);
    if (sql && !is_virtual(sql)) fprintf(out, "%s;\n", sql);
    else columns_ddl(c, name, out);
    n++;
  }
  sqlite3_finalize(st);
  if (!n && a->n > 1) {
    fprintf(err, "error: no such table or view: %s\n", a->w[1]);
    return CLI_DOT_ERROR;
  }
  return CLI_DOT_OK;
}

/* sqlite3's .dump: the database as SQL text that rebuilds it in sqlite3.
 * Columnar tables (the trace's, CREATE PERFETTO TABLE's) come out as
 * plain tables with their rows; main-schema views and indexes as their
 * CREATE text. PerfettoSQL views, functions and macros are not SQLite
 * objects and are not dumped (docs/DECISIONS.md). */
static cli_dot_result dot_dump(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  sqlite3 *db = pj_engine_sqlite(c->e);
  fputs("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n", out);
  int tables = 0, rc = 0;
  for (int k = 1; k < (a->n > 1 ? a->n : 2) && !rc; k++) {
    sqlite3_stmt *st = catalog(c, a->n > 1 ? a->w[k] : NULL);
    if (!st) return CLI_DOT_ERROR;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
      const char *name = (const char *)sqlite3_column_text(st, 0);
      const char *type = (const char *)sqlite3_column_text(st, 1);
      const char *sql = (const char *)sqlite3_column_text(st, 2);
      int temp = !strcmp((const char *)sqlite3_column_text(st, 3), "temp");
      if (!strcmp(type, "view")) {
        if (!temp && sql) fprintf(out, "%s;\n", sql);
        continue;
      }
      tables++;
      if (sql && !temp && !is_virtual(sql)) fprintf(out, "%s;\n", sql);
      else columns_ddl(c, name, out);
      /* SELECT 'INSERT INTO "t" VALUES(' || quote("a") || ',' || … || ');' */
      sqlite3_str *q = sqlite3_str_new(db);
      char *ident = sqlite3_mprintf("\"%w\"", name);
      sqlite3_str_appendf(q, "SELECT 'INSERT INTO %q VALUES(' ", ident ? ident : "");
      sqlite3_free(ident);
      sqlite3_stmt *cols = NULL;
      if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1)", -1, &cols, NULL) ==
          SQLITE_OK) {
        sqlite3_bind_text(cols, 1, name, -1, SQLITE_STATIC);
        for (int i = 0; sqlite3_step(cols) == SQLITE_ROW; i++)
          sqlite3_str_appendf(q, "%s|| quote(\"%w\") ", i ? "|| ',' " : "",
                              (const char *)sqlite3_column_text(cols, 0));
      }
      sqlite3_finalize(cols);
      sqlite3_str_appendf(q, "|| ');' FROM \"%w\"", name);
      char *sel = sqlite3_str_finish(q);
      sqlite3_stmt *rows = NULL;
      if (!sel || sqlite3_prepare_v2(db, sel, -1, &rows, NULL) != SQLITE_OK) {
        fprintf(err, "error: .dump %s: %s\n", name, sel ? sqlite3_errmsg(db) : "out of memory");
        rc = 1;
      }
      while (!rc && sqlite3_step(rows) == SQLITE_ROW) {
        fputs((const char *)sqlite3_column_text(rows, 0), out);
        fputc('\n', out);
      }
      sqlite3_finalize(rows);
      sqlite3_free(sel);
    }
    sqlite3_finalize(st);
  }
  /* Indexes and triggers of the main schema, after the rows. */
  sqlite3_stmt *st = NULL;
  if (!rc && sqlite3_prepare_v2(db,
                                "SELECT sql FROM sqlite_schema WHERE type IN ('index','trigger') "
                                "AND sql IS NOT NULL AND (?1 IS NULL OR tbl_name LIKE ?1)",
                                -1, &st, NULL) == SQLITE_OK) {
    for (int k = 1; k < (a->n > 1 ? a->n : 2); k++) {
      sqlite3_reset(st);
      if (a->n > 1) sqlite3_bind_text(st, 1, a->w[k], -1, SQLITE_STATIC);
      while (sqlite3_step(st) == SQLITE_ROW) fprintf(out, "%s;\n", sqlite3_column_text(st, 0));
    }
  }
  sqlite3_finalize(st);
  fputs(rc ? "ROLLBACK; -- an error stopped the dump\n" : "COMMIT;\n", out);
  if (!rc && !tables && a->n > 1) {
    fprintf(err, "error: .dump: no table matches %s\n", a->w[1]);
    return CLI_DOT_ERROR;
  }
  return rc ? CLI_DOT_ERROR : CLI_DOT_OK;
}

static cli_dot_result dot_mode(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  if (a->n == 1) {
    fprintf(out, "%s\n", cli_format_names[c->fmt]);
    return CLI_DOT_OK;
  }
  int f = cli_format_find(a->w[1]);
  if (f < 0) {
    fprintf(err, "error: .mode: no mode '%s' (%s)\n", a->w[1], cli_format_choices());
    return CLI_DOT_ERROR;
  }
  c->fmt = (cli_format)f;
  return CLI_DOT_OK;
}

static cli_dot_result dot_headers(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  int on = on_off(a, err);
  if (on < 0) return CLI_DOT_ERROR;
  c->style.headers_off = !on;
  return CLI_DOT_OK;
}

static cli_dot_result dot_width(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  int n = a->n - 1, *w = n ? calloc((size_t)n, sizeof *w) : NULL;
  if (n && !w) return CLI_DOT_ERROR;
  for (int i = 0; i < n; i++) {
    char *end;
    errno = 0;
    long v = strtol(a->w[i + 1], &end, 10);
    if (*end || end == a->w[i + 1] || errno || v < -10000 || v > 10000) {
      fprintf(err, "error: .width: '%s' is not a width (a whole number, negative to align right)\n",
              a->w[i + 1]);
      free(w);
      return CLI_DOT_ERROR;
    }
    w[i] = (int)v;
  }
  free(c->style.widths);
  c->style.widths = w;
  c->style.nwidths = n;
  return CLI_DOT_OK;
}

static cli_dot_result dot_timing(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  int on = on_off(a, err);
  if (on < 0) return CLI_DOT_ERROR;
  c->timing = on;
  return CLI_DOT_OK;
}

/* .threads [N]: the engine's thread count (pj_engine_set_threads). */
static cli_dot_result dot_threads(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  if (a->n < 2) {
    fprintf(out, "%d\n", pj_engine_threads(c->e));
    return CLI_DOT_OK;
  }
  char *end;
  errno = 0;
  long n = strtol(a->w[1], &end, 10);
  if (*end || end == a->w[1] || n < 1 || n > 256 || errno == ERANGE) {
    fprintf(err, "error: .threads takes a number from 1 to 256, not '%s'\n", a->w[1]);
    return CLI_DOT_ERROR;
  }
  pj_engine_set_threads(c->e, (int)n);
  return CLI_DOT_OK;
}

static cli_dot_result dot_timer(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  int on = on_off(a, err);
  if (on < 0) return CLI_DOT_ERROR;
  c->timer = on;
  return CLI_DOT_OK;
}

static const char *const explain_kinds[] = {"plan", "llvm", "llvm-raw", "asm", "off", NULL};

static cli_dot_result dot_explain(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  if (a->n == 1) {
    fprintf(out, "%s\n", c->dump ? c->dump : "off");
    return CLI_DOT_OK;
  }
  for (int i = 0; explain_kinds[i]; i++)
    if (!strcmp(a->w[1], explain_kinds[i])) {
      c->dump = strcmp(explain_kinds[i], "off") ? explain_kinds[i] : NULL;   /* static storage */
      return CLI_DOT_OK;
    }
  fprintf(err, "error: .explain: expected plan, llvm, llvm-raw, asm or off, not '%s'\n", a->w[1]);
  return CLI_DOT_ERROR;
}

static cli_dot_result dot_output(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  if (a->n == 1 || !strcmp(a->w[1], "stdout")) {
    cli_output_reset(c);
    return CLI_DOT_OK;
  }
  return output_to(c, a->w[1], 0, err) ? CLI_DOT_ERROR : CLI_DOT_OK;
}

static cli_dot_result dot_once(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  return output_to(c, a->w[1], 1, err) ? CLI_DOT_ERROR : CLI_DOT_OK;
}

static cli_dot_result dot_read(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  if (c->depth >= 16) {
    fprintf(err, "error: .read %s: files read each other more than 16 deep\n", a->w[1]);
    return CLI_DOT_ERROR;
  }
  FILE *f = fopen(a->w[1], "rb");
  if (!f) {
    fprintf(err, "error: .read: cannot open '%s': %s\n", a->w[1], strerror(errno));
    return CLI_DOT_ERROR;
  }
  size_t len = 0;
  char *text = cli_read_file(f, &len);
  fclose(f);
  if (!text) {
    fprintf(err, "error: .read: cannot read '%s'\n", a->w[1]);
    return CLI_DOT_ERROR;
  }
  pj_format fmt = pj_detect_format(text, len < 4096 ? len : 4096);
  int rc;
  if (fmt != PJ_FORMAT_TEXT) {
    fprintf(err, "error: .read: %s is %s, not a script (.open %s loads it)\n", a->w[1],
            pj_format_name(fmt), a->w[1]);
    rc = 1;
  } else {
    int base = c->line_base;
    c->depth++;
    rc = cli_run_input(c, text, len, a->w[1]);
    c->depth--;
    c->line_base = base;
  }
  free(text);
  return rc == 2 ? CLI_DOT_QUIT : rc ? CLI_DOT_ERROR : CLI_DOT_OK;
}

/* .open FILE: a new engine over a SQLite database (made if missing) or,
 * for a trace, over a fresh in-memory database it is imported into; the
 * options (mode, opt level, limits, module path) and parameters carry
 * over. .open alone: an empty in-memory database. */
static cli_dot_result dot_open(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  const char *path = a->n > 1 ? a->w[1] : NULL;
  int trace = 0;
  if (path) {
    FILE *f = fopen(path, "rb");
    if (f) {
      unsigned char head[4096];
      size_t n = fread(head, 1, sizeof head, f);
      fclose(f);
      pj_format fmt = pj_detect_format(head, n);
      trace = fmt == PJ_FORMAT_GZIP || fmt == PJ_FORMAT_JSON || fmt == PJ_FORMAT_PROTO;
      if (fmt == PJ_FORMAT_TEXT && n > 0) {
        fprintf(err, "error: .open: %s is not a database or a trace (.read %s runs a script)\n",
                path, path);
        return CLI_DOT_ERROR;
      }
    }
  }
  pj_engine *e = NULL;
  pj_status s = pj_engine_open(trace ? NULL : path, &e);
  if (s == PJ_OK) s = pj__engine_copy_settings(e, c->e);
  /* the parameters, as they are (typed when they were set) */
  pj_param p;
  for (int i = 0; s == PJ_OK && pj_engine_param(c->e, i, &p) == PJ_OK; i++)
    s = p.is_null                 ? pj_engine_bind_null(e, p.name)
        : p.type == PJ_TYPE_INT64 ? pj_engine_bind_int64(e, p.name, p.i)
        : p.type == PJ_TYPE_DOUBLE ? pj_engine_bind_double(e, p.name, p.d)
                                   : pj_engine_bind_text(e, p.name, p.s, p.len);
  pj_trace_info info;
  if (s == PJ_OK && trace) s = pj_engine_load_trace(e, path, &info);
  if (s != PJ_OK) {
    fprintf(err, "error: .open %s: %s\n", path ? path : "", e ? pj_engine_errmsg(e) : "out of memory");
    pj_engine_close(e);
    return CLI_DOT_ERROR;
  }
  if (trace && info.warning[0]) fprintf(err, "warning: %s: %s\n", path, info.warning);
  pj_engine_close(c->e);
  c->e = e;
  cli_install_handlers(e);
  cli_watch(c);
  return CLI_DOT_OK;
}

/* "$name value" lines, the values as SQL literals, names aligned. */
static void param_list(pj_engine *e, FILE *out) {
  int n = pj_engine_param_count(e);
  size_t w = 0;
  pj_param p;
  for (int i = 0; i < n; i++)
    if (pj_engine_param(e, i, &p) == PJ_OK && strlen(p.name) > w) w = strlen(p.name);
  for (int i = 0; i < n; i++) {
    if (pj_engine_param(e, i, &p) != PJ_OK) continue;
    char lit[256];
    cli_param_literal(&p, lit, sizeof lit);
    fprintf(out, "$%-*s %s\n", (int)w, p.name, lit);
  }
}

static cli_dot_result dot_param(struct cli *c, cli_dot_args *a, FILE *out, FILE *err) {
  const char *sub = a->n > 1 ? a->w[1] : "list";
  if (!strcmp(sub, "list") && a->n <= 2) {
    param_list(c->e, out);
    return CLI_DOT_OK;
  }
  if (!strcmp(sub, "clear") && a->n <= 2) {
    pj_engine_clear_bindings(c->e);
    return CLI_DOT_OK;
  }
  if (!strcmp(sub, "unset") && a->n == 3) {
    if (pj_engine_unbind(c->e, a->w[2]) == PJ_OK) return CLI_DOT_OK;
    fprintf(err, "error: .param unset: %s\n", pj_engine_errmsg(c->e));
    return CLI_DOT_ERROR;
  }
  if (!strcmp(sub, "set") && a->n >= 4) {
    /* the value as typed, quotes and blanks inside kept: 'a b' is text */
    char value[CLI_DOT_LINE];
    snprintf(value, sizeof value, "%s", a->raw[3]);
    size_t n = strlen(value);
    while (n && (value[n - 1] == ' ' || value[n - 1] == '\t' || value[n - 1] == '\r' ||
                 value[n - 1] == '\n'))
      value[--n] = 0;
    return cli_param_set(c->e, a->w[2], value) ? CLI_DOT_ERROR : CLI_DOT_OK;
  }
  fputs("error: usage: .param set NAME VALUE | unset NAME | list | clear\n", err);
  return CLI_DOT_ERROR;
}

/* ---- the table ---------------------------------------------------------- */

static const char *const on_off_words[] = {"on", "off", NULL};
static const char *const param_words[] = {"set", "unset", "list", "clear", NULL};

const cli_dot_cmd cli_dot_cmds[] = {
    {".dump", "[TABLE ...]", "the database as SQL text (sqlite3's .dump); plans: .explain", 0,
     CLI_DOT_MAXARGS - 1, dot_dump, NULL, CLI_ARG_TABLES},
    {".exit", "", "leave (also .quit or Ctrl-D)", 0, 0, dot_quit, NULL, CLI_ARG_NONE},
    {".explain", "plan|llvm|llvm-raw|asm|off",
     "print each pipeline's plan, LLVM IR (optimized or raw) or machine code before its rows", 0,
     1, dot_explain, explain_kinds, CLI_ARG_WORDS},
    {".headers", "on|off", "column names above the rows", 1, 1, dot_headers, on_off_words,
     CLI_ARG_WORDS},
    {".help", "[COMMAND]", "this list, or one command's line", 0, 1, dot_help, NULL,
     CLI_ARG_COMMANDS},
    {".mode", "MODE", NULL /* from format.h */, 0, 1, dot_mode, cli_format_names, CLI_ARG_WORDS},
    {".once", "FILE", "the next statement's output to FILE ('|cmd': to a command)", 1, 1,
     dot_once, NULL, CLI_ARG_FILES},
    {".open", "[FILE]", "a SQLite database, or a trace imported into memory (none: empty)", 0, 1,
     dot_open, NULL, CLI_ARG_FILES},
    {".output", "[FILE]", "output to FILE ('|cmd': to a command) until .output alone", 0, 1,
     dot_output, NULL, CLI_ARG_FILES},
    {".param", "set NAME VALUE|unset NAME|list|clear",
     "parameters bound to $NAME, :NAME and @NAME (VALUE typed as in sqlite3)", 0,
     CLI_DOT_MAXARGS - 1, dot_param, param_words, CLI_ARG_WORDS},
    {".quit", "", "leave (also .exit or Ctrl-D)", 0, 0, dot_quit, NULL, CLI_ARG_NONE},
    {".read", "FILE", "run the statements and dot-commands of FILE", 1, 1, dot_read, NULL,
     CLI_ARG_FILES},
    {".schema", "[PATTERN]", "CREATE statements of tables and views (LIKE PATTERN)", 0, 1,
     dot_schema, NULL, CLI_ARG_TABLES},
    {".tables", "[PATTERN]", "list tables and views, columnar and SQLite (LIKE PATTERN)", 0, 1,
     dot_tables, NULL, CLI_ARG_TABLES},
    {".threads", "[N]", "threads a pipeline may use (none: print the count; as --threads)", 0, 1,
     dot_threads, NULL, CLI_ARG_NONE},
    {".timer", "on|off", "sqlite3's \"Run Time: real … user … sys …\" after each statement", 1,
     1, dot_timer, on_off_words, CLI_ARG_WORDS},
    {".timing", "on|off", "parse/bind/compile/run times of each statement (as --timing)", 1, 1,
     dot_timing, on_off_words, CLI_ARG_WORDS},
    {".width", "[N ...]", "column widths for table, box, markdown (0 auto, -N right aligned)", 0,
     CLI_DOT_MAXARGS - 1, dot_width, NULL, CLI_ARG_NONE},
};
const int cli_ndot_cmds = (int)(sizeof cli_dot_cmds / sizeof *cli_dot_cmds);

const char *cli_dot_help(const cli_dot_cmd *d) {
  if (d->help) return d->help;
  static char mode_help[160];
  snprintf(mode_help, sizeof mode_help, "result format: %s", cli_format_choices());
  return mode_help;
}

/* The command a (possibly shortened) name means; NULL with a message. */
static const cli_dot_cmd *lookup(const char *name, FILE *err) {
  const cli_dot_cmd *hit = NULL;
  int hits = 0;
  size_t n = strlen(name);
  for (int i = 0; i < cli_ndot_cmds; i++) {
    if (!strcmp(cli_dot_cmds[i].name, name)) return &cli_dot_cmds[i];
    if (n > 1 && !strncmp(cli_dot_cmds[i].name, name, n)) hit = &cli_dot_cmds[i], hits++;
  }
  if (hits == 1) return hit;
  if (!hits) {
    fprintf(err, "error: unknown command %s (see .help)\n", name);
    return NULL;
  }
  fprintf(err, "error: %s is ambiguous:", name);
  for (int i = 0; i < cli_ndot_cmds; i++)
    if (!strncmp(cli_dot_cmds[i].name, name, n)) fprintf(err, " %s", cli_dot_cmds[i].name);
  fputc('\n', err);
  return NULL;
}

cli_dot_result cli_dot_command(struct cli *c, const char *line, FILE *out, FILE *err) {
  char buf[CLI_DOT_LINE];
  if (strlen(line) >= sizeof buf) {
    fprintf(err, "error: a dot-command line is limited to %d bytes\n", CLI_DOT_LINE - 1);
    return CLI_DOT_ERROR;
  }
  while (*line == ' ' || *line == '\t') line++;
  snprintf(buf, sizeof buf, "%s", line);
  cli_dot_args a;
  if (split_words(buf, line, &a) == 0) return CLI_DOT_OK;
  const cli_dot_cmd *d = lookup(a.w[0], err);
  if (!d) return CLI_DOT_ERROR;
  a.w[0] = (char *)d->name;
  if (a.n - 1 < d->min || a.n - 1 > d->max) {
    fprintf(err, "error: usage: %s %s\n", d->name, d->args);
    return CLI_DOT_ERROR;
  }
  /* .once covers the next command; this is it (unless it redirects). */
  int once = c->out_once && d->run != dot_once && d->run != dot_output;
  cli_dot_result r = d->run(c, &a, out, err);
  fflush(out);
  if (once) cli_output_end_once(c);
  return r;
}
