/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether a user could ptrace a process: the status lines parsed, the kernel's rule applied
 * (every id the user's, dumpable, Yama's scope), and this very process read. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "proc-creds.h"
#include "test-util.h"

static const char STATUS[] = "Name:\tleaky\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t42\n"
                             "Uid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\nFDSize:\t64\n";

static void status_lines_parse(void)
{
        struct proc_creds c = {};

        ASSERT_EQ(proc_creds_parse(STATUS, &c), 0);
        ASSERT_EQ(c.uid[0], 1000);
        ASSERT_EQ(c.uid[3], 1000);
        ASSERT_EQ(c.gid[1], 100);
        ASSERT_EQ(proc_creds_parse("Name:\tx\nUid:\t1\t2\t3\t4\n", &c), -EINVAL);     /* no Gid: */
        ASSERT_EQ(proc_creds_parse("Uid:\t1\t2\nGid:\t1\t1\t1\t1\n", &c), -EINVAL);   /* cut short */
        ASSERT_EQ(proc_creds_parse("Uid:\t1\t1\t1\t99999999999\nGid:\t1\t1\t1\t1\n", &c), -EINVAL);
}

static void the_kernel_s_rule(void)
{
        struct proc_creds c = { .uid = { 1000, 1000, 1000, 1000 }, .gid = { 100, 100, 100, 100 }, .dumpable = true };

        ASSERT_TRUE(proc_creds_ptrace_refusal(&c, 1000, 100, 0, false) == NULL);
        ASSERT_TRUE(proc_creds_ptrace_refusal(&c, 1001, 100, 0, false) != NULL);        /* another user */
        ASSERT_TRUE(proc_creds_ptrace_refusal(&c, 1000, 101, 0, false) != NULL);        /* another group */
        c.uid[2] = 0;                                                                   /* saved set-user-ID root */
        ASSERT_TRUE(proc_creds_ptrace_refusal(&c, 1000, 100, 0, false) != NULL);
        c.uid[2] = 1000;
        c.dumpable = false;
        ASSERT_TRUE(proc_creds_ptrace_refusal(&c, 1000, 100, 0, false) != NULL);
        c.dumpable = true;
        /* Yama: 1 its own descendants, 2 and 3 none */
        ASSERT_TRUE(proc_creds_ptrace_refusal(&c, 1000, 100, 1, false) != NULL);
        ASSERT_TRUE(proc_creds_ptrace_refusal(&c, 1000, 100, 1, true) == NULL);
        ASSERT_TRUE(proc_creds_ptrace_refusal(&c, 1000, 100, 2, true) != NULL);
        ASSERT_TRUE(proc_creds_ptrace_refusal(&c, 1000, 100, 3, true) != NULL);
}

static void this_process_is_read(void)
{
        struct proc_creds c;

        ASSERT_EQ(proc_creds_read(getpid(), &c), 0);
        ASSERT_EQ(c.uid[0], getuid());
        ASSERT_EQ(c.uid[1], geteuid());
        ASSERT_EQ(c.gid[0], getgid());
        ASSERT_TRUE(c.dumpable);
        ASSERT_TRUE(proc_creds_descends_from(getpid(), getppid()));
        ASSERT_TRUE(!proc_creds_descends_from(getppid(), getpid()));
        ASSERT_EQ(proc_creds_read(-5, &c), -ESRCH);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(status_lines_parse),
                TEST(the_kernel_s_rule),
                TEST(this_process_is_read),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
