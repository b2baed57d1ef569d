/* SPDX-License-Identifier: GPL-2.0-only */
/* What outlives the daemon in bpffs: the maps that hold what was recorded (reused at the next
 * load), the probe links that keep recording while no daemon runs, and the layout they were made
 * with (a different BPF object or map sizes: everything is removed and the daemon starts clean). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf-loader.h"
#include "macro.h"

struct bpf_object;

/* The subdirectory of the pin directory that holds the probe links. */
#define PINS_LINKS_SUBDIR "links"

/* What pins_open() found. */
enum pins_found {
        PINS_FOUND_NONE,        /* no maps pinned: a first start */
        PINS_FOUND_SAME,        /* maps pinned with this layout: they are reused */
        PINS_FOUND_CHANGED,     /* maps pinned with another layout (or none said): removed */
};

struct pins {
        char *dir;
        int dir_fd;
        int links_fd;           /* PINS_LINKS_SUBDIR */
        uint64_t layout;        /* of the object loaded */
};

/* The layout of the BPF object at these sizes: a hash of its ELF bytes and of the sizes. */
uint64_t pins_layout(const struct bpf_sizes *sizes);

/* Make dir (and its maps and links subdirectories) and compare what it holds with layout; a
 * different layout's pins are removed. The directory is locked while the pins live. -ENOTSUP when
 * dir is not on bpffs, -EBUSY when another daemon holds it, -errno. */
int pins_open(const char *dir, uint64_t layout, struct pins **ret, enum pins_found *found);
/* Have libbpf pin the maps a restart keeps under the directory when it loads obj, reusing those
 * pinned already. */
int pins_prepare_maps(struct pins *p, struct bpf_object *obj);
/* Record the layout, once the object is loaded with its maps pinned. */
int pins_write_layout(struct pins *p);
/* Remove every pin (maps, links, the layout): the probes whose links they held go, and the maps
 * with the last program using them. -errno of the first failure. */
int pins_clear(struct pins *p);
struct pins *pins_free(struct pins *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct pins *, pins_free)

/* pins_clear() on a directory that may not exist (memleakd --forget). 0 when nothing was there. */
int pins_forget(const char *dir);
