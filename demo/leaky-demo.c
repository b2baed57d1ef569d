/* A small "service" that leaks: each request leaks its session buffer, the rest is balanced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct session {
        char *buffer;
        size_t len;
};

static __attribute__((noinline)) char *leak_session_buffer(size_t len)
{
        char *b = malloc(len);  /* the leak: nobody frees it */

        if (b)
                memset(b, 'x', len);
        return b;
}

static __attribute__((noinline)) void handle_request(unsigned n)
{
        struct session *s = calloc(1, sizeof(*s));      /* balanced: freed below */
        char *scratch = malloc(4096);                   /* balanced */

        if (!s || !scratch)
                goto out;
        s->len = 100 + n % 7;
        s->buffer = leak_session_buffer(s->len);
        snprintf(scratch, 4096, "request %u", n);
out:
        free(scratch);
        free(s);
}

int main(void)
{
        for (unsigned n = 0;; n++) {
                handle_request(n);
                usleep(20000);
        }
}
