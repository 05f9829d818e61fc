/* fixture_model: tests write their own small safetensors and GGUF files. */
#ifndef VRAM_TESTS_MODELFILE_H
#define VRAM_TESTS_MODELFILE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A growing byte buffer. */
struct mf {
    unsigned char buf[1 << 16];
    size_t n;
};

static inline void mf_bytes(struct mf *f, const void *p, size_t n)
{
    memcpy(f->buf + f->n, p, n);
    f->n += n;
}

static inline void mf_u32(struct mf *f, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    mf_bytes(f, b, 4);
}

static inline void mf_u64(struct mf *f, uint64_t v)
{
    mf_u32(f, (uint32_t)v);
    mf_u32(f, (uint32_t)(v >> 32));
}

static inline void mf_str(struct mf *f, const char *s)
{
    mf_u64(f, strlen(s));
    mf_bytes(f, s, strlen(s));
}

/* GGUF: header, then callers add key/values and tensor infos. */
static inline void mf_gguf_header(struct mf *f, uint32_t version, uint64_t ntensors, uint64_t nkv)
{
    mf_bytes(f, "GGUF", 4);
    mf_u32(f, version);
    mf_u64(f, ntensors);
    mf_u64(f, nkv);
}

static inline void mf_kv_u32(struct mf *f, const char *key, uint32_t v)
{
    mf_str(f, key);
    mf_u32(f, 4); /* UINT32 */
    mf_u32(f, v);
}

static inline void mf_kv_str(struct mf *f, const char *key, const char *v)
{
    mf_str(f, key);
    mf_u32(f, 8); /* STRING */
    mf_str(f, v);
}

static inline void mf_tensor(struct mf *f, const char *name, uint32_t ndims, const uint64_t *dims,
                             uint32_t type, uint64_t offset)
{
    mf_str(f, name);
    mf_u32(f, ndims);
    for (uint32_t i = 0; i < ndims; i++)
        mf_u64(f, dims[i]);
    mf_u32(f, type);
    mf_u64(f, offset);
}

/* safetensors: the 8-byte length, the JSON header, then data_bytes zeros. */
static inline void mf_safetensors(struct mf *f, const char *header, size_t data_bytes)
{
    mf_u64(f, strlen(header));
    mf_bytes(f, header, strlen(header));
    memset(f->buf + f->n, 0, data_bytes);
    f->n += data_bytes;
}

static inline int mf_write(const struct mf *f, const char *path)
{
    FILE *o = fopen(path, "wb");
    if (!o)
        return -1;
    size_t w = fwrite(f->buf, 1, f->n, o);
    fclose(o);
    return w == f->n ? 0 : -1;
}

#endif
