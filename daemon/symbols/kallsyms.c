/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel symbols: parse /proc/kallsyms text and resolve kernel addresses to symbol+offset (pure). */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kallsyms.h"

#define KERNEL_MODULE_NAME "[kernel]"
/* Distinct modules a table names; the kernel image is 0. Past this, parsing fails (-E2BIG). */
#define KALLSYMS_MODULES_MAX 65536U
/* /proc/kallsyms is a few MiB; refuse to read anything absurdly larger. */
#define KALLSYMS_FILE_MAX (256U * 1024U * 1024U)

struct ksym {
        uint64_t addr;
        const char *name;       /* points into text */
        uint32_t module;        /* index into modules */
        bool text;              /* a function (t, T, w, W); other symbols only bound the one before */
        bool global;
        uint32_t order;         /* line number: keeps file order among equal addresses */
};

struct kallsyms {
        char *text;             /* the parsed copy, NUL-split into names */
        struct ksym *syms;      /* sorted by address */
        size_t n;
        char **modules;         /* "[kernel]", "[bpf]", ...: owned */
        size_t n_modules;
};

struct kallsyms *kallsyms_free(struct kallsyms *k)
{
        if (!k)
                return NULL;
        for (size_t i = 0; i < k->n_modules; i++)
                free(k->modules[i]);
        free(k->modules);
        free(k->syms);
        free(k->text);
        free(k);
        return NULL;
}

size_t kallsyms_count(const struct kallsyms *k)
{
        return k ? k->n : 0;
}

static int module_index(struct kallsyms *k, const char *name, uint32_t *ret)
{
        char **n;

        /* Modules come in runs of lines: the last one named is the likeliest. */
        for (size_t i = k->n_modules; i > 0; i--)
                if (strcmp(k->modules[i - 1], name) == 0) {
                        *ret = (uint32_t)(i - 1);
                        return 0;
                }
        if (k->n_modules >= KALLSYMS_MODULES_MAX)
                return -E2BIG;
        n = realloc(k->modules, (k->n_modules + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        k->modules = n;
        k->modules[k->n_modules] = strdup(name);
        if (!k->modules[k->n_modules])
                return -ENOMEM;
        *ret = (uint32_t)k->n_modules++;
        return 0;
}

static bool is_hex(char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* One line, NUL-terminated and without its newline: "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MOD]". */
static int parse_line(struct kallsyms *k, char *line, struct ksym *ret)
{
        char *p = line, *end, *name, *module;
        unsigned long long addr;
        char type;
        int r;

        if (!is_hex(*p))
                return -EINVAL;
        errno = 0;
        addr = strtoull(p, &end, 16);
        if (errno != 0 || end == p || *end != ' ')
                return -EINVAL;
        p = end + 1;
        type = *p;
        if (!type || p[1] != ' ' || !p[2])
                return -EINVAL;
        name = p + 2;
        module = strchr(name, '\t');
        if (module) {
                size_t len;

                *module++ = '\0';
                len = strlen(module);
                if (len < 3 || module[0] != '[' || module[len - 1] != ']')
                        return -EINVAL;
        }
        if (!*name || strchr(name, ' '))
                return -EINVAL;
        *ret = (struct ksym) {
                .addr = addr,
                .name = name,
                .text = type == 't' || type == 'T' || type == 'w' || type == 'W',
                .global = type == 'T' || type == 'W',
        };
        if (module) {
                r = module_index(k, module, &ret->module);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
        const struct ksym *x = a, *y = b;

        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        /* Among aliases, functions first, global ones before local ones, then file order. */
        if (x->text != y->text)
                return x->text ? -1 : 1;
        if (x->global != y->global)
                return x->global ? -1 : 1;
        return x->order < y->order ? -1 : x->order > y->order;
}

int kallsyms_parse_string(const char *text, struct kallsyms **ret)
{
        _cleanup_(kallsyms_freep) struct kallsyms *k = NULL;
        size_t cap = 0, lines = 0;
        bool any_address = false;
        uint32_t kernel;
        char *line;
        int r;

        assert(text);
        assert(ret);
        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        k->text = strdup(text);
        if (!k->text)
                return -ENOMEM;
        r = module_index(k, KERNEL_MODULE_NAME, &kernel);
        if (r < 0)
                return r;
        for (line = k->text; *line; lines++) {
                char *nl = strchr(line, '\n');
                struct ksym s;

                if (nl)
                        *nl = '\0';
                r = parse_line(k, line, &s);
                if (r < 0)
                        return r;
                if (k->n == cap) {
                        size_t ncap = cap ? cap * 2 : 4096;
                        struct ksym *n = realloc(k->syms, ncap * sizeof(*n));

                        if (!n)
                                return -ENOMEM;
                        k->syms = n;
                        cap = ncap;
                }
                s.order = (uint32_t)lines;
                any_address = any_address || s.addr != 0;
                k->syms[k->n++] = s;
                if (!nl)
                        break;
                line = nl + 1;
        }
        if (k->n == 0)
                return -ENODATA;
        if (!any_address)
                return -EPERM;
        qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
        *ret = TAKE_PTR(k);
        return 0;
}

int kallsyms_parse_file(const char *path, struct kallsyms **ret)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -1;
        size_t size = 0, cap = 0;

        assert(path);
        assert(ret);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* procfs files have no size: read until EOF. */
        for (;;) {
                ssize_t n;

                if (cap - size < 65536) {
                        char *t;

                        if (cap >= KALLSYMS_FILE_MAX)
                                return -EFBIG;
                        cap = cap ? cap * 2 : 4U * 1024U * 1024U;
                        t = realloc(text, cap + 1);
                        if (!t)
                                return -ENOMEM;
                        text = t;
                }
                n = read(fd, text + size, cap - size);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                size += (size_t)n;
        }
        if (!text)
                return -ENODATA;
        text[size] = '\0';
        return kallsyms_parse_string(text, ret);
}

/* The last symbol at or below addr, or NULL. */
static const struct ksym *floor_symbol(const struct kallsyms *k, uint64_t addr, size_t *ret_index)
{
        size_t lo = 0, hi = k->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (k->syms[mid].addr <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return NULL;
        /* Back to the first of the aliases at that address: the sort put the preferred one first. */
        lo--;
        while (lo > 0 && k->syms[lo - 1].addr == k->syms[lo].addr)
                lo--;
        *ret_index = lo;
        return &k->syms[lo];
}

int kallsyms_resolve(const struct kallsyms *k, uint64_t addr, bool is_return_address,
                     struct kallsyms_info *ret)
{
        uint64_t lookup = is_return_address && addr > 0 ? addr - 1 : addr;
        const struct ksym *s;
        size_t i, next;

        assert(ret);
        if (!k || !(s = floor_symbol(k, lookup, &i)) || !s->text)
                return -ENOENT;
        for (next = i + 1; next < k->n && k->syms[next].addr == s->addr; next++)
                ;
        if (next == k->n)
                return -ENOENT;         /* past the last symbol: nothing says where it ends */
        if (lookup >= k->syms[next].addr || lookup - s->addr >= KALLSYMS_MAX_SYMBOL_SIZE)
                return -ENOENT;
        *ret = (struct kallsyms_info) {
                .symbol = s->name,
                .offset = addr - s->addr,
                .module = k->modules[s->module],
        };
        return 0;
}
