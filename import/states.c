/*
 * states.c — state tracks (TrackEvent STATE events, TRACES.md §3.6.4):
 * a track is in one state at a time; entering a new one ends the row of
 * the previous one, a NULL state only ends it. The last row of each track
 * stays open (dur -1), as every open interval does (§1.1.5).
 */
#include "trace.h"

int64_t im_state(im_trace *t, int64_t track, int64_t ts, uint32_t cat, uint32_t name,
                 int64_t arg_set_id) {
  im_track_state *st = track < 0 || t->failed ? NULL : im__track_state(t, track);
  if (!st) return IM_NONE;
  im_tab *tab = im__tab(t, IM_T_STATE);
  if (st->state_open) {
    int64_t open = st->state_open - 1;
    im__put_i64(tab, IM_STATE_DUR, open, ts - ((const int64_t *)tab->data[IM_STATE_TS])[open]);
    st->state_open = 0;
  }
  if (name == IM_NULL_STR) return IM_NONE;
  int64_t row = im_append(t, IM_T_STATE);
  if (row < 0) return IM_NONE;
  tab = im__tab(t, IM_T_STATE);
  im__put_i64(tab, IM_STATE_TS, row, ts);
  im__put_i64(tab, IM_STATE_DUR, row, -1);
  im__put_u32(tab, IM_STATE_TRACK_ID, row, (uint32_t)track);
  if (cat != IM_NULL_STR) im__put_u32(tab, IM_STATE_CATEGORY, row, cat);
  im__put_u32(tab, IM_STATE_NAME, row, name);
  if (arg_set_id != IM_NONE) im__put_u32(tab, IM_STATE_ARG_SET_ID, row, (uint32_t)arg_set_id);
  st->state_open = row + 1;
  return row;
}
