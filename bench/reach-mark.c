/* SPDX-License-Identifier: MIT */
/* Benchmark: the reachability mark alone (daemon/reach/reachability.c), no BPF, on a real heap.
 * A child (this program again, under jemalloc as Debian's redis-server is) builds a heap shaped
 * like redis's after `DEBUG POPULATE KEYS key 256` (a dict of 2^k buckets; per key a dictEntry of
 * 24 bytes, its key as an sds of 14, a robj of 16 and its value as an sds of 262, interior
 * pointers as redis keeps them; the tables outgrown freed), or KEYS blocks of --block-bytes in a
 * list (each pointed to by an index and by the one before: tests/programs/leak-reach-big), plus
 * 1,000 definitely and 200 indirectly lost blocks; it sends the blocks' addresses and sizes down a
 * pipe and stops. The parent marks it as the daemon marks a process attached while it ran (roots:
 * the writable mappings less the blocks; reads by pread of /proc/PID/mem, batched as reach-scan.c
 * batches them), RUNS times, and prints per run the wall and CPU time of the mark, the rate, the
 * words filtered, settled and looked up, the classes and a hash of every block's class (equal
 * hashes: the same verdict block by block, for A/B runs).
 * usage: reach-mark [--shape redis|list] [--keys N] [--block-bytes B] [--runs N] [--malloc]
 *        (--malloc: glibc's malloc in the child, not jemalloc; needed in a sanitized build) */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "macro.h"
#include "proc-maps.h"
#include "reach-scan.h"
#include "reachability.h"

#define LOST_DEFINITELY 1000
#define LOST_INDIRECTLY 200
#define JEMALLOC "libjemalloc.so.2"

static double clock_ms(clockid_t id)
{
        struct timespec ts;

        clock_gettime(id, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The child's record of its blocks, in a mapping of its own (unmapped before it stops: not a root). */
struct record {
        struct reach_block *blocks;
        size_t n, allocated;
};

static void *record_alloc(struct record *rec, size_t size)
{
        void *p = malloc(size);

        if (!p)
                abort();
        if (rec->n == rec->allocated) {
                size_t a = rec->allocated ? rec->allocated * 2 : 1 << 20;
                struct reach_block *g = mmap(NULL, a * sizeof(*g), PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                if (g == MAP_FAILED)
                        abort();
                if (rec->blocks) {
                        memcpy(g, rec->blocks, rec->n * sizeof(*g));
                        munmap(rec->blocks, rec->allocated * sizeof(*g));
                }
                rec->blocks = g;
                rec->allocated = a;
        }
        rec->blocks[rec->n++] = (struct reach_block) { .addr = (uintptr_t)p, .size = size };
        return p;
}

static void record_free(struct record *rec, void *p)
{
        for (size_t i = rec->n; i-- > 0;)
                if (rec->blocks[i].addr == (uintptr_t)p) {
                        rec->blocks[i] = rec->blocks[--rec->n];
                        break;
                }
        free(p);
}

/* What the roots keep: where the child's globals point. */
static void *volatile root_dict;
static void *volatile root_list;

struct dict_entry {
        void *key;
        void *val;
        struct dict_entry *next;
};

struct dict {
        struct dict_entry **table;
        uint64_t size, used;
};

struct robj {
        uint32_t type_lru;
        uint32_t refcount;
        void *ptr;
};

static uint64_t hash(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        return x;
}

static void build_redis(struct record *rec, size_t keys)
{
        struct dict *d = record_alloc(rec, sizeof(*d));

        *d = (struct dict) { .size = 4 };
        d->table = record_alloc(rec, d->size * sizeof(*d->table));
        memset(d->table, 0, d->size * sizeof(*d->table));
        root_dict = d;
        for (size_t k = 0; k < keys; k++) {
                char name[32];
                int len = snprintf(name, sizeof(name), "key:%zu", k);
                uint8_t *key = record_alloc(rec, 3 + (size_t)len + 1);
                struct robj *o = record_alloc(rec, sizeof(*o));
                uint8_t *val = record_alloc(rec, 5 + 256 + 1);
                struct dict_entry *e = record_alloc(rec, sizeof(*e));
                uint64_t b;

                key[0] = (uint8_t)len;
                memcpy(key + 3, name, (size_t)len + 1);
                memset(val, 0, 5 + 256 + 1);
                snprintf((char *)val + 5, 256, "value:%zu", k);
                *o = (struct robj) { .type_lru = 0x12345, .refcount = 1, .ptr = val + 5 };
                if (d->used == d->size) {
                        /* outgrown: a table twice the size, rehashed, the old one freed */
                        struct dict_entry **t = record_alloc(rec, 2 * d->size * sizeof(*t));

                        memset(t, 0, 2 * d->size * sizeof(*t));
                        for (uint64_t i = 0; i < d->size; i++)
                                for (struct dict_entry *x = d->table[i], *next; x; x = next) {
                                        next = x->next;
                                        b = hash(strtoull((char *)x->key + 4, NULL, 10)) & (2 * d->size - 1);
                                        x->next = t[b];
                                        t[b] = x;
                                }
                        record_free(rec, d->table);
                        d->table = t;
                        d->size *= 2;
                }
                b = hash(k) & (d->size - 1);
                *e = (struct dict_entry) { .key = key + 3, .val = o, .next = d->table[b] };
                d->table[b] = e;
                d->used++;
        }
}

static void build_list(struct record *rec, size_t n, size_t block_bytes)
{
        void **index = record_alloc(rec, n * sizeof(*index));
        void *prev = NULL;

        for (size_t i = 0; i < n; i++) {
                void **b = record_alloc(rec, block_bytes);

                memset(b, 0, block_bytes);
                b[0] = prev;
                index[i] = prev = b;
        }
        root_list = index;
}

/* Lost: LOST_DEFINITELY blocks, each of the first LOST_INDIRECTLY pointing to one more. */
static void build_lost(struct record *rec)
{
        for (int i = 0; i < LOST_DEFINITELY; i++) {
                void **b = record_alloc(rec, 64);

                memset(b, 0, 64);
                if (i < LOST_INDIRECTLY) {
                        b[1] = record_alloc(rec, 48);
                        memset(b[1], 0, 48);
                }
        }
}

static int by_addr(const void *a, const void *b)
{
        const struct reach_block *x = a, *y = b;

        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int child(const char *shape, size_t keys, size_t block_bytes, int fd)
{
        struct record rec = {};
        size_t off = 0, len;

        if (strcmp(shape, "redis") == 0)
                build_redis(&rec, keys);
        else
                build_list(&rec, keys, block_bytes);
        build_lost(&rec);
        qsort(rec.blocks, rec.n, sizeof(*rec.blocks), by_addr);
        len = rec.n * sizeof(*rec.blocks);
        while (off < len) {
                ssize_t w = write(fd, (const uint8_t *)rec.blocks + off, len - off);

                if (w <= 0)
                        return 1;
                off += (size_t)w;
        }
        close(fd);
        munmap(rec.blocks, rec.allocated * sizeof(*rec.blocks));
        raise(SIGSTOP);
        return 0;
}

/* The reader: /proc/PID/mem, as reach-scan.c reads it (a copy of its read_process_many). */
#define READ_GAP_BYTES 4096
#define READ_SCRATCH_BYTES (1024 * 1024)

struct reader {
        int fd;
        uint8_t *scratch;
        size_t order[REACH_READ_MANY_MAX];
};

static uint64_t preads, pread_bytes;

static ssize_t read_mem(void *userdata, uint64_t addr, void *buf, size_t len)
{
        const struct reader *r = userdata;
        ssize_t n;

        preads++;
        pread_bytes += len;
        n = pread(r->fd, buf, len, (off_t)addr);

        return n < 0 ? -errno : n;
}

static int by_span_addr(const void *a, const void *b, void *userdata)
{
        const struct reach_span *spans = userdata;
        uint64_t x = spans[*(const size_t *)a].addr, y = spans[*(const size_t *)b].addr;

        return x < y ? -1 : x > y;
}

static ssize_t read_mem_many(void *userdata, const struct reach_span *spans, size_t n, void *buf)
{
        struct reader *r = userdata;
        uint64_t offset[REACH_READ_MANY_MAX + 1] = {};
        bool ok[REACH_READ_MANY_MAX + 1] = {};
        size_t done = 0;

        for (size_t i = 0; i < n; i++) {
                offset[i + 1] = offset[i] + spans[i].len;
                r->order[i] = i;
        }
        /* the marker asks in address order: sorted already, mostly */
        for (size_t i = 1; i < n; i++)
                if (spans[i].addr < spans[i - 1].addr) {
                        qsort_r(r->order, n, sizeof(r->order[0]), by_span_addr, (void *)spans);
                        break;
                }
        for (size_t i = 0; i < n;) {
                const struct reach_span *first = &spans[r->order[i]];
                uint64_t from = first->addr, to = first->addr + first->len;
                size_t j = i + 1;
                ssize_t got;

                while (j < n) {
                        const struct reach_span *next = &spans[r->order[j]];
                        uint64_t end = MAX(to, next->addr + next->len);

                        if (next->addr > to + READ_GAP_BYTES || end - from > READ_SCRATCH_BYTES)
                                break;
                        to = end;
                        j++;
                }
                got = read_mem(r, from, r->scratch, to - from);
                for (size_t k = i; k < j; k++) {
                        const struct reach_span *sp = &spans[r->order[k]];

                        if (got >= 0 && sp->addr + sp->len - from <= (uint64_t)got) {
                                memcpy((uint8_t *)buf + offset[r->order[k]], r->scratch + (sp->addr - from), sp->len);
                                ok[r->order[k]] = true;
                        }
                }
                i = j;
        }
        while (done < n && ok[done])
                done++;
        return (ssize_t)offset[done];
}

static int parent(pid_t pid, int fd, unsigned runs)
{
        struct reach_block *blocks = NULL;
        size_t n = 0, allocated = 0, n_roots = 0;
        struct reach_root *roots = NULL;
        struct proc_maps maps = {};
        struct reader rd = { .fd = -1, .scratch = malloc(READ_SCRATCH_BYTES) };
        uint64_t roots_bytes = 0, blocks_bytes = 0;
        char path[64];
        int status, r, ret = 1;

        for (;;) {
                ssize_t got;

                if (n == allocated) {
                        allocated = allocated ? allocated * 2 : 1 << 16;
                        struct reach_block *g = realloc(blocks, allocated * sizeof(*blocks));

                        if (!g)
                                goto out;
                        blocks = g;
                }
                got = read(fd, blocks + n, (allocated - n) * sizeof(*blocks));
                if (got <= 0)
                        break;
                n += (size_t)got / sizeof(*blocks);
        }
        if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) {
                fprintf(stderr, "the child did not stop\n");
                goto out;
        }
        snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
        r = proc_maps_parse_file(path, &maps);
        if (r < 0)
                goto out;
        r = reach_scan_roots_select(&maps, NULL, 0, blocks, n, NULL, 0, false, &roots, &n_roots);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < n_roots; i++)
                roots_bytes += roots[i].size;
        for (size_t i = 0; i < n; i++)
                blocks_bytes += blocks[i].size;
        snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
        rd.fd = open(path, O_RDONLY | O_CLOEXEC);
        if (rd.fd < 0 || !rd.scratch)
                goto out;
        printf("%zu blocks (%.1f MiB), %zu roots (%.1f MiB)\n", n, blocks_bytes / 1048576.0, n_roots,
               roots_bytes / 1048576.0);
        for (unsigned run = 0; run < runs; run++) {
                enum reachability *classes = calloc(n, sizeof(*classes));
                uint64_t counts[_REACHABILITY_MAX] = {}, h = 14695981039346656037ULL;
                struct reach_stats st = {};

                if (!classes)
                        goto out;
                double wall = clock_ms(CLOCK_MONOTONIC), cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID);

                r = reachability_classify(&(struct reach_input) {
                                .blocks = blocks, .n_blocks = n, .roots = roots, .n_roots = n_roots,
                                .read = read_mem, .read_many = read_mem_many, .userdata = &rd,
                        }, classes, &st);
                wall = clock_ms(CLOCK_MONOTONIC) - wall;
                cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu;
                if (r < 0) {
                        fprintf(stderr, "mark: %s\n", strerror(-r));
                        free(classes);
                        goto out;
                }
                for (size_t i = 0; i < n; i++) {
                        counts[classes[i]]++;
                        h = (h ^ classes[i]) * 1099511628211ULL;
                }
                printf("run %u: mark %.0f ms (CPU %.0f), %.1f MiB read, %.0f MiB/s (%.2f s CPU/GiB); words "
                       "filtered %" PRIu64 ", settled %" PRIu64 ", looked up %" PRIu64 "; reachable %" PRIu64
                       ", definitely %" PRIu64 ", indirectly %" PRIu64 "; hash %016" PRIx64 "\n",
                       run + 1, wall, cpu, st.bytes_scanned / 1048576.0, st.bytes_scanned / 1048576.0 / (wall / 1e3),
                       cpu / 1e3 / (st.bytes_scanned / 1073741824.0), st.words_filtered, st.words_settled,
                       st.words_looked_up, counts[REACHABILITY_STILL_REACHABLE],
                       counts[REACHABILITY_DEFINITELY_LOST], counts[REACHABILITY_INDIRECTLY_LOST], h);
                printf("  %" PRIu64 " reads of %.1f MiB in all\n", preads, pread_bytes / 1048576.0);
                preads = pread_bytes = 0;
                free(classes);
        }
        ret = 0;
out:
        if (rd.fd >= 0)
                close(rd.fd);
        free(rd.scratch);
        free(roots);
        free(blocks);
        proc_maps_done(&maps);
        return ret;
}

int main(int argc, char **argv)
{
        static const struct option options[] = {
                { "shape", required_argument, NULL, 's' },
                { "keys", required_argument, NULL, 'k' },
                { "block-bytes", required_argument, NULL, 'b' },
                { "runs", required_argument, NULL, 'r' },
                { "malloc", no_argument, NULL, 'm' },
                { "child", required_argument, NULL, 'c' },
                {}
        };
        const char *shape = "redis";
        size_t keys = 600000, block_bytes = 1024;
        unsigned runs = 3;
        bool jemalloc = true;
        int child_fd = -1, fds[2], c, r;
        pid_t pid;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 's': shape = optarg; break;
                case 'k': keys = strtoull(optarg, NULL, 10); break;
                case 'b': block_bytes = MAX(strtoull(optarg, NULL, 10), (unsigned long long)sizeof(void *)); break;
                case 'r': runs = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'm': jemalloc = false; break;
                case 'c': child_fd = atoi(optarg); break;
                default: return 2;
                }
        if (strcmp(shape, "redis") != 0 && strcmp(shape, "list") != 0)
                return 2;
        if (child_fd >= 0)
                return child(shape, keys, block_bytes, child_fd);
        if (pipe2(fds, O_CLOEXEC) < 0)
                return 1;
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                char fd_arg[16], keys_arg[32], bytes_arg[32];

                close(fds[0]);
                if (dup2(fds[1], 3) < 0)
                        _exit(1);
                snprintf(fd_arg, sizeof(fd_arg), "3");
                snprintf(keys_arg, sizeof(keys_arg), "%zu", keys);
                snprintf(bytes_arg, sizeof(bytes_arg), "%zu", block_bytes);
                /* the same layout at every run: hashes to compare */
                (void)personality(ADDR_NO_RANDOMIZE);
                if (jemalloc)
                        setenv("LD_PRELOAD", JEMALLOC, 1);
                execl("/proc/self/exe", argv[0], "--child", fd_arg, "--shape", shape, "--keys", keys_arg,
                      "--block-bytes", bytes_arg, (char *)NULL);
                _exit(127);
        }
        close(fds[1]);
        r = parent(pid, fds[0], runs);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return r;
}
