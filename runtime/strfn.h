/*
 * strfn.h — SQLite-compatible scalar helpers shared by both backends.
 *
 * The interpreter calls these per value and the JIT emits calls to them, so
 * they are plain C functions over scalars (string ids in the engine's pool,
 * int64, double), never structs by value. Each one reproduces what SQLite
 * 3.40 returns for the same non-NULL inputs; NULL handling (any NULL
 * argument gives NULL) is the caller's job.
 *
 * Strings produced are interned in the pool; a helper returns its input id
 * unchanged when the result equals it (lower('abc'), trim('x')), so no
 * interning happens on the common path. A result the pool refuses (too
 * long, out of memory) comes back as RT_STR_FAILED (rt.h), never as the
 * empty string: both backends check every string result for it and stop
 * the query with rt_strpool_error. A new string helper must do the same.
 */
#ifndef PJ_STRFN_H
#define PJ_STRFN_H

#include "rt.h"

/* x LIKE pattern: ASCII case-insensitive, '%' any run, '_' one UTF-8
 * character. Note the argument order (pattern first, as in
 * SQLite's like(pattern, x)). Returns 1 or 0. */
int rt_fn_like(const rt_strpool *p, uint32_t pattern, uint32_t s);
/* x LIKE pattern ESCAPE esc (a code point, not 0): the character after
 * esc is literal, as SQLite's like(pattern, x, esc). */
int rt_fn_like_esc(const rt_strpool *p, uint32_t pattern, uint32_t s, uint32_t esc);
/* x GLOB pattern: case-sensitive, '*', '?', '[abc]', '[a-z]', '[^…]'. */
int rt_fn_glob(const rt_strpool *p, uint32_t pattern, uint32_t s);

/* ASCII-only case mapping (bytes >= 0x80 unchanged), as SQLite. */
uint32_t rt_fn_lower(rt_strpool *p, uint32_t s);
uint32_t rt_fn_upper(rt_strpool *p, uint32_t s);

/* length(x): UTF-8 characters before the first NUL byte. */
int64_t rt_fn_length(const rt_strpool *p, uint32_t s);

/* substr(x, start) and substr(x, start, len): 1-based characters; start 0
 * or negative counts as SQLite does (substr('hello', -3, 2) = 'll',
 * substr('hello', 0, 2) = 'h'); a negative len takes characters before
 * start. Like SQLite, start and len are read as 32-bit ints. */
uint32_t rt_fn_substr2(rt_strpool *p, uint32_t s, int64_t start);
uint32_t rt_fn_substr3(rt_strpool *p, uint32_t s, int64_t start, int64_t len);

/* instr(hay, needle): 1-based character position of the first occurrence,
 * 0 when absent, 1 for an empty needle. */
int64_t rt_fn_instr(const rt_strpool *p, uint32_t hay, uint32_t needle);

/* trim family. mode: RT_TRIM_LEFT (ltrim), RT_TRIM_RIGHT (rtrim),
 * RT_TRIM_BOTH (trim). rt_fn_trim removes spaces (the one-argument form);
 * rt_fn_trim_set removes any of the UTF-8 characters of `set`. */
enum { RT_TRIM_LEFT = 1, RT_TRIM_RIGHT = 2, RT_TRIM_BOTH = 3 };
uint32_t rt_fn_trim(rt_strpool *p, uint32_t s, int mode);
uint32_t rt_fn_trim_set(rt_strpool *p, uint32_t s, uint32_t set, int mode);

/* a || b */
uint32_t rt_fn_concat(rt_strpool *p, uint32_t a, uint32_t b);

/* CAST(int AS TEXT) and CAST(real AS TEXT): 1.0 → "1.0", 1e20 →
 * "1.0e+20", 0.1 → "0.1" (SQLite's "%!.15g"). */
uint32_t rt_fn_i64_to_str(rt_strpool *p, int64_t v);
uint32_t rt_fn_f64_to_str(rt_strpool *p, double v);
/* Writes the same text into buf (at least 32 bytes); returns its length. */
size_t rt_fn_f64_format(double v, char *buf, size_t cap);

/* CAST(text AS INTEGER): leading spaces, sign, the longest digit prefix
 * (else 0), saturating at the int64 limits. '12.7' → 12, '1e3' → 1. */
int64_t rt_fn_str_to_i64(const rt_strpool *p, uint32_t s);
/* CAST(text AS REAL): the longest decimal prefix (digits, '.', exponent),
 * else 0.0 (-0.0 after a '-'). Follows sqlite3AtoF's long double scaling,
 * so results have SQLite's bits; beyond about 1e+-70 the two can differ in
 * the last bit (x87 rounding details we do not reproduce). */
double rt_fn_str_to_f64(const rt_strpool *p, uint32_t s);
/* CAST(real AS INTEGER): truncates toward zero, saturates at the int64
 * limits (NaN gives 0). */
int64_t rt_fn_f64_to_i64(double v);

/* An integer against a double, compared by value as SQLite does
 * (sqlite3IntFloatCompare), not through a double: returns -1, 0 or 1 as
 * i <, =, > r. 9007199254740993 > 9007199254740992.0, and
 * 9223372036854775807 < 9223372036854775808.0. A NaN never gets here (it
 * is NULL); SQLite ranks it below every integer, and so does this. When
 * the truncated double equals i, r lies within 1 of i, where i is exactly
 * a double (|r| < 2^52) or r is integral and equal to i, so the last test
 * in doubles is exact. codegen/cg_expr.c emits the same steps inline. */
static inline int rt_cmp_i64_f64(int64_t i, double r) {
  if (!(r >= -9223372036854775808.0)) return 1;   /* also NaN */
  if (r >= 9223372036854775808.0) return -1;
  int64_t y = (int64_t)r;
  if (i != y) return i < y ? -1 : 1;
  double di = (double)i;
  return di < r ? -1 : di > r;
}

/* SQLite's << and >>: a negative count shifts the other way; counts >= 64
 * give 0 (or -1 for >> of a negative value). */
int64_t rt_fn_shl(int64_t a, int64_t b);
int64_t rt_fn_shr(int64_t a, int64_t b);

/* Checked 64-bit arithmetic for C callers: return true on overflow. */
static inline bool rt_add_ovf(int64_t a, int64_t b, int64_t *out) {
  return __builtin_add_overflow(a, b, out);
}
static inline bool rt_sub_ovf(int64_t a, int64_t b, int64_t *out) {
  return __builtin_sub_overflow(a, b, out);
}
static inline bool rt_mul_ovf(int64_t a, int64_t b, int64_t *out) {
  return __builtin_mul_overflow(a, b, out);
}

/* CAST(text AS REAL) over bytes z[0..n): rt_fn_str_to_f64's rules. */
double rt_fn_atof(const char *z, size_t n);

/* Decodes the character at *pz and moves past it, as sqlite3Utf8Read
 * (malformed sequences give U+FFFD). */
uint32_t rt_utf8_read(const unsigned char **pz);
/* Writes code point c as SQLite encodes it (char(), printf's %c: up to
 * 0x1fffff, surrogates too) into o[0..4); returns the byte count. */
int rt_utf8_put(uint32_t c, unsigned char *o);

/* ---- the §5 functions of SQLite's func.c (sqlfn.c) ----------------------- */

/* round(x) and round(x, n): a double always; n is read as a 32-bit int
 * (sqlite3_value_int) and clamped to 0..30; |x| > 2^52 is returned as is;
 * n = 0 rounds half away from zero through an int64; otherwise SQLite's
 * "%.*f" text (16 significant digits) read back. */
double rt_fn_round(double x, int64_t n);
/* sign(x): -1, 0 or 1 (x is never NaN here: that is NULL). */
int64_t rt_fn_sign(double x);
/* replace(x, y, z): every occurrence of y in x replaced by z, left to
 * right; an empty y (or one starting with a NUL byte) gives x. */
uint32_t rt_fn_replace(rt_strpool *p, uint32_t x, uint32_t y, uint32_t z);
/* hex(x): the bytes of the text in upper-case hex digits. */
uint32_t rt_fn_hex(rt_strpool *p, uint32_t s);
/* unicode(x): the code point of the first character; -1 where SQLite
 * gives NULL (an empty text, or one starting with a NUL byte): the
 * binder wraps it in NULLIF(…, -1). */
int64_t rt_fn_unicode(const rt_strpool *p, uint32_t s);
/* char(x): the one character of code point x (outside 0..0x10ffff:
 * U+FFFD), UTF-8 encoded as SQLite does (surrogates too). */
uint32_t rt_fn_char(rt_strpool *p, int64_t x);

/* printf(fmt, …) and format(fmt, …) (printf.c): SQLite's SQL printf.
 * args holds nargs (kind, bits) pairs: RT_PF_INT (the int64), RT_PF_F64
 * (the double's bits), RT_PF_STR (the string id), RT_PF_NULL (bits
 * unused). Returns RT_STR_NULL where SQLite's result is NULL (nothing
 * written: printf(''), printf('%y'); or longer than SQLite's 1e9 bytes),
 * RT_STR_FAILED when refused. */
enum { RT_PF_NULL = 0, RT_PF_INT = 1, RT_PF_F64 = 2, RT_PF_STR = 3 };
uint32_t rt_fn_printf(rt_strpool *p, uint32_t fmt, const int64_t *args, int32_t nargs);

/* A pool-owned scratch buffer of at least n bytes (reused across calls;
 * invalidated by the next call). For helpers that build a string before
 * interning it. NULL when out of memory. */
char *rt_strpool_scratch(rt_strpool *p, size_t n);

#endif
