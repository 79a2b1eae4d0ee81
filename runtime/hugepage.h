/*
 * hugepage.h — advice that a big array be backed by transparent huge pages.
 */
#ifndef PJ_RT_HUGEPAGE_H
#define PJ_RT_HUGEPAGE_H

#include <stddef.h>

/* Asks the kernel to back the 2 MiB-aligned part of [p, p + bytes) with
 * huge pages (madvise MADV_HUGEPAGE) when it spans at least RT_HUGE_MIN
 * bytes; a no-op elsewhere and when the kernel says no. For arrays read at
 * random (hash tables, per-group state): one TLB entry per 2 MiB instead of
 * 512, and one page fault instead of 512 as they grow. */
#define RT_HUGE_MIN ((size_t)4 << 20)
void rt_advise_huge(void *p, size_t bytes);

#endif
