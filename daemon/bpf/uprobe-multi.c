/* SPDX-License-Identifier: GPL-2.0-only */
/* uprobe_multi links by raw bpf(2) (uprobe-multi.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "macro.h"
#include "uprobe-multi.h"

#define UPROBE_MULTI_RETURN 1U          /* BPF_F_UPROBE_MULTI_RETURN */

/* union bpf_attr as BPF_LINK_CREATE reads it for an uprobe_multi link. */
struct uprobe_multi_link_create {
        __u32 prog_fd;
        __u32 target_fd;
        __u32 attach_type;
        __u32 flags;
        __u64 path;
        __u64 offsets;
        __u64 ref_ctr_offsets;
        __u64 cookies;
        __u32 cnt;
        __u32 multi_flags;
        __u32 pid;
        __u32 unused;
};

static int link_create(int prog_fd, uint32_t attach_type, uint32_t multi_flags, pid_t pid, const char *path,
                       const uint64_t *offsets, const uint64_t *cookies, size_t n)
{
        struct uprobe_multi_link_create attr = {};
        int fd;

        if (prog_fd < 0 || !path || !offsets || n == 0 || n > UINT32_MAX || pid < 0)
                return -EINVAL;
        attr.prog_fd = (__u32)prog_fd;
        attr.attach_type = attach_type;
        attr.path = (__u64)(uintptr_t)path;
        attr.offsets = (__u64)(uintptr_t)offsets;
        attr.cookies = (__u64)(uintptr_t)cookies;
        attr.cnt = (__u32)n;
        attr.multi_flags = multi_flags;
        attr.pid = (__u32)pid;
        fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
        return fd < 0 ? -errno : fd;
}

int uprobe_multi_link(int prog_fd, bool is_return, pid_t pid, const char *path, const uint64_t *offsets,
                      const uint64_t *cookies, size_t n)
{
        return link_create(prog_fd, UPROBE_MULTI_ATTACH_TYPE, is_return ? UPROBE_MULTI_RETURN : 0, pid, path,
                           offsets, cookies, n);
}

int uprobe_multi_session_link(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets, const uint64_t *cookies,
                        size_t n)
{
        return link_create(prog_fd, UPROBE_SESSION_ATTACH_TYPE, 0, pid, path, offsets, cookies, n);
}

static int empty_program(uint32_t attach_type)
{
        static const struct bpf_insn ret0[] = {
                { .code = 0xb7 /* BPF_ALU64 | BPF_MOV | BPF_K */, .dst_reg = 0, .imm = 0 },
                { .code = 0x95 /* BPF_JMP | BPF_EXIT */ },
        };
        LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = (enum bpf_attach_type)attach_type);

        return bpf_prog_load(BPF_PROG_TYPE_KPROBE, "memleakd_empty", "GPL", ret0, ELEMENTSOF(ret0), &opts);
}

int uprobe_multi_empty_program(void)
{
        return empty_program(UPROBE_MULTI_ATTACH_TYPE);
}

/* A link to a file that does not exist fails with ENOENT where the kernel knows the attach type
 * (it looked the path up) and EINVAL where it does not. */
static bool attach_type_supported(uint32_t attach_type)
{
        const uint64_t offset = 0;
        int prog = empty_program(attach_type), link;

        if (prog < 0)
                return false;
        link = link_create(prog, attach_type, 0, 0, "/nonexistent/memleakd-uprobe-multi-probe", &offset, NULL, 1);
        if (link >= 0)
                close(link);
        close(prog);
        return link >= 0 || link == -ENOENT;
}

bool uprobe_multi_supported(void)
{
        return attach_type_supported(UPROBE_MULTI_ATTACH_TYPE);
}

bool uprobe_multi_session_supported(void)
{
        return attach_type_supported(UPROBE_SESSION_ATTACH_TYPE);
}
