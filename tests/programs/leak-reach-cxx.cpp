// SPDX-License-Identifier: MIT
// A small C++ program on tcmalloc (tests/integration/test_reachability.py): two real leaks, and
// what its runtime allocates at start-up for good (libstdc++'s emergency exception pool, stdout's
// buffer) that a scan at exit must call still reachable, as valgrind does.
//   lose_ints()    2 x new int[10] = 2 x 40 bytes, their pointer overwritten: definitely lost
//   lose_string()  new char[64], its pointer dropped: definitely lost
// It prints a line (stdout's buffer is allocated then) and exits.
#include <cstdio>
#include <cstring>

#define noinline __attribute__((noinline))

int *volatile last_ints;

noinline void lose_ints()
{
        for (int i = 0; i < 2; i++)
                last_ints = new int[10];
        last_ints = nullptr;
}

noinline void lose_string()
{
        char *volatile s = new char[64];

        strcpy(s, "lost");
        s = nullptr;
}

int main()
{
        printf("hello from C++\n");
        lose_ints();
        lose_string();
        fflush(stdout);
        return 0;
}
