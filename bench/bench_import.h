/*
 * bench_import.h — the trace import workloads of pipejit-bench
 * (bench/bench_import.c).
 */
#ifndef PJ_BENCH_IMPORT_H
#define PJ_BENCH_IMPORT_H

#include <stdint.h>

typedef struct bench_import_row {
  char file[128];
  double mb;            /* file size, MB (1e6 bytes) */
  double ms;            /* median wall time, open to tables finished */
  double mb_per_s;
  double cpu_ms, mb_per_cpu_s;   /* median CPU time of the child (user + sys) */
  double peak_mb;       /* peak RSS above the process's before, MiB (worst run) */
  double tables_mb;     /* bytes of the finished tables and strings, MiB */
  int64_t slices, sched, counters;
} bench_import_row;

/* Writes a generated protobuf trace of about target bytes (slices on 16
 * thread sequences, counters, compact_sched and cpu_frequency on 8 cpus). */
int bench_gen_proto(const char *path, uint64_t target);
/* import_proto: the shared traces given, then the generated one (1 GB,
 * quick: 64 MB; made once in $TMPDIR). Returns the rows written or -1. */
int bench_import_proto(int repeat, int quick, const char *const *shared, int nshared,
                       bench_import_row *rows, int cap);

/* A generated Chrome JSON trace of about target bytes; import_json: the
 * JSON importer on the shared traces given and on it (1 GB, quick 64 MB). */
int bench_gen_json(const char *path, uint64_t target);
int bench_import_json(int repeat, int quick, const char *const *shared, int nshared,
                      bench_import_row *rows, int cap);

/* The measuring child (pipejit-bench --import-child json|proto FILE FD):
 * imports FILE and writes its result to FD. Returns 2 on bad arguments. */
int bench_import_child(int argc, char **argv);

#endif
