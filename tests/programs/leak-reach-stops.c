/* SPDX-License-Identifier: MIT */
/* What makes a live reachability scan's stops hard (tests/integration/test_reachability.py), each
 * kind of block from a function of its own, all made by one thread, the holder:
 *   make_node()        NODES blocks of NODE_BYTES in one list, whose head only a register of the
 *                      holder holds: no memory points to it (the global that did is cleared, the
 *                      holder's dead stack scrubbed), so a concurrent scan meets it only in a stop,
 *                      and follows the list there one block after another (no two read in one go):
 *                      longer than a short pause limit, whatever the machine. still reachable
 *   lose_block()       LOST_BLOCKS blocks of LOST_BYTES, their pointers dropped: definitely lost
 *   make_lost_child()  one pointed to from each lost block: indirectly lost
 * The holder then waits in pause() for good, the head in r12, every other register cleared.
 * A second thread, the vforker, waits for a byte on a pipe; then it vforks a child that sleeps
 * VFORK_MS and exits: meanwhile the vforker waits in the kernel, where no stop reaches it.
 *
 * Protocol: print "ready", wait for a line, make the blocks, print "made". Each later line is
 * answered: "vfork" with "vforking", and the vforker prints "back" once its child is gone; any
 * other with "alive". Until stdin closes. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define NODES 200000
#define NODE_BYTES 32
#define LOST_BLOCKS 100
#define LOST_BYTES 64
#define LOST_CHILD_BYTES 24
#define SCRUB_BYTES (64 * 1024)
#define VFORK_MS 3000

struct node {
        struct node *next;
        char pad[NODE_BYTES - sizeof(struct node *)];
};

static struct node *volatile list_head;
static volatile int held;
static int go_pipe[2], vfork_pipe[2];

static noinline struct node *make_node(struct node *next)
{
        struct node *n = malloc(NODE_BYTES);

        require(n);
        memset(n, 0, NODE_BYTES);
        n->next = next;
        return n;
}

static noinline void *make_lost_child(void)
{
        void *p = malloc(LOST_CHILD_BYTES);

        require(p);
        memset(p, 0x33, LOST_CHILD_BYTES);
        return p;
}

static noinline void lose_block(void)
{
        void **volatile p = malloc(LOST_BYTES);

        require(p);
        memset(p, 0, LOST_BYTES);
        p[0] = make_lost_child();
        p = NULL;
}

static noinline void make_blocks(void)
{
        struct node *head = NULL;

        for (int i = 0; i < LOST_BLOCKS; i++)
                lose_block();
        for (int i = 0; i < NODES; i++)
                head = make_node(head);
        list_head = head;
}

/* What the calls above left below the stack pointer, cleared: nothing there points to a block. */
static noinline void scrub_stack(void)
{
        volatile char pad[SCRUB_BYTES];

        for (size_t i = 0; i < sizeof(pad); i++)
                pad[i] = 0;
}

static void *hold(void *arg)
{
        char c;

        (void)arg;
        require(read(go_pipe[0], &c, 1) == 1);
        make_blocks();
        scrub_stack();
        /* the head into r12, the global cleared, the other registers too (what the calls left
         * there may point to a lost block); then pause() for good: r12 survives the system call
         * and whatever interrupts it */
        __asm__ volatile("mov %[head], %%r12\n\t"
                         "movq $0, %[head]\n\t"
                         "movl $1, %[held]\n\t"
                         "xor %%ebx, %%ebx\n\t"
                         "xor %%ecx, %%ecx\n\t"
                         "xor %%edx, %%edx\n\t"
                         "xor %%esi, %%esi\n\t"
                         "xor %%edi, %%edi\n\t"
                         "xor %%r8d, %%r8d\n\t"
                         "xor %%r9d, %%r9d\n\t"
                         "xor %%r10d, %%r10d\n\t"
                         "xor %%r11d, %%r11d\n\t"
                         "xor %%r13d, %%r13d\n\t"
                         "xor %%r14d, %%r14d\n\t"
                         "xor %%r15d, %%r15d\n\t"
                         "1:\n\t"
                         "mov %[nr], %%eax\n\t"
                         "syscall\n\t"
                         "jmp 1b\n\t"
                         : [head] "+m"(list_head), [held] "=m"(held)
                         : [nr] "i"(SYS_pause)
                         : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
                           "r14", "r15", "memory");
        return NULL;
}

static void *vforker(void *arg)
{
        char c;

        (void)arg;
        while (read(vfork_pipe[0], &c, 1) == 1) {
                pid_t child = vfork();

                if (child == 0) {
                        usleep(VFORK_MS * 1000);
                        _exit(0);
                }
                require(child > 0);
                say("back");
        }
        return NULL;
}

int main(void)
{
        pthread_t holder, other;
        char line[64];

        setup_stdio();
        /* both threads made before the attach: what pthread_create allocates is not counted */
        require(pipe(go_pipe) == 0 && pipe(vfork_pipe) == 0);
        require(pthread_create(&holder, NULL, hold, NULL) == 0);
        require(pthread_create(&other, NULL, vforker, NULL) == 0);
        say("ready");
        if (wait_line() < 0)
                return 1;
        require(write(go_pipe[1], "g", 1) == 1);
        while (!held)
                usleep(1000);
        say("made");
        while (fgets(line, sizeof(line), stdin)) {
                if (strcmp(line, "vfork\n") == 0) {
                        say("vforking");
                        require(write(vfork_pipe[1], "v", 1) == 1);
                } else
                        say("alive");
        }
        return 0;
}
