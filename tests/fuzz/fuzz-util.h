/* SPDX-License-Identifier: GPL-2.0-only */
/* What the fuzz targets share: the libFuzzer entry point's prototype, and a fuzz input put in a
 * memfd so the readers that take an fd or a path read it as they would a file. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A memfd holding data, its offset back at 0; aborts when that fails (no fuzz run goes on
 * without its input). */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
        int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
        size_t done = 0;

        if (fd < 0) {
                perror("memfd_create");
                abort();
        }
        while (done < size) {
                ssize_t n = write(fd, data + done, size - done);

                if (n <= 0) {
                        perror("write");
                        abort();
                }
                done += (size_t) n;
        }
        if (lseek(fd, 0, SEEK_SET) != 0) {
                perror("lseek");
                abort();
        }
        return fd;
}

/* Abort with a message where a property a fuzz target checks does not hold: libFuzzer keeps the
 * input as a crash. */
#define FUZZ_CHECK(cond)                                                                 \
        do {                                                                             \
                if (!(cond)) {                                                           \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
                        abort();                                                         \
                }                                                                        \
        } while (0)
