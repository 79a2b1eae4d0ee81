/*
 * cli.h — pieces of the pipejit command-line tool: result printers
 * (format.c), running scripts (run.c) and scripts with dot-commands
 * (input.c), script parameters (param.c) and the interactive shell
 * (shell.c, dot.c, complete.c); main.c parses options and reads the
 * inputs. The tool uses the engine through pipejit.h and api/hooks.h
 * only.
 */
#ifndef PJ_CLI_H
#define PJ_CLI_H

#include <stdio.h>

#include "pipejit.h"

#include "format.h"

/* The tool's settings and output state. */
struct cli {
  pj_engine *e;
  cli_format fmt;
  cli_style style;    /* .headers, .width */
  const char *dump;   /* NULL, "plan", "llvm", "llvm-raw" or "asm" */
  int timing;
  int timer;          /* .timer on: sqlite3's "Run Time:" line per statement */
  int compare;
  int echo;           /* --echo: each statement's text before its rows */
  int echoed;         /* the statement's text was just echoed */
  /* --compare's totals, for the line at the end (cli_compare_summary). */
  struct {
    int n, interp_wins;
    int64_t interp_ns, jit_ns, compile_ns;
  } cmp;
  /* Where dumps, timings and comparisons go (standard error, or
   * --dump-file): never into the rows on standard output. NULL: stderr. */
  FILE *diag;
  int printed;        /* blocks printed to stdout (blank line between) */
  int reported;       /* the current error was printed already */
  int line_base;      /* lines before the text cli_run_script runs, in
                         its file (error positions of scripts cut at
                         dot-commands) */
  int64_t timer_ns, timer_cpu_ns[2];   /* .timer: where the statement began */
  /* .output / .once (dot.c): standard output's descriptor before the
   * redirection, plus 1 (0: none); the open file or pipe; 1 for .once. */
  int out_saved;
  FILE *out_file;
  int out_pipe, out_once;
  int depth;          /* .read nesting */
};

/* ---- input.c ---- */

/* Runs a script that may hold dot-commands (a line starting with '.' where
 * a statement may start, as sqlite3 reads its input): the statements
 * between them run with cli_run_script. `name` names the input in
 * messages. Returns 0, 1 after an error (which stops it), or 2 when a
 * .quit or .exit ended it. */
int cli_run_input(struct cli *c, const char *text, size_t len, const char *name);

/* The whole stream, NUL-terminated, its length (which counts any NUL
 * bytes inside) in *len; NULL when out of memory. */
char *cli_read_file(FILE *f, size_t *len);

/* ---- param.c ---- */

/* Sets the engine's parameter name (with or without $, : or @) to value
 * typed as sqlite3's `.param set` types it: a SQL expression (42, 1.5,
 * 'text', NULL, 60*1000), else the text itself. Returns 0, or 1 after
 * printing the error on standard error. */
int cli_param_set(pj_engine *e, const char *name, const char *value);
/* The parameter's value as a SQL literal (42, 1.5, 'it''s', NULL) into
 * buf, for listings; returns what snprintf returns. */
int cli_param_literal(const pj_param *p, char *buf, size_t cap);

/* ---- run.c ---- */

/* Runs one script of len bytes (NUL bytes inside are the engine's to
 * report; the text is kept for error carets); prints results and errors.
 * Returns 0 on success, 1 after an error. */
int cli_run_script(struct cli *c, const char *script, size_t len);

/* 1 when Ctrl-C was pressed at the shell's prompt since the last call
 * (and forgets it; run.c's SIGINT handler records it). */
int cli_take_interrupt(void);

/* --timeout: seconds each script may run (0 = none). */
extern double cli_timeout;
/* SIGINT and SIGALRM interrupt engine e while a script runs. */
void cli_install_handlers(pj_engine *e);
/* on = 1: Ctrl-C while no script runs belongs to the shell's prompt. */
void cli_set_interactive(int on);
/* --compare's closing line: every pipeline compared, both backends'
 * totals (compile included for the JIT) and which won run once. */
void cli_compare_summary(struct cli *c);
/* Installs the observers of --dump, --timing and --compare. */
void cli_watch(struct cli *c);
/* The monotonic clock (ns) and ns as milliseconds, for timing lines. */
int64_t cli_now_ns(void);
double cli_ms(int64_t ns);

/* ---- engine.c ---- */

/* The engine settings of the command line. */
typedef struct cli_engine_opts {
  const char *db;
  int mode, opt;
  int64_t max_memory;
  int threads;        /* --threads (0: the engine's default) */
  const char **module_paths;
  int nmodule_paths;
  double timeout;     /* --timeout (also cli_timeout) */
} cli_engine_opts;
/* Opens an engine with those settings: 0, or 1 with the message in err
 * (*e may still be set: close it). */
int cli_engine_open(const cli_engine_opts *o, pj_engine **e, char *err, size_t cap);

/* ---- batch.c ---- */

typedef struct cli_batch_opts {
  cli_engine_opts engine;
  const char **patterns;   /* traces and glob patterns, in order */
  int npatterns;
  const char *script;      /* -c TEXT or the text of -q FILE */
  size_t script_len;
  const char *out;         /* --out */
  int jobs;                /* --jobs (> 0) */
  const char **params;     /* --param NAME=VALUE */
  int nparams;
} cli_batch_opts;
/* pipejit --batch: the exit status (0: every trace ran; 1: some failed,
 * or the output could not be written). */
int cli_batch(const cli_batch_opts *o);

/* The interactive shell on a terminal: reads statements until each ends
 * with a top-level ';', runs them, keeps going after errors. Returns the
 * exit status. */
int cli_shell(struct cli *c);

#endif
