/* SPDX-License-Identifier: GPL-2.0-only */
/* What examining an object file found, kept by file identity (bounded, shared between threads). */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include "object-cache.h"

struct object_key {
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime, ctime;   /* a file rewritten in place, or replaced on the same inode */
};

struct object_entry {
        bool used;
        struct object_key key;
        struct alloc_sites sites;
        struct elf_deps deps;
};

struct object_cache {
        pthread_mutex_t lock;
        struct object_entry entries[OBJECT_CACHE_ENTRIES];
        size_t next;                    /* the slot the next new entry takes (the oldest's) */
        size_t n;
};

static struct object_key key_of(const struct stat *st)
{
        return (struct object_key) { .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
                                     .mtime = st->st_mtim, .ctime = st->st_ctim };
}

static bool same_key(const struct object_key *a, const struct object_key *b)
{
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
               a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
               a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static void entry_done(struct object_entry *e)
{
        if (e->used) {
                alloc_sites_done(&e->sites);
                elf_deps_done(&e->deps);
        }
        *e = (struct object_entry) {};
}

/* With the lock held. */
static struct object_entry *find(struct object_cache *c, const struct object_key *k)
{
        for (size_t i = 0; i < OBJECT_CACHE_ENTRIES; i++)
                if (c->entries[i].used && same_key(&c->entries[i].key, k))
                        return &c->entries[i];
        return NULL;
}

int object_cache_new(struct object_cache **ret)
{
        struct object_cache *c = calloc(1, sizeof(*c));

        assert(ret);
        if (!c)
                return -ENOMEM;
        pthread_mutex_init(&c->lock, NULL);
        *ret = c;
        return 0;
}

struct object_cache *object_cache_free(struct object_cache *c)
{
        if (!c)
                return NULL;
        for (size_t i = 0; i < OBJECT_CACHE_ENTRIES; i++)
                entry_done(&c->entries[i]);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}

int object_cache_get(struct object_cache *c, const struct stat *st, struct alloc_sites *sites,
                     struct elf_deps *deps)
{
        struct object_key k = key_of(st);
        const struct object_entry *e;
        int r = 0;

        assert(c);
        assert(sites);
        assert(deps);
        pthread_mutex_lock(&c->lock);
        e = find(c, &k);
        if (e) {
                r = alloc_sites_copy(sites, &e->sites);
                if (r >= 0) {
                        r = elf_deps_copy(deps, &e->deps);
                        if (r < 0)
                                alloc_sites_done(sites);
                }
        }
        pthread_mutex_unlock(&c->lock);
        return r < 0 ? r : e != NULL;
}

int object_cache_put(struct object_cache *c, const struct stat *st, const struct alloc_sites *sites,
                     const struct elf_deps *deps)
{
        struct object_entry fresh = { .used = true, .key = key_of(st) };
        struct object_entry *slot;
        int r;

        assert(c);
        assert(sites);
        assert(deps);
        r = alloc_sites_copy(&fresh.sites, sites);
        if (r < 0)
                return r;
        r = elf_deps_copy(&fresh.deps, deps);
        if (r < 0) {
                alloc_sites_done(&fresh.sites);
                return r;
        }
        pthread_mutex_lock(&c->lock);
        slot = find(c, &fresh.key);
        if (!slot) {
                slot = &c->entries[c->next];
                c->next = (c->next + 1) % OBJECT_CACHE_ENTRIES;
                c->n += !slot->used;
        }
        entry_done(slot);
        *slot = fresh;
        pthread_mutex_unlock(&c->lock);
        return 0;
}

size_t object_cache_size(struct object_cache *c)
{
        size_t n;

        assert(c);
        pthread_mutex_lock(&c->lock);
        n = c->n;
        pthread_mutex_unlock(&c->lock);
        return n;
}
