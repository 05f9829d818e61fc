/* cmd_headless: `vram headless status|on|off`, the desktop moved to
 * another GPU so that the NVIDIA card only computes. Shows the plan first
 * and acts only with --yes; `off` restores exactly what `on` replaced. The
 * same command on Linux and Windows; what each does is cli/headless_os.h's. */
#include <string.h>

#include "cli/cmd.h"
#include "cli/cmdos.h"
#include "cli/headless_os.h"

static int cmd_headless(const void *opts, int argc, char **argv);

#define O struct headless_opts
static const struct cmd_opt headless_opts[] = {
    {"yes", 'y', CMD_FLAG(O, yes), .help = "act (without it: print the plan, change nothing)"},
    CMDOS_HEADLESS_OPTS(O)
    {NULL},
};
#undef O

const struct cmd_entry cmd_headless_entry = {
    .name = "headless",
    .args = "[status|on|off] [--yes] " CMDOS_HEADLESS_ARGS,
    .summary = "move the desktop to another GPU, leave the NVIDIA card to compute",
    .intro = CMDOS_HEADLESS_INTRO,
    .opts = headless_opts,
    .help = CMDOS_HEADLESS_HELP,
    .size = sizeof(struct headless_opts),
    .defaults = &(const struct headless_opts){.root = "/"},
    .max_operands = 1,
    .exec = cmd_headless,
};

static int cmd_headless(const void *opts, int argc, char **argv)
{
    const struct headless_opts *o = opts;
    const char *verb = argc ? argv[0] : "status";
    if (strcmp(verb, "status") && strcmp(verb, "on") && strcmp(verb, "off"))
        return cmd_bad_usage(&cmd_headless_entry, "'%s': say status, on or off", verb);
    char why[1200];
    if (headless_os_check(verb, o, why, sizeof why) < 0)
        return cmd_bad_usage(&cmd_headless_entry, "%s", why);
    return headless_os_run(verb, o);
}
