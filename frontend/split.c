/*
 * split.c — cuts a script into statements at top-level ';'.
 *
 * A ';' ends a statement unless it is inside a string, quoted identifier,
 * comment or parentheses, or inside the BEGIN … END body of CREATE
 * [TEMP] TRIGGER. In a trigger body, BEGIN and CASE open a block and END
 * closes one, so `CASE … END;` inside the body does not end the trigger
 * (SQLite's sqlite3_complete() would stop there). The scan never fails:
 * an unterminated quote or comment runs to the end of the script and the
 * parser reports it.
 */
#include "parse.h"

static bool is_space(unsigned char c) { return c == ' ' || (c >= 0x09 && c <= 0x0d); }
/* Characters of words (and of numbers, which are skipped the same way). */
static bool is_word(unsigned char c) {
  return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}

typedef struct splitter {
  int nwords;          /* words seen in the current statement */
  bool create, temp;   /* word 0 is CREATE; word 1 is TEMP or TEMPORARY */
  bool trigger;        /* CREATE [TEMP|TEMPORARY] TRIGGER */
  int block;           /* open BEGIN / CASE blocks of a trigger body */
} splitter;

static bool word_is(const char *w, int n, const char *kw) {
  return (size_t)n == strlen(kw) && rt_strnieq(w, kw, (size_t)n);
}

static void on_word(splitter *s, const char *w, int n) {
  int k = s->nwords++;
  if (k == 0) s->create = word_is(w, n, "CREATE");
  if (k == 1) s->temp = word_is(w, n, "TEMP") || word_is(w, n, "TEMPORARY");
  /* CREATE TRIGGER, or CREATE TEMP TRIGGER */
  if (s->create && word_is(w, n, "TRIGGER") && (k == 1 || (k == 2 && s->temp)))
    s->trigger = true;
  if (!s->trigger) return;
  if (word_is(w, n, "BEGIN") || word_is(w, n, "CASE")) s->block++;
  else if (word_is(w, n, "END") && s->block > 0) s->block--;
}

/* Offset past a quoted run starting at i (a doubled quote is an escape;
 * '[' has none), or len when unterminated. */
static size_t skip_quoted(const char *t, size_t len, size_t i) {
  char close = t[i] == '[' ? ']' : t[i];
  for (size_t j = i + 1; j < len; j++) {
    if (t[j] != close) continue;
    if (close != ']' && j + 1 < len && t[j + 1] == close) {
      j++;
      continue;
    }
    return j + 1;
  }
  return len;
}

/* text[start..end) trimmed of whitespace. */
static fe_span trimmed(const char *t, size_t start, size_t end) {
  while (start < end && is_space((unsigned char)t[start])) start++;
  while (end > start && is_space((unsigned char)t[end - 1])) end--;
  return (fe_span){(int)start, (int)(end - start)};
}

/* fe_split_next, also telling whether the text ends inside an
 * unfinished statement or an open block comment (*open; may be NULL). */
static int scan(const char *text, size_t len, size_t *at, fe_span *out, bool *open) {
  splitter s = {0};
  int parens = 0;
  bool content = false; /* anything but whitespace and comments */
  size_t start = *at, i = *at;
  while (i < len) {
    unsigned char c = (unsigned char)text[i];
    if (c == '-' && i + 1 < len && text[i + 1] == '-') {
      while (i < len && text[i] != '\n') i++;
    } else if (c == '/' && i + 1 < len && text[i + 1] == '*') {
      size_t j = i + 2;
      while (j + 1 < len && !(text[j] == '*' && text[j + 1] == '/')) j++;
      if (j + 1 >= len && open) *open = true;
      i = j + 1 < len ? j + 2 : len;
    } else if (c == '\'' || c == '"' || c == '`' || c == '[') {
      i = skip_quoted(text, len, i);
      content = true;
    } else if (is_word(c)) {
      size_t j = i;
      while (j < len && is_word((unsigned char)text[j])) j++;
      on_word(&s, text + i, (int)(j - i));
      i = j;
      content = true;
    } else if (c == ';' && parens == 0 && s.block == 0) {
      if (content) {
        *out = trimmed(text, start, i);
        *at = i + 1;
        return 1;
      }
      start = ++i;   /* an empty statement: skipped */
      s = (splitter){0};
    } else {
      /* Unbalanced ')' must not hide later ';'s. */
      if (c == '(') parens++;
      else if (c == ')' && parens > 0) parens--;
      if (!is_space(c)) content = true;
      i++;
    }
  }
  *at = len;
  if (!content) return 0;
  if (open) *open = true;
  *out = trimmed(text, start, len);
  return 1;
}

int fe_split_next(const char *text, size_t len, size_t *at, fe_span *out) {
  return scan(text, len, at, out, NULL);
}

bool fe_split_complete(const char *text, size_t len) {
  size_t at = 0;
  fe_span sp;
  bool open = false;
  while (scan(text, len, &at, &sp, &open)) {}
  return !open;
}

int fe_split(rt_arena *a, const char *text, size_t len, fe_span **out) {
  int n = 0, cap = 0;
  *out = NULL;
  size_t at = 0;
  fe_span sp;
  while (fe_split_next(text, len, &at, &sp)) {
    fe_span *v = fe_push(a, out, &n, &cap, sizeof sp);
    if (!v) return -1;   /* out of memory */
    *v = sp;
  }
  return n;
}
