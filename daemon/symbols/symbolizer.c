/* SPDX-License-Identifier: GPL-2.0-only */
/* Symbolizer: every file the targets map, shared by build ID, open within limits (least recently
 * used closed first), released with the last target that used it. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-file.h"
#include "elf-inspect.h"
#include "elf-symbols.h"
#include "macro.h"
#include "pair-table.h"
#include "string-set.h"
#include "symbolizer.h"

#define DEFAULT_MAX_OPEN_FILES 1024U
#define DEFAULT_MAX_BYTES (1ULL << 30)
#define DEFAULT_MAX_SECTION_BYTES (512ULL << 20)
/* A .gnu_debugdata (MiniDebugInfo) is a symbol table: a few megabytes at most in real files. */
#define MINIDEBUGINFO_MAX_BYTES (64ULL << 20)

/* The frames one address resolves to, innermost first, as cached. */
struct resolved_frames {
        size_t n;
        struct symbol_frame frames[];
};

/* One file's symbols, shared by every (dev, ino) with its build ID and size. */
struct image {
        struct symbolizer *owner;
        unsigned refs;                  /* files pointing here */
        struct elf_inspection inspection;
        char build_id[ELF_BUILD_ID_HEX_MAX];    /* inspection's, as hex ("": none) */
        uint64_t file_size;
        bool indexed;                   /* in owner->images_by_id */
        char *path;                     /* the name libdwfl gets: debuglinks are found beside it */
        uint64_t dev, ino;              /* the file it was opened from (and is reopened as) */
        pid_t source_pid;               /* where it is reopened from once closed */
        char *source_path;
        uint64_t source_start, source_end;
        bool use_dwarf;
        bool minidebuginfo_checked;     /* its .gnu_debugdata measured (at its first lookup) */
        bool refused;                   /* too large to read at all: its frames stay unnamed */
        struct elf_symbols *open;       /* NULL while closed */
        uint64_t open_bytes;            /* inflated debug sections it holds while open */
        bool debug_refusal_noted;
        struct pair_table resolved;     /* (file offset, is return address) → struct resolved_frames */
        struct string_set strings;      /* the names those hold: they outlive a close */
        uint64_t cache_bytes;
        struct image *newer, *older;    /* open images, most recently used at owner->newest */
        struct image *next_doomed;      /* released while read: freed at the last read's end */
};

/* A (dev, ino) some target maps. */
struct module_file {
        unsigned refs;
        struct image *image;            /* NULL: not ELF, or refused */
        int error;                      /* -ENOEXEC or -EFBIG when image is NULL */
};

struct symbolizer {
        pthread_mutex_t lock;           /* every call takes it: the loop registers, the worker reads */
        unsigned readers;               /* between symbolizer_read_begin() and _end() */
        struct image *doomed;           /* released meanwhile: their names are still being read */
        struct symbolizer_settings settings;
        struct pair_table files;        /* (dev, ino) → struct module_file */
        struct pair_table images_by_id; /* (build ID head, build ID tail ^ size) → struct image */
        struct image *newest, *oldest;  /* open images */
        unsigned n_open, n_images;
        uint64_t open_bytes;
        uint64_t cache_bytes;
        struct symbolizer_stats counters;
        /* What symbolizer_get_stats() returns, copied at each unlock: reading it never waits for
         * a lookup that is loading a large file's debug info. */
        pthread_mutex_t stats_lock;
        struct symbolizer_stats published;
};

/* Release s->lock, publishing the figures symbolizer_get_stats() reads. */
static void unlock(struct symbolizer *s)
{
        struct symbolizer_stats now = s->counters;

        now.files = s->files.n_used;
        now.images = s->n_images;
        now.open = s->n_open;
        now.max_open = s->settings.limits.max_open_files;
        now.open_bytes = s->open_bytes;
        now.cache_bytes = s->cache_bytes;
        pthread_mutex_lock(&s->stats_lock);
        s->published = now;
        pthread_mutex_unlock(&s->stats_lock);
        pthread_mutex_unlock(&s->lock);
}

static void note(struct symbolizer *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct symbolizer *s, const char *fmt, ...)
{
        _cleanup_free_ char *message = NULL;
        va_list ap;
        int r;

        if (!s->settings.note)
                return;
        va_start(ap, fmt);
        r = vasprintf(&message, fmt, ap);
        va_end(ap);
        if (r >= 0)
                s->settings.note(s->settings.userdata, message);
}

static void limits_or_defaults(struct symbolizer_limits *l)
{
        if (l->max_open_files == 0)
                l->max_open_files = DEFAULT_MAX_OPEN_FILES;
        if (l->max_bytes == 0)
                l->max_bytes = DEFAULT_MAX_BYTES;
        if (l->max_section_bytes == 0)
                l->max_section_bytes = DEFAULT_MAX_SECTION_BYTES;
}

int symbolizer_new(const struct symbolizer_settings *settings, struct symbolizer **ret)
{
        struct symbolizer *s;

        if (!ret)
                return -EINVAL;
        /* Tells libelf which ELF version we speak; it fails only on a broken libelf. */
        if (elf_version(EV_CURRENT) == EV_NONE)
                return -ELIBBAD;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        if (settings)
                s->settings = *settings;
        limits_or_defaults(&s->settings.limits);
        pthread_mutex_init(&s->lock, NULL);
        pthread_mutex_init(&s->stats_lock, NULL);
        pthread_mutex_lock(&s->lock);
        unlock(s);                      /* the first figures published */
        *ret = s;
        return 0;
}

static void lru_unlink(struct symbolizer *s, struct image *im)
{
        if (im->newer)
                im->newer->older = im->older;
        else
                s->newest = im->older;
        if (im->older)
                im->older->newer = im->newer;
        else
                s->oldest = im->newer;
        im->newer = im->older = NULL;
}

static void lru_push_newest(struct symbolizer *s, struct image *im)
{
        im->older = s->newest;
        im->newer = NULL;
        if (s->newest)
                s->newest->newer = im;
        s->newest = im;
        if (!s->oldest)
                s->oldest = im;
}

static void image_close(struct image *im)
{
        struct symbolizer *s = im->owner;

        if (!im->open)
                return;
        lru_unlink(s, im);
        im->open = elf_symbols_close(im->open);
        s->n_open--;
        s->open_bytes -= im->open_bytes;
        im->open_bytes = 0;
}

/* Close the least recently used images, never keep, until the limits hold with room for
 * incoming more bytes and one more file (when opening). */
static void enforce_limits(struct symbolizer *s, const struct image *keep, bool opening, uint64_t incoming)
{
        const struct symbolizer_limits *l = &s->settings.limits;

        while (s->oldest && (s->n_open + opening > l->max_open_files ||
                             s->open_bytes + incoming > l->max_bytes)) {
                struct image *victim = s->oldest;

                if (victim == keep) {
                        if (!victim->newer)
                                break;
                        victim = victim->newer;
                }
                image_close(victim);
                s->counters.closed_for_limits++;
        }
}

static void resolved_free(void *p)
{
        free(p);
}

static struct image *image_free(struct image *im)
{
        if (!im)
                return NULL;
        image_close(im);
        pair_table_done(&im->resolved, resolved_free);
        im->owner->cache_bytes -= im->cache_bytes + im->strings.bytes;
        string_set_done(&im->strings);
        free(im->path);
        free(im->source_path);
        free(im);
        return NULL;
}

/* The key images are shared under: their build ID (at least 16 bytes in practice: SHA-1 is 20)
 * with the file's size. */
static void image_key(const struct elf_inspection *in, uint64_t size, uint64_t *a, uint64_t *b)
{
        uint64_t head = 0, tail = 0;

        memcpy(&head, in->build_id, MIN(in->build_id_len, (size_t)8));
        if (in->build_id_len > 8)
                memcpy(&tail, in->build_id + 8, MIN(in->build_id_len - 8, (size_t)8));
        *a = head;
        *b = tail ^ size;
}

static bool image_matches(const struct image *im, const struct elf_inspection *in, uint64_t size)
{
        return im->file_size == size && im->inspection.build_id_len == in->build_id_len &&
               memcmp(im->inspection.build_id, in->build_id, in->build_id_len) == 0;
}

static void image_set_source(struct image *im, const struct symbol_source *src)
{
        char *path;

        if (!src || !src->path || !(path = strdup(src->path)))
                return;
        free(im->source_path);
        im->source_path = path;
        im->source_pid = src->pid;
        im->source_start = src->start;
        im->source_end = src->end;
}

/* Open im's symbols from fd, within the limits. */
static int image_open(struct image *im, int fd)
{
        struct symbolizer *s = im->owner;
        int r;

        enforce_limits(s, im, true, 0);
        r = elf_symbols_open(fd, &(struct elf_symbols_params) {
                .path = im->path,
                .dev = im->dev,
                .ino = im->ino,
                .inspection = &im->inspection,
                .use_dwarf = im->use_dwarf,
                .max_section_bytes = s->settings.limits.max_section_bytes,
                .max_debug_bytes = s->settings.limits.max_bytes,
        }, &im->open);
        if (r < 0)
                return r;
        s->n_open++;
        lru_push_newest(s, im);
        im->open_bytes = im->use_dwarf ? im->inspection.inflated_debug_bytes : 0;
        s->open_bytes += im->open_bytes;
        enforce_limits(s, im, false, 0);
        return 0;
}

/* Reopen a closed image from where it was registered last. */
static int image_reopen(struct image *im)
{
        struct symbolizer *s = im->owner;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!s->settings.reopen || !im->source_path)
                return -ESTALE;
        fd = s->settings.reopen(s->settings.userdata, im->dev, im->ino, &(struct symbol_source) {
                .pid = im->source_pid, .path = im->source_path,
                .start = im->source_start, .end = im->source_end,
        });
        if (fd < 0) {
                s->counters.reopen_failed++;
                return fd;
        }
        r = image_open(im, fd);
        if (r < 0) {
                s->counters.reopen_failed++;
                return r;
        }
        s->counters.reopened++;
        return 0;
}

/* Read what the file on fd would cost and what it is, before libdw sees it. */
static int inspect_fd(int fd, struct elf_inspection *ret, uint64_t *ret_size)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOEXEC;
        r = elf_file_open(fd, &elf);
        if (r < 0)
                return r;
        r = elf_inspect(elf, ret);
        if (r < 0)
                return r;
        if (!ret->loadable)
                return -ENOEXEC;
        *ret_size = st.st_size;
        return 0;
}

/* A new image for the file on fd, or -ENOEXEC / -EFBIG / -errno. */
static int image_new(struct symbolizer *s, int fd, uint64_t dev, uint64_t ino, const char *path,
                     const struct elf_inspection *in, uint64_t size, struct image **ret)
{
        const struct symbolizer_limits *l = &s->settings.limits;
        struct image *im;
        int r;

        im = calloc(1, sizeof(*im));
        if (!im)
                return -ENOMEM;
        im->owner = s;
        im->inspection = *in;
        elf_inspect_build_id_hex(in->build_id, in->build_id_len, im->build_id);
        im->file_size = size;
        im->dev = dev;
        im->ino = ino;
        im->path = strdup(path);
        if (!im->path) {
                free(im);
                return -ENOMEM;
        }
        im->use_dwarf = in->largest_inflated_bytes <= l->max_section_bytes &&
                        in->inflated_debug_bytes <= l->max_bytes;
        if (!im->use_dwarf) {
                s->counters.refused++;
                note(s, "%s: its debug sections inflate to %" PRIu64 " MiB (one to %" PRIu64 " MiB), over "
                     "symbols_max_section_mb or symbols_max_mb: its frames get names, not file:line",
                     path, in->inflated_debug_bytes >> 20, in->largest_inflated_bytes >> 20);
        }
        r = image_open(im, fd);
        if (r < 0) {
                image_free(im);
                return r;
        }
        s->n_images++;
        *ret = im;
        return 0;
}

/* The image for the file on fd: one already open with its build ID and size, or a new one. */
static int image_get(struct symbolizer *s, int fd, uint64_t dev, uint64_t ino, const char *path,
                     struct image **ret)
{
        struct elf_inspection in;
        struct image *im;
        uint64_t size = 0, a = 0, b = 0;
        int r;

        r = inspect_fd(fd, &in, &size);
        if (r < 0)
                return r;
        if (in.build_id_len > 0) {
                image_key(&in, size, &a, &b);
                im = pair_table_get(&s->images_by_id, a, b);
                if (im && image_matches(im, &in, size)) {
                        *ret = im;
                        return 0;
                }
        }
        r = image_new(s, fd, dev, ino, path, &in, size, &im);
        if (r < 0)
                return r;
        /* The first image with a key is the one shared (one whose key collides stays apart). */
        if (in.build_id_len > 0 && !pair_table_get(&s->images_by_id, a, b) &&
            pair_table_put(&s->images_by_id, a, b, im) >= 0)
                im->indexed = true;
        *ret = im;
        return 0;
}

static void image_unref(struct image *im)
{
        struct symbolizer *s = im->owner;
        uint64_t a, b;

        if (--im->refs > 0)
                return;
        if (im->indexed) {
                image_key(&im->inspection, im->file_size, &a, &b);
                pair_table_remove(&s->images_by_id, a, b);
        }
        s->n_images--;
        image_close(im);        /* its fd and mapping go now */
        if (s->readers > 0) {
                /* A report being built may hold names it resolved: they go when it is done. */
                im->next_doomed = s->doomed;
                s->doomed = im;
                return;
        }
        image_free(im);
}

static void free_doomed(struct symbolizer *s)
{
        while (s->doomed) {
                struct image *im = s->doomed;

                s->doomed = im->next_doomed;
                image_free(im);
        }
}

void symbolizer_read_begin(struct symbolizer *s)
{
        assert(s);
        pthread_mutex_lock(&s->lock);
        s->readers++;
        unlock(s);
}

void symbolizer_read_end(struct symbolizer *s)
{
        assert(s);
        pthread_mutex_lock(&s->lock);
        if (--s->readers == 0)
                free_doomed(s);
        unlock(s);
}

bool symbolizer_has_module(struct symbolizer *s, uint64_t dev, uint64_t ino)
{
        bool known;

        if (!s)
                return false;
        pthread_mutex_lock(&s->lock);
        known = pair_table_get(&s->files, dev, ino);
        unlock(s);
        return known;
}

/* An image image_get() gave that no file came to hold (refs 0): forget and free it. */
static void image_drop_unused(struct symbolizer *s, struct image *im)
{
        if (!im || im->refs > 0)
                return;
        s->n_images--;
        if (im->indexed) {
                uint64_t a, b;

                image_key(&im->inspection, im->file_size, &a, &b);
                pair_table_remove(&s->images_by_id, a, b);
        }
        image_free(im);
}

static int add_module(struct symbolizer *s, uint64_t dev, uint64_t ino, int fd, const char *path,
                      const struct symbol_source *src)
{
        struct module_file *f;
        struct image *im = NULL;
        int r;

        f = pair_table_get(&s->files, dev, ino);
        if (f) {
                f->refs++;
                if (f->image)
                        image_set_source(f->image, src);
                return f->image ? 0 : f->error;
        }
        if (s->files.n_used >= SYMBOLIZER_MODULES_MAX)
                return -ENOSPC;
        r = image_get(s, fd, dev, ino, path, &im);
        if (r < 0 && r != -ENOEXEC && r != -EFBIG)
                return r;
        if (r < 0)
                im = NULL;
        f = calloc(1, sizeof(*f));
        if (!f || pair_table_put(&s->files, dev, ino, f) < 0) {
                free(f);
                image_drop_unused(s, im);
                return -ENOMEM;
        }
        *f = (struct module_file) { .refs = 1, .image = im, .error = r < 0 ? r : 0 };
        if (im) {
                im->refs++;
                image_set_source(im, src);
        }
        return f->error;
}

int symbolizer_add_module(struct symbolizer *s, uint64_t dev, uint64_t ino, int fd, const char *path,
                          const struct symbol_source *src)
{
        int r;

        if (!s || fd < 0 || !path)
                return -EINVAL;
        pthread_mutex_lock(&s->lock);
        r = add_module(s, dev, ino, fd, path, src);
        unlock(s);
        return r;
}

void symbolizer_release_module(struct symbolizer *s, uint64_t dev, uint64_t ino)
{
        struct module_file *f;

        if (!s)
                return;
        pthread_mutex_lock(&s->lock);
        f = pair_table_get(&s->files, dev, ino);
        if (f && --f->refs == 0) {
                pair_table_remove(&s->files, dev, ino);
                if (f->image)
                        image_unref(f->image);
                free(f);
        }
        unlock(s);
}

/* Copy up to max of n frames out; when cut, the function holding the code is the one kept last. */
static void frames_copy_out(const struct symbol_frame *from, size_t n, struct symbol_frame *frames, size_t max,
                            size_t *n_frames)
{
        size_t k = MIN(n, max);

        if (k > 0) {
                memcpy(frames, from, (k - 1) * sizeof(frames[0]));
                frames[k - 1] = from[n - 1];
        }
        *n_frames = k;
}

/* Cache what an address resolved to, while the image's and the symbolizer's caches have room. */
static void image_cache(struct image *im, uint64_t file_offset, bool is_return_address,
                        const struct symbol_frame *frames, size_t n)
{
        struct symbolizer *s = im->owner;
        size_t bytes = sizeof(struct resolved_frames) + n * sizeof(frames[0]);
        struct resolved_frames *r;

        if (im->resolved.n_used >= SYMBOLIZER_CACHE_PER_MODULE_MAX ||
            s->cache_bytes + bytes > s->settings.limits.max_bytes)
                return;
        r = malloc(bytes);
        if (!r)
                return;
        r->n = n;
        memcpy(r->frames, frames, n * sizeof(frames[0]));
        if (pair_table_put(&im->resolved, file_offset, is_return_address, r) < 0) {
                free(r);
                return;
        }
        im->cache_bytes += bytes + 32;
        s->cache_bytes += bytes + 32;
}

/* Account for the debug file a lookup may just have found, and say if one was refused. */
static void image_after_lookup(struct image *im)
{
        struct symbolizer *s = im->owner;
        uint64_t debug_bytes = elf_symbols_debug_bytes(im->open), refused_bytes = 0;
        const char *refused = elf_symbols_refused_debug_file(im->open, &refused_bytes);

        uint64_t want = im->use_dwarf ? im->inspection.inflated_debug_bytes + debug_bytes : 0;

        if (want > im->open_bytes) {
                s->open_bytes += want - im->open_bytes;
                im->open_bytes = want;
                enforce_limits(s, im, false, 0);
        }
        if (refused && !im->debug_refusal_noted) {
                im->debug_refusal_noted = true;
                s->counters.refused++;
                note(s, "%s: its debug file %s inflates to %" PRIu64 " MiB, over symbols_max_section_mb or "
                     "symbols_max_mb: refused, its frames get names, not file:line",
                     im->path, refused, refused_bytes >> 20);
        }
}

/* A file with a .gnu_debugdata is measured at its first lookup, before libdwfl inflates it
 * (whole, for its symbol table): one inflating past MINIDEBUGINFO_MAX_BYTES is refused. */
static void image_check_minidebuginfo(struct image *im)
{
        struct symbolizer *s = im->owner;
        uint64_t bytes = 0;
        bool too_large = false;

        if (im->minidebuginfo_checked || !im->inspection.has_minidebuginfo)
                return;
        im->minidebuginfo_checked = true;
        if (elf_inspect_minidebuginfo(elf_symbols_elf(im->open), MINIDEBUGINFO_MAX_BYTES, &bytes, &too_large) < 0 ||
            !too_large)
                return;
        im->refused = true;
        s->counters.refused++;
        note(s, "%s: its .gnu_debugdata inflates past %" PRIu64 " MiB: refused, its frames stay unnamed",
             im->path, (uint64_t)MINIDEBUGINFO_MAX_BYTES >> 20);
}

static int resolve(struct symbolizer *s, uint64_t dev, uint64_t ino, uint64_t file_offset,
                   bool is_return_address, struct symbol_frame *frames, size_t max, size_t *n_frames)
{
        struct symbol_frame found[SYMBOLIZER_FRAMES_MAX];
        const struct resolved_frames *cached;
        struct module_file *f;
        struct image *im;
        size_t n = 0;
        int r;

        if (!s || !n_frames || (max > 0 && !frames))
                return -EINVAL;
        f = pair_table_get(&s->files, dev, ino);
        if (!f || !f->image)
                return -ENOENT;
        im = f->image;
        cached = pair_table_get(&im->resolved, file_offset, is_return_address);
        if (cached) {
                frames_copy_out(cached->frames, cached->n, frames, max, n_frames);
                return 0;
        }
        /* Closed to stay within the limits: open it again (its process may be gone: unnamed). */
        if (!im->refused && !im->open)
                (void)image_reopen(im);
        if (im->open)
                image_check_minidebuginfo(im);
        if (im->refused || !im->open) {
                if (max > 0)
                        frames[0] = (struct symbol_frame) {};
                *n_frames = max > 0;
                return 0;
        }
        lru_unlink(s, im);
        lru_push_newest(s, im);
        r = elf_symbols_lookup(im->open, file_offset, is_return_address, &im->strings, found,
                               ELEMENTSOF(found), &n);
        if (r < 0)
                return r;
        s->cache_bytes -= im->strings.bytes;    /* counted again below, grown */
        image_after_lookup(im);
        image_cache(im, file_offset, is_return_address, found, n);
        s->cache_bytes += im->strings.bytes;
        frames_copy_out(found, n, frames, max, n_frames);
        return 0;
}

int symbolizer_resolve(struct symbolizer *s, uint64_t dev, uint64_t ino, uint64_t file_offset,
                       bool is_return_address, struct symbol_frame *frames, size_t max, size_t *n_frames)
{
        int r;

        if (!s || !n_frames || (max > 0 && !frames))
                return -EINVAL;
        pthread_mutex_lock(&s->lock);
        r = resolve(s, dev, ino, file_offset, is_return_address, frames, max, n_frames);
        unlock(s);
        return r;
}

const char *symbolizer_build_id(struct symbolizer *s, uint64_t dev, uint64_t ino)
{
        const struct module_file *f;
        const char *id = NULL;

        if (!s)
                return NULL;
        pthread_mutex_lock(&s->lock);
        f = pair_table_get(&s->files, dev, ino);
        if (f && f->image && f->image->build_id[0])
                id = f->image->build_id;
        unlock(s);
        return id;
}

void symbolizer_set_limits(struct symbolizer *s, const struct symbolizer_limits *limits)
{
        assert(s);
        assert(limits);
        pthread_mutex_lock(&s->lock);
        s->settings.limits = *limits;
        limits_or_defaults(&s->settings.limits);
        enforce_limits(s, NULL, false, 0);
        unlock(s);
}

void symbolizer_get_stats(struct symbolizer *s, struct symbolizer_stats *ret)
{
        assert(s);
        assert(ret);
        pthread_mutex_lock(&s->stats_lock);
        *ret = s->published;
        pthread_mutex_unlock(&s->stats_lock);
}

static void file_release_image(void *p, void *userdata)
{
        struct module_file *f = p;

        if (f->image)
                image_unref(f->image);
        f->image = NULL;
}

struct symbolizer *symbolizer_free(struct symbolizer *s)
{
        if (!s)
                return NULL;
        /* Each file holds one reference on its image: the last one frees it. */
        s->readers = 0;
        pair_table_foreach(&s->files, file_release_image, NULL);
        free_doomed(s);
        pair_table_done(&s->files, free);
        pair_table_done(&s->images_by_id, NULL);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->stats_lock);
        free(s);
        return NULL;
}
