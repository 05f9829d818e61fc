/* cmd_run: `vram run`, a command on a GPU slice. Picks the GPU, makes the
 * group budget, starts the command with libvramcap preloaded, forwards
 * signals, and when the command ends says what it used and checks that it
 * left nothing behind on the GPU. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app/clock.h"
#include "cli/cmd.h"
#include "core/err.h"
#include "core/units.h"
#include "probe/probe.h"
#include "cli/runplace.h"
#include "app/selfpath.h"
#include "ipc/group.h"

static int cmd_run(int argc, char **argv);

const struct cmd_entry cmd_run_entry = {
    .name = "run",
    .args = "[--vram SIZE] [--gpu N|UUID|auto] [--wait [--timeout T]] [--swap] [--reap] [--quiet] "
            "-- "
            "COMMAND [ARGS...]",
    .summary = "run a command on a slice of a GPU it cannot exceed",
    .help =
        "  -m, --vram SIZE      the slice (\"6G\", \"512M\"): the command and every process it\n"
        "                       starts share it, see it as their whole GPU, and get CUDA's\n"
        "                       out-of-memory error past it. Without it: no cap, accounting only\n"
        "  -g, --gpu N|UUID|auto  the GPU (default auto: the one with the most free memory\n"
        "                       that can hold SIZE, counting other slices as taken)\n"
        "  -w, --wait           if no GPU has room now, wait in line until one has\n"
        "  -t, --timeout T      with --wait, give up after T (\"90s\", \"10m\")\n"
        "  -s, --swap           fast swap: vram suspend/resume (and vram serve) move the\n"
        "                       command's GPU memory to pinned host RAM and back at PCIe\n"
        "                       speed, at the same addresses (see docs/swap.md)\n"
        "  -r, --reap           kill processes of the command still holding GPU memory after\n"
        "                       it exits (they are always reported)\n"
        "  -q, --quiet          no report on stderr\n"
        "\n"
        "Exit status: the command's, 128+N if it died of signal N, 127 if it could not be\n"
        "started, 1 if no GPU could take it, 2 for bad usage, 3 without a GPU driver.\n",
    .exec = cmd_run,
};

struct run_opts {
    uint64_t vram;
    const char *gpu;
    bool wait, reap, quiet, swap;
    double timeout;
};

static volatile sig_atomic_t child_pid;

/* Signals sent to vram run by kill(2) go on to the command. Those from the
 * terminal (Ctrl-C) reach the whole process group, the command included,
 * so passing them on would deliver them twice. */
static void forward(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    if (child_pid > 0 && (info->si_code == SI_USER || info->si_code == SI_QUEUE))
        kill(child_pid, sig);
}

static void install_forwarding(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

/* fork and exec, reporting an exec failure through a close-on-exec pipe. */
static pid_t start_child(char **argv, int *exec_errno)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(pfd[1]);
    *exec_errno = 0;
    if (pid > 0 && read(pfd[0], exec_errno, sizeof *exec_errno) != sizeof *exec_errno)
        *exec_errno = 0;
    close(pfd[0]);
    return pid;
}

static int wait_child(pid_t pid)
{
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, 0);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return 1;
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

static int parse(int argc, char **argv, struct run_opts *o, int *first)
{
    static const struct option opts[] = {
        {"vram", required_argument, NULL, 'm'},
        {"gpu", required_argument, NULL, 'g'},
        {"wait", no_argument, NULL, 'w'},
        {"timeout", required_argument, NULL, 't'},
        {"reap", no_argument, NULL, 'r'},
        {"quiet", no_argument, NULL, 'q'},
        {"swap", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->gpu = "auto";
    int c;
    optind = 1;
    /* "+": stop at the first non-option, the command */
    while ((c = getopt_long(argc, argv, "+m:g:wt:rqsh", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (units_parse_size(optarg, &o->vram) < 0 || o->vram < UNITS_MiB)
                return cmd_bad_usage(&cmd_run_entry,
                                     "--vram '%s': give a size of at least 1M, such as 6G or "
                                     "512M",
                                     optarg);
            break;
        case 'g':
            o->gpu = optarg;
            break;
        case 'w':
            o->wait = true;
            break;
        case 't':
            if (units_parse_seconds(optarg, &o->timeout) < 0 || o->timeout <= 0)
                return cmd_bad_usage(&cmd_run_entry,
                                     "--timeout '%s': give a duration such as 90s or 10m", optarg);
            break;
        case 'r':
            o->reap = true;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 's':
            o->swap = true;
            break;
        case 'h':
            cmd_usage(&cmd_run_entry, 0);
            return -1;
        default:
            return cmd_bad_usage(&cmd_run_entry, NULL);
        }
    }
    if (o->timeout && !o->wait)
        return cmd_bad_usage(&cmd_run_entry, "--timeout needs --wait");
    if (optind >= argc)
        return cmd_bad_usage(&cmd_run_entry, "no command to run (put it after --)");
    *first = optind;
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    struct run_opts o;
    int first = 0;
    int rc = parse(argc, argv, &o, &first);
    if (rc != 0)
        return rc < 0 ? 0 : rc;

    char shim_path[PATH_MAX], why[1024];
    if (selfpath_libvramcap(shim_path, sizeof shim_path, why, sizeof why) < 0) {
        fprintf(stderr, "vram run: %s\n", why);
        return 1;
    }
    char err[512];
    struct probe *p;
    rc = probe_open(&p, "/proc", err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&cmd_run_entry, err, rc);
    struct snap s;
    memset(&s, 0, sizeof s);
    struct runplace_choice place;
    rc = runplace_pick(p, &s, o.gpu, o.vram, o.wait, o.timeout, o.quiet, &place, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "vram run: %s\n", err);
        snap_free(&s);
        probe_close(p);
        return err_exit_code(rc);
    }
    const struct snap_gpu *g = &s.gpus[place.gpu];
    uint64_t energy0 = (g->have & SNAP_HAVE_ENERGY) ? g->energy_mj : 0;
    bool have_energy = g->have & SNAP_HAVE_ENERGY;

    /* the child's environment: the slice, the GPU, the library */
    const char *pre = getenv("LD_PRELOAD");
    char *preload = malloc(strlen(shim_path) + (pre ? strlen(pre) : 0) + 2);
    if (!preload) {
        runplace_done(&place);
        probe_close(p);
        return 1;
    }
    sprintf(preload, pre && *pre ? "%s:%s" : "%s", shim_path, pre ? pre : "");
    setenv("LD_PRELOAD", preload, 1);
    free(preload);
    setenv("VRAM_CAP_GROUP", place.group_path, 1);
    setenv("CUDA_VISIBLE_DEVICES", g->uuid, 1);
    if (o.swap)
        setenv("VRAM_SWAP", "1", 1);

    prctl(PR_SET_CHILD_SUBREAPER, 1);
    install_forwarding();
    uint64_t t0 = clock_mono_ms();
    int exec_errno = 0;
    pid_t pid = start_child(argv + first, &exec_errno);
    if (pid < 0 || exec_errno) {
        if (pid > 0)
            wait_child(pid);
        fprintf(stderr, "vram run: cannot start '%s': %s\n", argv[first],
                strerror(exec_errno ? exec_errno : errno));
        runplace_done(&place);
        snap_free(&s);
        probe_close(p);
        return 127;
    }
    child_pid = pid;
    int status = wait_child(pid);
    child_pid = 0;
    double secs = (double)(clock_mono_ms() - t0) / 1000;

    struct group_view gv;
    bool counted = group_read(place.group_path, &gv) == 0;
    uint64_t peak = counted ? gv.peak : 0;
    int left = runplace_leftovers(p, &s, &place, o.reap, o.quiet);
    if (!o.quiet) {
        char b1[32], b2[32];
        fprintf(stderr, "vram run: exit %d after %.1f s on GPU %u; peak VRAM %s", status, secs,
                place.gpu, units_fmt_size(peak, b1, sizeof b1));
        if (o.vram)
            fprintf(stderr, " of %s", units_fmt_size(o.vram, b2, sizeof b2));
        probe_sample(p, &s, PROBE_ENERGY, clock_wall_ms());
        if (have_energy && (s.gpus[place.gpu].have & SNAP_HAVE_ENERGY)) {
            double j = (double)(s.gpus[place.gpu].energy_mj - energy0) / 1000;
            fprintf(stderr, "; GPU energy %.1f kJ (%.0f W average)", j / 1000,
                    secs > 0 ? j / secs : 0);
        }
        fprintf(stderr, "%s\n", left ? "" : "; nothing left on the GPU");
    }
    runplace_done(&place);
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return status;
}
