/* conftext: vram.conf as text, before inih reads it: the file itself
 * (whose it is, what kind, how large), keys given twice in a section
 * (inih would keep the last silently), and lines longer than inih reads
 * whole. */
#include "conf/conftext.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/modelname.h"
#include "model/reader.h"

/* The configuration's text: a regular file only (a FIFO would wedge the
 * daemon on SIGHUP), at most CONFTEXT_MAX_BYTES, and one only root or this
 * user can change, since its commands run as this user. */
char *conftext_read(const char *path, char *err, size_t len)
{
    struct stat st;
    err[0] = '\0'; /* what the read below is judged by */
    /* a device is not even opened (opening one may act); a FIFO swapped in
     * after this is opened without waiting, and refused below */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, len,
                 "%s: %s, not a regular file: vram serve reads its configuration only "
                 "from a file",
                 path, reader_kind(st.st_mode));
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, len, "%s: cannot read it: %m", path);
        return NULL;
    }
    char *t = NULL;
    if (fstat(fd, &st) < 0)
        snprintf(err, len, "%s: cannot read it: %m", path);
    else if (!S_ISREG(st.st_mode))
        snprintf(err, len,
                 "%s: %s, not a regular file: vram serve reads its configuration only "
                 "from a file",
                 path, reader_kind(st.st_mode));
    else if (st.st_size >= CONFTEXT_MAX_BYTES)
        snprintf(err, len, "%s: larger than 1 MiB: not a vram config", path);
    else if (st.st_uid != 0 && st.st_uid != geteuid())
        snprintf(err, len,
                 "%s: owned by uid %u, neither root nor this user: its commands would run as "
                 "this user; chown it to root (or to this user)",
                 path, (unsigned)st.st_uid);
    else if ((st.st_mode & S_IWOTH) ||
             ((st.st_mode & S_IWGRP) && st.st_gid != 0 && st.st_gid != getegid()))
        snprintf(err, len,
                 "%s: others may write it (mode %04o): its commands would run as this user; "
                 "chmod go-w it",
                 path, (unsigned)(st.st_mode & 07777));
    else if (!(t = calloc(1, CONFTEXT_MAX_BYTES + 1)))
        snprintf(err, len, "out of memory");
    else {
        size_t n = 0;
        ssize_t r;
        while (n < CONFTEXT_MAX_BYTES && (r = read(fd, t + n, CONFTEXT_MAX_BYTES - n)) != 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                snprintf(err, len, "%s: cannot read it: %m", path);
                break;
            }
            n += (size_t)r;
        }
        if (err[0] || n == CONFTEXT_MAX_BYTES) { /* it grew while read */
            if (!err[0])
                snprintf(err, len, "%s: larger than 1 MiB: not a vram config", path);
            free(t);
            t = NULL;
        }
    }
    close(fd);
    return t;
}

/* A line's text from p, its edges trimmed, into out ("" when too long). */
static void trimmed(const char *p, size_t n, char *out, size_t len)
{
    while (n && (*p == ' ' || *p == '\t'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
        n--;
    if (n >= len)
        n = 0;
    memcpy(out, p, n);
    out[n] = '\0';
}

/* A section given twice, or a setting twice in one section, read as inih
 * reads lines: inih merges the first and joins the second's command to the
 * first's, silently. The first repeat, with both lines, into err. */
bool conftext_repeats(const char *text, const char *path, char *err, size_t len)
{
    enum { MAX_SEEN = 4096 }; /* more is no configuration; inih reads the rest unchecked */
    struct seen {
        unsigned sec; /* index of its section in seen (0: before any) */
        bool is_sec;
        unsigned line;
        char name[MODELNAME_MAX + 16]; /* "model " and a name */
    } *seen = calloc(MAX_SEEN, sizeof *seen);
    if (!seen)
        return false;
    size_t n = 0;
    unsigned sec = 0, line = 1;
    bool prev_key = false, found = false;
    if (!strncmp(text, "\xEF\xBB\xBF", 3))
        text += 3; /* inih skips a byte-order mark */
    for (const char *l = text; *l && !found && n < MAX_SEEN; line++) {
        const char *e = strchr(l, '\n');
        size_t ll = e ? (size_t)(e - l) : strlen(l);
        const char *p = l;
        while (p < l + ll && (*p == ' ' || *p == '\t'))
            p++;
        bool indented = p > l;
        struct seen s = {0};
        if (p == l + ll || *p == ';' || *p == '#' || (indented && prev_key)) {
            /* nothing, a comment, or a value going on (inih's multi-line) */
        } else if (*p == '[') {
            const char *end = memchr(p, ']', (size_t)(l + ll - p));
            if (end) {
                s.is_sec = true;
                trimmed(p + 1, (size_t)(end - p - 1), s.name, sizeof s.name);
            }
            prev_key = false;
        } else {
            size_t k = strcspn(p, "=:\n");
            if (p + k <= l + ll && p[k] && p[k] != '\n') {
                trimmed(p, k, s.name, sizeof s.name);
                s.sec = sec;
                prev_key = true;
            }
        }
        if (s.name[0]) {
            s.line = line;
            for (size_t i = 0; i < n && !found; i++)
                if (seen[i].is_sec == s.is_sec && seen[i].sec == s.sec &&
                    !strcmp(seen[i].name, s.name)) {
                    found = true;
                    if (s.is_sec)
                        snprintf(err, len,
                                 "%s:%u: [%s] again (it began at line %u): one section each; "
                                 "merge the two, or rename one",
                                 path, line, s.name, seen[i].line);
                    else
                        snprintf(err, len,
                                 "%s:%u: %s again in [%s] (first at line %u): say it once%s", path,
                                 line, s.name, sec ? seen[sec - 1].name : "", seen[i].line,
                                 strcmp(s.name, "command") ? ""
                                                           : " (a long command goes on over "
                                                             "indented lines)");
                }
            seen[n++] = s;
            if (s.is_sec)
                sec = (unsigned)n; /* index + 1 of this section */
        }
        if (!e)
            break;
        l = e + 1;
    }
    free(seen);
    return found;
}

/* The first line inih could not read whole (0: none), and its length. */
unsigned conftext_long_line(const char *text, size_t *len)
{
    unsigned line = 1;
    for (const char *l = text; *l; line++) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (n + 2 > INI_MAX_LINE) { /* with its newline and the terminating NUL */
            *len = n;
            return line;
        }
        if (!e)
            break;
        l = e + 1;
    }
    return 0;
}

char *conftext_short_sections(const char *text, char (*names)[CONFTEXT_SECTION_MAX], size_t max,
                              size_t *n)
{
    *n = 0;
    size_t len = strlen(text);
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    memcpy(out, text, len + 1);
    bool prev_key = false;
    for (char *l = out; *l;) {
        char *e = strchr(l, '\n');
        size_t ll = e ? (size_t)(e - l) : strlen(l);
        char *p = l;
        while (p < l + ll && (*p == ' ' || *p == '\t'))
            p++;
        bool indented = p > l;
        if (p == l + ll || *p == ';' || *p == '#' || (indented && prev_key)) {
            /* nothing, a comment, or a value going on (inih's multi-line) */
        } else if (*p == '[') {
            char *end = memchr(p, ']', (size_t)(l + ll - p));
            size_t sl = end ? (size_t)(end - p - 1) : 0;
            if (end && sl >= CONFTEXT_INI_SECTION - 1 && sl < CONFTEXT_SECTION_MAX &&
                !strncmp(p + 1, "model ", 6) && !memchr(p, ';', sl) && *n < max) {
                memcpy(names[*n], p + 1 + 6, sl - 6);
                names[*n][sl - 6] = '\0';
                /* "[model @K]" then blanks to where "]" was: the rest of
                 * the line stays where it was */
                int w = snprintf(p, (size_t)(end - p) + 1, "[model @%zu]", (*n)++);
                memset(p + w, ' ', (size_t)(end + 1 - (p + w)));
            }
            prev_key = false;
        } else {
            size_t k = strcspn(p, "=:\n");
            prev_key = p + k < l + ll;
        }
        if (!e)
            break;
        l = e + 1;
    }
    return out;
}
