/* SPDX-License-Identifier: GPL-2.0-only */
/* Logging to stderr with sd-daemon priority prefixes, which journald reads as levels. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "log.h"

static int max_level = LOG_INFO;

void log_set_max_level(int level)
{
        max_level = level;
}

int log_internal(int priority, int error, const char *fmt, ...)
{
        int saved = errno;
        va_list ap;

        assert(fmt);
        if (error < 0)
                error = -error;
        if (priority <= max_level) {
                errno = error;  /* for %m */
                flockfile(stderr);
                fprintf(stderr, "<%d>", priority);
                va_start(ap, fmt);
                vfprintf(stderr, fmt, ap);
                va_end(ap);
                fputc('\n', stderr);
                funlockfile(stderr);
        }
        errno = saved;
        return -error;
}
