/* SPDX-License-Identifier: GPL-2.0-only */
/* Capabilities trimmed to memleakd's needs by the raw capget()/capset() calls: the daemon's whole
 * use of them is these two functions, which libcap would not make shorter. */
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "capabilities.h"
#include "macro.h"

static const int kept[] = {
        CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_SYSLOG,
};

static bool is_kept(int cap)
{
        for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                if (kept[i] == cap)
                        return true;
        return false;
}

static int get_sets(struct __user_cap_data_struct data[2])
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

        return syscall(SYS_capget, &h, data) < 0 ? -errno : 0;
}

/* Whether the calling thread has capability cap in its effective set. */
static bool have(int cap)
{
        struct __user_cap_data_struct data[2] = {};

        if (cap < 0 || cap >= 64 || get_sets(data) < 0)
                return false;
        return data[cap / 32].effective & (1U << (cap % 32));
}

int capabilities_trim(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = {};
        int last = CAP_LAST_CAP, r;

        /* the kernel's own last, which may be past this header's */
        while (last < 63 && prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0)
                last++;
        if (have(CAP_SETPCAP))
                for (int cap = 0; cap <= last; cap++)
                        if (!is_kept(cap) && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0 &&
                            prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
                                return -errno;
        (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        r = get_sets(data);
        if (r < 0)
                return r;
        for (int i = 0; i < 2; i++) {
                uint32_t keep = 0;

                for (int bit = 0; bit < 32; bit++)
                        if (is_kept(i * 32 + bit))
                                keep |= 1U << bit;
                data[i].permitted &= keep;
                data[i].effective &= keep;
                data[i].inheritable = 0;
        }
        return syscall(SYS_capset, &h, data) < 0 ? -errno : 0;
}
