/*
 * input.c — scripts with dot-commands, as sqlite3 reads its input: a
 * line whose first non-blank character is '.' where a statement may
 * start (nothing unfinished before it) is a dot-command (dot.c); the
 * statements between dot-commands run as scripts of their own
 * (cli_run_script), with their line numbers kept for error messages. A
 * script without such a line runs as one, as before. Standard input,
 * FILE arguments, -c TEXT and .read FILE all come here.
 */
#include <stdlib.h>
#include <string.h>

#include "shell.h"

char *cli_read_file(FILE *f, size_t *len) {
  size_t n = 0, cap = 1 << 16;
  char *buf = malloc(cap);
  if (!buf) return NULL;
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        return NULL;
      }
      buf = nb;
      cap *= 2;
    }
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

/* The first non-blank byte of the line at p (before eol). */
static size_t line_start(const char *t, size_t p, size_t eol) {
  while (p < eol && (t[p] == ' ' || t[p] == '\t')) p++;
  return p;
}

/* Runs text[from, to) (first line: line) unless it holds no statement. */
static int run_chunk(struct cli *c, const char *t, size_t from, size_t to, int line) {
  if (pj__script_empty(t + from, to - from)) return 0;
  c->line_base = line - 1;
  int rc = cli_run_script(c, t + from, to - from);
  c->line_base = 0;
  cli_output_end_once(c);
  return rc;
}

int cli_run_input(struct cli *c, const char *t, size_t len, const char *name) {
  /* Most scripts have no dot-command: one run, as fast as ever. */
  int dots = 0;
  for (size_t p = 0; p < len && !dots;) {
    size_t eol = p;
    while (eol < len && t[eol] != '\n') eol++;
    size_t q = line_start(t, p, eol);
    dots = q < eol && t[q] == '.';
    p = eol + 1;
  }
  if (!dots) return cli_run_script(c, t, len);

  size_t seg = 0;   /* where the statements not run yet start */
  int seg_line = 1, ln = 1;
  for (size_t p = 0; p < len; p++, ln++) {
    size_t eol = p;
    while (eol < len && t[eol] != '\n') eol++;
    size_t q = line_start(t, p, eol);
    if (q < eol && t[q] == '.' && pj__script_complete(t + seg, p - seg)) {
      int rc = run_chunk(c, t, seg, p, seg_line);
      if (rc) return rc;
      char line[CLI_DOT_LINE];
      size_t n = eol - q;
      if (n && t[q + n - 1] == '\r') n--;
      if (n >= sizeof line) n = sizeof line - 1;   /* cli_dot_command refuses it */
      memcpy(line, t + q, n);
      line[n] = 0;
      if (memchr(t + q, 0, eol - q)) {
        fprintf(stderr, "error: a NUL byte in the dot-command at line %d of %s\n", ln, name);
        return 1;
      }
      cli_dot_result r = cli_dot_command(c, line, stdout, stderr);
      if (r == CLI_DOT_QUIT) return 2;
      if (r == CLI_DOT_ERROR) {
        fprintf(stderr, "at line %d of %s: %s\n", ln, name, line);
        return 1;
      }
      seg = eol < len ? eol + 1 : len;
      seg_line = ln + 1;
    } else if (c->out_once && pj__script_complete(t + seg, eol - seg) &&
               !pj__script_empty(t + seg, eol - seg)) {
      /* .once covers the next statement line, as in the shell */
      int rc = run_chunk(c, t, seg, eol, seg_line);
      if (rc) return rc;
      seg = eol < len ? eol + 1 : len;
      seg_line = ln + 1;
    }
    p = eol;
  }
  return run_chunk(c, t, seg, len, seg_line);
}
