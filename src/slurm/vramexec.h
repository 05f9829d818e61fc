/* vramexec: vram run by the SPANK plugin as a child of its own (the
 * step's slice, the check at a job's end), as a given user and with a
 * given environment, over two pipes: its stdin, which the plugin closes
 * to end it, and its stdout and stderr, read a line at a time with a
 * deadline. The plugin runs inside slurmstepd and slurmd: nothing here
 * may block them for longer than the caller allows. */
#ifndef VRAM_SLURM_VRAMEXEC_H
#define VRAM_SLURM_VRAMEXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct vramexec {
    pid_t pid;       /* -1: none */
    int to, from;    /* its stdin (-1 once closed), its output */
    char buf[16384]; /* what was read past the last line */
    size_t have;
};

/* Who it runs as: unchanged, or the job's user with the job's groups. */
struct vramexec_as {
    bool change;
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    int ngroups;
};

/* Starts argv[0] (a full path) with envp. 0, or -1 with the reason in
 * err. A program that cannot be executed as that user says so as its
 * first line ("error cannot run ..."). */
int vramexec_start(struct vramexec *x, char *const argv[], char *const envp[],
                   const struct vramexec_as *as, char *err, size_t errlen);

/* Its next line, without the newline, into line (a longer one is cut):
 * 1, or 0 at the end of its output, or -1 when none came within ms. */
int vramexec_line(struct vramexec *x, char *line, size_t len, int ms);

/* Closes its stdin: the end of its wait. */
void vramexec_close_input(struct vramexec *x);

/* Waits up to ms for it to exit, then kills it and reaps it: its status
 * as waitpid gives it, or -1 when it was reaped elsewhere (slurmstepd
 * waits for any of its children). Closes the pipes. */
int vramexec_end(struct vramexec *x, int ms);

#endif
