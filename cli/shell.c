/*
 * shell.c — the interactive shell: `pipejit` on a terminal with no input.
 *
 * Lines accumulate until the text ends with a ';' outside quotes, comments
 * and parentheses (the statement splitter decides), then the statements
 * run. Errors are printed and the shell goes on. `.quit`, `.exit` or
 * end-of-file leave. (Line editing and history come later.)
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frontend/ast.h"

/* True when text ends with a statement-ending ';': its last non-blank
 * character is a ';' that the splitter treats as a separator (so it is
 * not inside a string, a comment or parentheses). */
static int complete(const char *text, size_t len) {
  size_t end = len;
  while (end && (text[end - 1] == ' ' || text[end - 1] == '\n' || text[end - 1] == '\t' ||
                 text[end - 1] == '\r'))
    end--;
  if (!end || text[end - 1] != ';') return 0;
  rt_arena a;
  rt_arena_init(&a);
  fe_span *spans = NULL;
  int n = fe_split(&a, text, len, &spans);
  int done = n == 0 || (size_t)(spans[n - 1].pos + spans[n - 1].len) < end;
  rt_arena_free(&a);
  return done;
}

static int is_command(const char *buf, const char *cmd) {
  size_t n = strlen(cmd);
  if (strncmp(buf, cmd, n)) return 0;
  for (const char *p = buf + n; *p; p++)
    if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') return 0;
  return 1;
}

int cli_shell(struct cli *c) {
  size_t len = 0, cap = 4096;
  char *buf = malloc(cap);
  if (!buf) return 1;
  buf[0] = 0;
  fputs("pipejit: end statements with ';', leave with .quit or Ctrl-D\n", stdout);
  for (;;) {
    fputs(len ? "   ...> " : "pipejit> ", stdout);
    fflush(stdout);
    /* Read one whole line, however long. */
    size_t start = len;
    int got = 0;
    for (;;) {
      if (cap - len < 1024) {
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
          free(buf);
          return 1;
        }
        buf = nb;
        cap *= 2;
      }
      if (!fgets(buf + len, (int)(cap - len), stdin)) break;
      got = 1;
      len += strlen(buf + len);
      if (len && buf[len - 1] == '\n') break;
    }
    if (!got) break;
    if (start == 0 && (is_command(buf, ".quit") || is_command(buf, ".exit"))) {
      len = 0;
      break;
    }
    if (complete(buf, len)) {
      c->printed = 0;
      cli_run_script(c, buf);
      len = 0;
      buf[0] = 0;
    }
  }
  fputc('\n', stdout);
  if (len) {
    c->printed = 0;
    cli_run_script(c, buf);
  }
  free(buf);
  return 0;
}
