/*
 * json_scan.c — the JSON tokenizer of the Chrome importer: hand-written
 * over a whole buffer, because the events' field names and values are all
 * it needs and a general parser (json-c: ~30 MB/s) builds objects it
 * would throw away. Strings without escapes are returned in place; the
 * scanner never allocates except for unescaped strings (one reused
 * buffer). Every value it skips is still checked for syntax.
 */
#include <math.h>
#include <stdio.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "json.h"

int js_fail(jscan *s, const char *what) {
  if (!s->failed) {
    s->failed = 1;
    s->err_at = s->base_off + (size_t)(s->p - s->base);
    snprintf(s->err, sizeof s->err, "%s", what);
  }
  return 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void put_utf8(rt_buf *b, uint32_t cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) u[0] = (char)cp, n = 1;
  else if (cp < 0x800) u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 63)), n = 2;
  else {
    u[0] = (char)(0xE0 | cp >> 12);
    u[1] = (char)(0x80 | ((cp >> 6) & 63));
    u[2] = (char)(0x80 | (cp & 63));
    n = 3;
  }
  rt_buf_append(b, u, n);
}

/* The slow path: the string has escapes. p is past the opening quote,
 * q at the first backslash. */
static int string_escaped(jscan *s, const char *q, const char **out, size_t *len) {
  rt_buf *b = &s->tmp;
  b->len = 0;
  rt_buf_append(b, s->p, (size_t)(q - s->p));
  const char *p = q;
  while (p < s->end) {
    char c = *p;
    if (c == '"') {
      s->p = p + 1;
      rt_buf_append(b, "", 1);   /* NUL after the bytes; not counted */
      *out = b->data;
      *len = b->len - 1;
      return 1;
    }
    if (c != '\\') {
      const char *r = p;
      while (r < s->end && *r != '"' && *r != '\\') r++;
      rt_buf_append(b, p, (size_t)(r - p));
      p = r;
      continue;
    }
    if (p + 1 >= s->end) break;
    char e = p[1];
    p += 2;
    switch (e) {
    case '"': rt_buf_append(b, "\"", 1); break;
    case '\\': rt_buf_append(b, "\\", 1); break;
    case '/': rt_buf_append(b, "/", 1); break;
    case 'b': rt_buf_append(b, "\b", 1); break;
    case 'f': rt_buf_append(b, "\f", 1); break;
    case 'n': rt_buf_append(b, "\n", 1); break;
    case 'r': rt_buf_append(b, "\r", 1); break;
    case 't': rt_buf_append(b, "\t", 1); break;
    case 'u': {
      if (p + 4 > s->end) goto eof;
      uint32_t cp = 0;
      for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) {
          s->p = p;
          return js_fail(s, "a bad \\u escape");
        }
        cp = cp << 4 | (uint32_t)h;
      }
      if (cp >= 0xD800 && cp <= 0xDFFF) {
        s->p = p - 2;
        return js_fail(s, "a surrogate \\u escape");
      }
      p += 4;
      put_utf8(b, cp);
      break;
    }
    default:
      s->p = p - 2;
      return js_fail(s, "an invalid escape in a string");
    }
  }
eof:
  s->p = s->end;
  return js_fail(s, "the file ends inside a string");
}

int js_string_any(jscan *s, const char **out, size_t *len) {
  const char *p = ++s->p, *end = s->end;
#ifdef __SSE2__
  /* Sixteen bytes at a time: stop at the first '"' or '\\'. */
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
  while (p + 16 <= end) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
    if (m) {
      p += __builtin_ctz(m);
      goto found;
    }
    p += 16;
  }
#endif
  /* Eight bytes at a time (the scalar fallback, and the tail). */
  while (p + 8 <= end) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t q = w ^ 0x2222222222222222ull, b = w ^ 0x5c5c5c5c5c5c5c5cull;
    uint64_t hit = ((q - 0x0101010101010101ull) & ~q) | ((b - 0x0101010101010101ull) & ~b);
    hit &= 0x8080808080808080ull;
    if (hit) {
      p += __builtin_ctzll(hit) >> 3;
      break;
    }
    p += 8;
  }
  while (p < end && *p != '"' && *p != '\\') p++;
#ifdef __SSE2__
found:
#endif
  if (p >= end) {
    s->p = end;
    return js_fail(s, "the file ends inside a string");
  }
  if (*p == '\\') return string_escaped(s, p, out, len);
  *out = s->p;
  *len = (size_t)(p - s->p);
  s->p = p + 1;
  return 1;
}

static const double pow10_tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
static double p10(int n) { return n <= 22 ? pow10_tab[n] : pow(10.0, n); }

/* Parses [p, end): returns the end of the number, or NULL. */
static const char *number(const char *p, const char *end, jnum *out) {
  const char *start = p;
  int neg = 0;
  if (p < end && *p == '-') neg = 1, p++;
  if (p >= end || *p < '0' || *p > '9') return NULL;
  uint64_t ip = 0;
  double ipd = 0;
  int ip_over = 0;
  while (p < end && *p >= '0' && *p <= '9') {
    unsigned d = (unsigned)(*p - '0');
    if (!ip_over && ip > (UINT64_MAX - d) / 10) ip_over = 1, ipd = (double)ip;
    if (ip_over) ipd = ipd * 10 + d;
    else ip = ip * 10 + d;
    p++;
  }
  int is_int = 1;
  uint64_t frac = 0;
  int fdigits = 0;
  if (p < end && *p == '.') {
    is_int = 0;
    p++;
    if (p >= end || *p < '0' || *p > '9') return NULL;
    while (p < end && *p >= '0' && *p <= '9') {
      if (fdigits < 19) frac = frac * 10 + (uint64_t)(*p - '0'), fdigits++;
      p++;
    }
  }
  int exp = 0, eneg = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    is_int = 0;
    p++;
    if (p < end && (*p == '+' || *p == '-')) eneg = *p == '-', p++;
    if (p >= end || *p < '0' || *p > '9') return NULL;
    while (p < end && *p >= '0' && *p <= '9') {
      if (exp < 100000) exp = exp * 10 + (*p - '0');
      p++;
    }
  }
  if (is_int && !ip_over && ip <= (uint64_t)INT64_MAX + (uint64_t)neg) {
    out->is_int = 1;
    out->i = neg ? (int64_t)(0 - ip) : (int64_t)ip;
    out->d = (double)out->i;
    return p;
  }
  double v = ip_over ? ipd : (double)ip;
  if (fdigits) v += (double)frac / p10(fdigits);
  if (exp) v = eneg ? v / p10(exp) : v * p10(exp);
  out->is_int = 0;
  out->d = neg ? -v : v;
  out->i = 0;
  (void)start;
  return p;
}

int js_number(jscan *s, jnum *out) {
  const char *e = number(s->p, s->end, out);
  if (!e) return js_fail(s, "a malformed number");
  s->p = e;
  return 1;
}

int js_number_text(const char *p, size_t n, jnum *out) {
  const char *e = number(p, p + n, out);
  return e && e == p + n;
}

int jn_to_ns(const jnum *n, int64_t *out) {
  if (n->is_int) return !__builtin_mul_overflow(n->i, 1000, out);
  double v = n->d;
  if (!(fabs(v) < 9.2e15)) return 0;
  if (v == (double)(int64_t)v) *out = (int64_t)v * 1000;
  else *out = llround(v * 1000.0);
  return 1;
}

int64_t jn_int(const jnum *n) {
  if (n->is_int) return n->i;
  double v = n->d;
  if (!(v == v)) return 0;
  if (v >= 9.2e18) return INT64_MAX;
  if (v <= -9.2e18) return INT64_MIN;
  return (int64_t)v;
}

const char js_kinds[256] = {
    ['"'] = '"', ['{'] = '{', ['['] = '[', ['t'] = 't', ['f'] = 'f', ['n'] = 'N', ['-'] = 'n',
    ['0'] = 'n', ['1'] = 'n', ['2'] = 'n', ['3'] = 'n', ['4'] = 'n', ['5'] = 'n', ['6'] = 'n',
    ['7'] = 'n', ['8'] = 'n', ['9'] = 'n',
};

/* Eight ASCII digits at p as a number (SWAR: pairs, then quads). */
static inline uint64_t eight_digits(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  v -= 0x3030303030303030ull;
  v = (v * 10) + (v >> 8);
  v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
  return (uint32_t)v;
}
/* Are the eight bytes at p all digits? */
static inline int all_digits8(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return !(((v + 0x4646464646464646ull) | (v - 0x3030303030303030ull)) & 0x8080808080808080ull);
}

int js_int(jscan *s, int64_t *out) {
  const char *p = s->p, *end = s->end;
  int neg = p < end && *p == '-';
  const char *q = p + neg, *d = q;
  uint64_t v = 0;
  if (d + 8 <= end && all_digits8(d)) v = eight_digits(d), d += 8;
  while (d < end && *d >= '0' && *d <= '9' && d - q < 18) v = v * 10 + (uint64_t)(*d++ - '0');
  if (d == q || (d < end && ((*d >= '0' && *d <= '9') || *d == '.' || *d == 'e' || *d == 'E'))) return 0;
  *out = neg ? -(int64_t)v : (int64_t)v;
  s->p = d;
  return 1;
}

int js_time(jscan *s, int64_t *ns, int *ok) {
  const char *p = s->p, *end = s->end;
  int neg = p < end && *p == '-';
  const char *q = p + neg;
  /* the integer part: up to 16 digits, eight at a time */
  uint64_t ip = 0;
  const char *d = q;
  while (d + 8 <= end && d - q < 16 && all_digits8(d)) ip = ip * 100000000ull + eight_digits(d), d += 8;
  while (d < end && *d >= '0' && *d <= '9' && d - q < 17) ip = ip * 10 + (uint64_t)(*d++ - '0');
  if (d == q || (d < end && *d >= '0' && *d <= '9')) goto slow;   /* no digits, or very long */
  uint64_t frac = 0;
  int fd = 0;
  if (d < end && *d == '.') {
    const char *f = ++d;
    while (d < end && *d >= '0' && *d <= '9' && d - f < 19) frac = frac * 10 + (uint64_t)(*d++ - '0');
    fd = (int)(d - f);
    if (!fd || (d < end && *d >= '0' && *d <= '9')) goto slow;   /* over 19 digits */
  }
  if (d < end && (*d == 'e' || *d == 'E')) goto slow;
  if (fd > 3) {
    /* §2.2.1 as number() and jn_to_ns compute it */
    double x = (double)ip + (double)frac / pow10_tab[fd];
    if (!(x < 9.2e15)) goto slow;
    int64_t r = x == (double)(int64_t)x ? (int64_t)x * 1000 : llround(x * 1000.0);
    if (neg) r = x == (double)(int64_t)x ? -(int64_t)x * 1000 : llround(-x * 1000.0);
    *ns = r;
    *ok = 1;
    s->p = d;
    return 1;
  }
  /* ip.frac µs with at most 3 fraction digits is an exact ns count; the
   * double arithmetic of §2.2.1 gives the same for every value below
   * 1.8e15 ns (its error stays under 0.5 ns), beyond that it decides */
  static const uint64_t scale[4] = {1000, 100, 10, 1};
  uint64_t v = ip * 1000 + frac * scale[fd];
  if (ip > 1800000000000ull) goto slow;
  *ns = neg ? -(int64_t)v : (int64_t)v;
  *ok = 1;
  s->p = d;
  return 1;
slow:;
  jnum n;
  if (!js_number(s, &n)) return 0;
  *ok = jn_to_ns(&n, ns);
  return 1;
}

int js_literal(jscan *s, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n)) return js_fail(s, "an unknown literal");
  s->p += n;
  return 1;
}

/* Skips a value, nested objects and arrays included, iteratively. */
int js_skip(jscan *s) {
  int depth = 0;
  char stack[256];
  for (;;) {
    js_ws(s);
    const char *str;
    size_t len;
    jnum num;
    switch (js_kind(s)) {
    case '"': if (!js_string(s, &str, &len)) return 0; break;
    case 'n': if (!js_number(s, &num)) return 0; break;
    case 't': if (!js_literal(s, "true")) return 0; break;
    case 'f': if (!js_literal(s, "false")) return 0; break;
    case 'N': if (!js_literal(s, "null")) return 0; break;
    case '{': case '[': {
      char open = *s->p++;
      js_ws(s);
      char close = open == '{' ? '}' : ']';
      if (s->p < s->end && *s->p == close) {
        s->p++;
        break;
      }
      if (depth == (int)sizeof stack) return js_fail(s, "values nested too deeply");
      stack[depth++] = open;
      if (open == '{') {
        if (js_kind(s) != '"') return js_fail(s, s->p >= s->end ? "the file ends inside an object" : "expected a key");
        if (!js_string(s, &str, &len)) return 0;
        js_ws(s);
        if (s->p >= s->end || *s->p != ':') return js_fail(s, "expected ':'");
        s->p++;
      }
      continue;
    }
    default:
      return js_fail(s, s->p >= s->end ? "the file ends inside a value" : "expected a value");
    }
    /* after a value: close containers or go to the next element */
    for (;;) {
      if (!depth) return 1;
      js_ws(s);
      if (s->p >= s->end) return js_fail(s, "the file ends inside a value");
      char c = *s->p;
      char open = stack[depth - 1];
      if (c == (open == '{' ? '}' : ']')) {
        s->p++;
        depth--;
        continue;
      }
      if (c != ',') return js_fail(s, open == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
      s->p++;
      if (open == '{') {
        js_ws(s);
        if (js_kind(s) != '"') return js_fail(s, "expected a key");
        if (!js_string(s, &str, &len)) return 0;
        js_ws(s);
        if (s->p >= s->end || *s->p != ':') return js_fail(s, "expected ':'");
        s->p++;
      }
      break;
    }
  }
}

