/* SPDX-License-Identifier: MIT */
/* Benchmark: what turning a file's CFI into unwind rows costs (daemon/unwind/unwind-table.c):
 * for each ELF file named, its executable bytes, the rows and their size (as BPF holds them: 16
 * bytes a row, an array's element), the bytes per MiB of text, and the build time, best of 5.
 * usage: unwind-tables FILE...   (one tab-separated line per file; bench/unwind-tables.py) */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "macro.h"
#include "unwind-table.h"

#define RUNS 5
#define BPF_ROW_BYTES 16        /* an array element: sizeof(struct unwind_row) rounded up to 8 */

static double now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The bytes of the executable PT_LOAD segments. */
static int text_bytes(int fd, uint64_t *ret)
{
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        size_t n;
        int r = 0;

        *ret = 0;
        if (!elf)
                return -ENOEXEC;
        if (elf_getphdrnum(elf, &n) < 0)
                r = -ENOEXEC;
        for (size_t i = 0; r == 0 && i < n; i++) {
                GElf_Phdr phdr;

                if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X))
                        *ret += phdr.p_memsz;
        }
        elf_end(elf);
        return r;
}

static int measure(const char *path)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct unwind_table t = {};
        double best = 1e18;
        uint64_t text;
        int r;

        if (fd < 0)
                return -errno;
        r = text_bytes(fd, &text);
        if (r < 0)
                return r;
        for (int i = 0; i < RUNS; i++) {
                double start = now_ms();

                unwind_table_done(&t);
                r = unwind_table_build(fd, &UNWIND_TABLE_LIMITS_DEFAULT, &t);
                if (r < 0)
                        return r;
                best = MIN(best, now_ms() - start);
        }
        printf("%s\t%" PRIu64 "\t%zu\t%zu\t%.0f\t%.1f\t%zu\t%zu\t%zu\n", path, text, t.n_rows,
               t.n_rows * (size_t)BPF_ROW_BYTES, text ? t.n_rows * (double)BPF_ROW_BYTES / (text / 1048576.0) : 0,
               best, t.stats.fdes, t.stats.fdes_debug_frame, t.stats.rows_uncomputable);
        unwind_table_done(&t);
        return 0;
}

int main(int argc, char *argv[])
{
        int failed = 0;

        if (elf_version(EV_CURRENT) == EV_NONE)
                return 1;
        for (int i = 1; i < argc; i++) {
                int r = measure(argv[i]);

                if (r < 0) {
                        fprintf(stderr, "unwind-tables: %s: %s\n", argv[i], strerror(-r));
                        failed = 1;
                }
        }
        return failed;
}
