/* SPDX-License-Identifier: MIT */
/* Anonymous mappings a program makes itself, cut and moved every way, beside heap leaks and the
 * mappings glibc's malloc makes for itself (which are the heap's, not the program's).
 *
 * Ground truth (tests/integration/test_mmap.py keeps the same numbers; PAGE = 4096):
 *   leak_heap()      heap: 2 x malloc(64)
 *   leak_mmap()      3 mappings of 5 pages (one asked for as 5 pages minus 100 bytes: rounded up)
 *   leak_cut()       8 pages with 2 unmapped in the middle (2 pieces: 2 + 4 pages), and 4 pages
 *                    with the first unmapped (3 pages): 3 mappings, 9 pages
 *   leak_mremap()    2 pages grown by mremap to 6 (may move), 4 pages shrunk to 1: 2 mappings,
 *                    7 pages, both at mremap's call
 *   leak_fixed()     12 one-page mappings put by MAP_FIXED over a 12-page one (which they
 *                    replace whole), then one munmap over the first 10 (more overlaps than one
 *                    pass of the unmap's search takes): 2 mappings, 2 pages
 *   churn()          mmap/munmap pairs, a file mapping, malloc(1 MiB)/free (glibc mmaps it),
 *                    mremap of an unmapped range: nothing outstanding
 * Protocol: print "ready", wait for a line ("go"), leak, print "done", wait for EOF. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "leak-util.h"

#define PAGE 4096
#define noinline __attribute__((noinline))

void *volatile keep[32];
static int n_keep;

static void *map_pages(size_t bytes)
{
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        require(p != MAP_FAILED);
        return p;
}

static noinline void leak_heap(void)
{
        for (int i = 0; i < 2; i++)
                keep[n_keep++] = malloc(64);
}

static noinline void leak_mmap(void)
{
        for (int i = 0; i < 2; i++)
                keep[n_keep++] = mmap(NULL, 5 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        keep[n_keep++] = mmap(NULL, 5 * PAGE - 100, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static noinline void leak_cut(void)
{
        char *a = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        char *b = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        require(a != MAP_FAILED && b != MAP_FAILED);
        require(munmap(a + 2 * PAGE, 2 * PAGE) == 0);   /* the middle: 2 + 4 pages stay */
        require(munmap(b, PAGE + 1) == 0);              /* rounds up to 2 pages: 2 stay */
        keep[n_keep++] = a;
        keep[n_keep++] = b;
}

static noinline void leak_mremap(void)
{
        char *grow = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        char *shrink = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        require(grow != MAP_FAILED && shrink != MAP_FAILED);
        grow = mremap(grow, 2 * PAGE, 6 * PAGE, MREMAP_MAYMOVE);
        shrink = mremap(shrink, 4 * PAGE, PAGE, 0);
        require(grow != MAP_FAILED && shrink != MAP_FAILED);
        keep[n_keep++] = grow;
        keep[n_keep++] = shrink;
}

static noinline void leak_fixed(void)
{
        char *region = map_pages(12 * PAGE);

        for (int i = 0; i < 12; i++)
                require(mmap(region + i * PAGE, PAGE, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == region + i * PAGE);
        require(munmap(region, 10 * PAGE) == 0);
        keep[n_keep++] = region + 10 * PAGE;
}

static noinline void churn(void)
{
        for (int round = 0; round < 20; round++) {
                char *p = map_pages((size_t)(round + 1) * PAGE);
                char *q = map_pages(3 * PAGE);
                void *big = malloc(1 << 20);            /* glibc serves it with its own mmap */
                int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
                void *file = fd >= 0 ? mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;

                require(big && file != MAP_FAILED);
                q = mremap(q, 3 * PAGE, 9 * PAGE, MREMAP_MAYMOVE);
                require(q != MAP_FAILED);
                require(munmap(p, (size_t)(round + 1) * PAGE) == 0);
                require(munmap(q, 9 * PAGE) == 0);
                require(munmap(file, PAGE) == 0);
                free(big);
                close(fd);
        }
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        leak_heap();
        leak_mmap();
        leak_cut();
        leak_mremap();
        leak_fixed();
        churn();
        say("done");
        wait_line();
        return 0;
}
