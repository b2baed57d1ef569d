/* SPDX-License-Identifier: MIT */
/* Small helpers both programs use: error messages for the caller, clocks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util.h"

int error_set(char **error, int r, const char *fmt, ...)
{
        va_list ap;

        if (r < 0)
                errno = -r;     /* for %m */
        va_start(ap, fmt);
        if (vasprintf(error, fmt, ap) < 0)
                *error = NULL;
        va_end(ap);
        return r;
}

static uint64_t now_usec(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * 1000000ull + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t now_realtime_usec(void)
{
        return now_usec(CLOCK_REALTIME);
}

uint64_t now_monotonic_usec(void)
{
        return now_usec(CLOCK_MONOTONIC);
}

uint64_t now_monotonic_nsec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void strv_free_n(char **v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

int strv_push_n(char ***v, size_t *n, char *s)
{
        char **nv;

        if (!s)
                return -ENOMEM;
        nv = realloc(*v, (*n + 1) * sizeof(*nv));
        if (!nv) {
                free(s);
                return -ENOMEM;
        }
        *v = nv;
        nv[(*n)++] = s;
        return 0;
}

const char *path_base_name(const char *path)
{
        const char *slash = strrchr(path, '/');

        return slash && slash[1] ? slash + 1 : path;
}

uint64_t fnv1a64(uint64_t h, const void *data, size_t n)
{
        const unsigned char *p = data;

        for (size_t i = 0; i < n; i++) {
                h ^= p[i];
                h *= UINT64_C(0x100000001b3);
        }
        return h;
}
