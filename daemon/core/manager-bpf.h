/* SPDX-License-Identifier: GPL-2.0-only */
/* The manager's BPF object: sizes checked against what the machine can hold, opened, the kernel
 * target's programs this kernel cannot run turned off, loaded; and libbpf's messages logged. */
#pragma once

#include "bpf-loader.h"
#include "config.h"
#include "pins.h"

/* The maps' sizes config asks for. */
struct bpf_sizes manager_bpf_sizes(const struct memleakd_config *config);

/* Refuses (-ENOMEM) sizes the machine cannot hold; logs what goes wrong. With pins, the maps a
 * restart keeps are pinned there, or reused if they are already. */
int manager_bpf_load(const struct bpf_sizes *sizes, struct pins *pins, struct memleak_bpf **ret);
