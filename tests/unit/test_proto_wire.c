/*
 * test_proto_wire.c — the zero-copy protobuf wire reader (import/
 * proto_wire.h), and the trace input layer (import/input.c) on what
 * protobuf import needs of it.
 *
 * Wire format edge cases on hand-made bytes; then the shared traces are
 * walked with the reader and the packet counts per payload field compared
 * with tests/proto/pbexpect.py, an independent decoder in Python; the
 * input layer is checked on gzip (plain, two members, cut short) copies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "import/input.h"
#include "tests/unit/proto_test.h"
#include "import/proto_wire.h"
#include "tests/unit/proto_writer.h"

#define SYSTING shared_trace("systing_trace.pb")
#define TOKIO shared_trace("tokio_test.pftrace")

static void test_varint(void **st) {
  (void)st;
  const uint8_t one[] = {0x05};
  const uint8_t two[] = {0xac, 0x02};   /* 300 */
  const uint8_t neg[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};   /* -1 */
  const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  const uint8_t cut[] = {0x80, 0x80};
  const uint8_t *p;
  uint64_t v;
  p = one;
  assert_true(pb_varint(&p, one + 1, &v));
  assert_int_equal(v, 5);
  p = two;
  assert_true(pb_varint(&p, two + 2, &v));
  assert_int_equal(v, 300);
  assert_ptr_equal(p, two + 2);
  p = neg;
  assert_true(pb_varint(&p, neg + 10, &v));
  assert_int_equal((int64_t)v, -1);
  p = over;
  assert_false(pb_varint(&p, over + sizeof over, &v));
  assert_ptr_equal(p, over);
  p = cut;
  assert_false(pb_varint(&p, cut + 2, &v));
}

static void test_fields(void **st) {
  (void)st;
  /* field 1 varint 150, field 2 "hi", field 3 fixed64 1.5, field 4 fixed32 7 */
  uint8_t msg[] = {0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i', 0x19, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f,
                   0x25, 7, 0, 0, 0};
  pb_reader r;
  pb_field f;
  pb_init(&r, msg, sizeof msg);
  assert_true(pb_next(&r, &f));
  assert_int_equal(f.id, 1);
  assert_int_equal(f.wt, PB_VARINT);
  assert_int_equal(f.v, 150);
  assert_true(pb_next(&r, &f));
  assert_int_equal(f.wt, PB_LEN);
  assert_true(pb_span_eq(f.s, "hi"));
  assert_ptr_equal(f.s.p, msg + 5);   /* in place */
  assert_true(pb_next(&r, &f));
  assert_true(pb_double(&f) == 1.5);
  assert_true(pb_next(&r, &f));
  assert_int_equal(f.id, 4);
  assert_int_equal(f.v, 7);
  assert_false(pb_next(&r, &f));
  assert_false(r.bad);
  /* last occurrence wins */
  uint8_t twice[] = {0x08, 0x01, 0x08, 0x02};
  assert_true(pb_find((pb_span){twice, 4}, 1, &f));
  assert_int_equal(f.v, 2);

  /* damage: a length past the end, a group, field number 0 */
  uint8_t longlen[] = {0x08, 0x01, 0x12, 0x05, 'a'};
  pb_init(&r, longlen, sizeof longlen);
  assert_true(pb_next(&r, &f));
  assert_false(pb_next(&r, &f));
  assert_true(r.bad);
  assert_ptr_equal(r.p, longlen + 2);
  uint8_t group[] = {0x0b, 0x0c};
  pb_init(&r, group, sizeof group);
  assert_false(pb_next(&r, &f));
  assert_true(r.bad);
  uint8_t zero[] = {0x00, 0x01};
  pb_init(&r, zero, sizeof zero);
  assert_false(pb_next(&r, &f));
  assert_true(r.bad);
  uint8_t cutfix[] = {0x09, 1, 2, 3};
  pb_init(&r, cutfix, sizeof cutfix);
  assert_false(pb_next(&r, &f));
  assert_true(r.bad);
}

static void test_repeated(void **st) {
  (void)st;
  /* packed field 3: 1, 300, 2; then unpacked 3: 9 */
  uint8_t msg[] = {0x1a, 0x04, 0x01, 0xac, 0x02, 0x02, 0x18, 0x09};
  pb_reader r;
  pb_field f;
  uint64_t got[8], v;
  int n = 0;
  pb_init(&r, msg, sizeof msg);
  while (pb_next(&r, &f)) {
    pb_rep it;
    pb_rep_init(&it, &f, PB_VARINT);
    while (pb_rep_next(&it, &v)) got[n++] = v;
    assert_false(it.bad);
  }
  assert_int_equal(n, 4);
  assert_int_equal(got[0], 1);
  assert_int_equal(got[1], 300);
  assert_int_equal(got[2], 2);
  assert_int_equal(got[3], 9);
  assert_int_equal(pb_packed_varint_count((pb_span){msg + 2, 4}), 3);
  /* packed fixed64 with a cut element */
  uint8_t fx[] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0};
  pb_field pf = {.id = 1, .wt = PB_LEN, .s = {fx, sizeof fx}};
  pb_rep it;
  pb_rep_init(&it, &pf, PB_FIXED64);
  assert_true(pb_rep_next(&it, &v));
  assert_int_equal(v, 1);
  assert_false(pb_rep_next(&it, &v));
  assert_true(it.bad);
}

/* ---- shared traces against the Python decoder ------------------------------------ */

static const uint32_t NON_PAYLOAD[] = {3, 8, 10, 12, 13, 41, 42, 58, 59, 79, 87, 98};

static int is_payload(uint32_t id) {
  for (size_t i = 0; i < sizeof NON_PAYLOAD / sizeof *NON_PAYLOAD; i++)
    if (NON_PAYLOAD[i] == id) return 0;
  return 1;
}

/* Packets and payload-field counts as pbexpect.py prints them. */
static void dump_counts(const im_input *in, char *out, size_t cap) {
  int64_t counts[256] = {0}, packets = 0;
  pb_reader r, pr;
  pb_field f, pf;
  pb_init(&r, (const uint8_t *)in->data, in->len);
  while (pb_next(&r, &f)) {
    if (f.id != 1 || f.wt != PB_LEN) continue;
    packets++;
    pb_init_span(&pr, f.s);
    while (pb_next(&pr, &pf))
      if (is_payload(pf.id) && pf.wt == PB_LEN) {
        if (pf.id < 256) counts[pf.id]++;
        break;
      }
  }
  assert_false(r.bad);
  size_t l = (size_t)snprintf(out, cap, "packets %lld\n", (long long)packets);
  for (int i = 0; i < 256; i++)
    if (counts[i]) l += (size_t)snprintf(out + l, cap - l, "field.%d %lld\n", i, (long long)counts[i]);
}

static void python_counts(const char *path, char *out, size_t cap) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "python3 tests/proto/pbexpect.py %s", path);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = 0;
  assert_int_equal(pclose(p), 0);
}

static void check_trace(const char *path) {
  im_input in;
  rt_err err = {0};
  assert_int_equal(im_input_open(&in, path, &err), 1);
  assert_int_equal(in.gzip, 0);
  char mine[4096], theirs[4096];
  dump_counts(&in, mine, sizeof mine);
  python_counts(path, theirs, sizeof theirs);
  assert_string_equal(mine, theirs);
  im_input_close(&in);
}

static void test_shared_traces(void **st) {
  (void)st;
  const char *a = SYSTING, *b = TOKIO;
  if (!a || !b) skip();
  check_trace(a);
  check_trace(b);
}

/* ---- gzip input ------------------------------------------------------------------ */

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*n);
  assert_int_equal(fread(b, 1, *n, f), *n);
  fclose(f);
  return b;
}

static uint8_t *gzip_bytes(const uint8_t *p, size_t n, size_t *out) {
  z_stream z;
  memset(&z, 0, sizeof z);
  assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  size_t cap = deflateBound(&z, n) + 64;
  uint8_t *o = malloc(cap);
  z.next_in = (Bytef *)p;
  z.avail_in = (uInt)n;
  z.next_out = o;
  z.avail_out = (uInt)cap;
  assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
  *out = cap - z.avail_out;
  deflateEnd(&z);
  return o;
}

static void test_gzip(void **st) {
  (void)st;
  size_t n, gn;
  const char *src = SYSTING;
  if (!src) skip();
  uint8_t *plain = slurp(src, &n);
  uint8_t *gz = gzip_bytes(plain, n, &gn);
  im_input in;
  rt_err err = {0};
  assert_int_equal(im_input_memory(&in, gz, gn, &err), 1);
  assert_int_equal(in.gzip, 1);
  assert_int_equal(in.len, n);
  assert_memory_equal(in.data, plain, n);
  assert_int_equal(in.file_size, (int64_t)gn);
  assert_int_equal(in.damaged, -1);
  im_input_close(&in);

  /* two members: the halves of the file, concatenated */
  size_t g1, g2;
  uint8_t *a = gzip_bytes(plain, n / 2, &g1), *b = gzip_bytes(plain + n / 2, n - n / 2, &g2);
  uint8_t *both = malloc(g1 + g2);
  memcpy(both, a, g1);
  memcpy(both + g1, b, g2);
  assert_int_equal(im_input_memory(&in, both, g1 + g2, &err), 1);
  assert_int_equal(in.len, n);
  assert_memory_equal(in.data, plain, n);
  im_input_close(&in);

  /* cut short: what inflated is kept and the damage says where */
  assert_int_equal(im_input_memory(&in, gz, gn / 2, &err), 1);
  assert_true(in.len > 0 && in.len < n);
  assert_memory_equal(in.data, plain, in.len);
  assert_true(in.damaged > 0);
  assert_non_null(strstr(in.damage_msg, "ends early"));
  im_input_close(&in);

  /* a file on disk, through the mapping path */
  char path[] = "/tmp/pj_proto_wire_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, gz, gn), (ssize_t)gn);
  close(fd);
  assert_int_equal(im_input_open(&in, path, &err), 1);
  assert_int_equal(in.len, n);
  assert_memory_equal(in.data, plain, n);
  im_input_release(&in, n / 2);   /* pages handed back; the rest still readable */
  assert_memory_equal(in.data + n / 2 + 4096, plain + n / 2 + 4096, n - n / 2 - 4096);
  im_input_close(&in);
  unlink(path);

  /* unreadable and empty files are errors naming the file */
  rt_err e2 = {0};
  assert_int_equal(im_input_open(&in, "/nonexistent/x.pftrace", &e2), 0);
  assert_non_null(strstr(e2.msg, "/nonexistent/x.pftrace"));
  free(plain), free(gz), free(a), free(b), free(both);
}

/* The tests' writer (proto_writer.h) against protoc --decode_raw: the
 * bytes it writes are the protobuf encoding protoc reads. Skipped when
 * protoc (protobuf-compiler, a test package of scripts/setup.sh) is absent. */
static void test_writer_protoc(void **st) {
  (void)st;
  if (system("protoc --version >/dev/null 2>&1") != 0) skip();
  pw w = {0};
  pw_begin(&w, 1);
  pw_u(&w, 8, 1000);
  pw_begin(&w, 11);
  pw_u(&w, 9, 1);
  pw_s(&w, 23, "work");
  pw_i(&w, 1, -2);
  pw_fixed64(&w, 47, 7);
  pw_end(&w);
  pw_end(&w);
  char path[] = "/tmp/pj_proto_writer_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, w.b, w.n), (ssize_t)w.n);
  close(fd);
  char cmd[128], out[1024];
  snprintf(cmd, sizeof cmd, "protoc --decode_raw < %s", path);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  assert_int_equal(pclose(p), 0);
  unlink(path);
  assert_string_equal(out, "1 {\n  8: 1000\n  11 {\n    9: 1\n    23: \"work\"\n"
                           "    1: 18446744073709551614\n    47: 0x0000000000000007\n  }\n}\n");
  pw_free(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_varint),         cmocka_unit_test(test_fields),
      cmocka_unit_test(test_repeated),       cmocka_unit_test(test_shared_traces),
      cmocka_unit_test(test_gzip),           cmocka_unit_test(test_writer_protoc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
