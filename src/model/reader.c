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

const char *reader_kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a folder"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
                            : "not a regular file";
}

static int not_regular(const char *name, mode_t mode, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s, not a regular file: vram reads models only from regular files",
             name, reader_kind(mode));
    return VRAM_EINPUT;
}

int reader_open_fd(struct reader *r, int fd, const char *name, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        snprintf(err, errlen, "%s: %s", name, strerror(errno));
        close(fd);
        return VRAM_EINPUT;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return not_regular(name, st.st_mode, err, errlen);
    }
    r->fd = fd;
    r->size = (uint64_t)st.st_size;
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    return VRAM_OK;
}

int reader_open_file(struct reader *r, const char *path, char *err, size_t errlen)
{
    /* looked at before it is opened: opening a FIFO waits for a writer, and
     * opening a device can act on it */
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return VRAM_EINPUT;
    }
    if (!S_ISREG(st.st_mode))
        return not_regular(path, st.st_mode, err, errlen);
    /* O_NONBLOCK: should it become a FIFO in between, the open does not wait */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return VRAM_EINPUT;
    }
    return reader_open_fd(r, fd, path, err, errlen);
}

void reader_open_mem(struct reader *r, const void *mem, size_t size)
{
    reader_open_mem_prefix(r, mem, size, size);
}

void reader_open_mem_prefix(struct reader *r, const void *mem, size_t have, uint64_t size)
{
    r->mem = mem;
    r->fd = -1;
    r->size = size;
    r->have = have < size ? have : size;
    r->beyond = false;
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
    if (r->mem && r->pos + n > r->have) {
        r->beyond = true;
        return -1;
    }
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

int reader_fill(struct reader *r)
{
    if (r->mem || r->fd < 0 || r->pos >= r->size)
        return -1;
    uint64_t want = reader_left(r) < sizeof r->buf ? reader_left(r) : sizeof r->buf;
    ssize_t got = pread(r->fd, r->buf, want, (off_t)r->pos);
    if (got <= 0)
        return -1; /* the file shrank under us: the parser sees its end */
    r->buf_off = r->pos;
    r->buf_len = (uint64_t)got;
    return r->buf[r->pos++ - r->buf_off];
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
    int rc = reader_open_file(r, path, err, errlen);
    if (rc != VRAM_OK) {
        free(r);
        return rc;
    }
    rc = parse(r, path, arg);
    reader_close(r);
    free(r);
    return rc;
}
