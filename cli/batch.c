/*
 * batch.c — pipejit --batch: one script over many traces, a pool of
 * worker processes, one SQLite file of results.
 *
 *   pipejit --batch 'traces/<glob>.pftrace' [--batch MORE | TRACE …]
 *           (-c TEXT | -q FILE) --out results.db [--jobs N]
 *
 * The parent expands the patterns (glob(3), sorted; a pattern matching
 * nothing stays as it is and fails as a trace that cannot be opened),
 * forks up to --jobs workers (default: the cores), one process per trace,
 * and copies each worker's part file into the output in the order the
 * traces were given (pj_batch_add), so the output does not depend on
 * which worker finished first. A worker opens its own engine, imports
 * the trace, binds --param values, and runs the script with
 * pj_batch_run; its error goes back in a file beside its part. A trace
 * that fails (cannot be read, its script fails, its columns do not fit
 * the tables, its worker dies or runs past --timeout) is printed as
 * "error: TRACE: MESSAGE", recorded in batch_errors, and the others go
 * on; the exit status is 1 when any failed.
 *
 * Ctrl-C (SIGINT), SIGTERM or SIGHUP stop the batch: the parent ends its
 * workers, removes their folder, closes the output with the traces
 * merged so far, and then ends by that signal as it would have (the shell
 * sees an interrupted command). A SIGINT ignored when pipejit started
 * (a background job of a script) stays ignored.
 *
 * The parent opens no engine and starts no thread, so forking it is safe.
 */
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

enum { T_WAIT, T_RUN, T_DONE };
typedef struct job {
  const char *trace;
  int state;
  pid_t pid;
  int status;      /* waitpid's */
} job;

/* The patterns, expanded, in order. */
static int expand(const cli_batch_opts *o, char ***out, glob_t *g) {
  memset(g, 0, sizeof *g);
  for (int i = 0; i < o->npatterns; i++) {
    int r = glob(o->patterns[i], GLOB_NOCHECK | (i ? GLOB_APPEND : 0), NULL, g);
    if (r == GLOB_NOSPACE) return -1;
  }
  *out = g->gl_pathv;
  return (int)g->gl_pathc;
}

static char *part_path(const char *dir, int i, const char *ext) {
  size_t n = strlen(dir) + 32;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%d.%s", dir, i, ext);
  return p;
}

/* ---- stopping ----------------------------------------------------------- */

static const int STOP_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP};
enum { NSTOP = sizeof STOP_SIGNALS / sizeof STOP_SIGNALS[0] };

/* What the handler reads and writes: the signal that stopped the batch
 * and the running workers' pids (a slot per --jobs; 0 when free), so it
 * can end them itself: the parent's waitpid then returns even when the
 * signal came between its check of the flag and the call. */
static volatile sig_atomic_t g_stop;
static volatile pid_t *g_pids;
static int g_npids;

static void on_stop(int sig) {
  g_stop = sig;
  for (int i = 0; i < g_npids; i++)
    if (g_pids[i] > 0) kill(g_pids[i], SIGKILL);
}

/* Installs on_stop (no SA_RESTART: waitpid returns EINTR), keeping what
 * was there in old; an ignored SIGINT or SIGHUP stays ignored. */
static void stop_install(struct sigaction *old) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_stop;
  for (int i = 0; i < NSTOP; i++) {
    sigaction(STOP_SIGNALS[i], NULL, &old[i]);
    if (old[i].sa_handler != SIG_IGN || STOP_SIGNALS[i] == SIGTERM)
      sigaction(STOP_SIGNALS[i], &sa, NULL);
  }
}

static void stop_restore(const struct sigaction *old) {
  for (int i = 0; i < NSTOP; i++) sigaction(STOP_SIGNALS[i], &old[i], NULL);
}

/* Blocks the stop signals, the mask before in was. */
static void stop_block(sigset_t *was) {
  sigset_t stops;
  sigemptyset(&stops);
  for (int i = 0; i < NSTOP; i++) sigaddset(&stops, STOP_SIGNALS[i]);
  sigprocmask(SIG_BLOCK, &stops, was);
}

/* The handler's slot holding pid becomes now (0: free). */
static void pid_slot(pid_t pid, pid_t now) {
  for (int i = 0; i < g_npids; i++)
    if (g_pids[i] == pid) {
      g_pids[i] = now;
      return;
    }
}

/* ---- the worker --------------------------------------------------------- */

/* The engine's error with its position, as Python's pipejit.Error prints it. */
static void engine_error(pj_engine *e, char *buf, size_t cap) {
  const char *msg = e ? pj_engine_errmsg(e) : "out of memory";
  if (e && pj_engine_errline(e) > 0)
    snprintf(buf, cap, "%s (line %d, column %d)", msg, pj_engine_errline(e), pj_engine_errcol(e));
  else
    snprintf(buf, cap, "%s", msg);
}

/* Runs in the child: 0, or 1 with the message in `err`. */
static int work(const cli_batch_opts *o, const char *trace, const char *part, char *err,
                size_t cap) {
  pj_engine *e = NULL;
  /* The workers already take every core: one thread each, unless
   * --threads says otherwise. */
  cli_engine_opts eo = o->engine;
  if (eo.threads <= 0) eo.threads = 1;
  if (cli_engine_open(&eo, &e, err, cap)) {
    pj_engine_close(e);
    return 1;
  }
  pj_trace_info info;
  int rc = 0;
  if (pj_engine_load_trace(e, trace, &info) != PJ_OK) {
    engine_error(e, err, cap);
    rc = 1;
  } else if (info.warning[0]) {
    fprintf(stderr, "warning: %s: %s\n", trace, info.warning);
  }
  for (int i = 0; i < o->nparams && !rc; i++) {
    const char *eq = strchr(o->params[i], '=');
    char *name = strndup(o->params[i], (size_t)(eq - o->params[i]));
    if (!name || cli_param_set(e, name, eq + 1)) {
      snprintf(err, cap, "--param %s cannot be set", o->params[i]);
      rc = 1;
    }
    free(name);
  }
  if (!rc && pj_batch_run(e, o->script, o->script_len, part) != PJ_OK) {
    engine_error(e, err, cap);
    rc = 1;
  }
  pj_engine_close(e);
  return rc;
}

static void child(const cli_batch_opts *o, const char *dir, int i, const char *trace,
                  const struct sigaction *old) {
  stop_restore(old);   /* a worker ends by Ctrl-C as pipejit would */
  g_npids = 0;
  if (o->engine.timeout > 0) {   /* the default action ends the worker */
    struct itimerval t = {0};
    t.it_value.tv_sec = (time_t)o->engine.timeout;
    t.it_value.tv_usec = (suseconds_t)((o->engine.timeout - (double)t.it_value.tv_sec) * 1e6);
    signal(SIGALRM, SIG_DFL);
    setitimer(ITIMER_REAL, &t, NULL);
  }
  char *part = part_path(dir, i, "db"), *errp = part_path(dir, i, "err");
  char err[2048] = "out of memory";
  int rc = part && errp ? work(o, trace, part, err, sizeof err) : 1;
  if (rc && errp) {
    FILE *f = fopen(errp, "w");
    if (f) {
      fputs(err, f);
      fclose(f);
    }
  }
  free(part);
  free(errp);
  /* exit, not _exit: nothing of the parent's is buffered (it flushed
   * before forking), and under ASan the leak check then covers workers. */
  exit(rc);
}

/* ---- the parent --------------------------------------------------------- */

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t len;
  char *t = cli_read_file(f, &len);
  fclose(f);
  return t;
}

/* What went wrong with a worker that did not succeed. */
static void worker_failure(const cli_batch_opts *o, const char *dir, int i, int status,
                           char *buf, size_t cap) {
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM && o->engine.timeout > 0) {
    snprintf(buf, cap, "batch: the trace ran past --timeout %g s and was stopped",
             o->engine.timeout);
  } else if (WIFSIGNALED(status)) {
    snprintf(buf, cap, "batch: the worker process ended by signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  } else {
    char *p = part_path(dir, i, "err"), *t = p ? read_text(p) : NULL;
    snprintf(buf, cap, "%s", t && *t ? t : "batch: the worker failed without saying why");
    free(t);
    free(p);
  }
}

/* Copies finished traces into the output while the next in order is
 * done. Returns -1 when the output cannot be written. */
static int merge_ready(const cli_batch_opts *o, pj_batch *b, job *jobs, int n, int *next,
                       const char *dir, int *failed) {
  for (; *next < n && jobs[*next].state == T_DONE; ++*next) {
    int i = *next, st = jobs[i].status, r;
    char *part = part_path(dir, i, "db");
    if (!part) return -1;
    char msg[2048];
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
      r = pj_batch_add(b, jobs[i].trace, part);
      if (r == 1) snprintf(msg, sizeof msg, "%s", pj_batch_errmsg(b));
    } else {
      worker_failure(o, dir, i, st, msg, sizeof msg);
      r = pj_batch_add_error(b, jobs[i].trace, msg) == PJ_OK ? 1 : -1;
    }
    unlink(part);
    free(part);
    char *errp = part_path(dir, i, "err");
    if (errp) unlink(errp);
    free(errp);
    if (r < 0) {
      fprintf(stderr, "error: %s\n", pj_batch_errmsg(b));
      return -1;
    }
    if (r == 1) {
      fprintf(stderr, "error: %s: %s\n", jobs[i].trace, msg);
      ++*failed;
    }
  }
  return 0;
}

int cli_batch(const cli_batch_opts *o) {
  char **paths = NULL;
  glob_t g;
  int n = expand(o, &paths, &g);
  if (n <= 0) {
    fprintf(stderr, n < 0 ? "error: --batch: out of memory\n" : "error: --batch: no traces\n");
    globfree(&g);
    return 1;
  }
  char tmpl[4096];
  const char *tmp = getenv("TMPDIR");
  snprintf(tmpl, sizeof tmpl, "%s/pipejit-batch-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  char *dir = mkdtemp(tmpl);
  if (!dir) {
    fprintf(stderr, "error: --batch: cannot make a folder for the workers' results (%s): %s\n",
            tmpl, strerror(errno));
    globfree(&g);
    return 1;
  }
  pj_batch *b = NULL;
  int width = o->jobs > 0 ? o->jobs : 1;
  job *jobs = calloc((size_t)n, sizeof *jobs);
  pid_t *pids = calloc((size_t)width, sizeof *pids);
  int rc = 0, failed = 0, next = 0, running = 0, started = 0;
  struct sigaction old[NSTOP];
  g_stop = 0;
  g_pids = pids;
  g_npids = pids ? width : 0;
  stop_install(old);
  if (!jobs || !pids || pj_batch_open(o->out, &b) != PJ_OK) {
    fprintf(stderr, "error: %s\n", jobs && pids ? pj_batch_errmsg(b) : "out of memory");
    rc = 1;
  }
  for (int i = 0; i < n && jobs; i++) jobs[i].trace = paths[i];
  int64_t t0 = cli_now_ns();
  fflush(NULL);   /* nothing buffered is written twice by the children */
  while (!rc && next < n && !g_stop) {
    while (running < width && started < n && !g_stop) {
      /* the handler sees the new pid in its slot from the fork on */
      sigset_t was;
      stop_block(&was);
      pid_t pid = fork();
      if (pid == 0) {
        sigprocmask(SIG_SETMASK, &was, NULL);
        child(o, dir, started, jobs[started].trace, old);
      }
      if (pid > 0) pid_slot(0, pid);
      sigprocmask(SIG_SETMASK, &was, NULL);
      if (pid < 0) {
        if (running) break;   /* wait for one to end, then try again */
        fprintf(stderr, "error: --batch: cannot start a worker: %s\n", strerror(errno));
        rc = 1;
        break;
      }
      jobs[started].pid = pid;
      jobs[started++].state = T_RUN;
      running++;
    }
    if (rc || g_stop) break;
    /* Which worker ended, left unreaped until its slot is free: the
     * handler never kills a pid that may already be another process's. */
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, "error: --batch: %s\n", strerror(errno));
      rc = 1;
      break;
    }
    pid_t pid = si.si_pid;
    sigset_t was;
    stop_block(&was);
    pid_slot(pid, 0);
    sigprocmask(SIG_SETMASK, &was, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    for (int i = 0; i < started; i++)
      if (jobs[i].state == T_RUN && jobs[i].pid == pid) {
        jobs[i].state = T_DONE;
        jobs[i].status = status;
        running--;
      }
    if (merge_ready(o, b, jobs, n, &next, dir, &failed) < 0) rc = 1;
  }
  /* After a fatal error or a stop: the workers still running are not
   * waited for. */
  for (int i = 0; (rc || g_stop) && jobs && i < started; i++)
    if (jobs[i].state == T_RUN) {
      kill(jobs[i].pid, SIGKILL);
      waitpid(jobs[i].pid, NULL, 0);
    }
  for (int i = 0; i < n; i++) {
    char *p = part_path(dir, i, "db"), *q = part_path(dir, i, "err");
    if (p) unlink(p);
    if (q) unlink(q);
    free(p);
    free(q);
  }
  rmdir(dir);
  int stop = g_stop;
  stop_restore(old);
  g_npids = 0;
  g_pids = NULL;
  free(pids);
  if (pj_batch_close(b) != PJ_OK && !rc) {
    fprintf(stderr, "error: --out %s could not be written completely\n", o->out);
    rc = 1;
  }
  if (stop) {
    fprintf(stderr, "batch: stopped by %s after %d of %d traces, %d failed; %s has those\n",
            strsignal(stop), next, n, failed, o->out);
    free(jobs);
    globfree(&g);
    signal(stop, SIG_DFL);   /* end as the signal would have ended pipejit */
    raise(stop);
    return 1;
  }
  if (!rc)
    fprintf(stderr, "batch: %d trace%s, %d ok, %d failed%s%s, into %s in %.1f s\n", n,
            n == 1 ? "" : "s", n - failed, failed, failed ? " (see " : "",
            failed ? "batch_errors)" : "", o->out, (double)(cli_now_ns() - t0) / 1e9);
  free(jobs);
  globfree(&g);
  return rc || failed ? 1 : 0;
}
