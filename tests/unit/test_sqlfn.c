/*
 * test_sqlfn.c — printf/format, round, sign, replace, hex, unicode and
 * char (runtime/printf.c, runtime/sqlfn.c) against SQLite's own SQL
 * functions on an in-memory connection: fixed edge cases, then tens of
 * thousands of random formats (flags, widths, precisions, `*`, every
 * conversion, malformed ones) with random arguments of every type.
 */
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "runtime/rt.h"
#include "runtime/strfn.h"

typedef struct fixture {
  sqlite3 *db;
  rt_strpool *p;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (sqlite3_open(":memory:", &f->db) != SQLITE_OK) return -1;
  f->p = rt_strpool_new();
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  sqlite3_close(f->db);
  rt_strpool_free(f->p);
  free(f);
  return 0;
}

static uint64_t g_rng = 0x5EEDF00Dull;
static uint64_t next_u64(void) {
  uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int rnd(int n) { return (int)(next_u64() % (uint64_t)n); }

/* One SQL value, for both sides. */
typedef struct val {
  int kind;   /* RT_PF_* */
  int64_t i;
  double d;
  char s[64];
  size_t slen;
} val;

static void bind_val(sqlite3_stmt *st, int idx, const val *v) {
  switch (v->kind) {
  case RT_PF_INT: sqlite3_bind_int64(st, idx, v->i); break;
  case RT_PF_F64: sqlite3_bind_double(st, idx, v->d); break;
  case RT_PF_STR: sqlite3_bind_text(st, idx, v->s, (int)v->slen, SQLITE_TRANSIENT); break;
  default: sqlite3_bind_null(st, idx); break;
  }
}

static void pack_val(rt_strpool *p, const val *v, int64_t *out) {
  out[0] = v->kind;
  out[1] = 0;
  if (v->kind == RT_PF_INT) out[1] = v->i;
  else if (v->kind == RT_PF_F64) memcpy(&out[1], &v->d, sizeof v->d);
  else if (v->kind == RT_PF_STR) out[1] = rt_str_intern(p, v->s, v->slen);
}

static void set_str(val *v, const char *s) {
  v->kind = RT_PF_STR;
  v->slen = strlen(s);
  memcpy(v->s, s, v->slen + 1);
}

static void rand_val(val *v, int small_int) {
  static const int64_t ints[] = {0, 1, -1, 7, 42, -42, 255, 1000000, -1234567, INT64_MAX, INT64_MIN,
                                 9007199254740993LL, 65, 0x10ffff, 233, 12};
  static const double dbls[] = {0.0, -0.0, 0.1, 1.0, -1.5, 3.14159265358979, 1e20, 1e-7,
                                123456.789, -9.9, 1e300, -1e-300, 2.5, 0.5, 1e15, 99.995,
                                1.0 / 3.0, 4503599627370497.0, INFINITY, -INFINITY};
  static const char *const strs[] = {"", "a", "abc", "it's", "x\"y", "héllo", "€uro", "12abc",
                                     " 3.5e2", "-7", "0x10", "1e3", "\xf0\x9f\x98\x80!", "NULL",
                                     "%d", "a b c", "\xc3", "\x80x", "\xc3\xa9\xcc\x81"};
  memset(v, 0, sizeof *v);
  int r = rnd(10);
  if (small_int && r < 7) {
    v->kind = RT_PF_INT;
    v->i = rnd(41) - 20;
  } else if (r < 3) {
    v->kind = RT_PF_INT;
    v->i = rnd(3) ? ints[rnd((int)(sizeof ints / sizeof *ints))] : (int64_t)next_u64() >> rnd(64);
  } else if (r < 6) {
    v->kind = RT_PF_F64;
    v->d = rnd(3) ? dbls[rnd((int)(sizeof dbls / sizeof *dbls))]
                  : (double)((int64_t)next_u64() >> rnd(64)) / (double)(1 + rnd(1000));
  } else if (r < 9) {
    set_str(v, strs[rnd((int)(sizeof strs / sizeof *strs))]);
  } else {
    v->kind = RT_PF_NULL;
  }
}

/* A random format; *nconv counts the arguments it takes, star[i] says
 * whether argument i is a `*` width or precision (kept small: a huge
 * width makes a huge string on both sides). */
static void rand_format(char *out, size_t cap, int *nconv, bool *star) {
  static const char convs[] = "dsgzqQwcouxXfeEGinpr%dddsssfffgge";
  static const char odd[] = "yTSkZ5 ";
  static const char *const lits[] = {"", "x", "ab ", "é", "|", "100", "%%", "\\n"};
  size_t n = 0;
  int k = rnd(4) + 1;
  *nconv = 0;
#define PUT(...) n += (size_t)snprintf(out + n, cap - n, __VA_ARGS__)
  for (int i = 0; i < k && n + 40 < cap; i++) {
    if (rnd(3) == 0) PUT("%s", lits[rnd(8)]);
    PUT("%%");
    int nf = rnd(4);
    for (int f = 0; f < nf; f++) PUT("%c", "-+ #!0,"[rnd(7)]);
    int w = rnd(5);
    if (w == 1) PUT("%d", rnd(25) + 1);
    else if (w == 2) PUT("*"), star[(*nconv)++] = true;
    int p = rnd(5);
    if (p == 1) PUT(".%d", rnd(30));
    else if (p == 2) PUT(".*"), star[(*nconv)++] = true;
    else if (p == 3) PUT(".");
    int l = rnd(8);
    if (l == 1) PUT("l");
    else if (l == 2) PUT("ll");
    if (rnd(25) == 0) {
      if (rnd(2)) PUT("%c", odd[rnd((int)sizeof odd - 1)]);
      else break;   /* the format ends inside a conversion */
    } else {
      char c = convs[rnd((int)sizeof convs - 1)];
      PUT("%c", c);
      if (c != '%' && c != 'n') star[(*nconv)++] = false;   /* these take no argument */
    }
    if (rnd(3) == 0) PUT("%s", lits[rnd(8)]);
  }
#undef PUT
}

/* SQLite's printf over fmt and args: NULL, or the text (malloc'd) in *out. */
static int sqlite_printf(sqlite3 *db, const char *fmt, const val *args, int nargs, char **out,
                         size_t *len) {
  char sql[512];
  size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT printf(?1");
  for (int i = 0; i < nargs; i++) n += (size_t)snprintf(sql + n, sizeof sql - n, ", ?%d", i + 2);
  snprintf(sql + n, sizeof sql - n, ")");
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_text(st, 1, fmt, -1, SQLITE_TRANSIENT);
  for (int i = 0; i < nargs; i++) bind_val(st, i + 2, &args[i]);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  int isnull = sqlite3_column_type(st, 0) == SQLITE_NULL;
  *len = (size_t)sqlite3_column_bytes(st, 0);
  *out = malloc(*len + 1);
  if (!isnull && *len) memcpy(*out, sqlite3_column_blob(st, 0), *len);
  sqlite3_finalize(st);
  return isnull;
}

static int check_printf(fixture *f, const char *fmt, const val *args, int nargs) {
  char *want;
  size_t wlen;
  int wnull = sqlite_printf(f->db, fmt, args, nargs, &want, &wlen);
  int64_t packed[2 * 16];
  for (int i = 0; i < nargs; i++) pack_val(f->p, &args[i], packed + 2 * i);
  uint32_t got = rt_fn_printf(f->p, rt_str_intern(f->p, fmt, strlen(fmt)), packed, nargs);
  int bad = 0;
  if (got == RT_STR_FAILED) bad = 1;
  else if ((got == RT_STR_NULL) != wnull) bad = 1;
  else if (!wnull) {
    size_t glen;
    const char *g = rt_str_get(f->p, got, &glen);
    bad = glen != wlen || memcmp(g, want, wlen);
  }
  if (bad) {
    size_t glen = 0;
    const char *g = got == RT_STR_NULL || got == RT_STR_FAILED ? "(null)" : rt_str_get(f->p, got, &glen);
    print_error("printf('%s'", fmt);
    for (int i = 0; i < nargs; i++) {
      if (args[i].kind == RT_PF_INT) print_error(", %lld", (long long)args[i].i);
      else if (args[i].kind == RT_PF_F64) print_error(", %.17g", args[i].d);
      else if (args[i].kind == RT_PF_STR) print_error(", '%s'", args[i].s);
      else print_error(", NULL");
    }
    print_error("): sqlite %s'%.*s' vs ours '%s'\n", wnull ? "NULL " : "", (int)wlen, want, g);
  }
  free(want);
  return bad;
}

static void test_printf_fixed(void **state) {
  fixture *f = *state;
  static const char *const fmts[] = {
      "", "%", "%5", "%y", "a%yb", "%T", "x%n%d", "%n", "%%", "%5%", "%-5%|", "%,d", "%r",
      "%5.2f|%d|%s|%c", "%*d|%-*d|", "%.*f", "%lld %ld %hd", "%#x %#o %+d % d %05d",
      "%e %g %G %E", "%!g %!.20g", "%q %Q %w", "%c%c", "%.3c", "%10.3c|", "%-10.3c|", "%!5.3s|",
      "%5.3s|", "%z", "%p", "%.0f %.0e %#.0f", "%,.2f", "%+.3e", "%-+8.3g|", "% 020.5f",
      "%!.0f %!.3e", "%0*d", "%.*s", "%5c|", "%-5c|", "%!5c|", "%!-5c|",
  };
  int bad = 0;
  val args[6];
  for (size_t i = 0; i < sizeof fmts / sizeof *fmts; i++) {
    for (int rep = 0; rep < 20; rep++) {
      for (int a = 0; a < 6; a++) rand_val(&args[a], strchr(fmts[i], '*') || (a == 0 && rep % 2));
      bad += check_printf(f, fmts[i], args, rep % 7);
    }
  }
  /* Malformed UTF-8 in %c: the bytes SQLite copies, padded its way. */
  static const char *const odd[] = {"\xc3", "\x80x", "\xf8\x80\x80\x80", "\xc0\x80", "\xe2\x82"};
  static const char *const cf[] = {"%c|", "%5c|", "%-5c|", "%.3c|", "%6.3c|", "%-6.3c|", "%!4c|"};
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
    for (size_t j = 0; j < sizeof cf / sizeof *cf; j++) {
      set_str(&args[0], odd[i]);
      bad += check_printf(f, cf[j], args, 1);
    }
  assert_int_equal(bad, 0);
}

/* Long results: past printf.c's stack buffer (512 bytes: the text moves
 * to the heap, across and within conversions) and past the 1024 bytes a
 * conversion formats on the stack (it then goes through a scratch
 * accumulator). */
static void test_printf_long(void **state) {
  fixture *f = *state;
  static const char *const fmts[] = {
      "%600d|", "%-1100s|", "%.1100f", "%1500.3e", "%1100q|", "%900Q", "%500d%500d%s%s",
      "%.400f%.400f%d", "%2000c|", "%*s|", "%-*d|%s", "%,1020d", "%1021.2f", "%1030%",
      "%300s%300s%300s%d", "%.1000s%.1000s",
  };
  int bad = 0;
  val args[6];
  for (size_t i = 0; i < sizeof fmts / sizeof *fmts; i++) {
    for (int rep = 0; rep < 30; rep++) {
      for (int a = 0; a < 6; a++) rand_val(&args[a], a == 0 && strchr(fmts[i], '*'));
      if (strchr(fmts[i], '*')) {   /* a width past both buffers */
        args[0].kind = RT_PF_INT;
        args[0].i = rep % 2 ? 1500 : -700;
      }
      bad += check_printf(f, fmts[i], args, 4);
    }
  }
  assert_int_equal(bad, 0);
}

static void test_printf_random(void **state) {
  fixture *f = *state;
  int bad = 0;
  for (int it = 0; it < 30000 && bad < 10; it++) {
    char fmt[256];
    int nconv;
    bool star[64] = {0};
    rand_format(fmt, sizeof fmt, &nconv, star);
    val args[16];
    int nargs = nconv + rnd(3) - 1;
    if (nargs < 0) nargs = 0;
    if (nargs > 16) nargs = 16;
    for (int a = 0; a < nargs; a++) {
      rand_val(&args[a], rnd(3) == 0);
      if (star[a] && (args[a].kind != RT_PF_NULL || rnd(2))) {
        args[a].kind = RT_PF_INT;
        args[a].i = rnd(61) - 30;
      }
    }
    bad += check_printf(f, fmt, args, nargs);
  }
  assert_int_equal(bad, 0);
}

/* One value of SQLite's `SELECT <expr>` over bound values. */
static sqlite3_stmt *prep(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  return st;
}

static void test_round_sign(void **state) {
  fixture *f = *state;
  sqlite3_stmt *st = prep(f->db, "SELECT round(?1, ?2), sign(?1)");
  int bad = 0;
  for (int it = 0; it < 20000; it++) {
    double x;
    switch (rnd(5)) {
    case 0: x = (double)(rnd(20001) - 10000) / 8.0; break;
    case 1: x = (double)((int64_t)next_u64() >> rnd(64)) / pow(10, rnd(20)); break;
    case 2: x = (rnd(2) ? 1 : -1) * (rnd(1000) + 0.5) / pow(10, rnd(6)); break;
    case 3: x = ldexp(1.0, rnd(120) - 60) * (rnd(2) ? 1 : -1); break;
    default: x = (double)(rnd(2000001) - 1000000) / 1000.0 + 0.0005; break;
    }
    int64_t n = rnd(10) == 0 ? (int64_t)next_u64() : rnd(36) - 3;
    sqlite3_bind_double(st, 1, x);
    sqlite3_bind_int64(st, 2, n);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    double want = sqlite3_column_double(st, 0);
    int64_t wsign = sqlite3_column_int64(st, 1);
    double got = rt_fn_round(x, n);
    if (memcmp(&want, &got, sizeof got) || wsign != rt_fn_sign(x)) {
      if (bad++ < 10)
        print_error("round(%.17g, %lld): sqlite %.17g vs ours %.17g; sign %lld vs %lld\n", x,
                    (long long)n, want, got, (long long)wsign, (long long)rt_fn_sign(x));
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  assert_int_equal(bad, 0);
}

static void test_text_functions(void **state) {
  fixture *f = *state;
  static const char *const strs[] = {"", "a", "aaa", "aa", "abcabc", "b", "héllo", "é", "ll",
                                     "\xf0\x9f\x98\x80", "x\xc3", "\x80", "ab ab", " "};
  const int ns = (int)(sizeof strs / sizeof *strs);
  sqlite3_stmt *st = prep(f->db, "SELECT replace(?1, ?2, ?3), hex(?1), unicode(?1)");
  int bad = 0;
  for (int it = 0; it < 3000; it++) {
    const char *x = strs[rnd(ns)], *y = strs[rnd(ns)], *z = strs[rnd(ns)];
    sqlite3_bind_text(st, 1, x, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, y, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, z, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    uint32_t ix = rt_str_intern(f->p, x, strlen(x)), iy = rt_str_intern(f->p, y, strlen(y)),
             iz = rt_str_intern(f->p, z, strlen(z));
    const char *r = rt_str_get(f->p, rt_fn_replace(f->p, ix, iy, iz), NULL);
    const char *h = rt_str_get(f->p, rt_fn_hex(f->p, ix), NULL);
    int64_t u = rt_fn_unicode(f->p, ix);
    int64_t wu = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
    if (strcmp(r, (const char *)sqlite3_column_text(st, 0)) ||
        strcmp(h, (const char *)sqlite3_column_text(st, 1)) || u != wu) {
      if (bad++ < 10) print_error("replace/hex/unicode of '%s' '%s' '%s'\n", x, y, z);
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  st = prep(f->db, "SELECT char(?1)");
  static const int64_t cps[] = {0, 65, 0x7f, 0x80, 0x7ff, 0x800, 0xd800, 0xffff, 0x10000,
                                0x10ffff, 0x110000, -1, INT64_MIN, INT64_MAX, 233};
  for (size_t i = 0; i < sizeof cps / sizeof *cps; i++) {
    sqlite3_bind_int64(st, 1, cps[i]);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    size_t n;
    const char *g = rt_str_get(f->p, rt_fn_char(f->p, cps[i]), &n);
    if (n != (size_t)sqlite3_column_bytes(st, 0) || memcmp(g, sqlite3_column_blob(st, 0), n)) {
      if (bad++ < 10) print_error("char(%lld) differs\n", (long long)cps[i]);
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  assert_int_equal(bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_printf_fixed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_printf_random, setup, teardown),
      cmocka_unit_test_setup_teardown(test_printf_long, setup, teardown),
      cmocka_unit_test_setup_teardown(test_round_sign, setup, teardown),
      cmocka_unit_test_setup_teardown(test_text_functions, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
