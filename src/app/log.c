/* log: the daemon's log lines, for the journal or for a terminal or file.
 *
 * A line is built whole in a buffer and written with one fwrite, so lines
 * from the worker threads never interleave. The time prefix is formatted
 * once a second per thread: the proxy writes a line per request. */
#include "app/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/textsafe.h"

static struct {
    char who[32];
    enum log_level max;
    bool journal;
} log_cfg = {"vram", LOG_LV_INFO, false};

/* JOURNAL_STREAM is "DEV:INODE" of the stream systemd connected; it is
 * inherited, so it counts only while stderr is still that stream (not
 * when the daemon was started from a shell inside a unit, with 2> file) */
static bool stderr_is_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) < 0)
        return false;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(const char *who, enum log_level max)
{
    snprintf(log_cfg.who, sizeof log_cfg.who, "%s", who);
    log_cfg.max = max;
    log_cfg.journal = stderr_is_journal();
}

bool log_enabled(enum log_level l)
{
    return l <= log_cfg.max;
}

bool log_to_journal(void)
{
    return log_cfg.journal;
}

static const char *level_name(enum log_level l)
{
    switch (l) {
    case LOG_LV_ERROR:
        return "error";
    case LOG_LV_WARN:
        return "warning";
    case LOG_LV_NOTICE:
        return "notice";
    case LOG_LV_INFO:
        return "info";
    default:
        return "debug";
    }
}

size_t log_prefix(enum log_level l, char *buf, size_t len)
{
    int n;
    if (log_cfg.journal) {
        n = snprintf(buf, len, "<%d>%s: ", (int)l, log_cfg.who);
    } else {
        static _Thread_local time_t cached_sec = -1;
        static _Thread_local char cached[32];
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        if (ts.tv_sec != cached_sec) {
            struct tm tm;
            localtime_r(&ts.tv_sec, &tm);
            strftime(cached, sizeof cached, "%Y-%m-%d %H:%M:%S", &tm);
            cached_sec = ts.tv_sec;
        }
        n = snprintf(buf, len, "%s.%03ld %s %s: ", cached, ts.tv_nsec / 1000000, level_name(l),
                     log_cfg.who);
    }
    if (n < 0)
        n = 0;
    return (size_t)n < len ? (size_t)n : (len ? len - 1 : 0);
}

void log_msg(enum log_level l, const char *fmt, ...)
{
    if (!log_enabled(l))
        return;
    char line[2048];
    size_t n = log_prefix(l, line, sizeof line);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    size_t at = n;
    if (m > 0)
        n += (size_t)m < sizeof line - n - 1 ? (size_t)m : sizeof line - n - 2;
    /* one message, one line: a newline inside would start a line the
     * journal reads without the level */
    for (size_t i = 0; i < n; i++)
        if (line[i] == '\n')
            line[i] = ' ';
    /* and no terminal's command: messages carry model names, clients'
     * words and the models' own log lines */
    line[n] = '\0';
    n = at + strlen(textsafe(line + at));
    line[n++] = '\n';
    fwrite(line, 1, n, stderr);
}
