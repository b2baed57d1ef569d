/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz the ELF readers memleakd runs on every object a target maps: the inspection before
 * symbolization (build ID, compressed debug sections, .gnu_debugdata), the dependencies
 * (DT_NEEDED, rpath, PT_INTERP), the allocator entry points and where to probe them. The input
 * is the file, read through a memfd as the daemon reads /proc/PID/map_files. */
#include <errno.h>
#include <string.h>
#include "alloc-sites.h"
#include "cxx-forwarders.h"
#include "elf-deps.h"
#include "elf-file.h"
#include "elf-inspect.h"
#include "fuzz-util.h"
#include "macro.h"

static void read_deps(Elf *elf)
{
        _cleanup_(elf_deps_done) struct elf_deps d = {}, copy = {};
        int r;

        r = elf_deps_read_elf(elf, &d);
        if (r < 0)
                return;
        (void) elf_file_foreign_abi(d.elf_class, d.machine);
        for (size_t i = 0; i < d.n_needed; i++)
                FUZZ_CHECK(d.needed[i]);
        if (elf_deps_copy(&copy, &d) == 0) {
                FUZZ_CHECK(copy.n_needed == d.n_needed);
                for (size_t i = 0; i < d.n_needed; i++)
                        FUZZ_CHECK(strcmp(copy.needed[i], d.needed[i]) == 0);
        }
}

static void read_sites(Elf *elf)
{
        _cleanup_(alloc_sites_done) struct alloc_sites s = {};

        if (alloc_sites_read(elf, &s) < 0)
                return;
        cxx_forwarders_mark(elf, &s);
        for (size_t i = 0; i < s.n; i++) {
                FUZZ_CHECK(s.sites[i].name);
                FUZZ_CHECK(alloc_sites_kind_to_string(s.sites[i].kind));
                FUZZ_CHECK(s.sites[i].probe_offset >= s.sites[i].file_offset);
        }
        (void) alloc_sites_family(&s);
        (void) alloc_sites_has_c_api(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct elf_inspection inspection;
        uint64_t bytes = 0;
        bool too_large = false;

        if (size > 1u << 20)
                return 0;
        fd = fuzz_memfd(data, size);
        if (elf_file_open(fd, &elf) < 0)
                return 0;
        for (struct elf_file_section s = {}; elf_file_next_section(elf, &s);)
                FUZZ_CHECK(s.name);
        if (elf_inspect(elf, &inspection) == 0)
                FUZZ_CHECK(inspection.build_id_len <= ELF_BUILD_ID_MAX);
        if (elf_inspect_minidebuginfo(elf, 1u << 20, &bytes, &too_large) == 0)
                FUZZ_CHECK(too_large || bytes <= 1u << 20);
        read_deps(elf);
        read_sites(elf);
        return 0;
}
