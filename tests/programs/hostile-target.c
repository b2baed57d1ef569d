/* SPDX-License-Identifier: MIT */
/* A traced process that turns on its tracer: it maps files and puts FIFOs where they were, maps a
 * thousand copies of a library, dlopens a decompression bomb, names itself with terminal escape
 * sequences. Driven by commands on stdin, one per line; answers "done" (or "error ...").
 *   hostile-target                    the command loop (prints "ready"): dlopen PATH, leak-lib,
 *                                     fifo PATH, dlopen-fifo PATH, map-files DIR, comm HEX, exit
 *   hostile-target --leak N           leak N blocks of 32 bytes from leak_block(), then exit 0 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "leak-util.h"

__attribute__((noinline)) static void *leak_block(void)
{
        return malloc(32);      /* site: leak_block */
}

static int leak_and_exit(long n)
{
        for (long i = 0; i < n; i++)
                require(leak_block());
        return 0;
}

/* Map every file in dir as code, and keep it mapped. */
static int map_files(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        int n = 0;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char path[4096];
                struct stat st;
                int fd;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0 ||
                    mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
                        closedir(d);
                        return -errno;
                }
                close(fd);
                n++;
        }
        closedir(d);
        return n;
}

static void *(*library_leak)(void);

/* dlopen path and keep its hostile_leak(), which "leak-lib" calls: a stack through the library
 * (never dlopen again what became a FIFO: that open would wait). */
static int open_library(const char *path)
{
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

        if (!h)
                return -ENOENT;
        library_leak = (void *(*)(void))dlsym(h, "hostile_leak");
        return library_leak ? 0 : -ENOENT;
}

static int hexval(char c)
{
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* prctl(PR_SET_NAME) from hex bytes: any bytes a process may choose. */
static int set_comm_hex(const char *hex)
{
        char name[16] = {};
        size_t n = 0;

        for (; hex[0] && hex[1] && n < sizeof(name) - 1; hex += 2)
                name[n++] = (char)(hexval(hex[0]) * 16 + hexval(hex[1]));
        return prctl(PR_SET_NAME, name) < 0 ? -errno : 0;
}

int main(int argc, char *argv[])
{
        char line[8192];

        setup_stdio();
        if (argc == 3 && strcmp(argv[1], "--leak") == 0)
                return leak_and_exit(atol(argv[2]));
        say("ready");
        while (fgets(line, sizeof(line), stdin)) {
                char *arg = strchr(line, ' ');
                int r = 0;

                line[strcspn(line, "\n")] = '\0';
                if (arg)
                        *arg++ = '\0';
                if (strcmp(line, "dlopen") == 0 && arg)
                        r = open_library(arg);
                else if (strcmp(line, "fifo") == 0 && arg)
                        /* the file stays mapped; a FIFO now stands where it was */
                        r = unlink(arg) < 0 || mkfifo(arg, 0644) < 0 ? -errno : 0;
                else if (strcmp(line, "dlopen-fifo") == 0 && arg)
                        /* both at once: whatever looks at it next finds the FIFO */
                        r = open_library(arg) < 0 || unlink(arg) < 0 || mkfifo(arg, 0644) < 0 ? -EIO : 0;
                else if (strcmp(line, "leak-lib") == 0 && library_leak)
                        r = library_leak() ? 0 : -ENOMEM;
                else if (strcmp(line, "map-files") == 0 && arg)
                        r = map_files(arg) < 0 ? -errno : 0;
                else if (strcmp(line, "comm") == 0 && arg)
                        r = set_comm_hex(arg);
                else if (strcmp(line, "exit") == 0)
                        return 0;
                else
                        r = -EINVAL;
                if (r < 0) {
                        printf("error %s\n", strerror(-r));
                        fflush(stdout);
                } else
                        say("done");
        }
        return 0;
}
