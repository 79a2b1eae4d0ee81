/*
 * ast.c — small facts about the syntax tree: stage names for messages, and
 * turning byte offsets into line and column for error reports.
 */
#include "ast.h"

const char *const fe_stage_names[ST__COUNT] = {
#define STAGE(name, str, w1, w2, parse, bind, words) str,
#include "../ir/stages.def"
#undef STAGE
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
