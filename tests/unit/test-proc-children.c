/* SPDX-License-Identifier: MIT */
/* proc-children: the pids of children files, each once; this process's own children. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "proc-children.h"
#include "test-util.h"

static void parses_pids_and_leaves_each_once(void)
{
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;

        ASSERT_EQ(proc_children_parse("56 12 34 ", &pids, &n), 0);
        ASSERT_EQ(proc_children_parse("34 78\n", &pids, &n), 0);
        ASSERT_EQ(proc_children_parse("", &pids, &n), 0);
        ASSERT_EQ(n, 5);
        n = proc_children_unique(pids, n);
        ASSERT_EQ(n, 4);
        ASSERT_EQ(pids[0], 12);
        ASSERT_EQ(pids[1], 34);
        ASSERT_EQ(pids[2], 56);
        ASSERT_EQ(pids[3], 78);
        ASSERT_EQ(proc_children_unique(pids, 0), 0);
}

static void refuses_words_that_are_no_pids(void)
{
        static const char *const bad[] = { "12 x", "0 ", "-5 ", "12a ", "99999999999 " };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ pid_t *pids = NULL;
                size_t n = 0;

                ASSERT_EQ(proc_children_parse(bad[i], &pids, &n), -EINVAL);
        }
}

static void lists_this_process_children(void)
{
        _cleanup_free_ pid_t *pids = NULL;
        pid_t kids[2];
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(kids); i++) {
                kids[i] = fork();
                ASSERT_TRUE(kids[i] >= 0);
                if (kids[i] == 0) {
                        pause();
                        _exit(0);
                }
        }
        ASSERT_EQ(proc_children(getpid(), &pids, &n), 0);
        for (size_t i = 0; i < ELEMENTSOF(kids); i++) {
                (void)kill(kids[i], SIGKILL);
                (void)waitpid(kids[i], NULL, 0);
        }
        ASSERT_EQ(n, 2);
        ASSERT_TRUE((pids[0] == kids[0] && pids[1] == kids[1]) || (pids[0] == kids[1] && pids[1] == kids[0]));
        ASSERT_EQ(proc_children(-1, &pids, &n), -ENOENT);
}

static const struct unit_test tests[] = {
        TEST(parses_pids_and_leaves_each_once),
        TEST(refuses_words_that_are_no_pids),
        TEST(lists_this_process_children),
};

int main(void)
{
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
