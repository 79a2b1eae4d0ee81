/*
 * shell.h — the parts of the interactive shell that do not need a
 * terminal, so tests can call them: statement completeness, dot-commands
 * (dot.c) and tab completion (complete.c).
 */
#ifndef PJ_CLI_SHELL_H
#define PJ_CLI_SHELL_H

#include <stddef.h>
#include <stdio.h>

#include "api/hooks.h"
#include "cli.h"

/* True when text holds no unfinished statement: the last one ends with a
 * ';' outside strings, comments and parentheses, or there is none (only
 * blanks and comments: a comment line gives no continuation prompt). */
int cli_stmt_complete(const char *text, size_t len);

/* What a dot-command asks of the shell. */
typedef enum cli_dot_result {
  CLI_DOT_OK = 0,      /* done (output written to out) */
  CLI_DOT_QUIT,        /* .quit / .exit */
  CLI_DOT_ERROR,       /* bad command or argument; message written to err */
} cli_dot_result;

/* Runs one dot-command line (".mode csv", ".schema slice", …): changes
 * the settings in c, or prints to out. */
cli_dot_result cli_dot_command(struct cli *c, const char *line, FILE *out, FILE *err);

/* A dot-command line cut into words (w: unquoted, NUL-terminated; raw:
 * where each starts in the line as typed). */
enum { CLI_DOT_MAXARGS = 32, CLI_DOT_LINE = 4096 };
typedef struct cli_dot_args {
  int n;
  char *w[CLI_DOT_MAXARGS];
  const char *raw[CLI_DOT_MAXARGS];
} cli_dot_args;

/* What the arguments of a command complete to. */
typedef enum cli_dot_argkind {
  CLI_ARG_NONE,       /* nothing */
  CLI_ARG_WORDS,      /* the command's `words` */
  CLI_ARG_TABLES,     /* table and view names */
  CLI_ARG_FILES,      /* file names (the line editor's own completion) */
  CLI_ARG_COMMANDS,   /* dot-command names */
} cli_dot_argkind;

/* The dot-commands, by name: the dispatcher, .help and completion read
 * this one table. */
typedef struct cli_dot_cmd {
  const char *name;    /* ".mode" */
  const char *args;    /* usage of the arguments ("on|off") */
  const char *help;    /* one line; NULL: made by cli_dot_help */
  int min, max;        /* argument counts */
  cli_dot_result (*run)(struct cli *c, cli_dot_args *a, FILE *out, FILE *err);
  const char *const *words;   /* CLI_ARG_WORDS: the first argument's words */
  cli_dot_argkind arg;
} cli_dot_cmd;
extern const cli_dot_cmd cli_dot_cmds[];
extern const int cli_ndot_cmds;
/* Tables and views of both schemas (name, type, sql, schema) whose names
 * match the LIKE pattern ?1 (NULL: all), by name, the engine's own
 * __pj_ tables left out: .tables, .schema, .dump and completion. */
extern const char cli_catalog_sql[];
/* The help line of a command. */
const char *cli_dot_help(const cli_dot_cmd *d);

/* .output / .once: standard output back where it was (flushing and
 * closing the file or command), and the same only when .once is pending
 * (after the statement or command it covered). */
void cli_output_reset(struct cli *c);
void cli_output_end_once(struct cli *c);

/* Tab completion: the candidates for the word `prefix`, which starts at
 * byte `start` of `text` (the statement typed so far, its earlier lines
 * included), by context (case-insensitive prefix match):
 *   - at the start of a line that starts with '.': dot-commands; after a
 *     dot-command, its arguments' words (modes, on/off, …) or tables;
 *   - right after `|>`: the first words of the stages, and after a
 *     stage's first words its next one (`INTERVAL FL` -> FLATTEN);
 *   - after FROM or JOIN: table names;
 *   - elsewhere: the columns of the tables in scope (those after FROM and
 *     JOIN so far, and names made with AS; all tables' columns when
 *     none), keywords, functions, aggregates, and table names when no
 *     table is in scope yet.
 * Keywords follow the case of the prefix. Returns a malloc'd,
 * NULL-terminated, sorted, duplicate-free array of malloc'd strings (free
 * with cli_complete_free); NULL when out of memory. *files (may be NULL)
 * is set to 1 when the word is a file name: the line editor completes it. */
char **cli_complete(pj_engine *e, const char *text, size_t start, const char *prefix, int *files);
void cli_complete_free(char **list);

#endif
