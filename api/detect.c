/*
 * detect.c — pj_detect_format: what a file holds, judged by its first
 * bytes, so the CLI can tell a user who passed a trace as a script to use
 * --trace (issue 11) instead of printing SQLite's "unrecognized token".
 *
 * The tests are conservative: a script is text, so only content no script
 * can start with is called something else. gzip and SQLite have magic
 * numbers. JSON is an object or array at the start (after a UTF-8 BOM and
 * whitespace): `{` then `"` or `}`, or `[` then `{`, `]` or the end; no
 * statement starts that way. A Perfetto trace is a protobuf whose first
 * field is `packet` (tag 0x0a, then a varint length): a script may start
 * with a newline (0x0a) too, so the first bytes must also hold a control
 * byte that text never has.
 */
#include <string.h>

#include "pipejit.h"

static size_t skip_space(const unsigned char *s, size_t i, size_t n) {
  while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
  return i;
}

static int looks_json(const unsigned char *s, size_t n) {
  size_t i = n >= 3 && s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf ? 3 : 0;
  i = skip_space(s, i, n);
  if (i >= n || (s[i] != '{' && s[i] != '[')) return 0;
  unsigned char open = s[i];
  i = skip_space(s, i + 1, n);
  if (i >= n) return open == '[';
  return open == '{' ? s[i] == '"' || s[i] == '}' : s[i] == '{' || s[i] == ']';
}

/* A byte that text (scripts: UTF-8 with tabs and newlines) never holds. */
static int is_binary_byte(unsigned char c) {
  return c < 0x09 || (c > 0x0d && c < 0x20 && c != 0x1b);
}

static int looks_proto(const unsigned char *s, size_t n) {
  if (n < 3 || s[0] != 0x0a) return 0;
  size_t i = 1;
  int shift = 0;
  while (i < n && (s[i] & 0x80) && shift < 28) i++, shift += 7;
  if (i >= n || (s[i] & 0x80)) return 0;
  size_t end = n < 64 ? n : 64;
  for (size_t k = 1; k < end; k++)
    if (is_binary_byte(s[k])) return 1;
  return 0;
}

pj_format pj_detect_format(const void *head, size_t len) {
  const unsigned char *s = head;
  if (!s) return PJ_FORMAT_TEXT;
  if (len >= 2 && s[0] == 0x1f && s[1] == 0x8b) return PJ_FORMAT_GZIP;
  if (len >= 16 && !memcmp(s, "SQLite format 3", 16)) return PJ_FORMAT_SQLITE;
  if (looks_json(s, len)) return PJ_FORMAT_JSON;
  if (looks_proto(s, len)) return PJ_FORMAT_PROTO;
  return PJ_FORMAT_TEXT;
}

const char *pj_format_name(pj_format f) {
  switch (f) {
  case PJ_FORMAT_TEXT: return "text";
  case PJ_FORMAT_GZIP: return "gzip-compressed data (a .json.gz trace?)";
  case PJ_FORMAT_JSON: return "a JSON trace";
  case PJ_FORMAT_PROTO: return "a protobuf (Perfetto) trace";
  case PJ_FORMAT_SQLITE: return "a SQLite database";
  }
  return "unknown";
}
