/* main: `vram`'s entry point on Linux: its table of commands, its usage,
 * --sim and the hint for another tool's word; the options every command
 * shares, and the hand-over to the command, are cmd_front's (cli/cmd.c). */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/habits.h"
#include "core/err.h"
#include "cli/simenv.h"

/* clang-format off */
CMD_TABLE(
    &cmd_status_entry,
    &cmd_top_entry,
    &cmd_run_entry,
    &cmd_fit_entry,
    &cmd_doctor_entry,
    &cmd_reclaim_entry,
    &cmd_headless_entry,
    &cmd_suspend_entry,
    &cmd_resume_entry,
    &cmd_serve_entry,
    &cmd_ps_entry,
    &cmd_load_entry,
    &cmd_unload_entry,
    &cmd_logs_entry,
    &cmd_ui_entry,
    &cmd_import_entry,
    &cmd_slurm_entry,
    &cmd_help_entry,
    &cmd_complete_entry
);
/* clang-format on */

int cmd_no_driver(const struct cmd_entry *e, const char *err, int rc)
{
    fprintf(stderr, "vram %s: %s", e->name, err);
    if (rc == VRAM_ENODRIVER && simenv_hint("workstation"))
        fprintf(stderr, ", or try a simulated machine: vram --sim workstation %s", e->name);
    fputc('\n', stderr);
    return err_exit_code(rc);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: vram [--sim FILE] [--color WHEN] COMMAND [ARGS]\n\n"
                 "Get the most out of your GPUs' memory.\n\ncommands:\n");
    cmd_list(out);
    fprintf(out, "\noptions:\n"
                 "  --sim FILE     run against a simulated machine instead of the NVIDIA\n"
                 "                 driver: a machine file, or an example's name (workstation,\n"
                 "                 server-8xh200); VRAM_SIM=FILE does the same\n"
                 "  --color WHEN   colour: auto (on a terminal, unless NO_COLOR is set),\n"
                 "                 always, never\n"
                 "  --version      print the version\n"
                 "\n'vram COMMAND --help' for a command's options, 'vram help COMMAND' for its\n"
                 "manual (man vram-COMMAND).\n"
                 "Exit codes: 0 ok, 1 failure, 2 bad usage or input, 3 no GPU driver.\n");
}

static const char *sim;

/* --sim FILE: the simulated machine, applied once the options are read */
static bool sim_option(int argc, char **argv, int *i)
{
    if (!strcmp(argv[*i], "--sim") && *i + 1 < argc)
        sim = argv[++*i];
    else if (!strncmp(argv[*i], "--sim=", 6))
        sim = argv[*i] + 6;
    else
        return false;
    return true;
}

static int sim_ready(char **argv)
{
    char err[600];
    int rc = simenv_apply(sim, argv, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "vram: %s\n", err);
        return err_exit_code(rc);
    }
    return 0;
}

int main(int argc, char **argv)
{
    return cmd_front(argc, argv, &(const struct cmd_front){usage, sim_option, sim_ready, habits_hint});
}
