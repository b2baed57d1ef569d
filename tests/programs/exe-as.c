/* SPDX-License-Identifier: MIT */
/* A process whose executable, as the kernel names it (/proc/PID/exe), is FILE, where this kernel
 * will not run FILE itself: a kernel without 32-bit x86 support refuses to exec i386-pause, and
 * memleakd's refusal of a 32-bit process is still to be tested there. Run through the dynamic
 * loader (ld.so exe-as FILE), whose mappings are then the executable's: it unmaps them (every
 * symbol was bound at load, -z now, so nothing calls into ld.so again), names FILE as its
 * executable with prctl(PR_SET_MM_MAP) (CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE; the kernel
 * refuses while the old executable is still mapped), prints "ready" and pauses until it is
 * killed. The way CRIU restores a process's executable link. After the loader is gone only
 * system calls are made: libc reads some of the loader's data (its page size, for one).
 * usage: /lib64/ld-linux-x86-64.so.2 exe-as FILE */
#include <fcntl.h>
#include <limits.h>
#include <linux/prctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The addresses PR_SET_MM_MAP wants, as /proc/self/stat has them (fields 26-28 and 45-51). */
static int read_mm_map(struct prctl_mm_map *map)
{
        unsigned long long v[52] = {};
        char buf[4096], *p;
        FILE *f = fopen("/proc/self/stat", "re");
        size_t n;

        if (!f)
                return -1;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        p = strrchr(buf, ')');         /* the name may hold spaces; fields count on from field 3 */
        if (!p)
                return -1;
        p++;
        for (int field = 3; field <= 51; field++) {
                char *end;

                while (*p == ' ')
                        p++;
                if (field > 3)
                        v[field] = strtoull(p, &end, 10);
                else
                        end = p + 1;    /* the state letter */
                if (end == p)
                        return -1;
                p = end;
        }
        *map = (struct prctl_mm_map) {
                .start_code = v[26], .end_code = v[27], .start_stack = v[28],
                .start_data = v[45], .end_data = v[46], .start_brk = v[47], .brk = (__u64)(uintptr_t)sbrk(0),
                .arg_start = v[48], .arg_end = v[49], .env_start = v[50], .env_end = v[51],
                .exe_fd = (__u32)-1,
        };
        return 0;
}

/* Unmap every mapping of the file at path (the loader, our executable). */
static int unmap_file(const char *path)
{
        unsigned long starts[16], ends[16];
        char line[PATH_MAX + 128];
        size_t n = 0;
        FILE *f = fopen("/proc/self/maps", "re");

        if (!f)
                return -1;
        while (n < 16 && fgets(line, sizeof(line), f)) {
                char *name = strchr(line, '/');

                if (!name)
                        continue;
                name[strcspn(name, "\n")] = '\0';
                if (strcmp(name, path) == 0 && sscanf(line, "%lx-%lx", &starts[n], &ends[n]) == 2)
                        n++;
        }
        fclose(f);
        for (size_t i = 0; i < n; i++)
                if (munmap((void *)starts[i], ends[i] - starts[i]) < 0)
                        return -1;
        return n > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
        char loader[PATH_MAX];
        struct prctl_mm_map map;
        ssize_t len;
        int fd;

        if (argc != 2) {
                fprintf(stderr, "usage: ld.so exe-as FILE\n");
                return 2;
        }
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        len = readlink("/proc/self/exe", loader, sizeof(loader) - 1);
        if (fd < 0 || len <= 0 || read_mm_map(&map) < 0) {
                perror("exe-as: setting up");
                return 1;
        }
        loader[len] = '\0';
        if (unmap_file(loader) < 0) {
                fprintf(stderr, "exe-as: cannot unmap %s (run me through the dynamic loader)\n", loader);
                return 1;
        }
        /* From here on only system calls: libc's other functions may read the loader's data. */
        map.exe_fd = (__u32)fd;
        if (prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&map, sizeof(map), 0) < 0) {
                static const char failed[] = "exe-as: prctl(PR_SET_MM_MAP) failed\n";

                (void)!write(STDERR_FILENO, failed, sizeof(failed) - 1);
                _exit(1);
        }
        (void)!write(STDOUT_FILENO, "ready\n", 6);
        for (;;)
                pause();
}
