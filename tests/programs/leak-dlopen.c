/* SPDX-License-Identifier: MIT */
/* A C program (no libstdc++ of its own) that dlopen()s a C++ plugin after memleakd attached, so
 * the plugin and libstdc++ are mapped only then; the plugin leaks through new and malloc.
 *
 * Ground truth (tests/integration/test_dlopen.py; the plugin is leak-plugin.cpp):
 *   plugin_new_leak()   3 x new Node = 32 bytes
 *   plugin_c_leak       2 x malloc(77)
 * Protocol: print "ready", wait for a line, dlopen the plugin, print "loaded", wait for a line,
 * leak through it, print "done", wait for EOF. */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "leak-util.h"

int main(void)
{
        static char exe[PATH_MAX], plugin_path[PATH_MAX + 32];
        ssize_t n;
        void *plugin;
        void (*leak)(void);

        setup_stdio();
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        require(n > 0);
        exe[n] = 0;
        snprintf(plugin_path, sizeof(plugin_path), "%s/libleak-plugin.so", dirname(exe));
        say("ready");
        if (wait_line() < 0)
                return 1;
        plugin = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
        require(plugin);
        leak = (void (*)(void))dlsym(plugin, "plugin_leak");
        require(leak);
        say("loaded");
        if (wait_line() < 0)
                return 1;
        leak();
        say("done");
        wait_line();
        return 0;
}
