/* SPDX-License-Identifier: GPL-2.0-only */
/* proc_tasks_list() on this very process: its threads, each once; and a pid that is gone. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "proc-tasks.h"
#include "test-util.h"

#define THREADS 3

static pthread_barrier_t started, done;
static pid_t thread_ids[THREADS];

static void *thread_main(void *arg)
{
        thread_ids[(long)arg] = (pid_t)syscall(SYS_gettid);
        pthread_barrier_wait(&started);
        pthread_barrier_wait(&done);
        return NULL;
}

static bool listed(const pid_t *tids, size_t n, pid_t tid)
{
        size_t seen = 0;

        for (size_t i = 0; i < n; i++)
                seen += tids[i] == tid;
        return seen == 1;
}

static void lists_every_thread_of_this_process_once(void)
{
        pthread_t threads[THREADS];
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;

        ASSERT_EQ(pthread_barrier_init(&started, NULL, THREADS + 1), 0);
        ASSERT_EQ(pthread_barrier_init(&done, NULL, THREADS + 1), 0);
        for (long i = 0; i < THREADS; i++)
                ASSERT_EQ(pthread_create(&threads[i], NULL, thread_main, (void *)i), 0);
        pthread_barrier_wait(&started);
        ASSERT_EQ(proc_tasks_list(getpid(), &tids, &n), 0);
        pthread_barrier_wait(&done);
        for (int i = 0; i < THREADS; i++)
                ASSERT_EQ(pthread_join(threads[i], NULL), 0);
        ASSERT_EQ(n, THREADS + 1);
        ASSERT_TRUE(listed(tids, n, getpid()));
        for (int i = 0; i < THREADS; i++)
                ASSERT_TRUE(listed(tids, n, thread_ids[i]));
}

static void a_process_that_is_gone_is_esrch(void)
{
        pid_t *tids = NULL;
        size_t n = 0;
        pid_t child = fork();

        ASSERT_TRUE(child >= 0);
        if (child == 0)
                _exit(0);
        ASSERT_EQ(waitpid(child, NULL, 0), child);
        ASSERT_EQ(proc_tasks_list(child, &tids, &n), -ESRCH);
        ASSERT_TRUE(tids == NULL);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(lists_every_thread_of_this_process_once),
                TEST(a_process_that_is_gone_is_esrch),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
