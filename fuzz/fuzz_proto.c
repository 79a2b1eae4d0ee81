/*
 * fuzz_proto.c — libFuzzer target: arbitrary bytes as a Perfetto protobuf
 * trace (import/proto.h), imported into a fresh trace builder and
 * finished into a catalog. It must never crash, hang or leak, whatever
 * the damage: cut packets, bad varints, lengths past the end, nested
 * garbage, compressed_packets that do not inflate.
 *
 * Seeds (fuzz/corpus/fuzz_proto) are whole-packet prefixes of the shared
 * traces (track events with descriptors, ftrace bundles with
 * compact_sched, process trees, clock snapshots) and a gzip one.
 */
#include <stdint.h>
#include <stdlib.h>

#include "import/builder.h"
#include "import/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  rt_strpool *sp = rt_strpool_new();
  im_options opt = {.zero_is_swapper = 1};
  im_trace *t = sp ? im_trace_new(sp, &opt) : NULL;
  if (t) {
    rt_err err = {0};
    char warning[256];
    if (pb_import_memory(t, data, size, "fuzz.pftrace", warning, sizeof warning, &err)) {
      rt_catalog *cat = rt_catalog_new();
      if (cat) {
        im_trace_finish(t, cat, &err);
        rt_catalog_free(cat);
      }
    }
    im_trace_free(t);
  }
  if (sp) rt_strpool_free(sp);
  return 0;
}
