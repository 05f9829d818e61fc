/* cmd: the table every command registers in, as tmux does: a name, the
 * operands it takes, one line of summary, the options it accepts (each
 * with its kind of value, its range and its line of help), its help, and
 * its entry point. The options are parsed once, here, for every command:
 * a command's entry point gets its values, checked, in its own struct. */
#ifndef VRAM_CLI_CMD_H
#define VRAM_CLI_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cmd_opt_kind {
    CMD_OPT_FLAG,    /* bool: true when given */
    CMD_OPT_STRING,  /* const char *: the argument as typed */
    CMD_OPT_SECONDS, /* double: a duration (2, 500ms, 10m) from lo to hi */
    CMD_OPT_NUMBER,  /* an integer field: a whole number from lo to hi */
    CMD_OPT_SIZE,    /* uint64_t: bytes (16G, 512M), at least lo */
    CMD_OPT_TOKENS,  /* uint64_t: a count of tokens (8192, 128k) from lo to hi */
    CMD_OPT_CHOICE,  /* an int field: the value of one of words */
    CMD_OPT_COLOR,   /* --color WHEN: chosen at once (cli/color.h), no field */
    CMD_OPT_CUSTOM,  /* parse() reads it into the field */
};

struct cmd_word {
    const char *word;
    int value;
};

struct cmd_opt {
    const char *name; /* the long option, without "--" */
    char key;         /* its short option, or 0 */
    enum cmd_opt_kind kind;
    const char *arg;  /* the argument's name in --help ("SECONDS"); NULL: none */
    size_t at, size;  /* the field in the command's struct: CMD_AT and friends */
    double lo, hi;    /* the range of a number, a duration, a size, tokens */
    const struct cmd_word *words; /* CHOICE: the words, ended by {NULL} */
    int (*parse)(const char *arg, void *field); /* CUSTOM: 0, or -1 refused */
    /* what a refused value is told: "--NAME 'ARG': FIX" (a default from
     * the kind and the range when NULL; CUSTOM must say) */
    const char *fix;
    /* one paragraph for --help, wrapped to the terminal's 80 columns;
     * NULL: another spelling of an option above, not listed */
    const char *help;
};

/* The field f of the command's struct T, checked to be of type `type` at
 * compile time (a mismatch is a negative array size). */
#define CMD_TYPED(T, f, type)                                                                      \
    (offsetof(T, f) + 0 * sizeof(char[_Generic(((T *)0)->f, type: 1, default: -1)])),              \
        .size = sizeof(((T *)0)->f)
#define CMD_INTEGER(T, f)                                                                          \
    (offsetof(T, f) + 0 * sizeof(char[_Generic(((T *)0)->f, int: 1, unsigned: 1, long: 1,         \
                                               unsigned long: 1, long long: 1,                     \
                                               unsigned long long: 1, default: -1)])),             \
        .size = sizeof(((T *)0)->f)
/* any field, for CHOICE (an enum) and CUSTOM (its parse knows the type) */
#define CMD_AT(T, f) offsetof(T, f), .size = sizeof(((T *)0)->f)

#define CMD_FLAG(T, f) .kind = CMD_OPT_FLAG, .at = CMD_TYPED(T, f, bool)
#define CMD_STRING(T, f) .kind = CMD_OPT_STRING, .at = CMD_TYPED(T, f, const char *)
#define CMD_SECONDS(T, f, LO, HI)                                                                  \
    .kind = CMD_OPT_SECONDS, .at = CMD_TYPED(T, f, double), .lo = (LO), .hi = (HI)
#define CMD_NUMBER(T, f, LO, HI)                                                                   \
    .kind = CMD_OPT_NUMBER, .at = CMD_INTEGER(T, f), .lo = (LO), .hi = (HI)
#define CMD_SIZE(T, f, LO) .kind = CMD_OPT_SIZE, .at = CMD_TYPED(T, f, uint64_t), .lo = (LO)
#define CMD_TOKENS(T, f, LO, HI)                                                                   \
    .kind = CMD_OPT_TOKENS, .at = CMD_TYPED(T, f, uint64_t), .lo = (LO), .hi = (HI)
#define CMD_CHOICE(T, f, W) .kind = CMD_OPT_CHOICE, .at = CMD_AT(T, f), .words = (W)
#define CMD_CUSTOM(T, f, P) .kind = CMD_OPT_CUSTOM, .at = CMD_AT(T, f), .parse = (P)
#define CMD_COLOR .kind = CMD_OPT_COLOR, .arg = "WHEN"

/* --color WHEN, as every command that colours says it */
#define CMD_COLOR_OPT                                                                              \
    {                                                                                              \
        .name = "color", CMD_COLOR,                                                                \
        .help = "colour: auto (on a terminal, unless NO_COLOR is set), always, never",            \
    }

/* -s, --socket PATH, into the field socket of T: vram serve's socket */
#define CMD_SOCKET_OPT(T, HELP)                                                                    \
    {                                                                                              \
        .name = "socket", .key = 's', CMD_STRING(T, socket), .arg = "PATH", .help = (HELP),        \
    }

struct cmd_entry {
    const char *name;
    const char *args; /* the usage line after "vram NAME" */
    const char *summary;
    const char *intro; /* --help: before the options (their operands, say) */
    const struct cmd_opt *opts; /* ended by {NULL}; -h, --help is every command's */
    const char *help;  /* --help: after the options */
    /* the struct the options fill (opts' fields), zeroed then set to
     * *defaults when given */
    size_t size;
    const void *defaults;
    int max_operands; /* more are refused; -1: any number */
    bool in_order;    /* options end at the first operand (vram run's command) */
    /* the command, with its options and its operands (argv[0] the first) */
    int (*exec)(const void *opts, int argc, char **argv);
    bool hidden; /* left out of the list of commands (vram complete) */
    /* the process ends when the command returns, by _Exit once stdio is
     * flushed: no library's destructor runs (NVML's cost 0.3 ms on an H100,
     * of vram status's 24 ms budget). The command frees what it holds and
     * leaves no thread running, as before exit(). */
    bool quick_end;
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
extern const struct cmd_entry cmd_logs_entry;
extern const struct cmd_entry cmd_ui_entry;
extern const struct cmd_entry cmd_import_entry;
extern const struct cmd_entry cmd_slurm_entry;
extern const struct cmd_entry cmd_help_entry;
extern const struct cmd_entry cmd_complete_entry;

/* The table of commands (cli/main.c; win/winmain.c for vram.exe), for
 * the front, help and completion: CMD_TABLE(&cmd_status_entry, ...)
 * defines both. */
extern const struct cmd_entry *const cmd_table[];
extern const size_t cmd_count;
#define CMD_TABLE(...)                                                                             \
    const struct cmd_entry *const cmd_table[] = {__VA_ARGS__};                                     \
    const size_t cmd_count = sizeof cmd_table / sizeof cmd_table[0]

/* The command named name, or NULL. */
const struct cmd_entry *cmd_find(const char *name);

/* Runs e with argv (argv[0] its name): its options parsed and checked,
 * -h and --help answered, its operands counted, then its entry point.
 * Returns the exit code, or ends the process with it (e->quick_end). */
int cmd_exec(const struct cmd_entry *e, int argc, char **argv);

/* "usage: vram NAME ARGS", and to stdout the help: the intro, the options
 * (from e->opts), the rest. */
void cmd_usage(const struct cmd_entry *e, int to_stderr);

/* For commands that could not reach the driver: the error, the way to try
 * vram without a GPU, and the exit code to return. */
int cmd_no_driver(const struct cmd_entry *e, const char *err, int rc);

/* For commands: fail with exit code 2 and a pointer to --help. */
int cmd_bad_usage(const struct cmd_entry *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What a program's front (Linux's cli/main.c, vram.exe's win/winmain.c)
 * adds to cmd_front's. */
struct cmd_front {
    void (*usage)(FILE *out); /* the program's usage, for --help and errors */
    /* an option of this OS's at argv[*i] (*i moved past its value): true
     * when it was one; NULL: none */
    bool (*option)(int argc, char **argv, int *i);
    /* before the command runs: 0, or the exit code; NULL: nothing to do */
    int (*ready)(char **argv);
    /* what to tell of a word that is no command (NULL: the usage) */
    const char *(*hint)(const char *word);
};

/* vram's front: the options before the command (--color WHEN, -h, --help,
 * -V, --version, then f's own), then the command named, run. The exit
 * code. */
int cmd_front(int argc, char **argv, const struct cmd_front *f);

/* The table's commands, a line each (those not hidden), for a usage. */
void cmd_list(FILE *out);

#endif
