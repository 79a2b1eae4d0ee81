/*
 * strpool.c — the engine's string interner.
 *
 * Every distinct byte string gets a dense 32-bit id (0 is ""), so equality
 * and grouping of strings compare ids. Storage:
 *  - the bytes live in chunks that never move (1 MiB, or one chunk per big
 *    string), NUL-terminated and preceded by their 32-bit length, so a pointer from rt_str_get stays valid for
 *    the pool's life even while more strings are interned — which lets
 *    callers intern a slice of a pooled string without copying it first;
 *  - `ents[id]` holds pointer, length and hash of each string;
 *  - `slots` is an open-addressed table (linear probing, load <= 1/2) of
 *    {bytes, hash, id+1}; keeping the hash in the slot means a probe only
 *    touches string bytes when the full 32-bit hashes agree.
 * Not thread-safe (the engine is used by one thread at a time).
 */
#include <stdio.h>
#include <stdlib.h>

#include "rt.h"
#include "strfn.h"

typedef struct str_ent {
  const char *s;
  uint32_t len;
  uint32_t hash;
} str_ent;

/* A slot carries the string's address so a probe reaches the bytes (and
 * the length stored just before them) without touching `ents`: one cache
 * miss fewer per lookup on big pools. */
typedef struct str_slot {
  const char *s;
  uint32_t hash;
  uint32_t id1;   /* id + 1; 0 = empty */
} str_slot;

typedef struct str_chunk {
  struct str_chunk *next;
  size_t size, used;
  char data[];
} str_chunk;

struct rt_strpool {
  str_ent *ents;
  uint32_t n, cap;
  str_slot *slots;
  uint32_t mask;
  str_chunk *chunks;
  size_t bytes;
  char *scratch;        /* rt_strpool_scratch (strfn.h) */
  size_t scratch_cap;
  size_t max_len;       /* longest string interned (rt_strpool_set_max_len) */
  char error[128];      /* why the last refused string was refused */
};

#define CHUNK ((size_t)1 << 20)

/* A fast hash for short keys: 8 bytes at a time, multiply-xorshift mixing
 * (in the style of wyhash/murmur finalizers). Quality matters only enough
 * for linear probing; speed matters more (every scanned SQLite string is
 * interned). */
static uint32_t str_hash(const char *s, size_t len) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (len * 0xff51afd7ed558ccdull);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
  }
  if (i < len) {
    uint64_t w = 0;
    memcpy(&w, s + i, len - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (uint32_t)h;
}

static const char *heap_put(rt_strpool *p, const char *s, size_t len) {
  size_t need = 4 + len + 1;
  str_chunk *c = p->chunks;
  if (!c || c->size - c->used < need) {
    size_t size = need > CHUNK / 4 ? need : CHUNK;
    str_chunk *n = malloc(sizeof *n + size);
    if (!n) return NULL;
    n->size = size;
    n->used = 0;
    if (size == need && c) {
      /* Big string: own chunk behind the current one, which stays open. */
      n->next = c->next;
      c->next = n;
    } else {
      n->next = c;
      p->chunks = n;
    }
    c = n;
  }
  char *d = c->data + c->used;
  uint32_t len32 = (uint32_t)len;
  memcpy(d, &len32, 4);
  d += 4;
  if (len) memcpy(d, s, len);
  d[len] = 0;
  c->used += need;
  p->bytes += need;
  return d;
}

static void slot_insert(str_slot *slots, uint32_t mask, const char *s, uint32_t hash,
                        uint32_t id1) {
  uint32_t i = hash & mask;
  while (slots[i].id1) i = (i + 1) & mask;
  slots[i] = (str_slot){s, hash, id1};
}

static int grow_slots(rt_strpool *p) {
  uint32_t nmask = p->mask * 2 + 1;
  str_slot *ns = calloc((size_t)nmask + 1, sizeof *ns);
  if (!ns) return 0;
  for (uint32_t i = 0; i < p->n; i++) slot_insert(ns, nmask, p->ents[i].s, p->ents[i].hash, i + 1);
  free(p->slots);
  p->slots = ns;
  p->mask = nmask;
  return 1;
}

rt_strpool *rt_strpool_new(void) {
  rt_strpool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->cap = 1024;
  p->mask = 2047;
  p->max_len = UINT32_MAX;
  p->ents = malloc(p->cap * sizeof *p->ents);
  p->slots = calloc((size_t)p->mask + 1, sizeof *p->slots);
  if (!p->ents || !p->slots) {
    rt_strpool_free(p);
    return NULL;
  }
  rt_str_intern(p, "", 0);   /* id 0 */
  return p;
}

void rt_strpool_free(rt_strpool *p) {
  if (!p) return;
  str_chunk *c = p->chunks;
  while (c) {
    str_chunk *n = c->next;
    free(c);
    c = n;
  }
  free(p->ents);
  free(p->slots);
  free(p->scratch);
  free(p);
}

static uint32_t oom(rt_strpool *p) {
  snprintf(p->error, sizeof p->error, "out of memory");
  return 0;
}

bool rt_str_fits(rt_strpool *p, size_t len) {
  if (len <= p->max_len) return true;
  /* The length is left out: the backends may meet different overlong
   * rows first, and must say the same thing. */
  snprintf(p->error, sizeof p->error, "string too long: a string holds at most %zu bytes",
           p->max_len);
  return false;
}

void rt_strpool_set_max_len(rt_strpool *p, size_t n) { p->max_len = n < UINT32_MAX ? n : UINT32_MAX; }

void rt_strpool_set_oom(rt_strpool *p) { oom(p); }

const char *rt_strpool_error(const rt_strpool *p) { return p->error[0] ? p->error : "out of memory"; }

/* Returns the id of the bytes s[0..len); interns them when new. Returns 0
 * (the empty string) only for "" — or when the string is refused (too
 * long, out of memory), with the reason for rt_strpool_error. */
/* Probes for s: its id, or RT_STR_FAILED with *slot at the empty slot
 * where it would go. */
static uint32_t probe(const rt_strpool *p, const char *s, size_t len, uint32_t h, uint32_t *slot) {
  uint32_t i = h & p->mask;
  for (;;) {
    const str_slot *sl = &p->slots[i];
    if (!sl->id1) break;
    if (sl->hash == h) {
      uint32_t have;
      memcpy(&have, sl->s - 4, 4);
      if (have == len && memcmp(sl->s, s, len) == 0) return sl->id1 - 1;
    }
    i = (i + 1) & p->mask;
  }
  *slot = i;
  return RT_STR_FAILED;
}

uint32_t rt_str_find(const rt_strpool *p, const char *s, size_t len) {
  uint32_t slot;
  return probe(p, s, len, str_hash(s, len), &slot);
}

uint32_t rt_str_intern(rt_strpool *p, const char *s, size_t len) {
  uint32_t h = str_hash(s, len);
  uint32_t i = 0;
  uint32_t found = probe(p, s, len, h, &i);
  if (found != RT_STR_FAILED) return found;
  if (!rt_str_fits(p, len)) return 0;
  if (p->n == UINT32_MAX - 2) {
    snprintf(p->error, sizeof p->error, "too many distinct strings");
    return 0;
  }
  if (p->n == p->cap) {
    str_ent *ne = realloc(p->ents, (size_t)p->cap * 2 * sizeof *ne);
    if (!ne) return oom(p);
    p->ents = ne;
    p->cap *= 2;
  }
  const char *d = heap_put(p, s, len);
  if (!d) return oom(p);
  uint32_t id = p->n++;
  p->ents[id] = (str_ent){d, (uint32_t)len, h};
  /* Keep load <= 1/2 so probes stay short. */
  if ((uint64_t)p->n * 2 > (uint64_t)p->mask + 1) {
    if (!grow_slots(p)) {
      p->n--;
      return oom(p);
    }
  } else {
    p->slots[i] = (str_slot){d, h, id + 1};
  }
  return id;
}

const char *rt_str_get(const rt_strpool *p, uint32_t id, size_t *len) {
  const str_ent *e = &p->ents[id];
  if (len) *len = e->len;
  return e->s;
}

int rt_str_cmp(const rt_strpool *p, uint32_t a, uint32_t b) {
  if (a == b) return 0;
  const str_ent *x = &p->ents[a], *y = &p->ents[b];
  uint32_t n = x->len < y->len ? x->len : y->len;
  int c = n ? memcmp(x->s, y->s, n) : 0;
  if (c) return c;
  return x->len < y->len ? -1 : x->len > y->len ? 1 : 0;
}

uint32_t rt_strpool_count(const rt_strpool *p) { return p->n; }

size_t rt_strpool_bytes(const rt_strpool *p) {
  return p->bytes + (size_t)p->cap * sizeof(str_ent) + ((size_t)p->mask + 1) * sizeof(str_slot);
}

char *rt_strpool_scratch(rt_strpool *p, size_t n) {
  if (n > p->scratch_cap) {
    size_t cap = p->scratch_cap ? p->scratch_cap : 256;
    while (cap < n) cap *= 2;
    char *d = realloc(p->scratch, cap);
    if (!d) return oom(p), NULL;
    p->scratch = d;
    p->scratch_cap = cap;
  }
  return p->scratch ? p->scratch : (n == 0 ? rt_strpool_scratch(p, 1) : NULL);
}
