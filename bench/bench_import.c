/*
 * bench_import.c — workload import_proto of pipejit-bench: the protobuf
 * importer end to end (open, read pass, sort, parse, tables finished), as
 * trace_processor_shell measures "Trace loaded: <MB> MB in <s>s" (TRACES.md
 * §5.3), on the shared traces and on a generated trace of slices, sched
 * and counters (bench_gen_proto, ~1 GB by default, --quick 64 MB,
 * PJ_BENCH_PROTO_MB=n for n MB).
 *
 * Each import runs in a process of its own (fork, then exec of the bench
 * itself with --import-child, so it starts from a fresh heap as a user's
 * would): the child reports the import's wall time and CPU time (user +
 * sys, which a loaded machine does not inflate), peak RSS above its RSS
 * before the import (VmHWM − VmRSS), and the bytes of the tables it built
 * (column arrays, validity bits, the string pool), whose ratio is the
 * "peak <= 1.5x tables" target.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench_import.h"
#include "import/builder.h"
#include "import/input.h"
#include "import/load.h"
#include "import/proto.h"
#include "runtime/rt.h"
#include "tests/unit/proto_writer.h"

/* ---- the generated trace ---------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

enum { GEN_THREADS = 16, GEN_CPUS = 8, GEN_NAMES = 64, GEN_COUNTERS = 4, PID = 1000 };

static void flush_pw(pw *w, FILE *f, uint64_t *bytes) {
  fwrite(w->b, 1, w->n, f);
  *bytes += w->n;
  w->n = 0;
}

/* Writes a trace of about `target` bytes: per thread a sequence (SDK
 * style: cleared state, interned names and categories, nested slices,
 * some with a debug annotation), process-scoped counter tracks, and
 * ftrace bundles per cpu with compact_sched switches and wakings and a
 * cpu_frequency event. Sequences write in chunks, so the track events are
 * not globally time-ordered (as with real traced buffers). */
int bench_gen_proto(const char *path, uint64_t target) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  pw w = {0};
  uint64_t bytes = 0;
  rng = 0x9e3779b97f4a7c15ull;
  /* clock snapshot: BOOTTIME is the trace clock */
  pw_begin(&w, 1);
  pw_begin(&w, 6);
  pw_begin(&w, 1), pw_u(&w, 1, 6), pw_u(&w, 2, 1000000), pw_end(&w);
  pw_begin(&w, 1), pw_u(&w, 1, 3), pw_u(&w, 2, 500000), pw_end(&w);
  pw_u(&w, 2, 6);
  pw_end(&w);
  pw_end(&w);
  /* the process, its threads and counter tracks */
  pw_begin(&w, 1);
  pw_u(&w, 10, 1);
  pw_begin(&w, 60), pw_u(&w, 1, 1);
  pw_begin(&w, 3), pw_u(&w, 1, PID), pw_s(&w, 6, "generated"), pw_end(&w);
  pw_end(&w);
  pw_end(&w);
  for (int i = 0; i < GEN_THREADS; i++) {
    char name[32];
    snprintf(name, sizeof name, "worker-%d", i);
    pw_begin(&w, 1);
    pw_u(&w, 10, (uint64_t)(i + 2));
    pw_u(&w, 13, 1);   /* incremental state cleared */
    pw_begin(&w, 60), pw_u(&w, 1, 100 + (uint64_t)i), pw_u(&w, 5, 1);
    pw_begin(&w, 4), pw_u(&w, 1, PID), pw_u(&w, 2, PID + 1 + (uint64_t)i), pw_s(&w, 5, name), pw_end(&w);
    pw_end(&w);
    pw_begin(&w, 12);   /* interned data of this sequence */
    for (int n = 1; n <= GEN_NAMES; n++) {
      char nm[32];
      snprintf(nm, sizeof nm, "function_%d", n);
      pw_begin(&w, 2), pw_u(&w, 1, (uint64_t)n), pw_s(&w, 2, nm), pw_end(&w);
    }
    for (int c = 1; c <= 8; c++) {
      char nm[32];
      snprintf(nm, sizeof nm, "category_%d", c);
      pw_begin(&w, 1), pw_u(&w, 1, (uint64_t)c), pw_s(&w, 2, nm), pw_end(&w);
    }
    pw_begin(&w, 3), pw_u(&w, 1, 1), pw_s(&w, 2, "iteration"), pw_end(&w);
    pw_end(&w);
    pw_end(&w);
  }
  for (int j = 0; j < GEN_COUNTERS; j++) {
    char name[32];
    snprintf(name, sizeof name, "counter_%d", j);
    pw_begin(&w, 1);
    pw_u(&w, 10, 1);
    pw_begin(&w, 60), pw_u(&w, 1, 500 + (uint64_t)j), pw_u(&w, 5, 1), pw_s(&w, 2, name);
    pw_begin(&w, 8), pw_u(&w, 3, 3), pw_end(&w);
    pw_end(&w);
    pw_end(&w);
  }
  flush_pw(&w, f, &bytes);

  int64_t tts[GEN_THREADS];   /* per thread: time and open depth */
  int depth[GEN_THREADS];
  for (int i = 0; i < GEN_THREADS; i++) tts[i] = 2000000 + i * 37, depth[i] = 0;
  int64_t cts = 2000000;      /* ftrace / counter time */
  int64_t last_pid[GEN_CPUS], cpu_ts[GEN_CPUS];   /* per cpu: last pid in, last switch time */
  for (int c = 0; c < GEN_CPUS; c++) last_pid[c] = 0, cpu_ts[c] = cts;
  uint64_t iter = 0;
  while (bytes < target) {
    /* one chunk per thread: 48 track events */
    for (int i = 0; i < GEN_THREADS; i++) {
      for (int k = 0; k < 48; k++) {
        tts[i] += 50 + (int64_t)(next_rand() % 2000);
        int begin = depth[i] == 0 || (depth[i] < 6 && next_rand() % 2);
        pw_begin(&w, 1);
        pw_u(&w, 8, (uint64_t)tts[i]);
        pw_u(&w, 10, (uint64_t)(i + 2));
        pw_u(&w, 13, 2);   /* needs incremental state */
        pw_begin(&w, 11);
        pw_u(&w, 11, 100 + (uint64_t)i);
        if (begin) {
          pw_u(&w, 9, 1);
          pw_u(&w, 10, 1 + next_rand() % GEN_NAMES);
          pw_u(&w, 3, 1 + next_rand() % 8);
          if (next_rand() % 8 == 0) {
            pw_begin(&w, 4), pw_u(&w, 1, 1), pw_u(&w, 4, iter), pw_end(&w);
          }
          depth[i]++;
        } else {
          pw_u(&w, 9, 2);
          depth[i]--;
        }
        pw_end(&w);
        pw_end(&w);
      }
    }
    /* counters: 64 samples */
    for (int k = 0; k < 64; k++) {
      cts += 100 + (int64_t)(next_rand() % 500);
      pw_begin(&w, 1);
      pw_u(&w, 8, (uint64_t)cts);
      pw_u(&w, 10, 1);
      pw_begin(&w, 11);
      pw_u(&w, 9, 4);
      pw_u(&w, 11, 500 + next_rand() % GEN_COUNTERS);
      pw_d(&w, 44, (double)(next_rand() % 1000000));
      pw_end(&w);
      pw_end(&w);
    }
    /* ftrace: one bundle per cpu, 96 switches and 48 wakings */
    for (int c = 0; c < GEN_CPUS; c++) {
      uint64_t sw_ts[96], sw_state[96], sw_pid[96], sw_prio[96], sw_comm[96];
      uint64_t wk_ts[48], wk_pid[48], wk_cpu[48], wk_prio[48], wk_comm[48], wk_flags[48];
      int64_t t = cpu_ts[c], prev = t;
      for (int k = 0; k < 96; k++) {
        t += 200 + (int64_t)(next_rand() % 600);
        sw_ts[k] = (uint64_t)(k ? t - prev : t);
        prev = t;
        int64_t pid = next_rand() % 4 ? PID + 1 + (int64_t)(next_rand() % GEN_THREADS) : 0;
        sw_state[k] = last_pid[c] && next_rand() % 2 ? 1 : 0;
        sw_pid[k] = (uint64_t)pid;
        sw_prio[k] = 120;
        sw_comm[k] = pid ? (uint64_t)(pid - PID) : 0;
        last_pid[c] = pid;
      }
      int64_t wt = cpu_ts[c];
      cpu_ts[c] = t;
      t = wt, prev = t;
      for (int k = 0; k < 48; k++) {
        t += 400 + (int64_t)(next_rand() % 1200);
        wk_ts[k] = (uint64_t)(k ? t - prev : t);
        prev = t;
        int64_t pid = PID + 1 + (int64_t)(next_rand() % GEN_THREADS);
        wk_pid[k] = (uint64_t)pid;
        wk_cpu[k] = next_rand() % GEN_CPUS;
        wk_prio[k] = 120;
        wk_comm[k] = (uint64_t)(pid - PID);
        wk_flags[k] = 1;
      }
      pw_begin(&w, 1);
      pw_u(&w, 10, 100);
      pw_begin(&w, 1);
      pw_u(&w, 1, (uint64_t)c);
      pw_begin(&w, 4);
      pw_s(&w, 5, "swapper");
      for (int i = 0; i < GEN_THREADS; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "worker-%d", i);
        pw_s(&w, 5, nm);
      }
      pw_packed(&w, 1, sw_ts, 96), pw_packed(&w, 2, sw_state, 96), pw_packed(&w, 3, sw_pid, 96);
      pw_packed(&w, 4, sw_prio, 96), pw_packed(&w, 6, sw_comm, 96);
      pw_packed(&w, 7, wk_ts, 48), pw_packed(&w, 8, wk_pid, 48), pw_packed(&w, 9, wk_cpu, 48);
      pw_packed(&w, 10, wk_prio, 48), pw_packed(&w, 11, wk_comm, 48), pw_packed(&w, 12, wk_flags, 48);
      pw_end(&w);
      /* a cpu_frequency event */
      pw_begin(&w, 2);
      pw_u(&w, 1, (uint64_t)cts), pw_u(&w, 2, 0);
      pw_begin(&w, 11), pw_u(&w, 1, 1000000 + next_rand() % 2000000), pw_u(&w, 2, (uint64_t)c), pw_end(&w);
      pw_end(&w);
      pw_end(&w);
      pw_end(&w);
    }
    iter++;
    flush_pw(&w, f, &bytes);
  }
  pw_free(&w);
  return fclose(f) == 0 ? 0 : -1;
}

/* ---- measuring one import ------------------------------------------------------------ */

static int64_t status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  int64_t v = -1;
  size_t k = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, k)) v = strtoll(line + k, NULL, 10);
  fclose(f);
  return v;
}

/* Bytes of the finished tables: every column array and validity vector
 * once (views share their base table's columns), and the strings. */
static int64_t tables_bytes(rt_catalog *cat, rt_strpool *sp) {
  int64_t b = (int64_t)rt_strpool_bytes(sp);
  const void *seen[4096];
  int nseen = 0;
  for (int i = 0; i < rt_catalog_count(cat); i++) {
    rt_table *t = rt_catalog_at(cat, i);
    for (int c = 0; c < t->ncols; c++) {
      const rt_column *col = &t->cols[c];
      int dup = 0;
      for (int k = 0; k < nseen && !dup; k++) dup = seen[k] == col->data;
      if (dup || (!col->data && !col->valid)) continue;
      if (nseen < 4096) seen[nseen++] = col->data;
      b += (int64_t)rt_type_size(col->type) * t->nrows;
      if (col->valid) b += (int64_t)RT_BITWORDS(t->nrows) * 8;
    }
  }
  return b;
}

typedef struct child_result {
  int ok;
  double ms, cpu_ms;   /* wall in the child; its CPU time (user + sys, from wait4) */
  int64_t peak_kb, tables;
  int64_t slices, sched, counters;
  int64_t bytes;        /* JSON: uncompressed bytes (0: the file size) */
} child_result;

/* Which importer the child runs: 0 protobuf, 1 Chrome JSON. */
static int import_json;

/* The JSON importer as pj_engine_load_trace runs it (import/load.c). */
static int json_file(im_trace *t, const char *path, int64_t *bytes, rt_err *err) {
  im_input in;
  if (!im_input_open_stream(&in, path, err)) return 0;
  im_trace_file(t, path, in.file_size, "json", in.gzip, (int64_t)in.len, in.head, in.headlen);
  int ok = im_json_import(t, &in, NULL, NULL, err);
  while (!in.eof && im_input_more(&in, in.len) > 0) {}
  *bytes = (int64_t)(in.win_off + in.len);
  if (in.gzip) im_trace_file_size(t, *bytes);
  im_input_close(&in);
  return ok;
}

static double cpu_ms_self(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void child(const char *path, int fd) {
  child_result r = {0};
  int64_t base = status_kb("VmRSS:");
  int64_t t0 = rt_now_ns();
  double c0 = cpu_ms_self();
  rt_strpool *sp = rt_strpool_new();
  im_options opt = {.zero_is_swapper = !import_json};
  im_trace *t = im_trace_new(sp, &opt);
  rt_catalog *cat = rt_catalog_new();
  rt_err err = {0};
  char warning[256];
  r.ok = t && cat &&
         (import_json ? json_file(t, path, &r.bytes, &err) : pb_import_file(t, path, warning, sizeof warning, &err));
  if (r.ok) {
    r.slices = im_rows(t, IM_T_SLICE);
    r.sched = im_rows(t, IM_T_SCHED);
    r.counters = im_rows(t, IM_T_COUNTER);
    r.ok = im_trace_finish(t, cat, &err);
  }
  im_trace_free(t);   /* the builder's scratch: the catalog keeps the tables */
  r.ms = (double)(rt_now_ns() - t0) / 1e6;
  r.peak_kb = status_kb("VmHWM:") - base;
  if (r.ok) r.tables = tables_bytes(cat, sp);
  else fprintf(stderr, "%s: %s: %s\n", import_json ? "import_json" : "import_proto", path, err.msg);
  r.cpu_ms = cpu_ms_self() - c0;
  if (write(fd, &r, sizeof r) != sizeof r) _exit(1);
  _exit(0);
}

int bench_import_child(int argc, char **argv) {
  if (argc != 5) return 2;
  import_json = !strcmp(argv[2], "json");
  child(argv[3], atoi(argv[4]));
  return 1;
}

static int measure(const char *path, child_result *out) {
  int p[2];
  if (pipe(p) != 0) return -1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    /* A fresh process (exec), so the import starts from a new malloc
     * state and page tables, as a user's would: a forked child would
     * inherit the bench's heap (and the mmap threshold its frees set). */
    close(p[0]);
    char fd[16];
    snprintf(fd, sizeof fd, "%d", p[1]);
    execl("/proc/self/exe", "pipejit-bench", "--import-child", import_json ? "json" : "proto", path,
          fd, (char *)NULL);
    child(path, p[1]);   /* no exec: measured in the fork */
  }
  close(p[1]);
  ssize_t n = read(p[0], out, sizeof *out);
  close(p[0]);
  int st;
  waitpid(pid, &st, 0);
  return n == sizeof *out && out->ok ? 0 : -1;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int run_imports(int repeat, int quick, const char *const *shared, int nshared,
                       bench_import_row *rows, int cap) {
  const char *paths[8];
  int n = 0;
  for (int i = 0; i < nshared && n < 7; i++) paths[n++] = shared[i];
  /* the generated trace, made once per size in the temp directory */
  static char gen[512];
  uint64_t target = quick ? (64ull << 20) : (1ull << 30);
  if (getenv("PJ_BENCH_PROTO_MB")) target = strtoull(getenv("PJ_BENCH_PROTO_MB"), NULL, 10) << 20;
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  const char *what = import_json ? "import_json" : "import_proto";
  snprintf(gen, sizeof gen, "%s/pipejit-bench-%s-%llu.%s", tmp, import_json ? "json" : "proto",
           (unsigned long long)(target >> 20), import_json ? "json" : "pftrace");
  struct stat st;
  if (stat(gen, &st) != 0 || (uint64_t)st.st_size < target) {
    fprintf(stderr, "%s: writing %s (%llu MB)…\n", what, gen, (unsigned long long)(target >> 20));
    if ((import_json ? bench_gen_json(gen, target) : bench_gen_proto(gen, target)) != 0) return -1;
  }
  paths[n++] = gen;
  int nrows = 0;
  for (int i = 0; i < n && nrows < cap; i++) {
    if (stat(paths[i], &st) != 0) continue;
    double ms[16], cpu[16];
    child_result r = {0}, worst = {0};
    int reps = repeat < 1 ? 1 : repeat > 16 ? 16 : repeat;
    if (paths[i] == gen && reps > 3) reps = 3;
    for (int k = 0; k < reps; k++) {
      if (measure(paths[i], &r) != 0) return -1;
      ms[k] = r.ms;
      cpu[k] = r.cpu_ms;
      if (r.peak_kb > worst.peak_kb) worst = r;
    }
    qsort(ms, (size_t)reps, sizeof *ms, cmp_d);
    qsort(cpu, (size_t)reps, sizeof *cpu, cmp_d);
    double med = reps % 2 ? ms[reps / 2] : (ms[reps / 2 - 1] + ms[reps / 2]) / 2;
    double cmed = reps % 2 ? cpu[reps / 2] : (cpu[reps / 2 - 1] + cpu[reps / 2]) / 2;
    bench_import_row *o = &rows[nrows++];
    const char *base = strrchr(paths[i], '/');
    snprintf(o->file, sizeof o->file, "%s", base ? base + 1 : paths[i]);
    o->mb = (double)(r.bytes ? r.bytes : st.st_size) / 1e6;   /* JSON: uncompressed */
    o->ms = med;
    o->mb_per_s = o->mb / (med / 1e3);
    o->cpu_ms = cmed;
    o->mb_per_cpu_s = o->mb / (cmed / 1e3);
    o->peak_mb = (double)worst.peak_kb / 1024.0;
    o->tables_mb = (double)r.tables / (1024.0 * 1024.0);
    o->slices = r.slices;
    o->sched = r.sched;
    o->counters = r.counters;
  }
  return nrows;
}

int bench_import_proto(int repeat, int quick, const char *const *shared, int nshared,
                       bench_import_row *rows, int cap) {
  import_json = 0;
  return run_imports(repeat, quick, shared, nshared, rows, cap);
}

int bench_import_json(int repeat, int quick, const char *const *shared, int nshared,
                      bench_import_row *rows, int cap) {
  import_json = 1;
  return run_imports(repeat, quick, shared, nshared, rows, cap);
}

/* ---- the generated JSON trace ---------------------------------------------------- */

/* A Chrome JSON trace of about `target` bytes, in the shape Chrome writes:
 * per thread nested X slices (some with args, a few B/E pairs and thread
 * instants), process counters, async b/e pairs and v2 flows, thread and
 * process names; written in per-thread chunks, so not globally in ts
 * order. */
int bench_gen_json(const char *path, uint64_t target) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  static char buf[1 << 16];
  setvbuf(f, buf, _IOFBF, sizeof buf);
  rng = 0x51ed27;
  uint64_t bytes = (uint64_t)fprintf(f, "{\"traceEvents\":[\n");
  int first = 1;
#define EV(...) (bytes += (uint64_t)fprintf(f, "%s", first ? "" : ",\n"), first = 0, \
                 bytes += (uint64_t)fprintf(f, __VA_ARGS__))
  for (int t = 0; t < GEN_THREADS; t++)
    EV("{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"worker %d\"}}",
       PID + t % 4, PID * 10 + t, t);
  for (int p = 0; p < 4; p++)
    EV("{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"proc %d\"}}",
       PID + p, PID + p, p);
  int64_t clock[GEN_THREADS] = {0};
  uint64_t flow = 1;
  while (bytes < target) {
    for (int t = 0; t < GEN_THREADS && bytes < target; t++) {
      int pid = PID + t % 4, tid = PID * 10 + t;
      /* a chunk of 64 top-level slices with children */
      for (int k = 0; k < 64; k++) {
        int64_t ts = clock[t] += 5 + (int64_t)(next_rand() % 50);
        int64_t dur = 200 + (int64_t)(next_rand() % 400);
        unsigned name = (unsigned)(next_rand() % GEN_NAMES);
        EV("{\"pid\":%d,\"tid\":%d,\"ts\":%lld,\"ph\":\"X\",\"cat\":\"toplevel\",\"name\":\"Task%u\","
           "\"dur\":%lld,\"tts\":%lld,\"tdur\":%lld,\"args\":{\"src_file\":\"../../base/file%u.cc\","
           "\"line\":%u}}",
           pid, tid, (long long)ts, name, (long long)dur, (long long)ts / 3, (long long)dur / 2,
           name % 7, (unsigned)(next_rand() % 500));
        int64_t c = ts + 1;
        for (int d = 0; d < 3 && c + 40 < ts + dur; d++) {
          int64_t cd = 10 + (int64_t)(next_rand() % 30);
          EV("{\"pid\":%d,\"tid\":%d,\"ts\":%lld.%03u,\"ph\":\"X\",\"cat\":\"cc,gpu\",\"name\":\"Child%u\",\"dur\":%lld}",
             pid, tid, (long long)c, (unsigned)(next_rand() % 1000), (unsigned)(next_rand() % GEN_NAMES),
             (long long)cd);
          c += cd + 1;
        }
        if (k % 8 == 0) {
          EV("{\"pid\":%d,\"tid\":%d,\"ts\":%lld,\"ph\":\"B\",\"cat\":\"ipc\",\"name\":\"Msg\",\"args\":{\"id\":%u}}",
             pid, tid, (long long)(ts + dur + 2), (unsigned)k);
          EV("{\"pid\":%d,\"tid\":%d,\"ts\":%lld,\"ph\":\"E\"}", pid, tid, (long long)(ts + dur + 4));
          clock[t] = ts + dur + 5;
        } else {
          clock[t] = ts + dur;
        }
        if (k % 16 == 3)
          EV("{\"pid\":%d,\"tid\":%d,\"ts\":%lld,\"ph\":\"i\",\"s\":\"t\",\"name\":\"Mark\"}", pid, tid,
             (long long)clock[t]);
        if (k % 16 == 5)
          EV("{\"pid\":%d,\"tid\":%d,\"ts\":%lld,\"ph\":\"C\",\"name\":\"mem\",\"args\":{\"heap\":%u,\"rss\":%u}}",
             pid, tid, (long long)clock[t], (unsigned)(next_rand() % 100000), (unsigned)(next_rand() % 100000));
        if (k % 32 == 7) {
          EV("{\"pid\":%d,\"tid\":%d,\"ts\":%lld,\"ph\":\"b\",\"cat\":\"net\",\"name\":\"Req\",\"id\":\"0x%llx\"}",
             pid, tid, (long long)clock[t], (unsigned long long)flow);
          EV("{\"pid\":%d,\"tid\":%d,\"ts\":%lld,\"ph\":\"e\",\"cat\":\"net\",\"name\":\"Req\",\"id\":\"0x%llx\"}",
             pid, tid, (long long)clock[t] + 300, (unsigned long long)flow);
          flow++;
        }
      }
    }
  }
  bytes += (uint64_t)fprintf(f, "\n]}\n");
#undef EV
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}
