/* reader: bounded reads from a model file or a buffer, through a 64 KiB
 * window so that parsing a header of many small fields costs few syscalls
 * and never touches the weights. */
#include "model/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"

int reader_open_file(struct reader *r, const char *path)
{
    memset(r, 0, sizeof *r);
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0)
        return -1;
    struct stat st;
    if (fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
        close(r->fd);
        errno = e;
        return -1;
    }
    r->size = (uint64_t)st.st_size;
    return 0;
}

void reader_open_mem(struct reader *r, const void *mem, size_t size)
{
    r->mem = mem;
    r->fd = -1;
    r->size = size;
    r->pos = 0;
    r->buf_off = r->buf_len = 0;
}

void reader_close(struct reader *r)
{
    if (!r->mem && r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

int reader_read(struct reader *r, void *dst, uint64_t n)
{
    if (n > reader_left(r))
        return -1;
    if (r->mem) {
        memcpy(dst, r->mem + r->pos, n);
        r->pos += n;
        return 0;
    }
    unsigned char *out = dst;
    while (n) {
        if (r->pos < r->buf_off || r->pos >= r->buf_off + r->buf_len) {
            uint64_t want = reader_left(r) < sizeof r->buf ? reader_left(r) : sizeof r->buf;
            ssize_t got = pread(r->fd, r->buf, want, (off_t)r->pos);
            if (got <= 0)
                return -1;
            r->buf_off = r->pos;
            r->buf_len = (uint64_t)got;
        }
        uint64_t at = r->pos - r->buf_off, take = r->buf_len - at;
        if (take > n)
            take = n;
        memcpy(out, r->buf + at, take);
        out += take;
        r->pos += take;
        n -= take;
    }
    return 0;
}

int reader_skip(struct reader *r, uint64_t n)
{
    if (n > reader_left(r))
        return -1;
    r->pos += n;
    return 0;
}

int reader_parse_file(const char *path, int (*parse)(struct reader *r, const char *name, void *arg),
                      void *arg, char *err, size_t errlen)
{
    struct reader *r = malloc(sizeof *r); /* its window is 64 KiB: not on the stack */
    if (!r)
        return VRAM_EFAIL;
    if (reader_open_file(r, path) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        free(r);
        return VRAM_EINPUT;
    }
    int rc = parse(r, path, arg);
    reader_close(r);
    free(r);
    return rc;
}
