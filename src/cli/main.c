/* main: `vram`'s entry point. Parses the options every command shares,
 * then finds the command in the table and hands over. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/color.h"
#include "cli/habits.h"
#include "core/err.h"
#include "cli/simenv.h"

#ifndef VRAM_VERSION
#define VRAM_VERSION "0.1.0"
#endif

const struct cmd_entry *const cmd_table[] = {
    /* clang-format off */
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
    &cmd_complete_entry,
    /* clang-format on */
};

#define NCMDS (sizeof cmd_table / sizeof cmd_table[0])
const size_t cmd_count = NCMDS;

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
    for (size_t i = 0; i < NCMDS; i++)
        if (!cmd_table[i]->hidden)
            fprintf(out, "  %-10s %s\n", cmd_table[i]->name, cmd_table[i]->summary);
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

int main(int argc, char **argv)
{
    const char *sim = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--sim") && i + 1 < argc) {
            sim = argv[++i];
        } else if (!strncmp(argv[i], "--sim=", 6)) {
            sim = argv[i] + 6;
        } else if (!strcmp(argv[i], "--color") || !strncmp(argv[i], "--color=", 8)) {
            const char *when = argv[i][7] == '=' ? argv[i] + 8 : i + 1 < argc ? argv[++i] : "";
            enum color_when w;
            if (color_parse(when, &w) < 0) {
                fprintf(stderr, "vram: --color '%s': auto, always or never\n", when);
                return 2;
            }
            color_choose(w);
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
            printf("vram %s\n", VRAM_VERSION);
            return 0;
        } else {
            fprintf(stderr, "vram: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    char err[600];
    int rc = simenv_apply(sim, argv, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "vram: %s\n", err);
        return err_exit_code(rc);
    }
    const struct cmd_entry *e = cmd_find(argv[i]);
    if (e)
        return cmd_exec(e, argc - i, argv + i);
    const char *hint = habits_hint(argv[i]);
    if (hint) { /* what they meant, not the whole list */
        fprintf(stderr, "vram: %s\n(vram --help lists the commands)\n", hint);
        return 2;
    }
    fprintf(stderr, "vram: unknown command '%s'\n", argv[i]);
    usage(stderr);
    return 2;
}
