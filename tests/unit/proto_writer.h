/*
 * proto_writer.h — a tiny protobuf writer for the importer's tests:
 * varint / fixed / length-delimited fields and nested messages (begun and
 * ended like brackets), enough to write any TracePacket by field number.
 *
 *   pw w = {0};
 *   pw_begin(&w, 1);              // Trace.packet
 *   pw_u(&w, 8, 1000);            //   timestamp
 *   pw_begin(&w, 11);             //   track_event
 *   pw_u(&w, 9, 1);               //     type SLICE_BEGIN
 *   pw_s(&w, 23, "work");         //     name
 *   pw_end(&w); pw_end(&w);
 *   … w.b[0, w.n) is the trace; pw_free(&w).
 */
#ifndef PJ_TEST_PROTO_WRITER_H
#define PJ_TEST_PROTO_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pw {
  uint8_t *b;
  size_t n, cap;
  size_t stack[32];   /* start of each open message's payload */
  int depth;
} pw;

static inline void pw_raw(pw *w, const void *p, size_t n) {
  if (w->n + n > w->cap) {
    w->cap = (w->n + n) * 2 + 64;
    w->b = realloc(w->b, w->cap);
  }
  memcpy(w->b + w->n, p, n);
  w->n += n;
}
static inline size_t pw_varint_enc(uint8_t *o, uint64_t v) {
  size_t k = 0;
  while (v >= 0x80) o[k++] = (uint8_t)(v | 0x80), v >>= 7;
  o[k++] = (uint8_t)v;
  return k;
}
static inline void pw_varint(pw *w, uint64_t v) {
  uint8_t o[10];
  pw_raw(w, o, pw_varint_enc(o, v));
}
static inline void pw_tag(pw *w, uint32_t field, int wt) { pw_varint(w, ((uint64_t)field << 3) | (uint64_t)wt); }
/* varint field (uint, int as 64-bit two's complement, bool, enum) */
static inline void pw_u(pw *w, uint32_t f, uint64_t v) { pw_tag(w, f, 0), pw_varint(w, v); }
static inline void pw_i(pw *w, uint32_t f, int64_t v) { pw_u(w, f, (uint64_t)v); }
static inline void pw_fixed64(pw *w, uint32_t f, uint64_t v) { pw_tag(w, f, 1), pw_raw(w, &v, 8); }
static inline void pw_d(pw *w, uint32_t f, double d) {
  uint64_t v;
  memcpy(&v, &d, 8);
  pw_fixed64(w, f, v);
}
static inline void pw_bytes(pw *w, uint32_t f, const void *p, size_t n) {
  pw_tag(w, f, 2), pw_varint(w, n), pw_raw(w, p, n);
}
static inline void pw_s(pw *w, uint32_t f, const char *s) { pw_bytes(w, f, s, strlen(s)); }
/* A packed repeated varint field. */
static inline void pw_packed(pw *w, uint32_t f, const uint64_t *v, size_t n) {
  uint8_t tmp[10];
  size_t len = 0;
  for (size_t i = 0; i < n; i++) len += pw_varint_enc(tmp, v[i]);
  pw_tag(w, f, 2), pw_varint(w, len);
  for (size_t i = 0; i < n; i++) pw_varint(w, v[i]);
}
/* Opens a sub-message in field f; pw_end closes it. */
static inline void pw_begin(pw *w, uint32_t f) {
  pw_tag(w, f, 2);
  w->stack[w->depth++] = w->n;
}
static inline void pw_end(pw *w) {
  size_t start = w->stack[--w->depth], len = w->n - start;
  uint8_t o[10];
  size_t k = pw_varint_enc(o, len);
  pw_raw(w, o, k);   /* grow by k, then shift the payload right */
  memmove(w->b + start + k, w->b + start, len);
  memcpy(w->b + start, o, k);
}
static inline void pw_free(pw *w) {
  free(w->b);
  memset(w, 0, sizeof *w);
}

#endif
