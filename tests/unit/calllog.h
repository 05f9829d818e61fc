/* calllog: what a test's fake parts were called with, one line ("start a;
 * stop b") that the test then holds against what it expects. */
#ifndef VRAM_TESTS_CALLLOG_H
#define VRAM_TESTS_CALLLOG_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) static inline void calllog_say(char *log, size_t size,
                                                                    const char *fmt, ...)
{
    size_t at = strlen(log);
    if (at)
        at += (size_t)snprintf(log + at, size - at, "; ");
    if (at >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(log + at, size - at, fmt, ap);
    va_end(ap);
}

#endif
