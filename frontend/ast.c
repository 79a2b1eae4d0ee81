/*
 * ast.c — small facts about the syntax tree: stage names for messages, and
 * turning byte offsets into line and column for error reports.
 */
#include "ast.h"

/* Indexed by fe_stagekind. */
const char *const fe_stage_names[] = {
  [ST_WHERE] = "WHERE",
  [ST_SELECT] = "SELECT",
  [ST_EXTEND] = "EXTEND",
  [ST_SET] = "SET",
  [ST_DROP] = "DROP",
  [ST_RENAME] = "RENAME",
  [ST_AS] = "AS",
  [ST_ORDER_BY] = "ORDER BY",
  [ST_LIMIT] = "LIMIT",
  [ST_AGGREGATE] = "AGGREGATE",
  [ST_TREE] = "TREE ACCUMULATE",
  [ST_FLATTEN] = "INTERVAL FLATTEN",
  [ST_IJOIN] = "INTERVAL JOIN",
  [ST_FILL_GAPS] = "INTERVAL FILL GAPS",
};

/* Columns count bytes, so a caret printed under the line lines up for
 * ASCII text; an offset past the end is clamped to the end. */
void fe_line_col(const char *text, int offset, int *line, int *col) {
  int l = 1, c = 1;
  for (int i = 0; i < offset && text[i]; i++) {
    if (text[i] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
}
