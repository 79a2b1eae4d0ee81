/*
 * hugepage.c — rt_advise_huge: MADV_HUGEPAGE on the aligned middle of a
 * big allocation (see hugepage.h). With THP in "madvise" mode (Debian's
 * default) this is what turns them on; in "always" mode it changes nothing.
 */
#include "hugepage.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

void rt_advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (!p || bytes < RT_HUGE_MIN) return;
  uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  uintptr_t hi = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}
