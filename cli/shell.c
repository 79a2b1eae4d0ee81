/*
 * shell.c — the interactive shell: `pipejit` on a terminal with no input.
 * (With standard input not a terminal, main.c runs it as one script
 * instead: no prompts, no line editing, the first error stops.)
 *
 * Lines are read with libedit (line editing, history kept in
 * ~/.pipejit_history, tab completion from complete.c) and accumulate until
 * the text ends with a ';' outside quotes, comments and parentheses (the
 * statement splitter decides); then the statements run. A line starting
 * with '.' at the start of a statement is a dot-command (dot.c). Errors
 * are printed and the shell goes on; .quit, .exit or end-of-file leave.
 * Ctrl-C at a prompt discards the pending input and prompts again.
 * A statement that runs longer than a second shows a progress line
 * (elapsed time) on standard error, when that is a terminal, drawn by a
 * timer thread. While it may draw, stdout and stderr are streams of ours
 * (fopencookie) whose first write erases the line and silences the
 * thread, so results and errors never land on the progress line.
 */
#define _GNU_SOURCE   /* fopencookie */
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <editline/readline.h>

#include "api/hooks.h"
#include "shell.h"

/* ---- statements --------------------------------------------------------- */

int cli_stmt_complete(const char *text, size_t len) { return pj__script_complete(text, len); }

/* ---- the progress line -------------------------------------------------- */

typedef struct progress {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop, started;
  int quiet;                  /* output began: draw no more */
  int shown;                  /* the line is on the terminal */
  struct timespec t0;
} progress;

/* Erases the progress line (if drawn) and keeps it from coming back.
 * Called with p->mu held. */
static void progress_erase(progress *p) {
  if (p->shown) {
    static const char erase[] = "\r\033[K";
    ssize_t w = write(2, erase, sizeof erase - 1);
    (void)w;   /* a failed erase leaves text behind; nothing better to do */
    p->shown = 0;
  }
}

static double since(const struct timespec *t0) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void *progress_main(void *arg) {
  progress *p = arg;
  pthread_mutex_lock(&p->mu);
  while (!p->stop) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 250 * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&p->cv, &p->mu, &until);
    if (p->stop) break;
    double s = since(&p->t0);
    if (s >= 1.0 && !p->quiet) {
      /* Straight to the descriptor: stderr is the shell's stream now. */
      char line[64];
      int n = snprintf(line, sizeof line, "\r\033[Krunning... %.1f s", s);
      if (n > 0 && write(2, line, (size_t)n) == n) p->shown = 1;
    }
  }
  progress_erase(p);
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* A stream over file descriptor fd whose writes first erase the progress
 * line. */
typedef struct quiet_out {
  progress *p;
  int fd;
} quiet_out;

static ssize_t quiet_write(void *cookie, const char *buf, size_t n) {
  quiet_out *q = cookie;
  pthread_mutex_lock(&q->p->mu);
  q->p->quiet = 1;
  progress_erase(q->p);
  pthread_mutex_unlock(&q->p->mu);
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(q->fd, buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return done ? (ssize_t)done : -1;
    done += (size_t)w;
  }
  return (ssize_t)n;
}

static void progress_begin(progress *p) {
  memset(p, 0, sizeof *p);
  if (!isatty(2)) return;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  clock_gettime(CLOCK_MONOTONIC, &p->t0);
  p->started = pthread_create(&p->thread, NULL, progress_main, p) == 0;
  if (!p->started) {
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
  }
}

static void progress_end(progress *p) {
  if (!p->started) return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
}

/* Runs a complete input (one or more statements) with the progress line. */
static void run(struct cli *c, const char *text) {
  progress p;
  c->printed = 0;
  fflush(stdout);
  fflush(stderr);
  progress_begin(&p);
  FILE *saved_out = stdout, *saved_err = stderr, *out = NULL, *err = NULL;
  quiet_out qo = {&p, 1}, qe = {&p, 2};
  if (p.started) {
    cookie_io_functions_t io = {.write = quiet_write};
    out = fopencookie(&qo, "w", io);
    err = fopencookie(&qe, "w", io);
    if (out && err) {
      setvbuf(err, NULL, _IONBF, 0);
      stdout = out;
      stderr = err;
    }
  }
  cli_run_script(c, text, strlen(text));
  fflush(stdout);
  stdout = saved_out;
  stderr = saved_err;
  if (out) fclose(out);
  if (err) fclose(err);
  progress_end(&p);
}

/* ---- libedit ------------------------------------------------------------ */

static struct cli *g_cli;       /* for the completion callbacks */
static const char *g_pending;   /* the statement's earlier lines */
static size_t g_pending_len;
static char **g_matches;
static size_t g_next;

static char *complete_next(const char *text, int state) {
  (void)state;
  if (!g_matches || !g_matches[g_next]) return NULL;
  return strdup(g_matches[g_next++]);   /* libedit frees it */
}

/* Completes from the statement so far (earlier lines and this one up to
 * the word): context decides the candidates (complete.c). File names
 * (.read, .open …) are the line editor's own completion. */
static char **complete_attempt(const char *text, int start, int end) {
  const char *line = rl_line_buffer ? rl_line_buffer : "";
  size_t n = (size_t)start, total = g_pending_len + n;
  char *before = malloc(total + 1);
  if (!before) return NULL;
  memcpy(before, g_pending, g_pending_len);
  memcpy(before + g_pending_len, line, n);
  before[total] = 0;
  int files = 0;
  cli_complete_free(g_matches);
  g_matches = cli_complete(g_cli->e, before, total, text, &files);
  free(before);
  g_next = 0;
  if (files) {
    rl_attempted_completion_over = 0;   /* libedit completes the file name */
    return NULL;
  }
  rl_attempted_completion_over = 1;
  return rl_completion_matches(text, complete_next);
}

static char *history_path(void) {
  const char *home = getenv("HOME");
  if (!home || !*home) return NULL;
  size_t n = strlen(home) + sizeof "/.pipejit_history";
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/.pipejit_history", home);
  return p;
}

static int is_blank(const char *s) {
  for (; *s; s++)
    if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') return 0;
  return 1;
}

/* Adds the whole statement (or command) to the history as one entry,
 * its lines kept: recalled, it comes back entire. */
static void remember(const char *text, size_t len) {
  while (len && (text[len - 1] == '\n' || text[len - 1] == '\r')) len--;
  char *entry = strndup(text, len);
  if (entry && !is_blank(entry)) add_history(entry);
  free(entry);
}

int cli_shell(struct cli *c) {
  size_t len = 0, cap = 4096;
  char *buf = malloc(cap);
  if (!buf) return 1;
  buf[0] = 0;
  g_cli = c;
  g_pending = buf;
  g_pending_len = 0;
  /* Prompts and echo go to the terminal even while .output moves
   * standard output elsewhere. */
  int tty = dup(1);
  FILE *term = tty >= 0 ? fdopen(tty, "w") : NULL;
  if (term) rl_outstream = term;
  /* The terminal's character set, so the editor reads UTF-8 input as
   * characters (in the C locale it drops every non-ASCII byte). Only the
   * character type: number formatting stays C's. */
  setlocale(LC_CTYPE, "");
  rl_readline_name = "pipejit";
  rl_attempted_completion_function = complete_attempt;
  rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{(,)+-*/%";
  char *hist = history_path();
  using_history();
  stifle_history(1000);
  if (hist) read_history(hist);
  fputs("pipejit: end statements with ';', .help for commands, .quit or Ctrl-D to leave\n",
        stdout);
  int quit = 0;
  while (!quit) {
    cli_take_interrupt();   /* a Ctrl-C while a statement ran is not this line's */
    char *line = readline(len ? "   ...> " : "pipejit> ");
    if (cli_take_interrupt()) {
      /* Ctrl-C while editing: libedit's readline gives up (NULL, or what
       * was typed). Drop the line and the pending statement and prompt
       * afresh, as sqlite3's shell does; only end of input leaves. */
      free(line);
      len = g_pending_len = 0;
      buf[0] = 0;
      fputc('\n', rl_outstream ? rl_outstream : stdout);
      fflush(rl_outstream ? rl_outstream : stdout);
      continue;
    }
    if (!line) break;
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (len == 0 && *p == '.') {
      remember(line, strlen(line));
      quit = cli_dot_command(c, p, stdout, stderr) == CLI_DOT_QUIT;
      fflush(stdout);
      free(line);
      continue;
    }
    size_t n = strlen(line);
    if (len + n + 2 > cap) {
      while (len + n + 2 > cap) cap *= 2;
      char *nb = realloc(buf, cap);
      if (!nb) {
        free(line);
        break;
      }
      buf = nb;
      g_pending = buf;
    }
    memcpy(buf + len, line, n);
    len += n;
    buf[len++] = '\n';
    buf[len] = 0;
    g_pending_len = len;
    free(line);
    /* Complete: run it. Only blanks and comments are complete too, and
     * run as nothing: a comment line gives no continuation prompt. */
    if (cli_stmt_complete(buf, len)) {
      remember(buf, len);
      if (!is_blank(buf)) run(c, buf);
      cli_output_end_once(c);
      len = g_pending_len = 0;
      buf[0] = 0;
    }
  }
  if (!quit) fputc('\n', rl_outstream ? rl_outstream : stdout);
  /* End of input (Ctrl-D) in the middle of a statement: run what there is. */
  if (len && !is_blank(buf)) {
    remember(buf, len);
    run(c, buf);
  }
  cli_output_reset(c);
  if (hist) write_history(hist);
  free(hist);
  cli_complete_free(g_matches);
  g_matches = NULL;
  g_pending = NULL;
  g_pending_len = 0;
  free(buf);
  if (term) {
    rl_outstream = stdout;
    fclose(term);
  }
  return 0;
}
