/* top_gpu: one GPU's lines at the top of `vram top`: its memory bar and
 * history; the bar's parts in figures; its meters (utilization, memory
 * bandwidth, temperature, power against its limit, clocks, PCIe, video
 * engines) with small graphs of the last samples. */
#ifndef VRAM_TOP_TOP_GPU_H
#define VRAM_TOP_TOP_GPU_H

#include "top/top_draw.h"

/* Lines each GPU gets (1 to 4) on a screen rows x cols: as many as leave
 * six for processes (the meters take two lines under 150 columns). */
int top_gpu_lines(int rows, int cols, size_t ngpus);

/* GPU g's lines from row y. */
void top_gpu_draw(const struct top *t, int y, int cols, const struct snap_gpu *g, int lines);

/* The memory history's width beside the bar (0: none) and its caption,
 * drawn over it on the first line ("" without one). */
int top_gpu_hist_width(int cols);
void top_gpu_caption(const struct top *t, int cols, char *cap, size_t len);

/* A small graph of the last w samples of a series from (y, x): blocks in
 * UTF-8, else ASCII shades; a sample not taken is blank. */
void top_gpu_graph(const struct top *t, int y, int x, int w, size_t gpu, enum top_series s);

#endif
