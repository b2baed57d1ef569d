/* SPDX-License-Identifier: MIT */
/* The handshake every leaking test program speaks with its test over stdin/stdout. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

/* No stdio buffer is ever malloc'ed: a stray allocation after attach would blur the ground truth. */
static inline void setup_stdio(void)
{
        static char out_buffer[4096];

        setvbuf(stdin, NULL, _IONBF, 0);
        setvbuf(stdout, out_buffer, _IOFBF, sizeof(out_buffer));
}

/* Tell the test where we are: one word on its own line, flushed at once (stdout is a pipe). */
static inline void say(const char *word)
{
        fputs(word, stdout);
        fputc('\n', stdout);
        fflush(stdout);
}

/* Block until the test sends a line. Returns 0 for a line, -1 for EOF. */
static inline int wait_line(void)
{
        int c;

        while ((c = getchar()) != EOF)
                if (c == '\n')
                        return 0;
        return -1;
}

/* Abort loudly when the program's own premise does not hold, so no test passes on a bad run. */
#define require(cond)                                                                   \
        do {                                                                            \
                if (!(cond)) {                                                          \
                        fprintf(stderr, "%s:%d: requirement failed: %s\n", __FILE__,     \
                                __LINE__, #cond);                                       \
                        abort();                                                        \
                }                                                                       \
        } while (0)
