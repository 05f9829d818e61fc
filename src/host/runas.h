/* runas: a process run as another user: who that user is (uid, groups,
 * home), the switch itself in a child between fork and exec, and what
 * that user may open, asked of the kernel as that user. vram serve runs
 * each model as its configuration's user (conf/confuser.h); as root,
 * never as root. */
#ifndef VRAM_HOST_RUNAS_H
#define VRAM_HOST_RUNAS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RUNAS_GROUPS 64
#define RUNAS_NAME   64

struct runas {
    bool on; /* false: the process stays as its parent's user */
    uid_t uid;
    gid_t gid;
    gid_t groups[RUNAS_GROUPS]; /* the supplementary groups, the primary among them */
    int ngroups;
    char name[RUNAS_NAME];  /* the user's */
    char group[RUNAS_NAME]; /* the primary group's */
    char home[256];
};

/* user's uid, home and groups (/etc/group's, as a login gets them), its
 * primary group replaced by group when that is not "": 0, or -1 with err
 * naming what is missing. */
int runas_lookup(const char *user, const char *group, struct runas *r, char *err, size_t len);

/* Whether a and b are the same user, groups and all. */
bool runas_same(const struct runas *a, const struct runas *b);

/* In a child between fork and exec (async-signal-safe: raw system calls
 * only, as a child of a threaded process must): becomes r's user for good,
 * real, effective and saved ids, groups first. 0, or -1 when any step
 * failed or root's ids are left: the caller must then not exec. */
int runas_become(const struct runas *r);

/* Whether r's user may open each of path[k] for want[k] (R_OK, X_OK,
 * R_OK | W_OK...), asked of the kernel in a child that became that user:
 * its modes, ACLs and every folder on the way. 0 when it may open all, 1
 * when not (*bad the first it may not, *eno why), -1 when it could not be
 * asked. */
int runas_may_open(const struct runas *r, const char *const *path, const int *want, size_t n,
                   size_t *bad, int *eno);

#endif
