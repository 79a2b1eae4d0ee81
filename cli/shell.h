/*
 * shell.h — the parts of the interactive shell that do not need a
 * terminal, so tests can call them: statement completeness, dot-commands
 * (dot.c) and tab completion (complete.c).
 */
#ifndef PJ_CLI_SHELL_H
#define PJ_CLI_SHELL_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

/* True when text ends with a statement-ending ';' outside strings,
 * comments and parentheses. */
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

/* Tab completion: the candidates for the word `prefix`, which starts at
 * byte `start` of the input line `line` (case-insensitive prefix match),
 * among keywords, dot-commands (when the line starts with
 * '.'), table names and column names of the engine's database (columnar
 * tables are in its temp schema). Returns a malloc'd, NULL-terminated,
 * sorted, duplicate-free array of malloc'd strings (free with
 * cli_complete_free); NULL when out of memory. */
char **cli_complete(pj_engine *e, const char *line, size_t start, const char *prefix);
void cli_complete_free(char **list);

#endif
