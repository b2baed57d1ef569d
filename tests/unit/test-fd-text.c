/* SPDX-License-Identifier: MIT */
/* Unit tests for fd-text.c: a file's whole text read from its descriptor, bounded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fd-text.h"
#include "macro.h"
#include "test-util.h"

/* A file holding n bytes of a repeating pattern, at offset 0: its descriptor. */
static int file_of(size_t n)
{
        FILE *f = tmpfile();
        int fd;

        ASSERT_TRUE(f != NULL);
        for (size_t i = 0; i < n; i++)
                ASSERT_TRUE(fputc('a' + (int)(i % 26), f) != EOF);
        ASSERT_EQ(fflush(f), 0);
        fd = dup(fileno(f));
        fclose(f);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
        return fd;
}

static void read_whole(size_t n, size_t max, size_t expect_len, bool expect_cut)
{
        int fd = file_of(n);
        char *text = NULL;
        size_t len = 99;
        bool cut = !expect_cut;

        ASSERT_EQ(fd_text_read(fd, max, &text, &len, &cut), 0);
        ASSERT_EQ(len, expect_len);
        ASSERT_EQ(strlen(text), expect_len);
        ASSERT_EQ(cut, expect_cut);
        for (size_t i = 0; i < len; i++)
                ASSERT_EQ(text[i], 'a' + (int)(i % 26));
        free(text);
        close(fd);
}

static void a_file_is_read_whole_up_to_the_bound(void)
{
        read_whole(0, 100, 0, false);           /* empty: "" */
        read_whole(10, 100, 10, false);
        read_whole(100000, 1 << 20, 100000, false);     /* past several chunks */
}

static void a_file_at_the_bound_is_whole_and_past_it_cut(void)
{
        read_whole(100, 100, 100, false);
        read_whole(101, 100, 100, true);
        read_whole(20000, 8192, 8192, true);
        read_whole(1, 0, 0, true);
        read_whole(0, 0, 0, false);
}

static void a_read_error_is_its_errno(void)
{
        char *text = NULL;
        int fds[2];

        ASSERT_EQ(pipe(fds), 0);
        /* the write end read: EBADF */
        ASSERT_EQ(fd_text_read(fds[1], 100, &text, NULL, NULL), -EBADF);
        ASSERT_TRUE(text == NULL);
        close(fds[0]);
        close(fds[1]);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(a_file_is_read_whole_up_to_the_bound),
                TEST(a_file_at_the_bound_is_whole_and_past_it_cut),
                TEST(a_read_error_is_its_errno),
        };
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
