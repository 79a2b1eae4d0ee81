/*
 * fuzz_json.c — libFuzzer target: arbitrary bytes as a Chrome JSON trace
 * (import/json*.c), imported into a fresh trace builder and finished into
 * a catalog. It must never crash, hang or leak, whatever the input: cut
 * events, bad escapes and numbers, deep nesting, wrong types, systrace
 * text and Fuchsia records that do not parse.
 *
 * Seeds (fuzz/corpus/fuzz_json): slices of the shared traces (the first
 * events of lthi_cats and fuchsia_trace, closed) and small traces for
 * every phase, systemTraceEvents text and the Fuchsia form.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import/builder.h"
#include "import/input.h"
#include "import/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  rt_strpool *sp = rt_strpool_new();
  im_options opt = {.zero_is_swapper = 0};
  im_trace *t = sp ? im_trace_new(sp, &opt) : NULL;
  if (t) {
    im_input in;
    memset(&in, 0, sizeof in);
    in.data = (const char *)data;
    in.len = size;
    in.damaged = -1;
    rt_err err = {0};
    pj_trace_info info;
    memset(&info, 0, sizeof info);
    if (im_json_import(t, &in, &info, NULL, &err)) {
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
