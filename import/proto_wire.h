/*
 * proto_wire.h — a zero-copy reader of the protobuf wire format.
 *
 * No generated code and no allocation: a message is a byte span, and
 * pb_next() walks its fields in place, handing back the field number, the
 * wire type and either the scalar value (varint, fixed64, fixed32) or the
 * span of a length-delimited payload (strings, bytes, sub-messages, packed
 * arrays), which points into the same buffer. Callers switch on field
 * numbers (TRACES.md §3 lists them) and recurse into sub-messages with
 * another reader over the payload span.
 *
 * Malformed input never reads past the span: a varint longer than 10
 * bytes, a length running past the end, or a group / reserved wire type
 * (3, 4, 6, 7) stops the reader and sets `bad`; the fields read before
 * the damage stay valid, as protozero does. Unknown fields are the
 * caller's to skip (the reader already stepped over their payload).
 *
 * Repeated scalars may be packed (one length-delimited blob) or not; the
 * pb_rep iterator accepts both forms of one field.
 */
#ifndef PJ_PROTO_WIRE_H
#define PJ_PROTO_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

/* A byte span inside the trace buffer (not NUL-terminated). */
typedef struct pb_span {
  const uint8_t *p;
  size_t n;
} pb_span;

typedef struct pb_field {
  uint32_t id;       /* field number */
  uint8_t wt;        /* wire type: PB_VARINT, PB_FIXED64, PB_LEN, PB_FIXED32 */
  uint64_t v;        /* the value for scalar wire types */
  pb_span s;         /* the payload for PB_LEN */
} pb_field;

typedef struct pb_reader {
  const uint8_t *p, *end;
  bool bad;          /* a malformed field stopped the walk at p */
} pb_reader;

static inline void pb_init(pb_reader *r, const uint8_t *p, size_t n) {
  r->p = p;
  r->end = p + n;
  r->bad = false;
}
static inline void pb_init_span(pb_reader *r, pb_span s) { pb_init(r, s.p, s.n); }

/* Decodes one varint at *pp (< end); advances *pp. Returns false (and
 * leaves *pp) when the varint is cut by end or longer than 10 bytes. */
static inline bool pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
  const uint8_t *p = *pp;
  if (p < end && *p < 0x80) {   /* the common one-byte case */
    *out = *p;
    *pp = p + 1;
    return true;
  }
  uint64_t v = 0;
  for (int shift = 0; shift < 70 && p < end; shift += 7) {
    uint8_t b = *p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (b < 0x80) {
      *out = v;
      *pp = p;
      return true;
    }
  }
  return false;
}

/* Reads the next field; false at the end of the span or on damage (then
 * r->bad is set and r->p stays at the damaged field). */
static inline bool pb_next(pb_reader *r, pb_field *f) {
  if (r->p >= r->end) return false;
  const uint8_t *p = r->p;
  f->s.p = NULL;
  f->s.n = 0;
  uint64_t tag;
  if (!pb_varint(&p, r->end, &tag) || tag >> 3 == 0 || tag >> 3 > 0x1fffffff) goto bad;
  f->id = (uint32_t)(tag >> 3);
  f->wt = (uint8_t)(tag & 7);
  switch (f->wt) {
  case PB_VARINT:
    if (!pb_varint(&p, r->end, &f->v)) goto bad;
    break;
  case PB_FIXED64:
    if (r->end - p < 8) goto bad;
    memcpy(&f->v, p, 8);   /* little-endian hosts only (x86-64, arm64) */
    p += 8;
    break;
  case PB_FIXED32: {
    uint32_t v32;
    if (r->end - p < 4) goto bad;
    memcpy(&v32, p, 4);
    f->v = v32;
    p += 4;
    break;
  }
  case PB_LEN: {
    uint64_t n;
    if (!pb_varint(&p, r->end, &n) || n > (uint64_t)(r->end - p)) goto bad;
    f->s.p = p;
    f->s.n = (size_t)n;
    f->v = n;
    p += n;
    break;
  }
  default:
    goto bad;   /* groups (3, 4) and the reserved wire types 6, 7 */
  }
  r->p = p;
  return true;
bad:
  r->bad = true;
  return false;
}

/* Typed reads of a scalar field's value. */
static inline int64_t pb_i64(const pb_field *f) { return (int64_t)f->v; }
static inline int32_t pb_i32(const pb_field *f) { return (int32_t)(int64_t)f->v; }
static inline uint32_t pb_u32(const pb_field *f) { return (uint32_t)f->v; }
static inline bool pb_bool(const pb_field *f) { return f->v != 0; }
static inline double pb_double(const pb_field *f) {
  double d;
  if (f->wt == PB_FIXED32) {
    float x;
    uint32_t v32 = (uint32_t)f->v;
    memcpy(&x, &v32, 4);
    return x;
  }
  memcpy(&d, &f->v, 8);
  return d;
}
static inline int64_t pb_zigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Finds the last occurrence of a field in a message (non-repeated fields:
 * the last one wins). Returns false when absent. */
static inline bool pb_find(pb_span msg, uint32_t id, pb_field *out) {
  pb_reader r;
  pb_field f;
  bool found = false;
  pb_init_span(&r, msg);
  while (pb_next(&r, &f))
    if (f.id == id) *out = f, found = true;
  return found;
}

/* ---- repeated scalars, packed or not ------------------------------------ */

/* Iterates the values of one occurrence of a repeated scalar field: a
 * packed blob (wire type 2) yields each element decoded as `elem` (PB_VARINT,
 * PB_FIXED64 or PB_FIXED32); a scalar occurrence yields its one value.
 *   pb_rep it; uint64_t v;
 *   pb_rep_init(&it, &f, PB_VARINT);
 *   while (pb_rep_next(&it, &v)) …
 *   if (it.bad) … a cut or overlong element ended the blob early */
typedef struct pb_rep {
  const uint8_t *p, *end;
  uint8_t elem;
  bool single, done, bad;
  uint64_t one;
} pb_rep;

static inline void pb_rep_init(pb_rep *it, const pb_field *f, uint8_t elem) {
  it->elem = elem;
  it->bad = false;
  it->done = false;
  if (f->wt == PB_LEN) {
    it->single = false;
    it->p = f->s.p;
    it->end = f->s.p + f->s.n;
  } else {
    it->single = true;
    it->one = f->v;
    it->p = it->end = NULL;
  }
}

static inline bool pb_rep_next(pb_rep *it, uint64_t *v) {
  if (it->single) {
    if (it->done) return false;
    it->done = true;
    *v = it->one;
    return true;
  }
  if (it->p >= it->end) return false;
  switch (it->elem) {
  case PB_FIXED64:
    if (it->end - it->p < 8) break;
    memcpy(v, it->p, 8);
    it->p += 8;
    return true;
  case PB_FIXED32: {
    uint32_t v32;
    if (it->end - it->p < 4) break;
    memcpy(&v32, it->p, 4);
    it->p += 4;
    *v = v32;
    return true;
  }
  default:
    if (pb_varint(&it->p, it->end, v)) return true;
    break;
  }
  it->bad = true;
  it->p = it->end;
  return false;
}

/* Number of elements in a packed varint blob (bytes without the high bit). */
static inline size_t pb_packed_varint_count(pb_span s) {
  size_t n = 0;
  for (size_t i = 0; i < s.n; i++) n += s.p[i] < 0x80;
  return n;
}

/* Equality of a span with a C string. */
static inline bool pb_span_eq(pb_span s, const char *lit) {
  size_t n = strlen(lit);
  return s.n == n && memcmp(s.p, lit, n) == 0;
}

#endif
