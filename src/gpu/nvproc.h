/* nvproc: decoding NVML's process records, whatever layout the driver wrote.
 * Pure functions over a byte buffer, so every layout can be tested without a
 * driver. */
#ifndef VRAM_GPU_NVPROC_H
#define VRAM_GPU_NVPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NVPROC_MAX_STRIDE 32
#define NVPROC_SENTINEL   0xA5

struct nvproc_entry {
    uint32_t pid;
    bool used_known;
    uint64_t used;
};

/* Which record size did the driver use? buf was filled with NVPROC_SENTINEL
 * before the call, is cap records of NVPROC_MAX_STRIDE bytes, and the driver
 * said it wrote n records. expected is the size our prototype asked for. */
size_t nvproc_stride(const unsigned char *buf, unsigned n, size_t expected);

/* Decode n records of the given stride, keeping only plausible ones: pid 0
 * and 4294967295 are not processes, and a process cannot use more than the
 * GPU has. Returns how many were kept; *rejected counts the others. */
unsigned nvproc_decode(const unsigned char *buf, unsigned n, size_t stride, uint64_t total,
                       struct nvproc_entry *out, unsigned *rejected);

#endif
