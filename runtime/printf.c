/*
 * printf.c — SQL's printf(fmt, …) / format(fmt, …), as SQLite 3.40
 * computes them (strfn.h: rt_fn_printf).
 *
 * SQLite's SQL printf is its C printf (sqlite3_str_appendf) reading its
 * arguments from SQL values instead of a va_list. So this file parses the
 * format exactly as SQLite's printf.c does (flags, widths and precisions
 * in its order, `*` taking an argument, the conversion letter), converts
 * each argument as the SQL function does (getIntArg / getDoubleArg /
 * getTextArg: sqlite3_value_int64 / _double / _text, i.e. CAST's rules),
 * and hands every conversion, rebuilt with its width and precision as
 * numbers, to SQLite's own sqlite3_str_appendf: widths, flags, precision,
 * %e/%g rounding and %q/%Q/%w quoting are then SQLite's by construction.
 *
 * What the SQL form does differently from the C form, and is done here:
 * integers are always 64-bit (`ll` is added), %z is %s (the C form would
 * free its argument), %n writes nothing, %T and %S stop the output (they
 * are internal), an unknown conversion or a format ending inside one
 * stops the output, and %c takes the first character of the argument's
 * text rather than a code point. The result is NULL when nothing at all
 * was written (printf(''), printf('%y')): SQLite's accumulator then never
 * allocated its text; and when the text would pass SQLite's length limit
 * (1e9 bytes, `%*d` with a huge width): the accumulator then drops it.
 *
 * Speed: the text is made in a stack buffer (the heap only past 512
 * bytes) rather than a sqlite3_str per row, `%d` and `%s` with no flag,
 * width or precision are written here (they are plain digits and bytes),
 * and every other conversion goes to sqlite3_snprintf over a stack buffer
 * when its output surely fits there (no allocation), else to a scratch
 * sqlite3_str; so a row costs no malloc.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strfn.h"

typedef struct pf_args {
  rt_strpool *p;
  const int64_t *v;   /* nargs (kind, bits) pairs */
  int n, used;
} pf_args;

static int kind_of(const pf_args *a) { return a->used < a->n ? (int)a->v[2 * a->used] : RT_PF_NULL; }

static int64_t bits_of(const pf_args *a) { return a->v[2 * a->used + 1]; }

static double as_f64_bits(int64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* getIntArg: sqlite3_value_int64 (a missing or NULL argument is 0). */
static int64_t int_arg(pf_args *a) {
  int k = kind_of(a);
  int64_t r = 0;
  if (k == RT_PF_INT) r = bits_of(a);
  else if (k == RT_PF_F64) r = rt_fn_f64_to_i64(as_f64_bits(bits_of(a)));
  else if (k == RT_PF_STR) r = rt_fn_str_to_i64(a->p, (uint32_t)bits_of(a));
  if (a->used < a->n) a->used++;
  return r;
}

/* getDoubleArg: sqlite3_value_double. */
static double f64_arg(pf_args *a) {
  int k = kind_of(a);
  double r = 0.0;
  if (k == RT_PF_INT) r = (double)bits_of(a);
  else if (k == RT_PF_F64) r = as_f64_bits(bits_of(a));
  else if (k == RT_PF_STR) r = rt_fn_str_to_f64(a->p, (uint32_t)bits_of(a));
  if (a->used < a->n) a->used++;
  return r;
}

/* getTextArg: sqlite3_value_text (NULL for a missing or NULL argument);
 * numbers as SQLite makes them text. buf holds at least 64 bytes. */
static const char *text_arg(pf_args *a, char *buf, size_t cap) {
  int k = kind_of(a);
  const char *r = NULL;
  if (k == RT_PF_INT) {
    snprintf(buf, cap, "%lld", (long long)bits_of(a));
    r = buf;
  } else if (k == RT_PF_F64) {
    rt_fn_f64_format(as_f64_bits(bits_of(a)), buf, cap);
    r = buf;
  } else if (k == RT_PF_STR) {
    r = rt_str_get(a->p, (uint32_t)bits_of(a), NULL);
  }
  if (a->used < a->n) a->used++;
  return r;
}

/* One parsed conversion. */
typedef struct pf_spec {
  bool left, alt, alt2, zero, comma;
  char prefix;          /* '+', ' ' or 0 */
  unsigned width;
  int precision;        /* -1: none */
  char conv;
} pf_spec;

/* The conversion rebuilt for sqlite3_str_appendf, with `ll` for the
 * integer conversions. */
static char *put_uint(char *q, unsigned v) {
  char d[12];
  int n = 0;
  do d[n++] = (char)('0' + v % 10);
  while (v /= 10);
  while (n) *q++ = d[--n];
  return q;
}

/* Written by hand, not by snprintf: this runs for every conversion. cap
 * is at least 40 (flags, two 10-digit numbers, "ll", the letter). */
static void spec_text(const pf_spec *s, bool ll, char conv, char *out, size_t cap) {
  (void)cap;
  char *q = out;
  *q++ = '%';
  if (s->left) *q++ = '-';
  if (s->prefix) *q++ = s->prefix;
  if (s->alt) *q++ = '#';
  if (s->alt2) *q++ = '!';
  if (s->zero) *q++ = '0';
  if (s->comma) *q++ = ',';
  if (s->width) q = put_uint(q, s->width);
  if (s->precision >= 0) {
    *q++ = '.';
    q = put_uint(q, (unsigned)s->precision);
  }
  if (ll) *q++ = 'l', *q++ = 'l';
  *q++ = conv;
  *q = 0;
}

/* %c: the SQL form copies the first character of the text (a lead byte
 * and up to three continuation bytes; a NULL argument is a NUL byte).
 * When those bytes are what the C form writes for some code point, the C
 * form does the padding and repetition; otherwise (malformed UTF-8) the
 * same steps are done here, as SQLite's etCHARX does them. */
static void put_char(sqlite3_str *out, const pf_spec *s, const char *text) {
  unsigned char buf[4];
  int len = 1;
  if (!text) {
    buf[0] = 0;
  } else {
    const unsigned char *z = (const unsigned char *)text;
    buf[0] = *z++;
    if ((buf[0] & 0xc0) == 0xc0)
      while (len < 4 && (*z & 0xc0) == 0x80) buf[len++] = *z++;
  }
  uint32_t ch = buf[0];
  if (len > 1) {
    ch = buf[0] & (0x3f >> (len - 1));
    for (int i = 1; i < len; i++) ch = (ch << 6) | (buf[i] & 0x3f);
  }
  unsigned char again[4];
  char spec[64];
  if (rt_utf8_put(ch, again) == len && !memcmp(again, buf, (size_t)len)) {
    spec_text(s, false, 'c', spec, sizeof spec);
    sqlite3_str_appendf(out, spec, (unsigned)ch);
    return;
  }
  /* etCHARX over bytes no code point encodes to. */
  int64_t width = s->width, precision = s->precision;
  if (precision > 1) {
    width -= precision - 1;
    if (width > 1 && !s->left) {
      sqlite3_str_appendchar(out, (int)(width - 1), ' ');
      width = 0;
    }
    for (int64_t i = 1; i < precision; i++) sqlite3_str_append(out, (const char *)buf, len);
  }
  /* A positive width counts characters here (etCHARX sets flag_altform2). */
  if (width > 0)
    for (int i = len - 1; i >= 0; i--)
      if ((buf[i] & 0xc0) == 0x80) width++;
  width -= len;
  if (width > 0 && !s->left) sqlite3_str_appendchar(out, (int)width, ' ');
  sqlite3_str_append(out, (const char *)buf, len);
  if (width > 0 && s->left) sqlite3_str_appendchar(out, (int)width, ' ');
}

/* Parses the flags, width and precision after a '%' as SQLite's
 * sqlite3_str_vappendf does; *pf points at the first character after the
 * '%' and is left at the conversion letter (or the NUL ending the
 * format). */
static void parse_spec(const char **pf, pf_spec *s, pf_args *a) {
  const char *fmt = *pf;
  char c = *fmt;
  bool done = false;
  memset(s, 0, sizeof *s);
  s->precision = -1;
  do {
    switch (c) {
    case '-': s->left = true; break;
    case '+': s->prefix = '+'; break;
    case ' ': s->prefix = ' '; break;
    case '#': s->alt = true; break;
    case '!': s->alt2 = true; break;
    case '0': s->zero = true; break;
    case ',': s->comma = true; break;
    default: done = true; break;
    case 'l':
      /* the SQL form reads every integer as 64 bits: l and ll are noise */
      c = *++fmt;
      if (c == 'l') c = *++fmt;
      done = true;
      break;
    case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9': {
      unsigned wx = (unsigned)(c - '0');
      while ((c = *++fmt) >= '0' && c <= '9') wx = wx * 10 + (unsigned)(c - '0');
      s->width = wx & 0x7fffffff;
      if (c != '.' && c != 'l') done = true;
      else fmt--;
      break;
    }
    case '*': {
      int w = (int)int_arg(a);
      if (w < 0) {
        s->left = true;
        w = w >= -2147483647 ? -w : 0;
      }
      s->width = (unsigned)w;
      if ((c = fmt[1]) != '.' && c != 'l') {
        c = *++fmt;
        done = true;
      }
      break;
    }
    case '.': {
      c = *++fmt;
      if (c == '*') {
        int p = (int)int_arg(a);
        if (p < 0) p = p >= -2147483647 ? -p : -1;
        s->precision = p;
        c = *++fmt;
      } else {
        unsigned px = 0;
        while (c >= '0' && c <= '9') {
          px = px * 10 + (unsigned)(c - '0');
          c = *++fmt;
        }
        s->precision = (int)(px & 0x7fffffff);
      }
      if (c == 'l') --fmt;
      else done = true;
      break;
    }
    }
  } while (!done && (c = *++fmt) != 0);
  s->conv = c;
  *pf = fmt;
}

/* ---- the output ---------------------------------------------------------- */

/* The text being made: in a stack buffer first, on the heap once it grows
 * past it, so most rows format without allocating; with the length limit
 * of an accumulator made by sqlite3_str_new(NULL): past SQLITE_MAX_LENGTH
 * (1e9 bytes) SQLite drops the text (TOOBIG, and the SQL result is NULL). */
#define PF_MAX_LENGTH 1000000000
typedef struct pf_out {
  char *p;
  size_t n, cap;
  bool heap, toobig, oom;
  char stack[512];
} pf_out;

static void out_append(pf_out *o, const char *s, size_t n) {
  if (o->toobig || o->oom || n == 0) return;
  if (o->n + n + 1 > PF_MAX_LENGTH) {
    o->toobig = true;
    return;
  }
  if (o->n + n > o->cap) {
    size_t cap = o->cap * 2;
    while (cap < o->n + n) cap *= 2;
    char *q = o->heap ? realloc(o->p, cap) : malloc(cap);
    if (!q) {
      o->oom = true;
      return;
    }
    if (!o->heap) memcpy(q, o->p, o->n);
    o->p = q;
    o->cap = cap;
    o->heap = true;
  }
  memcpy(o->p + o->n, s, n);
  o->n += n;
}

/* What a scratch accumulator holds, moved to o (its error too). */
static void out_take(pf_out *o, sqlite3_str *s) {
  int rc = sqlite3_str_errcode(s);
  int n = sqlite3_str_length(s);
  char *text = sqlite3_str_finish(s);
  if (rc == SQLITE_TOOBIG) o->toobig = true;
  else if (rc != SQLITE_OK) o->oom = true;
  else if (n > 0) out_append(o, text, (size_t)n);
  sqlite3_free(text);
}

/* %d with no flag, width or precision: the digits, as SQLite writes them. */
static void out_int(pf_out *o, int64_t v) {
  char buf[24], *e = buf + sizeof buf, *q = e;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do *--q = (char)('0' + u % 10);
  while (u /= 10);
  if (v < 0) *--q = '-';
  out_append(o, q, (size_t)(e - q));
}

/* The argument of one conversion, as sqlite3_str_appendf takes it. */
typedef struct pf_val {
  enum { PV_INT, PV_F64, PV_STR, PV_NONE } kind;
  long long i;
  double f;
  const char *s;
} pf_val;

static void append_spec(sqlite3_str *s, const char *spec, const pf_val *v) {
  switch (v->kind) {
  case PV_INT: sqlite3_str_appendf(s, spec, v->i); break;
  case PV_F64: sqlite3_str_appendf(s, spec, v->f); break;
  case PV_STR: sqlite3_str_appendf(s, spec, v->s); break;
  case PV_NONE: sqlite3_str_appendf(s, spec); break;
  }
}

/* One conversion by SQLite's own printf: into a stack buffer when it
 * surely fits there (`bound`, the most it can write: sqlite3_snprintf
 * then allocates nothing), else through a scratch accumulator. None of
 * these conversions writes a NUL byte, so the text's length is strlen. */
enum { PF_TMP = 1024 };
static void out_spec(pf_out *o, const char *spec, size_t bound, const pf_val *v) {
  if (bound < PF_TMP - 1) {
    char tmp[PF_TMP];
    switch (v->kind) {
    case PV_INT: sqlite3_snprintf(PF_TMP, tmp, spec, v->i); break;
    case PV_F64: sqlite3_snprintf(PF_TMP, tmp, spec, v->f); break;
    case PV_STR: sqlite3_snprintf(PF_TMP, tmp, spec, v->s); break;
    case PV_NONE: sqlite3_snprintf(PF_TMP, tmp, spec); break;
    }
    size_t n = strlen(tmp);
    if (n < PF_TMP - 1) {   /* else it was cut: the long way */
      out_append(o, tmp, n);
      return;
    }
  }
  sqlite3_str *s = sqlite3_str_new(NULL);
  append_spec(s, spec, v);
  out_take(o, s);
}

static bool plain(const pf_spec *s) {
  return !s->left && !s->alt && !s->alt2 && !s->zero && !s->comma && !s->prefix && !s->width &&
         s->precision < 0;
}

static size_t len_or0(const char *s) { return s ? strlen(s) : 0; }

uint32_t rt_fn_printf(rt_strpool *p, uint32_t fmtid, const int64_t *args, int32_t nargs) {
  pf_args a = {p, args, nargs, 0};
  const char *fmt = rt_str_get(p, fmtid, NULL);
  pf_out o = {0};
  o.p = o.stack;
  o.cap = sizeof o.stack;
  bool wrote = false;   /* anything appended, even nothing: the result is not NULL */
  char spec[64], tbuf[64];
  for (; *fmt; ++fmt) {
    if (*fmt != '%') {
      const char *run = fmt;
      while (*fmt && *fmt != '%') fmt++;
      out_append(&o, run, (size_t)(fmt - run));
      wrote = true;
      if (!*fmt) break;
    }
    if (!*++fmt) {
      out_append(&o, "%", 1);
      wrote = true;
      break;
    }
    pf_spec s;
    parse_spec(&fmt, &s, &a);
    bool stop = false;
    /* room for the digits of any number (309 before the point of a %f,
     * commas, sign), then the width and precision */
    size_t room = (size_t)s.width + (size_t)(s.precision > 0 ? s.precision : 6) + 450;
    switch (s.conv) {
    case 'd': case 'i': case 'o': case 'u': case 'x': case 'X': case 'r': case 'p': {
      int64_t v = int_arg(&a);
      if ((s.conv == 'd' || s.conv == 'i') && plain(&s)) {
        out_int(&o, v);
        break;
      }
      spec_text(&s, s.conv != 'p', s.conv, spec, sizeof spec);
      out_spec(&o, spec, room, &(pf_val){.kind = PV_INT, .i = (long long)v});
      break;
    }
    case 'f': case 'e': case 'E': case 'g': case 'G':
      spec_text(&s, false, s.conv, spec, sizeof spec);
      out_spec(&o, spec, room, &(pf_val){.kind = PV_F64, .f = f64_arg(&a)});
      break;
    case 's': case 'z': case 'q': case 'Q': case 'w': {
      const char *t = text_arg(&a, tbuf, sizeof tbuf);
      if ((s.conv == 's' || s.conv == 'z') && plain(&s)) {
        out_append(&o, t ? t : "", len_or0(t));
        break;
      }
      spec_text(&s, false, s.conv == 'z' ? 's' : s.conv, spec, sizeof spec);
      /* quoting at most doubles the text */
      out_spec(&o, spec, room + 2 * len_or0(t), &(pf_val){.kind = PV_STR, .s = t});
      break;
    }
    case 'c': {
      sqlite3_str *c = sqlite3_str_new(NULL);
      put_char(c, &s, text_arg(&a, tbuf, sizeof tbuf));
      out_take(&o, c);
      break;
    }
    case '%':
      if (plain(&s)) {
        out_append(&o, "%", 1);
        break;
      }
      spec_text(&s, false, '%', spec, sizeof spec);
      out_spec(&o, spec, room, &(pf_val){.kind = PV_NONE});
      break;
    case 'n': break;   /* writes nothing, takes no argument */
    default: stop = true; break;   /* %T, %S, unknown, or the format ended */
    }
    if (stop) break;
    wrote = true;
  }
  uint32_t id;
  if (o.toobig) {
    /* Longer than SQLite's 1e9 bytes: its accumulator drops the text, and
     * the SQL function returns NULL (not an error). */
    id = RT_STR_NULL;
  } else if (o.oom) {
    rt_strpool_set_oom(p);
    id = RT_STR_FAILED;
  } else if (!wrote) {
    id = RT_STR_NULL;
  } else if (o.n == 0) {
    id = 0;
  } else {
    id = rt_str_intern(p, o.p, o.n);
    if (!id) id = RT_STR_FAILED;
  }
  if (o.heap) free(o.p);
  return id;
}
