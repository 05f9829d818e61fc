/* cgroup: which container a process runs in, from its /proc/PID/cgroup text.
 * Pure parsing, so it can be fuzzed and tested on recorded files. */
#ifndef VRAM_HOST_CGROUP_H
#define VRAM_HOST_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* From the text of /proc/PID/cgroup, the cgroup path (v2 line "0::/path",
 * else the first v1 line with a path other than "/") into path, and the
 * container it names into id ("docker:0123456789ab", "pod:UID", "lxc:NAME"),
 * empty when none. Returns 0, or -1 when the text is not a cgroup file. */
int cgroup_parse(const char *text, size_t len, char *path, size_t pathlen, char *id, size_t idlen);

/* Whether the text of /proc/PID/cgroup puts the process in Slurm job
 * job's cgroup, on any of its lines: a path with the component "job_ID"
 * below one of Slurm's ("slurm", "slurm_NODE": cgroup v1;
 * "slurmstepd.scope": v2). */
bool cgroup_slurm_job(const char *text, size_t len, uint32_t job);

#endif
