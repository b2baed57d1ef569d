/* SPDX-License-Identifier: MIT */
/* A big heap for a live reachability scan (tests/integration/test_reachability.py, bench/
 * reach-pause.py), each kind of block from a function of its own:
 *   keep_index()       one block of KEEP_BLOCKS pointers, a global points to it: still reachable
 *   keep_block()       KEEP_BLOCKS blocks of 1 KiB (256 MiB; a second argument, after the mode
 *                      ("-" for none), sets their size), each pointed to from the index
 *                      and from the next one's first word: still reachable
 *   lose_block()       LOST_BLOCKS blocks of LOST_BYTES, their pointers dropped: definitely lost
 *   make_lost_child()  LOST_CHILDREN blocks of CHILD_BYTES, each pointed to only from one of
 *                      lose_block()'s: indirectly lost
 * and a thread that measures its own longest stall: a tight loop reading CLOCK_MONOTONIC, the
 * longest gap between two readings kept.
 *
 * Protocol: print "ready", wait for a line, make the blocks, print "made". Then for each line: a
 * line "stall" is answered with "stall MICROSECONDS" (the longest gap since the last such line),
 * any other with "alive", until stdin closes. With "noclone" as its argument, once the blocks are
 * made it forbids itself clone, clone3, fork, vfork and userfaultfd with a seccomp filter (every
 * thread): no copy of it can be made, nor can it be scanned concurrently. With "filtered", a
 * seccomp filter forbids it only syslog: a copy can, and a concurrent scan. With "nouffd", one
 * forbids it only userfaultfd: a copy can be made, a concurrent scan cannot.
 * With "uffd", it registers a mapping of its own with a userfaultfd of its own (missing-page mode,
 * the pages never touched): a concurrent scan cannot watch that mapping. A line "replace-uffd"
 * puts /dev/null under the number of each userfaultfd it has (the one a scan left in it), as a
 * program that closes descriptors and opens others does, and is answered with "replaced FD" (the
 * last one, -1 for none). */
#include <dirent.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define KEEP_BYTES_DEFAULT 1024
static size_t keep_bytes = KEEP_BYTES_DEFAULT;  /* a second argument sets it (bench/: a bigger heap) */
#define KEEP_BLOCKS (256u * 1024)       /* 256 MiB */
#define LOST_BYTES 96
#define LOST_BLOCKS 1000
#define CHILD_BYTES 40
#define LOST_CHILDREN 200               /* the first lost blocks own one each */

void **volatile global_index;
static volatile uint64_t max_gap_ns;

static noinline void **keep_index(void)
{
        void **p = calloc(KEEP_BLOCKS, sizeof(*p));

        require(p);
        return p;
}

/* Words like a program's data: the block before it, then small numbers. */
static noinline void *keep_block(void *previous, uint64_t i)
{
        uint64_t *p = malloc(keep_bytes);

        require(p);
        p[0] = (uint64_t)(uintptr_t)previous;
        for (size_t k = 1; k < keep_bytes / sizeof(*p); k++)
                p[k] = i * 131 + k;
        return p;
}

static noinline void *make_lost_child(void)
{
        void *p = malloc(CHILD_BYTES);

        require(p);
        memset(p, 0x11, CHILD_BYTES);
        return p;
}

static noinline void lose_block(int with_child)
{
        void **volatile p = malloc(LOST_BYTES);

        require(p);
        memset(p, 0, LOST_BYTES);
        if (with_child)
                p[0] = make_lost_child();
        p = NULL;
}

static noinline void lose_blocks(void)
{
        for (int i = 0; i < LOST_BLOCKS; i++)
                lose_block(i < LOST_CHILDREN);
}

static noinline void keep_blocks(void)
{
        void **index = keep_index();
        void *previous = NULL;

        for (uint64_t i = 0; i < KEEP_BLOCKS; i++)
                previous = index[i] = keep_block(previous, i);
        global_index = index;
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The longest time between two readings of the clock: how long this thread was kept from running. */
static void *measure_stalls(void *arg)
{
        uint64_t last = now_ns();

        for (;;) {
                uint64_t now = now_ns();

                if (now - last > max_gap_ns)
                        max_gap_ns = now - last;
                last = now;
        }
        return NULL;
}

/* syslog fails with EPERM, in every thread; clone goes through (a service under systemd's
 * SystemCallFilter=, every process in a systemd-nspawn container). */
static void forbid_syslog(void)
{
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_syslog, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

        require(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
        require(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0);
}

/* clone, clone3, fork and vfork (no snapshot) and userfaultfd (no concurrent scan) fail with
 * EPERM, in every thread. */
static void forbid_clone(void)
{
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 5, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 4, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fork, 3, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 2, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        };
        struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

        require(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
        require(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0);
}

/* userfaultfd fails with EPERM, in every thread; clone goes through. */
static void forbid_userfaultfd(void)
{
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

        require(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
        require(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0);
}

/* A userfaultfd of its own over 16 pages it never touches (the fd and mapping kept). */
static void use_userfaultfd(void)
{
        size_t len = 16 * 4096;
        void *area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
        struct uffdio_api api = { .api = UFFD_API };
        struct uffdio_register reg = { .range = { .start = (uintptr_t)area, .len = len },
                                       .mode = UFFDIO_REGISTER_MODE_MISSING };

        require(area != MAP_FAILED);
        require(fd >= 0);
        require(ioctl(fd, UFFDIO_API, &api) == 0);
        require(ioctl(fd, UFFDIO_REGISTER, &reg) == 0);
}

/* Old frames below the stack pointer keep the addresses the calls above handled: clear them. */
static noinline void scrub_stack(void)
{
        volatile char junk[16384];

        memset((char *)junk, 0, sizeof(junk));
}

/* /dev/null under the number of each userfaultfd it has: the last number, or -1. */
static int replace_userfaultfds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        int replaced = -1;

        require(d != NULL);
        while ((e = readdir(d))) {
                char target[64];
                ssize_t n;

                if (e->d_name[0] == '.')
                        continue;
                n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
                if (n <= 0)
                        continue;
                target[n] = 0;
                if (strcmp(target, "anon_inode:[userfaultfd]") == 0) {
                        int fd = atoi(e->d_name), null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                        require(null >= 0 && dup2(null, fd) == fd);
                        close(null);
                        replaced = fd;
                }
        }
        closedir(d);
        return replaced;
}

int main(int argc, char **argv)
{
        pthread_t stalls;
        int noclone = argc > 1 && strcmp(argv[1], "noclone") == 0;
        int filtered = argc > 1 && strcmp(argv[1], "filtered") == 0;
        int uffd = argc > 1 && strcmp(argv[1], "uffd") == 0;
        int nouffd = argc > 1 && strcmp(argv[1], "nouffd") == 0;
        char line[64];

        if (argc > 2)
                keep_bytes = (size_t)strtoull(argv[2], NULL, 10);
        require(keep_bytes >= sizeof(uint64_t));
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        lose_blocks();
        keep_blocks();
        require(pthread_create(&stalls, NULL, measure_stalls, NULL) == 0);
        if (noclone)
                forbid_clone();
        if (nouffd)
                forbid_userfaultfd();
        if (filtered)
                forbid_syslog();
        if (uffd)
                use_userfaultfd();
        scrub_stack();
        say("made");
        for (;;) {
                size_t n = 0;
                int c;

                while ((c = getchar()) != EOF && c != '\n')
                        if (n + 1 < sizeof(line))
                                line[n++] = (char)c;
                if (c == EOF)
                        return 0;
                line[n] = 0;
                if (strcmp(line, "stall") == 0) {
                        printf("stall %llu\n", (unsigned long long)(max_gap_ns / 1000));
                        fflush(stdout);
                        max_gap_ns = 0;
                } else if (strcmp(line, "replace-uffd") == 0) {
                        printf("replaced %d\n", replace_userfaultfds());
                        fflush(stdout);
                } else
                        say("alive");
        }
}
