/*
 * valset.c — the hash set of valset.h: open addressing with linear
 * probing, load at most 1/2, keys tagged by class.
 *
 * A double with an integral value in int64's range is kept (and probed) as
 * that integer, so integers and doubles meet by value with one lookup;
 * other doubles are keyed by their bits (-0.0 is integral: it is 0). NaN
 * is never held (SQLite stores it as NULL) and never found.
 */
#include <math.h>
#include <stdlib.h>

#include "valset.h"

enum { TAG_EMPTY = 0, TAG_INT, TAG_REAL, TAG_STR };

typedef struct slot {
  uint64_t key;
  uint8_t tag;
} slot;

struct rt_valset {
  slot *slots;
  uint64_t cap;         /* a power of two */
  int64_t n;
};

static uint64_t hash(uint64_t key, uint8_t tag) {
  uint64_t h = (key ^ ((uint64_t)tag << 61)) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

rt_valset *rt_valset_new(void) {
  rt_valset *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->cap = 16;
  s->slots = calloc(s->cap, sizeof *s->slots);
  if (!s->slots) {
    free(s);
    return NULL;
  }
  return s;
}

void rt_valset_free(rt_valset *s) {
  if (!s) return;
  free(s->slots);
  free(s);
}

static bool find(const rt_valset *s, uint64_t key, uint8_t tag) {
  uint64_t m = s->cap - 1;
  for (uint64_t i = hash(key, tag) & m;; i = (i + 1) & m) {
    const slot *e = &s->slots[i];
    if (e->tag == TAG_EMPTY) return false;
    if (e->tag == tag && e->key == key) return true;
  }
}

static void place(slot *slots, uint64_t cap, uint64_t key, uint8_t tag) {
  uint64_t m = cap - 1;
  uint64_t i = hash(key, tag) & m;
  while (slots[i].tag != TAG_EMPTY) i = (i + 1) & m;
  slots[i] = (slot){key, tag};
}

static int add(rt_valset *s, uint64_t key, uint8_t tag) {
  if (find(s, key, tag)) return 1;
  if ((uint64_t)(s->n + 1) * 2 > s->cap) {
    uint64_t cap = s->cap * 2;
    slot *v = calloc(cap, sizeof *v);
    if (!v) return 0;
    for (uint64_t i = 0; i < s->cap; i++)
      if (s->slots[i].tag != TAG_EMPTY) place(v, cap, s->slots[i].key, s->slots[i].tag);
    free(s->slots);
    s->slots = v;
    s->cap = cap;
  }
  place(s->slots, s->cap, key, tag);
  s->n++;
  return 1;
}

/* The integer a double equals, when it equals one (2^63 does not fit). */
static bool integral(double v, int64_t *out) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0) || v != floor(v)) return false;
  *out = (int64_t)v;
  return true;
}

static uint64_t bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

int rt_valset_add_i64(rt_valset *s, int64_t v) { return add(s, (uint64_t)v, TAG_INT); }

int rt_valset_add_f64(rt_valset *s, double v) {
  int64_t i;
  if (isnan(v)) return 1;
  return integral(v, &i) ? add(s, (uint64_t)i, TAG_INT) : add(s, bits(v), TAG_REAL);
}

int rt_valset_add_str(rt_valset *s, uint32_t id) { return add(s, id, TAG_STR); }

bool rt_valset_has_i64(const rt_valset *s, int64_t v) { return find(s, (uint64_t)v, TAG_INT); }

bool rt_valset_has_f64(const rt_valset *s, double v) {
  int64_t i;
  if (isnan(v)) return false;
  return integral(v, &i) ? find(s, (uint64_t)i, TAG_INT) : find(s, bits(v), TAG_REAL);
}

bool rt_valset_has_str(const rt_valset *s, uint32_t id) { return find(s, id, TAG_STR); }

int64_t rt_valset_count(const rt_valset *s) { return s->n; }
