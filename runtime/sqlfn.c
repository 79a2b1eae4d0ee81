/*
 * sqlfn.c — round, sign, replace, hex, unicode and char as SQLite 3.40's
 * func.c computes them (strfn.h). NULL arguments are the callers' (the
 * binder lowers the NULL rules these functions have beyond "any NULL
 * argument gives NULL": hex(NULL) is '', char(NULL) is U+0000,
 * unicode('') is NULL, replace(x, '', NULL) is x).
 */
#include <sqlite3.h>
#include <string.h>

#include "strfn.h"

/* Interns a result; a refused one is RT_STR_FAILED, never ''. */
static uint32_t put(rt_strpool *p, const char *s, size_t n) {
  if (n == 0) return 0;
  uint32_t id = rt_str_intern(p, s, n);
  return id ? id : RT_STR_FAILED;
}

double rt_fn_round(double r, int64_t digits) {
  int n = (int)(int32_t)(uint32_t)(uint64_t)digits;   /* sqlite3_value_int */
  if (n > 30) n = 30;
  if (n < 0) n = 0;
  /* Beyond 2^52 a double has no fraction: nothing to round. */
  if (r < -4503599627370496.0 || r > 4503599627370496.0) return r;
  if (n == 0) return (double)(int64_t)(r + (r < 0 ? -0.5 : +0.5));
  char buf[128];
  sqlite3_snprintf((int)sizeof buf, buf, "%.*f", n, r);   /* 16 significant digits */
  return rt_fn_atof(buf, strlen(buf));
}

int64_t rt_fn_sign(double x) { return x < 0.0 ? -1 : x > 0.0 ? 1 : 0; }

uint32_t rt_fn_replace(rt_strpool *p, uint32_t x, uint32_t y, uint32_t z) {
  size_t ns, np, nr;
  const char *s = rt_str_get(p, x, &ns);
  const char *pat = rt_str_get(p, y, &np);
  const char *rep = rt_str_get(p, z, &nr);
  if (np == 0 || pat[0] == 0) return x;
  /* Count first, so the result's length is known (and checked) up front. */
  size_t count = 0;
  for (size_t i = 0; i + np <= ns;) {
    if (s[i] == pat[0] && !memcmp(s + i, pat, np)) count++, i += np;
    else i++;
  }
  if (count == 0) return x;
  size_t n = ns - count * np;
  if (nr && count > (SIZE_MAX - n) / nr) {
    rt_str_fits(p, SIZE_MAX);   /* sets "string too long" */
    return RT_STR_FAILED;
  }
  n += count * nr;
  if (!rt_str_fits(p, n)) return RT_STR_FAILED;
  char *out = rt_strpool_scratch(p, n ? n : 1);
  if (!out) return RT_STR_FAILED;
  size_t j = 0, i = 0;
  while (i + np <= ns) {
    if (s[i] == pat[0] && !memcmp(s + i, pat, np)) {
      memcpy(out + j, rep, nr);
      j += nr;
      i += np;
    } else {
      out[j++] = s[i++];
    }
  }
  memcpy(out + j, s + i, ns - i);
  return put(p, out, n);
}

uint32_t rt_fn_hex(rt_strpool *p, uint32_t s) {
  static const char digits[] = "0123456789ABCDEF";
  size_t n;
  const unsigned char *z = (const unsigned char *)rt_str_get(p, s, &n);
  if (n > SIZE_MAX / 2 || !rt_str_fits(p, n * 2)) return RT_STR_FAILED;
  char *out = rt_strpool_scratch(p, n * 2 + 1);
  if (!out) return RT_STR_FAILED;
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[z[i] >> 4];
    out[2 * i + 1] = digits[z[i] & 15];
  }
  return put(p, out, n * 2);
}

int64_t rt_fn_unicode(const rt_strpool *p, uint32_t s) {
  const unsigned char *z = (const unsigned char *)rt_str_get(p, s, NULL);
  if (!z[0]) return -1;
  return z[0] < 0x80 ? z[0] : rt_utf8_read(&z);
}

int rt_utf8_put(uint32_t c, unsigned char *o) {
  if (c < 0x80) {
    o[0] = (unsigned char)c;
    return 1;
  }
  if (c < 0x800) {
    o[0] = (unsigned char)(0xc0 + ((c >> 6) & 0x1f));
    o[1] = (unsigned char)(0x80 + (c & 0x3f));
    return 2;
  }
  if (c < 0x10000) {
    o[0] = (unsigned char)(0xe0 + ((c >> 12) & 0x0f));
    o[1] = (unsigned char)(0x80 + ((c >> 6) & 0x3f));
    o[2] = (unsigned char)(0x80 + (c & 0x3f));
    return 3;
  }
  o[0] = (unsigned char)(0xf0 + ((c >> 18) & 0x07));
  o[1] = (unsigned char)(0x80 + ((c >> 12) & 0x3f));
  o[2] = (unsigned char)(0x80 + ((c >> 6) & 0x3f));
  o[3] = (unsigned char)(0x80 + (c & 0x3f));
  return 4;
}

uint32_t rt_fn_char(rt_strpool *p, int64_t x) {
  if (x < 0 || x > 0x10ffff) x = 0xfffd;
  unsigned char o[4];
  int n = rt_utf8_put((uint32_t)x, o);
  return put(p, (const char *)o, (size_t)n);
}
