/* spill: the disk tier inside a suspended process. Under `vram serve`,
 * when host memory for a suspend is short, the daemon passes a file of
 * its spill folder with the request, and the bytes that do not fit in its
 * chunks go there; later the daemon may ask a suspended model to move the
 * rest down too (`spill`), and give its chunks back. The file is written
 * and read in large aligned pieces (O_DIRECT where the filesystem has it,
 * so that what is on disk does not sit in the page cache as well: that is
 * host RAM outside host_budget), through a few pinned staging buffers,
 * each with a thread of its own: the disk works on one piece while the GPU
 * copies the next. A model on disk holds no host memory beyond these
 * buffers, and only during a move. */
#ifndef VRAM_SHIM_SPILL_H
#define VRAM_SHIM_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda_api.h"

/* A run of GPU memory and its place in the file. */
struct spill_extent {
    CUdeviceptr dptr;
    uint64_t off; /* in the file */
    uint64_t n;
    int dev;
};

/* A run of host memory (pinned or not) and its place in the file. */
struct spill_host {
    const char *p;
    uint64_t off;
    uint64_t n;
};

/* Makes dev's context current on the calling thread and gives a stream of
 * it to copy on. */
typedef CUresult (*spill_enter_fn)(int dev, CUstream *s);

/* Checks that fd is a regular file this process may read and write, and
 * asks for direct I/O where its filesystem has it. 0, or -1 with err. */
int spill_open(int fd, char *err, size_t len);

/* Copies each extent from the GPU into the file. 0, or -1 with err (what
 * was written may be partial; the GPU memory is untouched). */
int spill_out(int fd, const struct spill_extent *v, unsigned n, spill_enter_fn enter, char *err,
              size_t len);

/* Copies each extent from the file back to the GPU. 0, or -1 with err. */
int spill_in(int fd, const struct spill_extent *v, unsigned n, spill_enter_fn enter, char *err,
             size_t len);

/* Writes each run of host memory into the file (no staging: the memory
 * is written from where it is). 0, or -1 with err. */
int spill_write_host(int fd, const struct spill_host *v, unsigned n, char *err, size_t len);

/* Reserves the file's blocks from off up to end, the places about to be
 * written, so that a full disk is found before anything moves. Only
 * those: a file's places start where its host memory ends, and blocks
 * before them would be counted against spill_budget (the daemon measures
 * what a file takes) and fill the disk with nothing. 0, or -1 with err. */
int spill_reserve(int fd, uint64_t off, uint64_t end, char *err, size_t len);

#endif
