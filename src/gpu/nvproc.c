/* nvproc: decoding NVML's process records, whatever layout the driver wrote.
 *
 * Inside the 535 driver series, nvmlProcessInfo_t briefly grew from 24 to 32
 * bytes while keeping the same entry point, so tools built against one header
 * and run on the other driver read every record after the first from the
 * wrong offset. We ask with the 24-byte layout into a buffer sized for 32,
 * pre-filled with a sentinel, and look where the driver stopped writing. */
#include "gpu/nvproc.h"

#include <string.h>

static bool untouched(const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != NVPROC_SENTINEL)
            return false;
    return true;
}

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static bool plausible(const unsigned char *buf, unsigned n, size_t stride)
{
    for (unsigned i = 0; i < n; i++) {
        uint32_t pid = rd32(buf + i * stride);
        if (pid == 0 || pid > 0x7fffffffu)
            return false;
    }
    return true;
}

size_t nvproc_stride(const unsigned char *buf, unsigned n, size_t expected)
{
    if (n == 0 || expected >= NVPROC_MAX_STRIDE)
        return expected;
    /* bytes past n records of the expected size: untouched means it fits */
    size_t tail = (size_t)n * (NVPROC_MAX_STRIDE - expected);
    if (untouched(buf + (size_t)n * expected, tail))
        return expected;
    if (plausible(buf, n, NVPROC_MAX_STRIDE))
        return NVPROC_MAX_STRIDE;
    return expected;
}

unsigned nvproc_decode(const unsigned char *buf, unsigned n, size_t stride, uint64_t total,
                       struct nvproc_entry *out, unsigned *rejected)
{
    unsigned kept = 0, bad = 0;
    for (unsigned i = 0; i < n; i++) {
        const unsigned char *r = buf + (size_t)i * stride;
        uint32_t pid = rd32(r);
        uint64_t used = rd64(r + 8); /* after the pid and its padding in every layout */
        bool known = used != 0xFFFFFFFFFFFFFFFFULL;
        if (pid == 0 || pid == 0xFFFFFFFFu || (known && total && used > total)) {
            bad++;
            continue;
        }
        out[kept].pid = pid;
        out[kept].used_known = known;
        out[kept].used = known ? used : 0;
        kept++;
    }
    if (rejected)
        *rejected = bad;
    return kept;
}
