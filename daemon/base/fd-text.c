/* SPDX-License-Identifier: GPL-2.0-only */
/* A file's whole text read from its descriptor, bounded; a buffer written whole to one. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "fd-text.h"
#include "macro.h"

#define FD_TEXT_CHUNK 8192

int fd_text_read(int fd, size_t max, char **ret, size_t *ret_len, bool *ret_cut)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0, cap = 0;
        bool cut = false;

        assert(fd >= 0);
        assert(ret);
        for (;;) {
                ssize_t k;

                if (len == cap) {
                        char *grown, probe;

                        if (cap >= max) {
                                /* full: cut unless the file ends right here */
                                do
                                        k = read(fd, &probe, 1);
                                while (k < 0 && errno == EINTR);
                                if (k < 0)
                                        return -errno;
                                cut = k > 0;
                                break;
                        }
                        cap = cap ? MIN(cap * 2, max) : MIN((size_t)FD_TEXT_CHUNK, max);
                        grown = realloc(text, cap + 1);
                        if (!grown)
                                return -ENOMEM;
                        text = grown;
                        continue;
                }
                k = read(fd, text + len, cap - len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                len += (size_t)k;
        }
        if (!text && !(text = malloc(1)))
                return -ENOMEM;
        text[len] = '\0';
        *ret = TAKE_PTR(text);
        if (ret_len)
                *ret_len = len;
        if (ret_cut)
                *ret_cut = cut;
        return 0;
}

int fd_text_write(int fd, const void *data, size_t n)
{
        assert(fd >= 0);
        assert(data || n == 0);
        for (size_t done = 0; done < n;) {
                ssize_t k = write(fd, (const char *)data + done, n - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                done += (size_t)k;
        }
        return 0;
}
