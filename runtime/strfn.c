/*
 * strfn.c — SQLite-compatible scalar string and conversion helpers (see
 * strfn.h). The matching and slicing rules follow SQLite 3.40's func.c and
 * util.c closely, including their quirks (32-bit substr arguments, NUL bytes
 * ending text for length/substr/like), because both backends must give the
 * rows SQLite would.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "strfn.h"

/* Interns a helper's result. A non-empty result the pool refused (too
 * long, out of memory) is RT_STR_FAILED, never the empty string: the
 * backends stop the query with rt_strpool_error. */
static uint32_t put(rt_strpool *p, const char *s, size_t n) {
  if (n == 0) return 0;
  uint32_t id = rt_str_intern(p, s, n);
  return id ? id : RT_STR_FAILED;
}

typedef unsigned char u8;

/* ---- UTF-8 ---------------------------------------------------------------- */

/* Moves past one character: a lead byte >= 0xc0 takes its continuation
 * bytes along; any other byte is one character (SQLITE_SKIP_UTF8). */
#define SKIP_UTF8(z)                                       \
  do {                                                     \
    if (*((z)++) >= 0xc0)                                  \
      while ((*(z) & 0xc0) == 0x80) (z)++;                 \
  } while (0)

static const u8 utf8_trans1[] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
    0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19,
    0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
    0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x01, 0x02, 0x03,
    0x04, 0x05, 0x06, 0x07, 0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
};

/* Decodes one character as sqlite3Utf8Read does (invalid → U+FFFD). */
uint32_t rt_utf8_read(const unsigned char **pz) {
  uint32_t c = *((*pz)++);
  if (c >= 0xc0) {
    c = utf8_trans1[c - 0xc0];
    while ((**pz & 0xc0) == 0x80) c = (c << 6) + (0x3f & *((*pz)++));
    if (c < 0x80 || (c & 0xFFFFF800) == 0xD800 || (c & 0xFFFFFFFE) == 0xFFFE) c = 0xFFFD;
  }
  return c;
}
#define UTF8_READ(z) ((z)[0] < 0x80 ? (uint32_t) * ((z)++) : rt_utf8_read(&(z)))

static inline uint32_t ascii_lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }
static inline uint32_t ascii_upper(uint32_t c) { return c >= 'a' && c <= 'z' ? c - 32 : c; }

static const u8 *text(const rt_strpool *p, uint32_t s, size_t *len) {
  return (const u8 *)rt_str_get(p, s, len);
}

/* ---- LIKE and GLOB -------------------------------------------------------- */

enum { MATCH = 0, NOMATCH = 1, NOWILDCARDMATCH = 2 };

typedef struct match_info {
  uint32_t all, one, set;   /* '%' '_' 0 for LIKE; '*' '?' '[' for GLOB;
                               0 when an ESCAPE of that character took it */
  bool nocase;
  uint32_t esc;             /* LIKE's ESCAPE character, or 0 */
} match_info;

/* SQLite's patternCompare over NUL-terminated text. NOWILDCARDMATCH means
 * "no match, and a later '*' cannot help either", which cuts the search.
 * An ESCAPE character (LIKE only) makes the next pattern character
 * literal; at the end of the pattern it matches nothing. */
static int pattern_cmp(const u8 *pat, const u8 *str, const match_info *mi) {
  uint32_t c, c2;
  const u8 *escaped = NULL;   /* just past an escaped pattern character */
  while ((c = UTF8_READ(pat)) != 0) {
    if (c == mi->all) {
      /* Collapse runs of '*' and '?'; each '?' still eats one character. */
      while ((c = UTF8_READ(pat)) == mi->all || (c == mi->one && mi->one)) {
        if (c == mi->one && rt_utf8_read(&str) == 0) return NOWILDCARDMATCH;
      }
      if (c == 0) return MATCH;
      if (mi->esc && c == mi->esc) {
        c = rt_utf8_read(&pat);
        if (c == 0) return NOWILDCARDMATCH;
      }
      if (mi->set && c == mi->set) {
        /* '[...]' right after '*': try every suffix (rare, slow path). */
        while (*str) {
          int r = pattern_cmp(pat - 1, str, mi);
          if (r != NOMATCH) return r;
          SKIP_UTF8(str);
        }
        return NOWILDCARDMATCH;
      }
      /* Jump to each occurrence of the next literal character and recurse. */
      if (c < 0x80) {
        char stop[3];
        if (mi->nocase) {
          stop[0] = (char)ascii_upper(c);
          stop[1] = (char)ascii_lower(c);
          stop[2] = 0;
        } else {
          stop[0] = (char)c;
          stop[1] = 0;
        }
        for (;;) {
          str += strcspn((const char *)str, stop);
          if (str[0] == 0) break;
          str++;
          int r = pattern_cmp(pat, str, mi);
          if (r != NOMATCH) return r;
        }
      } else {
        while ((c2 = UTF8_READ(str)) != 0) {
          if (c2 != c) continue;
          int r = pattern_cmp(pat, str, mi);
          if (r != NOMATCH) return r;
        }
      }
      return NOWILDCARDMATCH;
    }
    if (mi->set && c == mi->set) {
      uint32_t prior = 0;
      int seen = 0, invert = 0;
      c = rt_utf8_read(&str);
      if (c == 0) return NOMATCH;
      c2 = rt_utf8_read(&pat);
      if (c2 == '^') {
        invert = 1;
        c2 = rt_utf8_read(&pat);
      }
      if (c2 == ']') {   /* a leading ']' is literal */
        if (c == ']') seen = 1;
        c2 = rt_utf8_read(&pat);
      }
      while (c2 && c2 != ']') {
        if (c2 == '-' && pat[0] != ']' && pat[0] != 0 && prior > 0) {
          c2 = rt_utf8_read(&pat);
          if (c >= prior && c <= c2) seen = 1;
          prior = 0;
        } else {
          if (c == c2) seen = 1;
          prior = c2;
        }
        c2 = rt_utf8_read(&pat);
      }
      if (c2 == 0 || (seen ^ invert) == 0) return NOMATCH;
      continue;
    }
    if (mi->esc && c == mi->esc) {
      c = rt_utf8_read(&pat);
      if (c == 0) return NOMATCH;
      escaped = pat;
    }
    c2 = UTF8_READ(str);
    if (c == c2) continue;
    if (mi->nocase && c < 0x80 && c2 < 0x80 && ascii_lower(c) == ascii_lower(c2)) continue;
    if (c == mi->one && mi->one && pat != escaped && c2 != 0) continue;
    return NOMATCH;
  }
  return *str == 0 ? MATCH : NOMATCH;
}

int rt_fn_like(const rt_strpool *p, uint32_t pattern, uint32_t s) {
  static const match_info like = {'%', '_', 0, true, 0};
  return pattern_cmp(text(p, pattern, NULL), text(p, s, NULL), &like) == MATCH;
}

int rt_fn_like_esc(const rt_strpool *p, uint32_t pattern, uint32_t s, uint32_t esc) {
  /* As SQLite: an ESCAPE of '%' or '_' also stops it being a wildcard. */
  match_info like = {'%', '_', 0, true, esc};
  if (esc == '%') like.all = 0;
  if (esc == '_') like.one = 0;
  return pattern_cmp(text(p, pattern, NULL), text(p, s, NULL), &like) == MATCH;
}

int rt_fn_glob(const rt_strpool *p, uint32_t pattern, uint32_t s) {
  static const match_info glob = {'*', '?', '[', false, 0};
  return pattern_cmp(text(p, pattern, NULL), text(p, s, NULL), &glob) == MATCH;
}

/* ---- case, length --------------------------------------------------------- */

static uint32_t map_case(rt_strpool *p, uint32_t s, bool upper) {
  size_t n;
  const u8 *z = text(p, s, &n);
  size_t i = 0;
  /* Most strings are already in the target case: find the first byte to
   * change before copying anything. */
  for (; i < n; i++)
    if (upper ? (z[i] >= 'a' && z[i] <= 'z') : (z[i] >= 'A' && z[i] <= 'Z')) break;
  if (i == n) return s;
  char *buf = rt_strpool_scratch(p, n);
  if (!buf) return RT_STR_FAILED;
  memcpy(buf, z, i);
  for (; i < n; i++) buf[i] = (char)(upper ? ascii_upper(z[i]) : ascii_lower(z[i]));
  return put(p, buf, n);
}

uint32_t rt_fn_lower(rt_strpool *p, uint32_t s) { return map_case(p, s, false); }
uint32_t rt_fn_upper(rt_strpool *p, uint32_t s) { return map_case(p, s, true); }

int64_t rt_fn_length(const rt_strpool *p, uint32_t s) {
  const u8 *z = text(p, s, NULL);
  int64_t len = 0;
  while (*z) {
    len++;
    SKIP_UTF8(z);
  }
  return len;
}

/* ---- substr, instr -------------------------------------------------------- */

/* SQLite reads substr's arguments with sqlite3_value_int: the low 32 bits. */
static int64_t as_int32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

static uint32_t substr_impl(rt_strpool *p, uint32_t s, int64_t start, int64_t count, bool has_count) {
  const u8 *z = text(p, s, NULL);
  int64_t p1 = as_int32(start), p2, len = 0;
  bool neg2 = false;
  if (p1 < 0)
    for (const u8 *z2 = z; *z2; len++) SKIP_UTF8(z2);
  if (has_count) {
    p2 = as_int32(count);
    if (p2 < 0) {
      p2 = -p2;
      neg2 = true;
    }
  } else {
    p2 = 1000000000;   /* SQLITE_LIMIT_LENGTH default */
  }
  /* Worked example: substr('hello', -3, 2): len 5, p1 = -3 + 5 = 2 (0-based),
   * two characters → 'll'. substr('hello', 0, 2): p1 0 eats one of the two
   * characters (position 0 is "before" the string) → 'h'. */
  if (p1 < 0) {
    p1 += len;
    if (p1 < 0) {
      p2 += p1;
      if (p2 < 0) p2 = 0;
      p1 = 0;
    }
  } else if (p1 > 0) {
    p1--;
  } else if (p2 > 0) {
    p2--;
  }
  if (neg2) {
    p1 -= p2;
    if (p1 < 0) {
      p2 += p1;
      p1 = 0;
    }
  }
  const u8 *from = z;
  while (*from && p1) {
    SKIP_UTF8(from);
    p1--;
  }
  const u8 *to = from;
  for (; *to && p2; p2--) SKIP_UTF8(to);
  size_t n;
  (void)text(p, s, &n);
  if (from == z && (size_t)(to - z) == n) return s;
  return put(p, (const char *)from, (size_t)(to - from));
}

uint32_t rt_fn_substr2(rt_strpool *p, uint32_t s, int64_t start) {
  return substr_impl(p, s, start, 0, false);
}

uint32_t rt_fn_substr3(rt_strpool *p, uint32_t s, int64_t start, int64_t len) {
  return substr_impl(p, s, start, len, true);
}

int64_t rt_fn_instr(const rt_strpool *p, uint32_t hay, uint32_t needle) {
  size_t nh, nn;
  const u8 *h = text(p, hay, &nh);
  const u8 *nd = text(p, needle, &nn);
  int64_t pos = 1;
  if (nn == 0) return 1;
  /* Advance one character at a time (continuation bytes are skipped) and
   * compare bytes; h stays NUL-terminated so reading h[0] at the end is
   * safe. */
  while (nn <= nh && (h[0] != nd[0] || memcmp(h, nd, nn) != 0)) {
    pos++;
    do {
      nh--;
      h++;
    } while ((h[0] & 0xc0) == 0x80 && nh > 0);
  }
  return nn > nh ? 0 : pos;
}

/* ---- trim ---------------------------------------------------------------- */

static uint32_t trim_chars(rt_strpool *p, uint32_t s, const u8 *const *chars,
                           const size_t *lens, size_t nchars, int mode) {
  size_t n;
  const u8 *z = text(p, s, &n);
  const u8 *in = z;
  if (mode & RT_TRIM_LEFT) {
    while (n > 0) {
      size_t i, len = 0;
      for (i = 0; i < nchars; i++) {
        len = lens[i];
        if (len <= n && memcmp(in, chars[i], len) == 0) break;
      }
      if (i >= nchars) break;
      in += len;
      n -= len;
    }
  }
  if (mode & RT_TRIM_RIGHT) {
    while (n > 0) {
      size_t i, len = 0;
      for (i = 0; i < nchars; i++) {
        len = lens[i];
        if (len <= n && memcmp(in + n - len, chars[i], len) == 0) break;
      }
      if (i >= nchars) break;
      n -= len;
    }
  }
  size_t full;
  (void)text(p, s, &full);
  if (in == z && n == full) return s;
  return put(p, (const char *)in, n);
}

uint32_t rt_fn_trim(rt_strpool *p, uint32_t s, int mode) {
  static const u8 space[] = " ";
  const u8 *chars[1] = {space};
  size_t lens[1] = {1};
  return trim_chars(p, s, chars, lens, 1, mode);
}

uint32_t rt_fn_trim_set(rt_strpool *p, uint32_t s, uint32_t set, int mode) {
  const u8 *cs = text(p, set, NULL);
  size_t nchars = 0;
  for (const u8 *z = cs; *z; nchars++) SKIP_UTF8(z);
  if (nchars == 0) return s;
  const u8 *stack_chars[32];
  size_t stack_lens[32];
  const u8 **chars = stack_chars;
  size_t *lens = stack_lens;
  if (nchars > 32) {
    chars = malloc(nchars * sizeof *chars);
    lens = malloc(nchars * sizeof *lens);
    if (!chars || !lens) {
      free(chars);
      free(lens);
      return s;
    }
  }
  size_t k = 0;
  for (const u8 *z = cs; *z; k++) {
    chars[k] = z;
    SKIP_UTF8(z);
    lens[k] = (size_t)(z - chars[k]);
  }
  uint32_t r = trim_chars(p, s, chars, lens, nchars, mode);
  if (chars != stack_chars) {
    free(chars);
    free(lens);
  }
  return r;
}

/* ---- concat -------------------------------------------------------------- */

uint32_t rt_fn_concat(rt_strpool *p, uint32_t a, uint32_t b) {
  size_t na, nb;
  const char *x = rt_str_get(p, a, &na);
  const char *y = rt_str_get(p, b, &nb);
  if (nb == 0) return a;
  if (na == 0) return b;
  if (!rt_str_fits(p, na + nb)) return RT_STR_FAILED;
  char *buf = rt_strpool_scratch(p, na + nb);
  if (!buf) return RT_STR_FAILED;
  memcpy(buf, x, na);
  memcpy(buf + na, y, nb);
  return put(p, buf, na + nb);
}

/* ---- conversions ----------------------------------------------------------- */

uint32_t rt_fn_i64_to_str(rt_strpool *p, int64_t v) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%lld", (long long)v);
  return put(p, buf, (size_t)n);
}

size_t rt_fn_f64_format(double v, char *buf, size_t cap) {
  /* SQLite's own printf: "%!.15g" keeps a ".0" on whole numbers and
   * prints -0.0 as "0.0", Inf as "Inf". */
  sqlite3_snprintf((int)cap, buf, "%!.15g", v);
  return strlen(buf);
}

uint32_t rt_fn_f64_to_str(rt_strpool *p, double v) {
  char buf[64];
  size_t n = rt_fn_f64_format(v, buf, sizeof buf);
  return put(p, buf, n);
}

/* sqlite3Isspace: space, \t \n \v \f \r. */
static bool is_space(u8 c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static bool is_digit(u8 c) { return c >= '0' && c <= '9'; }

int64_t rt_fn_str_to_i64(const rt_strpool *p, uint32_t s) {
  size_t n;
  const u8 *z = text(p, s, &n), *end = z + n;
  while (z < end && is_space(*z)) z++;
  bool neg = false;
  if (z < end && (*z == '-' || *z == '+')) neg = *z++ == '-';
  /* Accumulate toward the limit: |INT64_MIN| = INT64_MAX + 1. */
  uint64_t u = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  bool sat = false;
  for (; z < end && is_digit(*z); z++) {
    uint64_t d = (uint64_t)(*z - '0');
    if (sat || u > (limit - d) / 10) {
      sat = true;
      continue;
    }
    u = u * 10 + d;
  }
  if (sat) return neg ? INT64_MIN : INT64_MAX;
  if (neg) return u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
  return (int64_t)u;
}

/* CAST(text AS REAL) is sqlite3AtoF, reproduced step by step rather than
 * handed to strtod: SQLite scales an int64 significand by powers of ten in
 * long double, which is not always correctly rounded (e.g. '45.5e-309'),
 * and the backends must give SQLite's bits. A leading '-' gives -0.0 even
 * with no digits ('-abc'). */
double rt_fn_str_to_f64(const rt_strpool *p, uint32_t s) {
  size_t n;
  const char *z = rt_str_get(p, s, &n);
  return rt_fn_atof(z, n);
}

double rt_fn_atof(const char *zs, size_t n) {
  const u8 *z = (const u8 *)zs, *end = z + n;
  const int64_t big = (INT64_MAX - 9) / 10;
  int sign = 1, esign = 1, e = 0;
  int64_t d = 0;   /* decimal shift; int64 so absurdly long texts cannot overflow it */
  int64_t m = 0;   /* significand */
  while (z < end && is_space(*z)) z++;
  if (z < end && (*z == '-' || *z == '+')) sign = *z++ == '-' ? -1 : 1;
  while (z < end && is_digit(*z)) {
    m = m * 10 + (*z++ - '0');
    if (m >= big) /* further integer digits only scale */
      while (z < end && is_digit(*z)) z++, d++;
  }
  if (z < end && *z == '.') {
    for (z++; z < end && is_digit(*z); z++) {
      if (m < big) {
        m = m * 10 + (*z - '0');
        d--;
      }
    }
  }
  if (z < end && (*z == 'e' || *z == 'E')) {
    z++;
    if (z < end && (*z == '-' || *z == '+')) esign = *z++ == '-' ? -1 : 1;
    for (; z < end && is_digit(*z); z++) e = e < 10000 ? e * 10 + (*z - '0') : 10000;
  }
  int64_t shift = (int64_t)e * esign + d;
  if (shift > 100000) shift = 100000;   /* far past any double either way */
  if (shift < -100000) shift = -100000;
  esign = shift < 0 ? -1 : 1;
  e = (int)(shift < 0 ? -shift : shift);
  if (m == 0) return sign < 0 ? -0.0 : 0.0;
  /* Fold the exponent into the significand while that is exact. */
  while (e > 0) {
    if (esign > 0) {
      if (m >= INT64_MAX / 10) break;
      m *= 10;
    } else {
      if (m % 10 != 0) break;
      m /= 10;
    }
    e--;
  }
  m = sign < 0 ? -m : m;
  if (e == 0) return (double)m;
  long double scale = 1.0;
  double result;
  if (e > 307) {
    if (e < 342) {
      while (e % 308) {
        scale *= 1.0e+1;
        e -= 1;
      }
      if (esign < 0) {
        result = (double)(m / scale);
        result /= 1.0e+308;
      } else {
        result = (double)(m * scale);
        result *= 1.0e+308;
      }
    } else {
      result = esign < 0 ? 0.0 * (double)m : (double)m * (1e308 * 10.0);
    }
  } else {
    /* 1e22 is the largest power of ten a double holds exactly. */
    while (e % 22) {
      scale *= 1.0e+1;
      e -= 1;
    }
    while (e > 0) {
      scale *= 1.0e+22;
      e -= 22;
    }
    result = esign < 0 ? (double)(m / scale) : (double)(m * scale);
  }
  return result;
}

int64_t rt_fn_f64_to_i64(double v) {
  if (v != v) return 0;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  return (int64_t)v;
}

/* ---- shifts -------------------------------------------------------------- */

static int64_t shift(int64_t a, int64_t b, bool left) {
  if (b < 0) {
    left = !left;
    b = b > -64 ? -b : 64;
  }
  if (b >= 64) return (a >= 0 || left) ? 0 : -1;
  if (b == 0) return a;
  uint64_t u = (uint64_t)a;
  if (left) return (int64_t)(u << b);
  u >>= b;
  if (a < 0) u |= ~0ull << (64 - b);   /* sign-extend */
  return (int64_t)u;
}

int64_t rt_fn_shl(int64_t a, int64_t b) { return shift(a, b, true); }
int64_t rt_fn_shr(int64_t a, int64_t b) { return shift(a, b, false); }
