/*
 * err.c — sticky errors. The first error set on an rt_err wins; later ones
 * are dropped so the message the user sees names the root cause, not a
 * consequence of it.
 */
#include <stdarg.h>
#include <stdio.h>

#include "rt.h"

int rt_errorf(rt_err *e, int offset, const char *fmt, ...) {
  if (!e || e->set) return 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  e->set = 1;
  e->offset = offset;
  return 0;
}
