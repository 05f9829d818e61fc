/* cgroup: which container a process runs in.
 *
 * Container runtimes name the cgroup after the container: Docker
 * "/docker/<64 hex>" (cgroupfs driver) or "docker-<64 hex>.scope" (systemd
 * driver), containerd "cri-containerd-<hex>.scope", CRI-O "crio-<hex>.scope",
 * Podman "libpod-<hex>.scope", Kubernetes ".../kubepods-...-pod<uid>.slice/..."
 * or "/kubepods/.../pod<uid>/<hex>", LXC "/lxc/<name>" or "lxc.payload.<name>".
 * The innermost match wins: a container inside a pod is the container. */
#include "host/cgroup.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static size_t hex_run(const char *s, size_t len)
{
    size_t n = 0;
    while (n < len && isxdigit((unsigned char)s[n]))
        n++;
    return n;
}

/* Looks for "<prefix><64 hex>" in one path component. */
static bool component_id(const char *c, size_t len, const char *prefix, char *id, size_t idlen,
                         const char *kind)
{
    size_t pl = strlen(prefix);
    if (len < pl + 12 || strncmp(c, prefix, pl) != 0)
        return false;
    size_t h = hex_run(c + pl, len - pl);
    if (h < 12)
        return false;
    snprintf(id, idlen, "%s:%.12s", kind, c + pl);
    return true;
}

static void pod_uid(const char *c, size_t len, char *id, size_t idlen)
{
    /* "kubepods-burstable-pod1234_5678.slice" or "pod1234-5678" */
    const char *p = NULL;
    for (size_t i = 0; i + 3 < len; i++)
        if (strncmp(c + i, "pod", 3) == 0 && isxdigit((unsigned char)c[i + 3]))
            p = c + i + 3;
    if (!p)
        return;
    size_t n = 0;
    while (p + n < c + len && (isxdigit((unsigned char)p[n]) || p[n] == '-' || p[n] == '_'))
        n++;
    if (n < 8)
        return;
    char uid[64];
    snprintf(uid, sizeof uid, "%.*s", (int)(n < 63 ? n : 63), p);
    for (char *q = uid; *q; q++)
        if (*q == '_')
            *q = '-';
    snprintf(id, idlen, "pod:%s", uid);
}

static void container_of(const char *path, char *id, size_t idlen)
{
    static const struct {
        const char *prefix, *kind;
    } runtimes[] = {
        {"docker-", "docker"}, {"cri-containerd-", "containerd"},
        {"crio-", "crio"},     {"libpod-", "podman"},
        {"cri-o-", "crio"},
    };
    id[0] = '\0';
    bool in_docker = false, in_lxc = false, in_kube = false;
    const char *c = path;
    while (*c) {
        while (*c == '/')
            c++;
        size_t len = strcspn(c, "/");
        if (len == 0)
            break;
        bool found = false;
        for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0] && !found; i++)
            found = component_id(c, len, runtimes[i].prefix, id, idlen, runtimes[i].kind);
        if (!found && (in_docker || in_kube) && len >= 12 && hex_run(c, len) == len)
            found = component_id(c, len, "", id, idlen, in_docker ? "docker" : "containerd");
        if (!found && in_lxc) {
            snprintf(id, idlen, "lxc:%.*s", (int)(len < 60 ? len : 60), c);
            found = true;
        }
        if (!found && len > 12 && strncmp(c, "lxc.payload.", 12) == 0) {
            snprintf(id, idlen, "lxc:%.*s", (int)(len - 12 < 60 ? len - 12 : 60), c + 12);
            found = true;
        }
        if (!found && strncmp(c, "kubepods", 8) == 0)
            in_kube = true;
        if (!found && in_kube && !id[0])
            pod_uid(c, len, id, idlen);
        in_docker = len == 6 && strncmp(c, "docker", 6) == 0;
        in_lxc = len == 3 && strncmp(c, "lxc", 3) == 0;
        c += len;
    }
}

int cgroup_parse(const char *text, size_t len, char *path, size_t pathlen, char *id, size_t idlen)
{
    if (pathlen)
        path[0] = '\0';
    if (idlen)
        id[0] = '\0';
    if (pathlen == 0 || idlen == 0)
        return -1;
    /* cgroup v2 has one line, "0::/path"; v1 and hybrid systems have one per
     * controller, some of them "/" when a controller is not delegated. The
     * longest path is the most specific one. */
    bool any = false;
    size_t best = 0, pos = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        const char *line = text + pos;
        size_t ll = end - pos;
        const char *c1 = memchr(line, ':', ll);
        const char *c2 = c1 ? memchr(c1 + 1, ':', ll - (size_t)(c1 + 1 - line)) : NULL;
        if (c2) {
            any = true;
            size_t plen = ll - (size_t)(c2 + 1 - line);
            if (plen > best && plen < pathlen && memchr(c2 + 1, '\0', plen) == NULL) {
                memcpy(path, c2 + 1, plen);
                path[plen] = '\0';
                best = plen;
            }
        }
        pos = end + 1;
    }
    if (!any)
        return -1;
    container_of(path, id, idlen);
    return 0;
}

/* One path: a Slurm folder, then "job_ID" below it. */
static bool slurm_path_has(const char *path, size_t len, const char *want)
{
    bool below_slurm = false;
    for (size_t i = 0; i < len;) {
        while (i < len && path[i] == '/')
            i++;
        size_t n = 0;
        while (i + n < len && path[i + n] != '/')
            n++;
        const char *c = path + i;
        if (n == 0)
            break;
        if (below_slurm && n == strlen(want) && !memcmp(c, want, n))
            return true;
        if ((n == 5 && !memcmp(c, "slurm", 5)) || (n > 6 && !memcmp(c, "slurm_", 6)) ||
            (n == 16 && !memcmp(c, "slurmstepd.scope", 16)))
            below_slurm = true;
        i += n;
    }
    return false;
}

bool cgroup_slurm_job(const char *text, size_t len, uint32_t job)
{
    char want[24];
    snprintf(want, sizeof want, "job_%u", (unsigned)job);
    for (size_t at = 0; at < len;) {
        const char *line = text + at;
        size_t n = 0;
        while (at + n < len && line[n] != '\n')
            n++;
        /* "ID:CONTROLLERS:PATH": the path after the second colon */
        const char *c1 = memchr(line, ':', n);
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(line + n - c1 - 1)) : NULL;
        if (c2 && slurm_path_has(c2 + 1, (size_t)(line + n - c2 - 1), want))
            return true;
        at += n + 1;
    }
    return false;
}
