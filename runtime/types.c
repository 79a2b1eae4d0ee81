/*
 * types.c — names and sizes of column types, ASCII case folding, a string
 * copy (rt_strdup), and the monotonic clock.
 */
#include <stdlib.h>
#include <time.h>

#include "rt.h"

const char *rt_type_name(rt_type t) {
  switch (t) {
  case RT_ID: return "id";
  case RT_U32: return "uint32";
  case RT_I32: return "int32";
  case RT_I64: return "int64";
  case RT_F64: return "double";
  case RT_STR: return "string";
  case RT_BOOL: return "bool";
  case RT_NULLT: return "null";
  }
  return "?";
}

size_t rt_type_size(rt_type t) {
  switch (t) {
  case RT_ID: return 0;
  case RT_U32: case RT_I32: case RT_STR: return 4;
  case RT_I64: case RT_F64: case RT_BOOL: return 8;
  case RT_NULLT: return 0;
  }
  return 0;
}

static inline unsigned char fold(unsigned char c) {
  return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

char *rt_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

int rt_strieq(const char *a, const char *b) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (; *x && fold(*x) == fold(*y); x++, y++) {}
  return fold(*x) == fold(*y);
}

int rt_strnieq(const char *a, const char *b, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (size_t i = 0; i < n; i++) {
    if (fold(x[i]) != fold(y[i])) return 0;
    if (!x[i]) return 1;
  }
  return 1;
}

int64_t rt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
