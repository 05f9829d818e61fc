/* reader: bounded reads from a model file or a buffer in memory. Every read
 * is checked against the size, so no length field in a hostile file can
 * make a parser read past the end or allocate more than the file holds. */
#ifndef VRAM_MODEL_READER_H
#define VRAM_MODEL_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct reader {
    const unsigned char *mem; /* a buffer, or NULL for fd */
    int fd;
    uint64_t size, pos;
    /* a buffer that holds the first `have` bytes of a file of size bytes
     * (its header fetched by a range request): a read past them fails and
     * sets beyond, so that the caller can fetch more and parse again */
    uint64_t have;
    bool beyond;
    dev_t dev; /* which file (fd only): the same one reached twice is told */
    ino_t ino;
    unsigned char buf[65536];
    uint64_t buf_off, buf_len;
};

/* VRAM_OK, or VRAM_EINPUT with "NAME: why" in err: missing, unreadable, or
 * not a regular file (a FIFO, a device, a socket, a folder), which is
 * refused without being opened. reader_open_fd takes fd over (closed on
 * error too). */
int reader_open_file(struct reader *r, const char *path, char *err, size_t errlen);
int reader_open_fd(struct reader *r, int fd, const char *name, char *err, size_t errlen);
void reader_open_mem(struct reader *r, const void *mem, size_t size);
/* mem holds the first have bytes of a file of size bytes (have <= size). */
void reader_open_mem_prefix(struct reader *r, const void *mem, size_t have, uint64_t size);
void reader_close(struct reader *r);

/* 0, or -1 when fewer than n bytes remain. */
int reader_read(struct reader *r, void *dst, uint64_t n);
int reader_skip(struct reader *r, uint64_t n);

/* "a FIFO", "a folder", ...: what a file of this mode is, for messages. */
const char *reader_kind(mode_t mode);

/* Opens path, runs parse on it, closes it. VRAM_EINPUT with "PATH: why"
 * when it cannot be opened. */
int reader_parse_file(const char *path, int (*parse)(struct reader *r, const char *name, void *arg),
                      void *arg, char *err, size_t errlen);

static inline uint64_t reader_left(const struct reader *r)
{
    return r->size - r->pos;
}

/* The byte at pos when the window does not hold it: -1 at the end. */
int reader_fill(struct reader *r);

/* The bytes from pos on that are in memory now, not consumed: at least one
 * unless at the end (0). For scanning runs of plain bytes at once. */
static inline size_t reader_window(struct reader *r, const unsigned char **p)
{
    if (r->pos >= r->size)
        return 0;
    if (r->mem) {
        if (r->pos >= r->have) {
            r->beyond = true;
            return 0;
        }
        *p = r->mem + r->pos;
        return r->have - r->pos;
    }
    if (r->pos < r->buf_off || r->pos - r->buf_off >= r->buf_len) {
        if (reader_fill(r) < 0)
            return 0;
        r->pos--;
    }
    *p = r->buf + (r->pos - r->buf_off);
    return r->buf_off + r->buf_len - r->pos;
}

/* The next byte, or -1 at the end: for parsers that go byte by byte. */
static inline int reader_getc(struct reader *r)
{
    if (r->pos >= r->size)
        return -1;
    if (r->mem && r->pos >= r->have) {
        r->beyond = true;
        return -1;
    }
    if (r->mem)
        return r->mem[r->pos++];
    if (r->pos >= r->buf_off && r->pos - r->buf_off < r->buf_len)
        return r->buf[r->pos++ - r->buf_off];
    return reader_fill(r);
}

#endif
