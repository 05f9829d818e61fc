/* cmd: the table every command registers in, as tmux does: a name, the
 * arguments it takes, one line of summary, its help, and its entry point. */
#ifndef VRAM_CLI_CMD_H
#define VRAM_CLI_CMD_H

#include <stdbool.h>
#include <stddef.h>

struct cmd_entry {
    const char *name;
    const char *args;
    const char *summary;
    const char *help; /* printed under the usage line by --help */
    int (*exec)(int argc, char **argv);
    bool hidden; /* left out of the list of commands (vram complete) */
};

extern const struct cmd_entry cmd_status_entry;
extern const struct cmd_entry cmd_top_entry;
extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_fit_entry;
extern const struct cmd_entry cmd_doctor_entry;
extern const struct cmd_entry cmd_reclaim_entry;
extern const struct cmd_entry cmd_headless_entry;
extern const struct cmd_entry cmd_suspend_entry;
extern const struct cmd_entry cmd_resume_entry;
extern const struct cmd_entry cmd_serve_entry;
extern const struct cmd_entry cmd_ps_entry;
extern const struct cmd_entry cmd_load_entry;
extern const struct cmd_entry cmd_unload_entry;
extern const struct cmd_entry cmd_ui_entry;
extern const struct cmd_entry cmd_import_entry;
extern const struct cmd_entry cmd_help_entry;
extern const struct cmd_entry cmd_complete_entry;

/* The table of commands (cli/main.c), for help and completion. */
extern const struct cmd_entry *const cmd_table[];
extern const size_t cmd_count;

/* The command named name, or NULL. */
const struct cmd_entry *cmd_find(const char *name);

/* "usage: vram NAME ARGS" and the help text, to stdout or stderr. */
void cmd_usage(const struct cmd_entry *e, int to_stderr);

/* For commands that could not reach the driver: the error, the way to try
 * vram without a GPU, and the exit code to return. */
int cmd_no_driver(const struct cmd_entry *e, const char *err, int rc);

/* For commands: fail with exit code 2 and a pointer to --help. */
int cmd_bad_usage(const struct cmd_entry *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
