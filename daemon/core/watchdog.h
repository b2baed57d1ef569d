/* SPDX-License-Identifier: GPL-2.0-only */
/* The systemd watchdog across start-up: stretched while memleakd starts, the unit's from READY on. */
#pragma once

#include <stdint.h>

/* The longest start-up the watchdog waits for: verifying the BPF programs takes about a second on
 * an idle machine and several on a loaded one. systemd's TimeoutStartSec= still bounds start-up. */
#define STARTUP_WATCHDOG_USEC (120ULL * 1000 * 1000)

/* When systemd watches memleakd (WatchdogSec=), ask it to wait up to STARTUP_WATCHDOG_USEC (or the
 * unit's period, if longer) for the next ping: nothing pings while the BPF programs load. Call it
 * first thing. Returns the unit's period in µs, 0 when there is no watchdog. */
uint64_t watchdog_stretch_for_startup(void);

/* Send READY=1 with STATUS=status, restoring the unit's watchdog period (from
 * watchdog_stretch_for_startup()) and pinging in the same message. */
void watchdog_notify_ready(uint64_t period_usec, const char *status);
