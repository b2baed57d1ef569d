// SPDX-License-Identifier: MIT
// The seed's C++ leak as it ships: -O2 -fomit-frame-pointer (tests/programs/meson.build), so only
// the unwind tables can walk main -> caller -> LeakLib::slowMemoryLeak(int) -> makeShape(long).
// Every function on the chain is noinline, and its arguments come from volatile variables so gcc
// makes no constprop/isra clone of it (the demangled names stay exact).
//
// Ground truth (tests/integration/test_unwind_chains.py keeps the same numbers):
//   LeakLib::slowMemoryLeak(int)  ROUNDS x new int[10]   (40 bytes each)
//                                 ROUNDS x new Record    (sizeof(Record) = 48 bytes each)
//   makeShape(long)               SHAPES = ROUNDS * SHAPES_PER_ROUND = 2000 x new Shape
//                                 (sizeof(Shape) = 32 bytes each), called from slowMemoryLeak
//   churn()                       new/delete, new[]/delete[] and malloc/free balanced: nothing
//   slowMemoryLeak's own balanced new/delete: nothing
// Protocol: print "ready", wait for a line ("go"), leak, print "done", wait for a line or EOF.
#include <cstdlib>
#include <new>

extern "C" {
#include "leak-util.h"
}

#define noinline __attribute__((noinline))

static const int ROUNDS = 20;
static const int SHAPES_PER_ROUND = 100;
static const int SHAPES = ROUNDS * SHAPES_PER_ROUND;

// Read at run time: no clone of the functions they are passed to is specialised on them.
static volatile int rounds_to_leak = ROUNDS;
static volatile int churn_rounds = 300;

void *volatile kept[2 * ROUNDS + SHAPES];
static int n_kept;

struct Shape {
        long id;
        double width, height;
        long sides;
};
static_assert(sizeof(Shape) == 32, "Shape is 32 bytes: the test's ground truth");

struct Record {
        long fields[6];
};
static_assert(sizeof(Record) == 48, "Record is 48 bytes: the test's ground truth");

static noinline void keep(void *p)
{
        require(p);
        require(n_kept < (int)(sizeof(kept) / sizeof(kept[0])));
        kept[n_kept++] = p;
}

noinline Shape *makeShape(long id)
{
        Shape *s = new Shape;                   // site: makeShape
        s->id = id;
        s->width = (double)id;
        s->height = (double)(id % 7);
        s->sides = 3 + id % 5;
        __asm__ volatile("" ::: "memory");
        return s;
}

namespace LeakLib {
noinline void slowMemoryLeak(int rounds)
{
        for (int r = 0; r < rounds; r++) {
                int *numbers = new int[10];             // site: slowMemoryLeak
                for (int i = 0; i < 10; ++i)
                        numbers[i] = i;
                keep(numbers);
                keep(new Record());                     // site: slowMemoryLeak
                for (int s = 0; s < SHAPES_PER_ROUND; s++)
                        keep(makeShape((long)r * SHAPES_PER_ROUND + s));
                delete new Record();                    // balanced
                __asm__ volatile("" ::: "memory");
        }
}
}  // namespace LeakLib

noinline int caller()
{
        LeakLib::slowMemoryLeak(rounds_to_leak);
        __asm__ volatile("" ::: "memory");      // no tail call: caller's frame stays
        return n_kept;
}

// Balanced churn in every form: must leave nothing outstanding.
noinline void churn(int rounds)
{
        for (int i = 0; i < rounds; i++) {
                Record *r = new Record();
                int *a = new int[1 + i % 64];
                void *m = malloc(16 + (size_t)i % 300);
                require(m);
                delete r;
                delete[] a;
                free(m);
                __asm__ volatile("" ::: "memory");
        }
}

int main()
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        churn(churn_rounds);
        require(caller() == 2 * ROUNDS + SHAPES);
        churn(churn_rounds);
        say("done");
        wait_line();
        return 0;
}
