/* reader: bounded reads from a model file or a buffer in memory. Every read
 * is checked against the size, so no length field in a hostile file can
 * make a parser read past the end or allocate more than the file holds. */
#ifndef VRAM_MODEL_READER_H
#define VRAM_MODEL_READER_H

#include <stddef.h>
#include <stdint.h>

struct reader {
    const unsigned char *mem; /* a buffer, or NULL for fd */
    int fd;
    uint64_t size, pos;
    unsigned char buf[65536];
    uint64_t buf_off, buf_len;
};

int reader_open_file(struct reader *r, const char *path); /* -1 with errno */
void reader_open_mem(struct reader *r, const void *mem, size_t size);
void reader_close(struct reader *r);

/* 0, or -1 when fewer than n bytes remain. */
int reader_read(struct reader *r, void *dst, uint64_t n);
int reader_skip(struct reader *r, uint64_t n);

/* Opens path, runs parse on it, closes it. VRAM_EINPUT with "PATH: why"
 * when it cannot be opened. */
int reader_parse_file(const char *path, int (*parse)(struct reader *r, const char *name, void *arg),
                      void *arg, char *err, size_t errlen);

static inline uint64_t reader_left(const struct reader *r)
{
    return r->size - r->pos;
}

#endif
