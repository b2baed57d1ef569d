/* SPDX-License-Identifier: MIT */
/* Run a command where pidfd_getfd is refused with EPERM, as systemd-nspawn's seccomp filter refuses
 * it to every process in a container (CI runs every test in one): the integration tests start a
 * memleakd under it, which then holds the userfaultfd of a concurrent scan in the process scanned.
 *
 * usage: no-take-fds COMMAND [ARG...] */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

#define SYS_PIDFD_GETFD 438

int main(int argc, char **argv)
{
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_PIDFD_GETFD, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

        if (argc < 2) {
                fprintf(stderr, "usage: no-take-fds COMMAND [ARG...]\n");
                return 2;
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                perror("no-take-fds: seccomp");
                return 1;
        }
        execvp(argv[1], argv + 1);
        perror(argv[1]);
        return 127;
}
