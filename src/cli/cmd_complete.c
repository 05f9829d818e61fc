/* cmd_complete: `vram complete WHAT`, the words the shell completions
 * (completions/) offer, from the program itself so that they never fall
 * behind it: the commands of the table, a command's options (those its
 * entry declares), the daemon's models, the GPU processes of this user
 * and the processes vram suspend left suspended. Hidden from the list of
 * commands; prints nothing at all when it cannot answer (a completion must
 * not write on the user's command line). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/clock.h"
#include "cli/client.h"
#include "cli/cmd.h"
#include "ipc/group.h"
#include "probe/probe.h"

static int cmd_complete(const void *opts, int argc, char **argv);

const struct cmd_entry cmd_complete_entry = {
    .name = "complete",
    .args = "commands | options COMMAND | models [SOCKET] | pids | suspended",
    .summary = "words for the shell completions",
    .intro = "  commands           the commands\n"
            "  options COMMAND    the long options of COMMAND\n"
            "  models [SOCKET]    the models of the running vram serve\n"
            "  pids               GPU processes you may suspend: PID, a tab, the name\n"
            "  suspended          processes vram suspend left suspended, the same way\n",
    .max_operands = 2,
    .exec = cmd_complete,
    .hidden = true,
};

/* The long options e declares, and --help. */
static int options(const struct cmd_entry *e)
{
    for (const struct cmd_opt *o = e->opts; o && o->name; o++)
        if (o->help)
            printf("--%s\n", o->name);
    printf("--help\n");
    return 0;
}

static int models(const char *sock)
{
    json_t *r;
    char err[256];
    if (client_call(client_socket(sock), "GET", "/v1/models", NULL, &r, err, sizeof err) != 200) {
        json_decref(r);
        return 0;
    }
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(r, "models"), i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        if (name)
            printf("%s\n", name);
    }
    json_decref(r);
    return 0;
}

static int pids(void)
{
    struct probe *p;
    char err[256];
    if (probe_open(&p, "/proc", err, sizeof err) < 0)
        return 0;
    struct snap s;
    memset(&s, 0, sizeof s);
    probe_sample(p, &s, PROBE_PROCS, clock_wall_ms());
    uid_t me = getuid();
    for (size_t g = 0; g < s.ngpus; g++)
        for (size_t i = 0; i < s.gpus[g].nprocs; i++) {
            const struct snap_proc *pr = &s.gpus[g].procs[i];
            if (pr->host_known && (me == 0 || pr->uid == me) && (pr->types & SNAP_PT_COMPUTE))
                printf("%u\t%s\n", pr->pid, pr->name);
        }
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return 0;
}

static int suspended(void)
{
    DIR *d = opendir(group_dir());
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid;
        char comm[64] = "", path[64];
        if (sscanf(e->d_name, "suspended-%d", &pid) != 1 || pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/comm", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* a record of a process that is gone */
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
        printf("%d\t%s\n", pid, comm);
    }
    closedir(d);
    return 0;
}

static int cmd_complete(const void *opts, int argc, char **argv)
{
    (void)opts;
    if (argc < 1)
        return cmd_bad_usage(&cmd_complete_entry, "complete what?");
    const char *what = argv[0];
    if (!strcmp(what, "commands")) {
        for (size_t i = 0; i < cmd_count; i++)
            if (!cmd_table[i]->hidden)
                printf("%s\n", cmd_table[i]->name);
        return 0;
    }
    if (!strcmp(what, "options") && argc == 2) {
        const struct cmd_entry *e = cmd_find(argv[1]);
        return e ? options(e) : 0;
    }
    if (!strcmp(what, "models"))
        return models(argc > 1 ? argv[1] : NULL);
    if (!strcmp(what, "pids"))
        return pids();
    if (!strcmp(what, "suspended"))
        return suspended();
    return cmd_bad_usage(&cmd_complete_entry, "'%s': commands, options, models, pids, suspended",
                         what);
}
