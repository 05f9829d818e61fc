/* top_detail: the details pane of the selected process, under the list:
 * its whole command line, start, parent, every GPU it holds and its share
 * of each, CPU and host memory, cgroup and container, its slice under
 * `vram run`, its model under `vram serve` and what the daemon says of it. */
#ifndef VRAM_TOP_TOP_DETAIL_H
#define VRAM_TOP_TOP_DETAIL_H

#include "top/top_draw.h"

/* Lines the pane takes out of room below the column titles (0: off). */
int top_detail_lines(const struct top *t, int room);

void top_detail_draw(const struct top *t, int y, int lines, int cols);

#endif
