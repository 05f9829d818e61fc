/* cmd_run: `vram run`, a command on a GPU slice (or a slice on each of
 * several GPUs). Picks the GPUs, makes the group budget on each, starts the
 * command with libvramcap preloaded, forwards signals, and when the command
 * ends says what it used and checks that it left nothing behind on them. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/clock.h"
#include "cli/cmd.h"
#include "core/err.h"
#include "core/gpuspec.h"
#include "core/modelname.h"
#include "core/textsafe.h"
#include "core/units.h"
#include "probe/probe.h"
#include "app/runenv.h"
#include "app/runplace.h"
#include "app/selfpath.h"
#include "ipc/group.h"

struct run_opts {
    struct run_sizes {
        struct gpuspec_sizes sizes; /* n == 0: no cap */
        const char *arg;
    } vram;
    const char *gpu;
    struct gpuspec_gpus gpus; /* count 0: --gpus not given */
    bool wait, reap, quiet, swap;
    double timeout;
};

static int cmd_run(const void *opts, int argc, char **argv);

/* --vram: one size of at least 1M, or one per GPU */
static int parse_vram(const char *arg, void *field)
{
    struct run_sizes *v = field;
    if (gpuspec_parse_sizes(arg, &v->sizes) < 0 || v->sizes.n == 0)
        return -1;
    for (unsigned i = 0; i < v->sizes.n; i++)
        if (v->sizes.size[i] < UNITS_MiB)
            return -1;
    v->arg = arg;
    return 0;
}

static int parse_gpus(const char *arg, void *field)
{
    return gpuspec_parse_gpus(arg, field);
}

#define O struct run_opts
static const struct cmd_opt run_opts[] = {
    {"vram", 'm', CMD_CUSTOM(O, vram, parse_vram), .arg = "SIZE",
     .fix = "give a size of at least 1M, such as 6G or 512M, or one per GPU of --gpus: "
            "0:20G,1:10G",
     .help = "the slice (\"6G\", \"512M\"): the command and every process it starts share it, "
             "see it as their whole GPU, and get CUDA's out-of-memory error past it. Without "
             "it: no cap, accounting only. With --gpus, the slice on each GPU; GPU:SIZE,... "
             "(\"0:20G,1:10G\") gives each GPU of --gpus its own"},
    {"gpu", 'g', CMD_STRING(O, gpu), .arg = "N|UUID|auto",
     .help = "the GPU (default auto: the one with the most free memory that can hold SIZE, "
             "counting other slices as taken)"},
    {"gpus", 'G', CMD_CUSTOM(O, gpus, parse_gpus), .arg = "LIST|N",
     .fix = "give the GPUs (0,1: indexes or UUIDs) or how many (2: any with room); one GPU is "
            "--gpu N",
     .help = "several GPUs at once, all or none: those of LIST (\"0,1\", indexes or UUIDs), or "
             "any N with room; the command sees them in that order (CUDA_VISIBLE_DEVICES) and "
             "each is capped on its own"},
    {"wait", 'w', CMD_FLAG(O, wait), .help = "if no GPU has room now, wait in line until one has"},
    {"timeout", 't', CMD_SECONDS(O, timeout, 0.001, 1e9), .arg = "T",
     .fix = "give a duration such as 90s or 10m",
     .help = "with --wait, give up after T (\"90s\", \"10m\")"},
    {"swap", 's', CMD_FLAG(O, swap),
     .help = "fast swap: vram suspend/resume (and vram serve) move the command's GPU memory to "
             "pinned host RAM and back at PCIe speed, at the same addresses (see docs/swap.md)"},
    {"reap", 'r', CMD_FLAG(O, reap),
     .help = "kill processes of the command still holding GPU memory after it exits (they are "
             "always reported)"},
    {"quiet", 'q', CMD_FLAG(O, quiet), .help = "no report on stderr"},
    {NULL},
};
#undef O

const struct cmd_entry cmd_run_entry = {
    .name = "run",
    .args = "[--vram SIZE|GPU:SIZE,...] [--gpu N|UUID|auto | --gpus LIST|N] [--wait [--timeout T]] "
            "[--swap] [--reap] [--quiet] -- COMMAND [ARGS...]",
    .summary = "run a command on a slice of a GPU it cannot exceed",
    .opts = run_opts,
    .help =
        "Exit status: the command's, 128+N if it died of signal N, 127 if it could not be\n"
        "started, 1 if no GPU could take it, 2 for bad usage, 3 without a GPU driver.\n",
    .size = sizeof(struct run_opts),
    .max_operands = -1,
    .in_order = true, /* the options end at the command */
    .exec = cmd_run,
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

/* "vram run: exit 0 after 2.1 s on GPU 0; peak VRAM 1.29 GiB of 4.00 GiB;
 * GPU energy ...; nothing left on the GPU", each GPU's peak of its slice
 * for a job over several. */
static void report(const struct runplace_choice *c, const uint64_t *peak, int status, double secs,
                   struct probe *p, struct snap *s, bool have_energy, uint64_t energy0, int left)
{
    char b1[32], b2[32];
    bool many = c->n > 1;
    fprintf(stderr, "vram run: exit %d after %.1f s on GPU%s ", status, secs, many ? "s" : "");
    for (unsigned i = 0; i < c->n; i++)
        fprintf(stderr, "%s%u", i ? "," : "", c->gpu[i]);
    fprintf(stderr, "; peak VRAM");
    for (unsigned i = 0; i < c->n; i++) {
        fprintf(stderr, "%s %s", i ? "," : "", units_fmt_size(peak[i], b1, sizeof b1));
        if (c->size[i])
            fprintf(stderr, " of %s", units_fmt_size(c->size[i], b2, sizeof b2));
        if (many)
            fprintf(stderr, " on GPU %u", c->gpu[i]);
    }
    probe_sample(p, s, PROBE_ENERGY, clock_wall_ms());
    uint64_t energy1 = 0;
    for (unsigned i = 0; i < c->n && c->gpu[i] < s->ngpus; i++) {
        have_energy = have_energy && (s->gpus[c->gpu[i]].have & SNAP_HAVE_ENERGY);
        energy1 += s->gpus[c->gpu[i]].energy_mj;
    }
    if (have_energy && energy1 >= energy0) {
        double j = (double)(energy1 - energy0) / 1000;
        fprintf(stderr, "; GPU energy %.1f kJ (%.0f W average)", j / 1000, secs > 0 ? j / secs : 0);
    }
    fprintf(stderr, "%s\n",
            left   ? ""
            : many ? "; nothing left on the GPUs"
                   : "; nothing left on the GPU");
}

/* What the options say together: one way to name the GPUs, --gpu as a
 * list of one. 0, or the exit code of a bad usage. */
static int run_check(struct run_opts *o, int argc)
{
    bool many = o->gpus.count > 0;
    if (o->vram.sizes.n > 1 && !o->vram.sizes.keyed)
        return cmd_bad_usage(&cmd_run_entry,
                             "--vram '%s': name the GPU of each size (0:20G,1:10G), or give one "
                             "size for every GPU",
                             o->vram.arg);
    if (o->gpu && many)
        return cmd_bad_usage(&cmd_run_entry, "--gpu and --gpus: give one of them");
    if (o->vram.sizes.keyed && !(many && o->gpus.named))
        return cmd_bad_usage(&cmd_run_entry,
                             "--vram '%s': sizes per GPU go with --gpus naming those GPUs (--gpus "
                             "0,1 --vram 0:20G,1:10G)",
                             o->vram.arg);
    if (!many) { /* --gpu: a list of one */
        o->gpus.count = 1;
        if (o->gpu && (strlen(o->gpu) >= GPUSPEC_NAME || strchr(o->gpu, ',')))
            return cmd_bad_usage(&cmd_run_entry,
                                 "--gpu '%s': one GPU (an index, a UUID or auto); for several, "
                                 "--gpus 0,1 or --gpus 2",
                                 o->gpu);
        if (o->gpu) {
            o->gpus.named = true;
            snprintf(o->gpus.name[0], sizeof o->gpus.name[0], "%s", o->gpu);
        }
    }
    if (o->timeout && !o->wait)
        return cmd_bad_usage(&cmd_run_entry, "--timeout needs --wait");
    if (argc == 0)
        return cmd_bad_usage(&cmd_run_entry, "no command to run (put it after --)");
    return 0;
}

/* The command's environment (app/runenv.h): libvramcap preloaded, its
 * slices, its GPUs in the order chosen, fast swap if asked. 0, or -1 out
 * of memory. */
static int run_environ(const struct runplace_choice *place, const struct snap *s,
                       const char *shim_path, bool swap)
{
    struct runenv e;
    if (runenv_make(&e, place, s, shim_path, getenv("LD_PRELOAD"), swap) < 0)
        return -1;
    for (unsigned i = 0; i < e.n; i++)
        setenv(e.var[i].name, e.var[i].value, 1);
    runenv_free(&e);
    return 0;
}

/* Runs the command on its place and says what it used: its exit status,
 * 128+N for signal N, 127 when it could not start. */
static int run_command(const struct run_opts *o, const struct runplace_choice *place,
                       struct probe *p, struct snap *s, char **argv)
{
    uint64_t energy0 = 0;
    bool have_energy = true;
    for (unsigned i = 0; i < place->n; i++) {
        const struct snap_gpu *g = &s->gpus[place->gpu[i]];
        have_energy = have_energy && (g->have & SNAP_HAVE_ENERGY);
        energy0 += (g->have & SNAP_HAVE_ENERGY) ? g->energy_mj : 0;
    }
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    install_forwarding();
    uint64_t t0 = clock_mono_ms();
    int exec_errno = 0;
    pid_t pid = start_child(argv, &exec_errno);
    if (pid < 0 || exec_errno) {
        if (pid > 0)
            wait_child(pid);
        fprintf(stderr, "vram run: cannot start '%s': %s\n", argv[0],
                strerror(exec_errno ? exec_errno : errno));
        return 127;
    }
    child_pid = pid;
    int status = wait_child(pid);
    child_pid = 0;
    double secs = (double)(clock_mono_ms() - t0) / 1000;

    uint64_t peak[RUNPLACE_MAX] = {0};
    struct group_view *gv = malloc(sizeof *gv);
    for (unsigned i = 0; gv && i < place->n; i++)
        if (group_read(place->group_path[i], gv) == 0)
            peak[i] = gv->peak;
    free(gv);
    int left = runplace_leftovers(p, s, place, o->reap, o->quiet);
    if (!o->quiet)
        report(place, peak, status, secs, p, s, have_energy, energy0, left);
    return status;
}

/* Whether the shell would find prog: a path that is there, or a name on
 * PATH. */
static bool runnable(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, F_OK) == 0;
    const char *path = getenv("PATH");
    for (const char *d = path ? path : "/usr/local/bin:/usr/bin:/bin";; d++) {
        size_t dl = strcspn(d, ":");
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%.*s/%s", (int)dl, dl ? d : ".", prog);
        if (access(full, X_OK) == 0)
            return true;
        d += dl;
        if (!*d)
            return false;
    }
}

/* A command that is no program but reads as a model's name (Ollama's
 * llama3.1:8b, a hub's Qwen/Qwen2.5-7B-Instruct): `ollama run NAME` is
 * what was meant. Says what vram does instead; false when prog is no such
 * name. */
static bool model_hint(const char *prog)
{
    const char *slash = strchr(prog, '/'), *colon = strchr(prog, ':');
    bool hub = slash && slash != prog && prog[0] != '.' && !strchr(slash + 1, '/') && slash[1];
    bool tagged = colon && colon != prog && colon[1] && !slash;
    if ((!hub && !tagged) || runnable(prog) || modelname_check(prog))
        return false;
    char safe[300];
    textsafe_copy(prog, strlen(prog), safe, sizeof safe);
    fprintf(stderr,
            "vram run: '%s' is no command here but reads as a model's name. vram run runs a "
            "program on a slice of a GPU (vram run --vram 8G -- llama-server -m FILE); to talk "
            "to a model, serve it with vram serve (docs/migrate.md) and load it: vram load %s, "
            "then ask its address (listen = in vram.conf) as Ollama's clients do; vram fit %s "
            "says whether it fits\n",
            safe, safe, safe);
    return true;
}

static int cmd_run(const void *opts, int argc, char **argv)
{
    struct run_opts o = *(const struct run_opts *)opts;
    int rc = run_check(&o, argc);
    if (rc != 0)
        return rc;
    if (model_hint(argv[0]))
        return 2;
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
    struct runplace_opts ro = {o.wait, o.timeout, o.quiet, "vram run", "--wait"};
    rc = runplace_pick(p, &s, &o.gpus, &o.vram.sizes, &ro, &place, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "vram run: %s\n", err);
        snap_free(&s);
        probe_close(p);
        return err_exit_code(rc);
    }
    rc = run_environ(&place, &s, shim_path, o.swap) < 0 ? 1 : run_command(&o, &place, p, &s, argv);
    runplace_done(&place);
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return rc;
}
