/* SPDX-License-Identifier: GPL-2.0-only */
/* The processes a process forked that run now, as /proc/PID/task/TID/children lists them (the
 * kernel lists a child under the thread that forked it, while its parent lives). */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fd-text.h"
#include "macro.h"
#include "proc-children.h"

/* A children file holds at most this much (a pid is 7 digits and a space: 512 Ki children). */
#define CHILDREN_FILE_MAX_BYTES (4u << 20)

int proc_children_parse(const char *text, pid_t **pids, size_t *n)
{
        const char *p = text;
        size_t words = 1;
        pid_t *grown;

        assert(text);
        assert(pids);
        assert(n);
        for (const char *c = text; *c; c++)
                words += *c == ' ';
        grown = realloc(*pids, (*n + words) * sizeof(**pids));         /* one allocation a file */
        if (!grown)
                return -ENOMEM;
        *pids = grown;
        for (;;) {
                char *end;
                long v;

                while (*p == ' ' || *p == '\n')
                        p++;
                if (*p == '\0')
                        return 0;
                errno = 0;
                v = strtol(p, &end, 10);
                if (end == p || errno || v <= 0 || v > INT32_MAX || (*end != ' ' && *end != '\n' && *end != '\0'))
                        return -EINVAL;
                p = end;
                (*pids)[(*n)++] = (pid_t)v;
        }
}

static int pid_cmp(const void *a, const void *b)
{
        pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

        return x < y ? -1 : x > y;
}

size_t proc_children_unique(pid_t *pids, size_t n)
{
        size_t k = 0;

        if (n == 0)
                return 0;
        qsort(pids, n, sizeof(*pids), pid_cmp);
        for (size_t i = 1; i < n; i++)
                if (pids[i] != pids[k])
                        pids[++k] = pids[i];
        return k + 1;
}

/* The text of dir_fd's TID/children: a malloc'd string, or NULL (a thread gone meanwhile). */
static char *read_children_file(int dir_fd, const char *tid)
{
        char path[sizeof(((struct dirent *)0)->d_name) + sizeof("/children")];
        _cleanup_close_ int fd = -EBADF;
        char *text = NULL, *space;
        bool cut = false;

        snprintf(path, sizeof(path), "%s/children", tid);
        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fd_text_read(fd, CHILDREN_FILE_MAX_BYTES, &text, NULL, &cut) < 0)
                return NULL;
        if (cut && (space = strrchr(text, ' ')))
                space[1] = '\0';      /* not a pid cut in two */
        return text;
}

int proc_children(pid_t pid, pid_t **ret, size_t *ret_n)
{
        char path[64];
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        DIR *d;
        struct dirent *e;
        int r = 0;

        assert(ret);
        assert(ret_n);
        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        d = opendir(path);
        if (!d)
                return -errno;
        while ((e = readdir(d))) {
                _cleanup_free_ char *text = NULL;

                if (e->d_name[0] == '.')
                        continue;
                text = read_children_file(dirfd(d), e->d_name);
                if (text && (r = proc_children_parse(text, &pids, &n)) < 0)
                        break;
        }
        closedir(d);
        if (r < 0)
                return r;
        *ret_n = proc_children_unique(pids, n);
        *ret = TAKE_PTR(pids);
        return 0;
}
