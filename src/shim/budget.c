/* budget: each GPU's group, matched to the driver's device ordinals.
 *
 * With files, a device's group is the one whose recorded UUID is the
 * device's (cuDeviceGetUuid): `vram run` names the GPUs in
 * CUDA_VISIBLE_DEVICES and the files in VRAM_CAP_GROUP in the same order,
 * but a program may reorder or narrow what it sees, and the UUID cannot
 * be mistaken. A file that records no UUID, a driver that cannot name a
 * device, or one whose names match none of the files at all (a MIG
 * instance is named for itself, not for its GPU) falls back to that order.
 * A device no group is for has no budget: what it would allocate is
 * refused, since the process was not given that GPU. */
#include "shim/budget.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "shim/driver.h"

int budget_device_uuid(int dev, char *out, size_t len)
{
    CUuuid u;
    if (!real_cuDeviceGetUuid_v2 || real_cuDeviceGetUuid_v2(&u, dev) != CUDA_SUCCESS)
        return -1;
    const unsigned char *b = (const unsigned char *)u.bytes;
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    return 0;
}

static bool same_uuid(const struct group *g, const char *uuid)
{
    return g->sh && g->sh->gpu_uuid[0] &&
           strncasecmp(g->sh->gpu_uuid, uuid, sizeof g->sh->gpu_uuid) == 0;
}

static void init(struct budget *b)
{
    memset(b, 0, sizeof *b);
    b->uuids_name_them = -1;
    pthread_mutex_init(&b->mu, NULL);
}

/* Lock held: whether the driver's UUIDs name the files' GPUs here at all,
 * asked once of every visible device. */
static bool uuids_name_them(struct budget *b)
{
    int n = 0;
    if (b->uuids_name_them >= 0)
        return b->uuids_name_them;
    if (!real_cuDeviceGetCount || real_cuDeviceGetCount(&n) != CUDA_SUCCESS)
        return true; /* ask again later; meanwhile trust the names */
    b->uuids_name_them = 0;
    char uuid[96];
    for (int dev = 0; dev < n && dev < BUDGET_MAX_DEVICES; dev++) {
        if (budget_device_uuid(dev, uuid, sizeof uuid) < 0)
            continue;
        for (unsigned i = 0; i < b->n; i++)
            if (same_uuid(&b->slice[i], uuid)) {
                b->uuids_name_them = 1;
                return true;
            }
    }
    return false;
}

int budget_open_files(struct budget *b, const char *list, char *err, size_t len)
{
    init(b);
    b->files = true;
    /* one path that holds a comma is still one path */
    if (group_open(&b->slice[0], list) == 0) {
        b->n = 1;
        return 0;
    }
    char buf[BUDGET_MAX_DEVICES * (GROUP_PATH_MAX + 1)];
    if (strlen(list) >= sizeof buf) {
        snprintf(err, len, "VRAM_CAP_GROUP is too long (%zu paths at most)",
                 (size_t)BUDGET_MAX_DEVICES);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (b->n == BUDGET_MAX_DEVICES) {
            snprintf(err, len, "VRAM_CAP_GROUP names more than %u files", BUDGET_MAX_DEVICES);
            goto fail;
        }
        if (group_open(&b->slice[b->n], p) < 0) {
            snprintf(err, len, "%s is not a vram group", p);
            goto fail;
        }
        b->n++;
    }
    if (b->n == 0) {
        snprintf(err, len, "VRAM_CAP_GROUP='%s' names no file", list);
        return -1;
    }
    return 0;
fail:
    for (unsigned i = 0; i < b->n; i++)
        group_close(&b->slice[i]);
    b->n = 0;
    return -1;
}

int budget_open_sizes(struct budget *b, const char *list, char *err, size_t len)
{
    init(b);
    if (gpuspec_parse_sizes(list, &b->sizes) < 0) {
        snprintf(err, len,
                 "VRAM_CAP='%s' is not a size (try 6G) or a size per device (6G,4G or 0:6G,1:4G)",
                 list);
        return -1;
    }
    return 0;
}

/* Lock held: the group device dev charges, or NULL. */
static struct group *find(struct budget *b, int dev)
{
    char uuid[96];
    bool named = budget_device_uuid(dev, uuid, sizeof uuid) == 0;
    if (b->files) {
        for (unsigned i = 0; named && i < b->n; i++)
            if (same_uuid(&b->slice[i], uuid))
                return &b->slice[i];
        /* by order: a file that names no GPU, a device the driver cannot
         * name, names that match nothing */
        if ((unsigned)dev < b->n &&
            (!named || !b->slice[dev].sh->gpu_uuid[0] || !uuids_name_them(b)))
            return &b->slice[dev];
        return NULL;
    }
    uint64_t size = gpuspec_size_for(&b->sizes, (unsigned)dev, (unsigned)dev);
    struct group *g = &b->slice[dev];
    if (!size || group_open_private(g, size) < 0)
        return NULL;
    if (named) /* NVML's queries find the slice by it */
        snprintf(g->sh->gpu_uuid, sizeof g->sh->gpu_uuid, "%s", uuid);
    return g;
}

struct group *budget_resolve(struct budget *b, int dev)
{
    if (dev < 0 || dev >= BUDGET_MAX_DEVICES)
        return NULL;
    pthread_mutex_lock(&b->mu);
    if (!__atomic_load_n(&b->known[dev], __ATOMIC_ACQUIRE)) {
        b->of[dev] = find(b, dev);
        __atomic_store_n(&b->known[dev], 1, __ATOMIC_RELEASE);
    }
    struct group *g = b->of[dev];
    pthread_mutex_unlock(&b->mu);
    return g;
}

struct group *budget_by_uuid(struct budget *b, const char *uuid)
{
    if (b->files) {
        for (unsigned i = 0; i < b->n; i++)
            if (same_uuid(&b->slice[i], uuid))
                return &b->slice[i];
        return NULL;
    }
    /* private groups learn their GPU's UUID when first used: NVML may ask
     * about one before CUDA did, so every visible device is matched now */
    int n = 0;
    if (real_cuDeviceGetCount && real_cuDeviceGetCount(&n) != CUDA_SUCCESS)
        n = 0;
    for (int dev = 0; dev < n && dev < BUDGET_MAX_DEVICES; dev++) {
        struct group *g = budget_of(b, dev);
        if (g && same_uuid(g, uuid))
            return g;
    }
    return NULL;
}

void budget_refused(struct budget *b, int dev)
{
    uint64_t bit = dev >= 0 && dev < 64 ? 1ULL << dev : 1ULL << 63;
    if (__atomic_fetch_or(&b->told, bit, __ATOMIC_RELAXED) & bit)
        return;
    char uuid[96] = "unknown UUID";
    if (dev >= 0)
        budget_device_uuid(dev, uuid, sizeof uuid);
    if (b->files)
        fprintf(stderr,
                "libvramcap: CUDA device %d (%s) is not one of the %u GPU%s this process was "
                "given (VRAM_CAP_GROUP): its allocations there are refused; give it that GPU too "
                "(vram run --gpus)\n",
                dev, uuid, b->n, b->n == 1 ? "" : "s");
    else
        fprintf(stderr,
                "libvramcap: CUDA device %d (%s) has no size in VRAM_CAP (%u given, one per "
                "device): its allocations there are refused; add one for it\n",
                dev, uuid, b->sizes.n);
}

void budget_after_fork(struct budget *b)
{
    pthread_mutex_init(&b->mu, NULL);
    for (unsigned i = 0; i < BUDGET_MAX_DEVICES; i++)
        if (b->slice[i].sh)
            group_forget_slot(&b->slice[i]);
}
