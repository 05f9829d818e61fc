/* doctor: what is wasting a machine's VRAM, each finding with its cost and
 * its fix. Pure: a snapshot and a few host facts in, findings out. */
#ifndef VRAM_CORE_DOCTOR_H
#define VRAM_CORE_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

enum doc_level { DOC_INFO, DOC_WARN };

enum doc_kind {
    DOC_DISPLAY,      /* the desktop holds VRAM on a compute GPU */
    DOC_RESERVED,     /* the driver's reserve */
    DOC_UNATTRIBUTED, /* used by nobody we can see */
    DOC_ZOMBIE,       /* a defunct process still holds memory */
    DOC_STOPPED,      /* a stopped process holds memory */
    DOC_IDLE_POWER,   /* high power with nothing running */
    DOC_PERSISTENCE,  /* persistence mode off */
    DOC_COMPUTE_MODE, /* not the default compute mode */
    DOC_MIG,          /* MIG enabled */
    DOC_MPS,          /* an MPS control daemon runs */
    DOC_IDLE,         /* holds memory, did no GPU work for the watched time */
    DOC_GPU_SCHEDULING, /* Windows: hardware-accelerated GPU scheduling is off */
};

struct doc_host {
    bool igpu; /* another GPU could drive the display */
    char igpu_name[64];
    uint32_t mps_pid; /* 0: no MPS control daemon */
    /* idle processes: reported when idle_s > 0, after watching that long */
    double idle_s;
    uint64_t now_ms;
};

struct doc_finding {
    enum doc_kind kind;
    enum doc_level level;
    int gpu;      /* -1: the machine */
    uint32_t pid; /* 0: none */
    uint64_t bytes;
    char what[200];
    char fix[200];
};

/* Fills out (up to max) and returns how many findings there are. */
size_t doctor_examine(const struct snap *s, const struct doc_host *host, struct doc_finding *out,
                      size_t max);

const char *doctor_kind_name(enum doc_kind k);

/* True when p has lived at least seconds and the driver saw it do no GPU
 * work in the last seconds (needs SNAP_HAVE_ACTIVITY on its GPU). */
bool doctor_idle(const struct snap_gpu *g, const struct snap_proc *p, uint64_t now_ms,
                 double seconds);

#endif
