/* SPDX-License-Identifier: GPL-2.0-only */
/* The systemd watchdog across start-up: stretched while memleakd starts, the unit's from READY on. */
#include <assert.h>
#include <inttypes.h>
#include <stdbool.h>
#include <systemd/sd-daemon.h>
#include "log.h"
#include "macro.h"
#include "watchdog.h"

/* systemd arms a service's watchdog when it forks it, not when the service is ready: with
 * WatchdogSec=1s, a start-up longer than a second was killed ("failed to send watchdog ping").
 * WATCHDOG_USEC= overrides the period until the next override, so start-up gets its own. */
uint64_t watchdog_stretch_for_startup(void)
{
        uint64_t period_usec = 0;
        int r;

        r = sd_watchdog_enabled(false, &period_usec);
        if (r <= 0)
                return 0;
        r = sd_notifyf(false, "WATCHDOG_USEC=%" PRIu64, MAX(period_usec, (uint64_t)STARTUP_WATCHDOG_USEC));
        if (r < 0)
                log_warning_errno(r, "Cannot stretch the watchdog for start-up, ignoring: %m");
        return period_usec;
}

void watchdog_notify_ready(uint64_t period_usec, const char *status)
{
        int r;

        assert(status);
        if (period_usec > 0)
                r = sd_notifyf(false, "READY=1\nSTATUS=%s\nWATCHDOG_USEC=%" PRIu64 "\nWATCHDOG=1",
                               status, period_usec);
        else
                r = sd_notifyf(false, "READY=1\nSTATUS=%s", status);
        if (r < 0)
                log_warning_errno(r, "Cannot tell systemd that memleakd is ready, ignoring: %m");
}
