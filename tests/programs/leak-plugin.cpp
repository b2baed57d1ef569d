// SPDX-License-Identifier: MIT
// The plugin leak-dlopen loads after memleakd attached: it leaks through new and malloc.
#include <cstdlib>

#define noinline __attribute__((noinline))

void *volatile plugin_keep[8];

struct Node {
        long fields[4];
};

noinline void plugin_new_leak()
{
        for (int i = 0; i < 3; i++)
                plugin_keep[i] = new Node();
}

extern "C" noinline void plugin_c_leak()
{
        for (int i = 0; i < 2; i++)
                plugin_keep[3 + i] = malloc(77);
}

extern "C" void plugin_leak()
{
        plugin_new_leak();
        plugin_c_leak();
        delete new Node();      // balanced
}
