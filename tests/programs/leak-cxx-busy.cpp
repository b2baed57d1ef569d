// SPDX-License-Identifier: MIT
// A C++ service allocating all the time, attached to mid-flight: main -> busy_caller() ->
// leak_busy() -> new char[24], one every few microseconds, each kept (a leak). Whatever moment
// the attach lands in, every block recorded must name leak_busy() first, never busy_caller()
// (what a walk from inside operator new by frame pointer would name: it skips the operator's
// caller). Built with frame pointers.
// Protocol: print "ready" once allocating, run until a line or EOF on stdin, print "done".
#include <atomic>
#include <pthread.h>
#include <unistd.h>

extern "C" {
#include "leak-util.h"
}

#define noinline __attribute__((noinline))

static std::atomic<bool> stop;
static char *volatile last;

noinline void leak_busy()
{
        last = new char[24];            // site: leak_busy
}

noinline void busy_caller()
{
        for (int i = 0; i < 64; i++)
                leak_busy();
}

static void *allocate(void *)
{
        while (!stop.load())
                busy_caller();
        return nullptr;
}

int main()
{
        pthread_t thread;

        setup_stdio();
        require(pthread_create(&thread, nullptr, allocate, nullptr) == 0);
        say("ready");
        (void)wait_line();
        stop.store(true);
        require(pthread_join(thread, nullptr) == 0);
        say("done");
        (void)wait_line();
        return 0;
}
