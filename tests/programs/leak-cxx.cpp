// SPDX-License-Identifier: MIT
// The seed's C++ leak (main -> caller -> LeakLib::slowMemoryLeak() -> new int[10]) and every
// operator new/delete form; built with frame pointers and, as leak-cxx-nofp, -O2 without them.
//
// Ground truth (tests/integration/test_cxx.py keeps the same numbers):
//   LeakLib::slowMemoryLeak()  SLOW_LEAKS blocks of 10 * sizeof(int) = 40 bytes (new int[10])
//   leak_objects()             OBJECTS blocks of sizeof(Widget) = 56 bytes (new Widget)
//   leak_nothrow()             3 blocks of 72 bytes (new (std::nothrow) char[72])
//   leak_aligned()             2 blocks of sizeof(Aligned) = 128 bytes (new Aligned, align 64)
//   balanced_every_delete()    new/delete in every form: nothing outstanding
// Protocol: print "ready", wait for a line ("go"), leak, print "done", wait for EOF.
#include <cstdlib>
#include <new>

extern "C" {
#include "leak-util.h"
}

#define noinline __attribute__((noinline))

static const int SLOW_LEAKS = 12;
static const int OBJECTS = 5;

void *volatile keep[64];
static int n_keep;

struct Widget {
        long fields[7];
};

struct alignas(64) Aligned {
        char bytes[128];
};

namespace LeakLib {
noinline void slowMemoryLeak()
{
        for (int n = 0; n < SLOW_LEAKS; n++) {
                int *p = new int[10];   // site: slowMemoryLeak
                for (int i = 0; i < 10; ++i)
                        p[i] = i;
                keep[n_keep++] = p;
        }
}
}  // namespace LeakLib

noinline int caller()
{
        LeakLib::slowMemoryLeak();
        return 0;
}

noinline void leak_objects()
{
        for (int i = 0; i < OBJECTS; i++)
                keep[n_keep++] = new Widget();  // site: leak_objects
}

noinline void leak_nothrow()
{
        for (int i = 0; i < 3; i++)
                keep[n_keep++] = new (std::nothrow) char[72];   // site: leak_nothrow
}

noinline void leak_aligned()
{
        for (int i = 0; i < 2; i++)
                keep[n_keep++] = new Aligned();  // site: leak_aligned
}

noinline void balanced_every_delete()
{
        for (int round = 0; round < 50; round++) {
                Widget *w = new Widget();
                delete w;                                       // sized delete
                int *a = new int[round + 1];
                delete[] a;                                     // delete[]
                char *c = new (std::nothrow) char[33];
                operator delete[](c, std::nothrow);             // nothrow delete[]
                void *raw = operator new(200);
                operator delete(raw);                           // plain delete
                Aligned *al = new Aligned();
                delete al;                                      // sized + aligned delete
                Aligned *arr = new Aligned[2];
                delete[] arr;                                   // aligned delete[]
                void *ar = operator new(64, std::align_val_t(64), std::nothrow);
                operator delete(ar, std::align_val_t(64), std::nothrow);
                void *sz = operator new[](48);
                operator delete[](sz, 48);                      // sized delete[]
        }
}

int main()
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        caller();
        leak_objects();
        leak_nothrow();
        leak_aligned();
        balanced_every_delete();
        say("done");
        wait_line();
        return 0;
}
