/* SPDX-License-Identifier: MIT */
/* Tests for kallsyms.c: a fixture kallsyms text, malformed and hidden tables, and the real one. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kallsyms.h"
#include "macro.h"
#include "test-util.h"

static const char *fixture_path;

static struct kallsyms *fixture(void)
{
        struct kallsyms *k = NULL;

        ASSERT_EQ(kallsyms_parse_file(fixture_path, &k), 0);
        ASSERT_TRUE(k);
        return k;
}

static void assert_resolves(const struct kallsyms *k, uint64_t addr, bool is_return_address,
                            const char *symbol, uint64_t offset, const char *module)
{
        struct kallsyms_info info = {};
        int r = kallsyms_resolve(k, addr, is_return_address, &info);

        if (r < 0)
                fprintf(stderr, "0x%" PRIx64 ": %s\n", addr, strerror(-r));
        ASSERT_EQ(r, 0);
        ASSERT_STREQ(info.symbol, symbol);
        ASSERT_EQ(info.offset, offset);
        ASSERT_STREQ(info.module, module);
}

static void assert_unresolved(const struct kallsyms *k, uint64_t addr)
{
        struct kallsyms_info info = { .symbol = "untouched" };

        ASSERT_EQ(kallsyms_resolve(k, addr, true, &info), -ENOENT);
        ASSERT_STREQ(info.symbol, "untouched");
}

static void kallsyms_resolves_kernel_functions_with_offsets(void)
{
        _cleanup_(kallsyms_freep) struct kallsyms *k = fixture();

        ASSERT_EQ(kallsyms_count(k), 17);
        assert_resolves(k, 0xffffffff81001030, false, "do_one_initcall", 0x20, "[kernel]");
        assert_resolves(k, 0xffffffff81001010, false, "do_one_initcall", 0, "[kernel]");
        assert_resolves(k, 0xffffffff810014a7, true, "do_eventfd", 0x27, "[kernel]");
        /* a weak function is a function */
        assert_resolves(k, 0xffffffff81001410, true, "arch_cpu_idle", 0x10, "[kernel]");
}

static void kallsyms_return_address_belongs_to_the_calling_function(void)
{
        _cleanup_(kallsyms_freep) struct kallsyms *k = fixture();

        /* A call that ends do_one_initcall returns to where the next function starts. */
        assert_resolves(k, 0xffffffff81001200, true, "do_one_initcall", 0x1f0, "[kernel]");
        assert_resolves(k, 0xffffffff81001200, false, "__kmalloc_cache_noprof", 0, "[kernel]");
}

static void kallsyms_prefers_global_functions_among_aliases(void)
{
        _cleanup_(kallsyms_freep) struct kallsyms *k = fixture();

        /* _text, srso_alias_untrain_ret and _stext share an address: the first global one wins. */
        assert_resolves(k, 0xffffffff81000010, true, "_text", 0x10, "[kernel]");
}

static void kallsyms_names_modules_and_bpf_programs(void)
{
        _cleanup_(kallsyms_freep) struct kallsyms *k = fixture();

        assert_resolves(k, 0xffffffffa0001010, true, "bpf_prog_6deef7357e7b4530_tp_kmalloc", 0x10, "[bpf]");
        assert_resolves(k, 0xffffffffc0a00010, true, "nft_do_chain", 0x10, "[nf_tables]");
        assert_resolves(k, 0xffffffffc0a00810, true, "nft_trace_init", 0x10, "[nf_tables]");
        /* listed out of address order in the file: sorted all the same */
        assert_resolves(k, 0xffffffffc0200010, true, "ftrace_trampoline", 0x10, "[__builtin__ftrace]");
}

static void kallsyms_leaves_gaps_and_data_unresolved(void)
{
        _cleanup_(kallsyms_freep) struct kallsyms *k = fixture();

        assert_unresolved(k, 0xffffffff80000000);      /* below every symbol */
        assert_unresolved(k, 0xffffffff82000010);      /* in data (__start_mcount_loc) */
        assert_unresolved(k, 0xffffffffc0300000);      /* 1 MiB past ftrace_trampoline: a gap */
        assert_unresolved(k, 0xffffffffc0a02010);      /* past the last symbol */
        assert_unresolved(NULL, 0xffffffff81001030);
}

static void kallsyms_refuses_hidden_malformed_and_empty_tables(void)
{
        static const char *const malformed[] = {
                "ffffffff81000000 T\n",
                "ffffffff81000000 T \n",
                "zzzz T foo\n",
                "ffffffff81000000T foo\n",
                "ffffffff81000000 T foo\t[bad\n",
                "ffffffff81000000 T foo\t\n",
                "ffffffff81000000 T foo bar\n",
                "ffffffff81000000 T foo\n\nffffffff81000010 T bar\n",
        };
        struct kallsyms *k = NULL;

        /* What a reader without the right to see addresses gets (kptr_restrict). */
        ASSERT_EQ(kallsyms_parse_string("0000000000000000 T _text\n0000000000000000 t do_eventfd\n", &k), -EPERM);
        ASSERT_TRUE(!k);
        for (size_t i = 0; i < ELEMENTSOF(malformed); i++) {
                ASSERT_EQ(kallsyms_parse_string(malformed[i], &k), -EINVAL);
                ASSERT_TRUE(!k);
        }
        ASSERT_EQ(kallsyms_parse_string("", &k), -ENODATA);
        ASSERT_TRUE(!k);
        ASSERT_EQ(kallsyms_parse_file("/nonexistent/kallsyms", &k), -ENOENT);
        ASSERT_TRUE(!k);
}

static void kallsyms_parses_text_without_final_newline(void)
{
        _cleanup_(kallsyms_freep) struct kallsyms *k = NULL;

        ASSERT_EQ(kallsyms_parse_string("ffffffff81000000 T a\nffffffff81000100 T b", &k), 0);
        ASSERT_EQ(kallsyms_count(k), 2);
        assert_resolves(k, 0xffffffff81000080, true, "a", 0x80, "[kernel]");
}

/* The running kernel's table: root sees addresses (and resolves kfree), others are refused. */
static void kallsyms_reads_the_running_kernels_table(void)
{
        _cleanup_(kallsyms_freep) struct kallsyms *k = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        unsigned long long kfree_addr = 0;
        size_t size = 0;
        int r;

        r = kallsyms_parse_file("/proc/kallsyms", &k);
        if (geteuid() != 0) {
                ASSERT_EQ(r, -EPERM);
                return;
        }
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(kallsyms_count(k) > 1000);
        f = fopen("/proc/kallsyms", "re");
        ASSERT_TRUE(f);
        while (getline(&line, &size, f) >= 0)
                if (sscanf(line, "%llx T kfree\n", &kfree_addr) == 1 && strcmp(strchr(line, ' ') + 3, "kfree\n") == 0)
                        break;
        ASSERT_TRUE(kfree_addr != 0);
        assert_resolves(k, kfree_addr + 4, true, "kfree", 4, "[kernel]");
}

int main(int argc, char *argv[])
{
        static const struct unit_test tests[] = {
                TEST(kallsyms_resolves_kernel_functions_with_offsets),
                TEST(kallsyms_return_address_belongs_to_the_calling_function),
                TEST(kallsyms_prefers_global_functions_among_aliases),
                TEST(kallsyms_names_modules_and_bpf_programs),
                TEST(kallsyms_leaves_gaps_and_data_unresolved),
                TEST(kallsyms_refuses_hidden_malformed_and_empty_tables),
                TEST(kallsyms_parses_text_without_final_newline),
                TEST(kallsyms_reads_the_running_kernels_table),
        };

        ASSERT_EQ(argc, 2);
        fixture_path = argv[1];
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
