/*
 * budget.c — the per-run memory budget (see budget.h): a thread-local
 * pointer to the running query's counter, charged by the growth of
 * breaker state and credited by its frees.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "budget.h"

static _Thread_local rt_budget *rt_budget_cur;
static _Thread_local const char *rt_budget_stage;

rt_budget *rt_budget_use(rt_budget *b) {
  rt_budget *prev = rt_budget_cur;
  rt_budget_cur = b;
  return prev;
}

const char *rt_budget_owner(const char *stage) {
  const char *prev = rt_budget_stage;
  rt_budget_stage = stage;
  return prev;
}

/* The holder slot of `stage` (added when new; when every slot is taken
 * the last one stands for the rest). */
static int holder(rt_budget *b, const char *stage) {
  if (!stage) stage = "RUN";
  for (int i = 0; i < b->nholders; i++)
    if (b->holders[i].stage == stage || !strcmp(b->holders[i].stage, stage)) return i;
  if (b->nholders == RT_BUDGET_HOLDERS) return RT_BUDGET_HOLDERS - 1;
  b->holders[b->nholders] = (rt_budget_holder){stage, 0};
  return b->nholders++;
}

static bool charge(rt_budget *b, int h, int64_t bytes) {
  if (b->limit > 0 && (b->used > b->limit - bytes)) {
    if (!b->exceeded) {
      b->refused = bytes;
      b->refused_by = h;
      memcpy(b->at_refusal, b->holders, sizeof b->holders);
    }
    b->exceeded = 1;
    return false;
  }
  b->used += bytes;
  b->holders[h].bytes += bytes;
  if (b->used > b->peak) b->peak = b->used;
  return true;
}

static void credit(rt_budget *b, int h, int64_t bytes) {
  b->used = b->used > bytes ? b->used - bytes : 0;
  int64_t *hb = &b->holders[h].bytes;
  *hb = *hb > bytes ? *hb - bytes : 0;
}

void rt_budget_oom(void) {
  if (rt_budget_cur) rt_budget_cur->oom = 1;
}

bool rt_budget_charge(int64_t bytes) { return rt_budget_charge_as(rt_budget_stage, bytes); }

void rt_budget_credit(int64_t bytes) { rt_budget_credit_as(rt_budget_stage, bytes); }

bool rt_budget_charge_as(const char *stage, int64_t bytes) {
  rt_budget *b = rt_budget_cur;
  if (!b || bytes <= 0) return true;
  return charge(b, holder(b, stage), bytes);
}

void rt_budget_credit_as(const char *stage, int64_t bytes) {
  rt_budget *b = rt_budget_cur;
  if (!b || bytes <= 0) return;
  credit(b, holder(b, stage), bytes);
}

/* ---- charged blocks ------------------------------------------------------- */

#define MEM_HDR ((size_t)16)
#define MEM_HUGE ((size_t)2 << 20)

/* Just before the caller's pointer: the size it asked for, how far the
 * malloc'd base lies before it (MEM_HDR, or MEM_HUGE for rt_mem_big),
 * and the holder it was charged to (so the free credits that one). */
typedef struct mem_hdr {
  uint64_t size : 48;
  uint64_t holder : 16;   /* index + 1 in the budget of the run; 0: none */
  uint64_t shift;
} mem_hdr;

/* Charges a new block to the current owner; the holder to record. */
static bool mem_charge(size_t bytes, unsigned *h) {
  rt_budget *b = rt_budget_cur;
  *h = 0;
  if (!b) return true;
  int i = holder(b, rt_budget_stage);
  if (bytes > 0 && !charge(b, i, (int64_t)bytes)) return false;
  *h = (unsigned)i + 1;
  return true;
}

static void mem_credit(unsigned h, size_t bytes) {
  rt_budget *b = rt_budget_cur;
  if (!b || bytes == 0) return;
  /* a block of another run (or none) credits the current owner, clamped */
  int i = h && (int)h <= b->nholders ? (int)h - 1 : holder(b, rt_budget_stage);
  credit(b, i, (int64_t)bytes);
}

static mem_hdr *hdr_of(void *p) { return (mem_hdr *)((char *)p - MEM_HDR); }

void *rt_mem_alloc(size_t bytes) {
  unsigned hi;
  if (bytes >= ((size_t)1 << 48) || !mem_charge(bytes, &hi)) return NULL;
  mem_hdr *h = malloc(MEM_HDR + (bytes ? bytes : 1));
  if (!h) {
    mem_credit(hi, bytes);
    return NULL;
  }
  h->size = bytes;
  h->holder = hi;
  h->shift = MEM_HDR;
  return (char *)h + MEM_HDR;
}

void *rt_mem_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = rt_mem_alloc(n * size);
  if (p) memset(p, 0, n * size);
  return p;
}

void *rt_mem_big(size_t bytes) {
  if (bytes < MEM_HUGE) return rt_mem_alloc(bytes);
  size_t rounded = (bytes + MEM_HUGE - 1) & ~(MEM_HUGE - 1);
  unsigned hi;
  if (bytes >= ((size_t)1 << 48) || !mem_charge(bytes, &hi)) return NULL;
  void *base = NULL;
  /* one extra huge page in front holds the header (never touched past it) */
  if (posix_memalign(&base, MEM_HUGE, MEM_HUGE + rounded)) {
    mem_credit(hi, bytes);
    return NULL;
  }
  char *p = (char *)base + MEM_HUGE;
#ifdef MADV_HUGEPAGE
  madvise(p, rounded, MADV_HUGEPAGE);   /* advice only: failure is harmless */
#endif
  hdr_of(p)->size = bytes;
  hdr_of(p)->holder = hi;
  hdr_of(p)->shift = MEM_HUGE;
  return p;
}

void *rt_mem_realloc(void *p, size_t bytes) {
  if (!p) return rt_mem_alloc(bytes);
  mem_hdr *h = hdr_of(p);
  size_t old = (size_t)h->size;
  if (h->shift != MEM_HDR) {   /* an aligned block: move it */
    void *q = rt_mem_alloc(bytes);
    if (!q) return NULL;
    memcpy(q, p, old < bytes ? old : bytes);
    rt_mem_free(p);
    return q;
  }
  if (bytes >= ((size_t)1 << 48)) return NULL;
  /* the growth is charged to the block's holder, as its free will credit */
  rt_budget *b = rt_budget_cur;
  unsigned hi = h->holder;
  int i = b && hi && (int)hi <= b->nholders ? (int)hi - 1 : -1;
  if (b && bytes > old) {
    if (i < 0) i = holder(b, rt_budget_stage), hi = (unsigned)i + 1;
    if (!charge(b, i, (int64_t)(bytes - old))) return NULL;
  }
  mem_hdr *n = realloc(h, MEM_HDR + (bytes ? bytes : 1));
  if (!n) {
    if (b && bytes > old) credit(b, i, (int64_t)(bytes - old));
    return NULL;
  }
  if (bytes < old) mem_credit(hi, old - bytes);
  n->size = bytes;
  n->holder = hi;
  return (char *)n + MEM_HDR;
}

void rt_mem_free(void *p) {
  if (!p) return;
  mem_hdr *h = hdr_of(p);
  mem_credit(h->holder, (size_t)h->size);
  free((char *)p - h->shift);
}
