/* SPDX-License-Identifier: GPL-2.0-only */
/* Records of 64-bit words and length-prefixed strings, written and read back bounded. */
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "word-buf.h"

void word_buf_put_bytes(struct word_buf_writer *w, const void *data, size_t n)
{
        if (!w->ok || n == 0)
                return;
        if (w->room - w->n < n) {
                size_t room = MAX(w->room * 2, w->n + n + 4096);
                unsigned char *p = realloc(w->p, room);

                if (!p) {
                        w->ok = false;
                        return;
                }
                w->p = p;
                w->room = room;
        }
        memcpy(w->p + w->n, data, n);
        w->n += n;
}

void word_buf_put(struct word_buf_writer *w, uint64_t v)
{
        word_buf_put_bytes(w, &v, sizeof(v));
}

void word_buf_put_string(struct word_buf_writer *w, const char *s)
{
        size_t n = s ? strlen(s) : 0;

        word_buf_put(w, n);
        word_buf_put_bytes(w, s, n);
}

uint64_t word_buf_get(struct word_buf_reader *rd)
{
        uint64_t v = 0;

        if (!rd->ok || rd->n - rd->at < sizeof(v)) {
                rd->ok = false;
                return 0;
        }
        memcpy(&v, rd->p + rd->at, sizeof(v));
        rd->at += sizeof(v);
        return v;
}

uint64_t word_buf_get_max(struct word_buf_reader *rd, uint64_t max)
{
        uint64_t v = word_buf_get(rd);

        if (v > max)
                rd->ok = false;
        return rd->ok ? v : 0;
}

bool word_buf_get_bool(struct word_buf_reader *rd)
{
        return word_buf_get_max(rd, 1) != 0;
}

size_t word_buf_get_count(struct word_buf_reader *rd, size_t unit)
{
        return (size_t)word_buf_get_max(rd, rd->ok ? (rd->n - rd->at) / unit : 0);
}

bool word_buf_get_bytes(struct word_buf_reader *rd, void *buf, size_t n)
{
        if (!rd->ok || rd->n - rd->at < n) {
                rd->ok = false;
                return false;
        }
        if (n > 0)
                memcpy(buf, rd->p + rd->at, n);
        rd->at += n;
        return true;
}

bool word_buf_get_string(struct word_buf_reader *rd, size_t max, char **ret)
{
        size_t n = (size_t)word_buf_get_max(rd, max);
        char *s;

        *ret = NULL;
        if (!rd->ok || rd->n - rd->at < n || memchr(rd->p + rd->at, 0, n)) {
                rd->ok = false;
                return false;
        }
        if (n == 0)
                return true;
        s = strndup((const char *)rd->p + rd->at, n);
        if (!s) {
                rd->enomem = true;
                rd->ok = false;
                return false;
        }
        rd->at += n;
        *ret = s;
        return true;
}

size_t word_buf_get_array(struct word_buf_reader *rd, size_t unit, size_t size, void **ret)
{
        size_t n = word_buf_get_count(rd, unit);

        *ret = NULL;
        if (!rd->ok)
                return 0;
        *ret = calloc(MAX(n, (size_t)1), size);
        if (!*ret) {
                rd->enomem = true;
                rd->ok = false;
                return 0;
        }
        return n;
}
