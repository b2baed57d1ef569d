/* SPDX-License-Identifier: MIT */
/* Makes the kernel allocate on command, holds what it made, and lets it go on command: ground
 * truth for the kernel target.
 *
 * Prints "ready", then answers each line on stdin with "done" (or "error: ..." and exits 1):
 *   eventfds N     open N eventfds: per eventfd, one kmalloc'd struct eventfd_ctx (do_eventfd)
 *                  and one struct file from the filp cache (alloc_empty_file)
 *   pipe-pages N   one pipe holding N pages written a page at a time (N <= 16, the pipe's
 *                  default capacity): one order-0 page per write (anon_pipe_write)
 *   percpu N       a BPF per-CPU array of N entries: one percpu allocation per entry
 *   close          close everything held; the kernel frees it (some of it after an RCU grace
 *                  period or from a workqueue)
 * EOF on stdin exits. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_FDS 4096
#define PAGE_BYTES 4096
#define PIPE_PAGES_MAX 16

static int held[MAX_FDS];
static size_t n_held;

static void fail(const char *what)
{
        printf("error: %s: %s\n", what, strerror(errno));
        fflush(stdout);
        exit(1);
}

static void hold(int fd, const char *what)
{
        if (fd < 0)
                fail(what);
        if (n_held == MAX_FDS) {
                errno = EMFILE;
                fail(what);
        }
        held[n_held++] = fd;
}

static void open_eventfds(long n)
{
        for (long i = 0; i < n; i++)
                hold(eventfd(0, EFD_CLOEXEC), "eventfd");
}

static void fill_pipe(long pages)
{
        static char page[PAGE_BYTES];
        int fds[2];

        if (pages < 1 || pages > PIPE_PAGES_MAX) {
                errno = EINVAL;
                fail("pipe-pages");
        }
        if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
                fail("pipe2");
        hold(fds[0], "pipe2");
        hold(fds[1], "pipe2");
        memset(page, 'k', sizeof(page));
        for (long i = 0; i < pages; i++)
                if (write(fds[1], page, sizeof(page)) != (ssize_t)sizeof(page))
                        fail("write to the pipe");
}

static void create_percpu_array(long entries)
{
        union bpf_attr attr;

        memset(&attr, 0, sizeof(attr));
        attr.map_type = BPF_MAP_TYPE_PERCPU_ARRAY;
        attr.key_size = 4;
        attr.value_size = 24;
        attr.max_entries = (unsigned)entries;
        hold((int)syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)), "bpf(BPF_MAP_CREATE)");
}

static void close_all(void)
{
        for (size_t i = 0; i < n_held; i++)
                if (close(held[i]) < 0)
                        fail("close");
        n_held = 0;
}

int main(void)
{
        char line[128];

        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("ready\n");
        while (fgets(line, sizeof(line), stdin)) {
                char command[32];
                long n = 0;
                int fields = sscanf(line, "%31s %ld", command, &n);

                if (fields == 2 && strcmp(command, "eventfds") == 0 && n > 0)
                        open_eventfds(n);
                else if (fields == 2 && strcmp(command, "pipe-pages") == 0)
                        fill_pipe(n);
                else if (fields == 2 && strcmp(command, "percpu") == 0 && n > 0)
                        create_percpu_array(n);
                else if (fields == 1 && strcmp(command, "close") == 0)
                        close_all();
                else {
                        errno = EINVAL;
                        fail("unknown command");
                }
                printf("done\n");
        }
        return 0;
}
