/* SPDX-License-Identifier: GPL-2.0-only */
/* Benchmark tool: the bare cost of probes, with empty BPF programs, on a process's allocator.
 * "sites" places them where memleakd does (daemon/elf/alloc-sites.h: each entry probe at the
 * site's probe_offset, a return probe beside it for every kind but free; none on the C++ runtime's
 * operators that only call malloc or free); "entry" places them at
 * each function's first instruction, as entry-probing tools (BCC's memleak) do. The difference
 * between a traced run and its floor is the cost of memleakd's own BPF work.
 * usage: probe-floor sites|entry PID OBJECT...   (holds the probes until stdin closes) */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "alloc-sites.h"
#include "uprobe-multi.h"

#define MAX_LINKS 64

struct floor {
        int links[MAX_LINKS];
        size_t n_links;
        size_t entries, returns;
};

static int link_offsets(struct floor *f, int prog, bool is_return, pid_t pid, int fd, const uint64_t *offsets,
                        size_t n)
{
        char path[64];
        int link;

        if (n == 0)
                return 0;
        if (f->n_links == MAX_LINKS)
                return -E2BIG;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        link = uprobe_multi_link(prog, is_return, pid, path, offsets, NULL, n);
        if (link < 0)
                return link;
        f->links[f->n_links++] = link;
        return 0;
}

/* Probe every allocator site of the object at path (mmap family excluded, as memleakd does
 * without --mmap). */
static int probe_object(struct floor *f, int prog, bool at_entry, pid_t pid, const char *path)
{
        struct alloc_sites sites = {};
        uint64_t *entries = NULL, *returns = NULL;
        size_t n_entries = 0, n_returns = 0;
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = alloc_sites_find(fd, &sites);
        if (r < 0)
                goto out;
        alloc_sites_drop_mmap(&sites);
        entries = calloc(sites.n + 1, sizeof(*entries));
        returns = calloc(sites.n + 1, sizeof(*returns));
        if (!entries || !returns) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < sites.n; i++) {
                const struct alloc_site *s = &sites.sites[i];
                uint64_t at = at_entry ? s->file_offset : s->probe_offset;

                if (!at_entry && s->forwards)
                        continue;       /* memleakd leaves it to the malloc or free it calls */

                entries[n_entries++] = at;
                if (alloc_kind_has_return_probe(s->kind))
                        returns[n_returns++] = at;
        }
        r = link_offsets(f, prog, false, pid, fd, entries, n_entries);
        if (r >= 0)
                r = link_offsets(f, prog, true, pid, fd, returns, n_returns);
        if (r >= 0) {
                f->entries += n_entries;
                f->returns += n_returns;
        }
out:
        free(entries);
        free(returns);
        alloc_sites_done(&sites);
        close(fd);
        return r;
}

int main(int argc, char **argv)
{
        struct floor f = {};
        char buf[256];
        bool at_entry;
        int prog, status = 1;
        long pid;

        if (argc < 4 || (strcmp(argv[1], "sites") != 0 && strcmp(argv[1], "entry") != 0)) {
                fprintf(stderr, "usage: %s sites|entry PID OBJECT...\n", argv[0]);
                return 2;
        }
        at_entry = strcmp(argv[1], "entry") == 0;
        pid = strtol(argv[2], NULL, 10);
        if (pid <= 0) {
                fprintf(stderr, "probe-floor: bad pid %s\n", argv[2]);
                return 2;
        }
        prog = uprobe_multi_empty_program();
        if (prog < 0) {
                fprintf(stderr, "probe-floor: cannot load an empty program: %s\n", strerror(-prog));
                return 1;
        }
        for (int i = 3; i < argc; i++) {
                int r = probe_object(&f, prog, at_entry, (pid_t)pid, argv[i]);

                if (r < 0) {
                        fprintf(stderr, "probe-floor: cannot probe %s: %s\n", argv[i], strerror(-r));
                        goto out;
                }
        }
        printf("%zu %zu\n", f.entries, f.returns);      /* entry probes, return probes */
        fflush(stdout);
        while (fgets(buf, sizeof(buf), stdin))
                ;
        status = 0;
out:
        for (size_t i = 0; i < f.n_links; i++)
                close(f.links[i]);
        close(prog);
        return status;
}
