/* log: the daemon's log on stderr, one line per message, with a level.
 * Under systemd (stderr is the journal: $JOURNAL_STREAM names it) each line
 * starts with the syslog prefix journald reads ("<4>"), and the journal
 * adds the time; elsewhere each line starts with the local time and the
 * level's name. --verbose and --quiet choose the lowest level written. */
#ifndef VRAM_APP_LOG_H
#define VRAM_APP_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* syslog's numbers, which journald reads from the prefix */
enum log_level {
    LOG_LV_ERROR = 3,
    LOG_LV_WARN = 4,
    LOG_LV_NOTICE = 5,
    LOG_LV_INFO = 6,
    LOG_LV_DEBUG = 7,
};

/* who: the name each line carries ("vram serve"); max: the least
 * important level still written. Looks at stderr and $JOURNAL_STREAM once. */
void log_init(const char *who, enum log_level max);

/* Whether a message of this level would be written: for callers that
 * would otherwise build a line for nothing. */
bool log_enabled(enum log_level l);

void log_msg(enum log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The start of a line, "<6>vram serve: " or "2026-05-01 12:00:00.123 info
 * vram serve: ", into buf (NUL-terminated); returns its length. For the
 * writers that build their own lines without printf (the proxy's). */
size_t log_prefix(enum log_level l, char *buf, size_t len);

/* Whether lines go to the journal (for tests and `vram serve --check`). */
bool log_to_journal(void);

#endif
