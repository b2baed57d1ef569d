/* SPDX-License-Identifier: MIT */
/* A program that changes its pointers all along a live reachability scan (tests/integration/
 * test_reachability.py), each kind of block from a function of its own:
 *   keep_table()       one block of HOLDERS pointers to holders, a global points to it
 *   make_holder()      a holder: SLOTS pointers to data blocks (empty slots NULL)
 *   keep_data()        DATA blocks of DATA_BYTES, each held by one slot of some holder at every
 *                      moment: still reachable
 *   keep_child()       DATA blocks of CHILD_BYTES, one pointed to from each data block
 *   lose_block()       LOST_BLOCKS blocks of LOST_BYTES, their pointers dropped, allocated between
 *                      the holders (on the pages the churn writes): definitely lost
 *   make_lost_child()  LOST_CHILDREN blocks, one pointed to from each of the first lost blocks:
 *                      indirectly lost
 * Once "made" is printed, a thread churns until the program ends: it moves a data block's pointer
 * from a slot of one holder to an empty slot of another (the old slot cleared first: in between
 * only a register holds it), replaces a holder by a new one with its pointers (the table pointed
 * at the new one before the old one is cleared and freed), and maps, writes and unmaps memory.
 *
 * Protocol: print "ready", wait for a line, make the blocks, print "made". Each later line is
 * answered with "alive", until stdin closes. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define HOLDERS 20000
#define SLOTS 8
#define DATA 100000
#define DATA_BYTES 512
#define CHILD_BYTES 32
#define LOST_BLOCKS 2000
#define LOST_BYTES 72
#define LOST_CHILDREN 500
#define CHURN_MAP_BYTES (64 * 1024)

struct holder {
        void *slot[SLOTS];
};

struct holder **volatile global_table;

static noinline struct holder **keep_table(void)
{
        struct holder **t = calloc(HOLDERS, sizeof(*t));

        require(t);
        return t;
}

static noinline struct holder *make_holder(void)
{
        struct holder *h = calloc(1, sizeof(*h));

        require(h);
        return h;
}

static noinline void *keep_child(void)
{
        void *p = malloc(CHILD_BYTES);

        require(p);
        memset(p, 0x22, CHILD_BYTES);
        return p;
}

static noinline void *keep_data(void)
{
        void **p = malloc(DATA_BYTES);

        require(p);
        memset(p, 0, DATA_BYTES);
        p[0] = keep_child();
        return p;
}

static noinline void *make_lost_child(void)
{
        void *p = malloc(CHILD_BYTES);

        require(p);
        memset(p, 0x33, CHILD_BYTES);
        return p;
}

static noinline void lose_block(int with_child)
{
        void **volatile p = malloc(LOST_BYTES);

        require(p);
        memset(p, 0, LOST_BYTES);
        if (with_child)
                p[0] = make_lost_child();
        p = NULL;
}

static noinline void make_blocks(void)
{
        struct holder **t = keep_table();

        for (int i = 0; i < HOLDERS; i++) {
                t[i] = make_holder();
                /* the lost blocks among the holders, on the pages the churn writes */
                if (i % (HOLDERS / LOST_BLOCKS) == 0)
                        lose_block(i / (HOLDERS / LOST_BLOCKS) < LOST_CHILDREN);
        }
        for (int i = 0; i < DATA; i++)
                t[i % HOLDERS]->slot[i / HOLDERS] = keep_data();
        global_table = t;
}

static uint64_t next_random(uint64_t *x)
{
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

static void store(void *volatile *where, void *p)
{
        __atomic_store_n(where, p, __ATOMIC_RELEASE);
}

static noinline void move_one(struct holder **t, uint64_t r)
{
        struct holder *from = t[r % HOLDERS], *to = t[(r >> 24) % HOLDERS];
        int a = -1, b = -1;
        void *p;

        if (from == to)
                return;
        for (int k = 0; k < SLOTS && a < 0; k++)
                if (from->slot[k])
                        a = k;
        for (int k = 0; k < SLOTS && b < 0; k++)
                if (!to->slot[k])
                        b = k;
        if (a < 0 || b < 0)
                return;
        p = __atomic_load_n(&from->slot[a], __ATOMIC_ACQUIRE);
        store(&from->slot[a], NULL);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        store(&to->slot[b], p);
}

static noinline void replace_holder(struct holder **t, size_t i)
{
        struct holder *old = t[i], *h = make_holder();

        for (int k = 0; k < SLOTS; k++)
                store(&h->slot[k], old->slot[k]);
        store((void *volatile *)&t[i], h);
        for (int k = 0; k < SLOTS; k++)
                store(&old->slot[k], NULL);
        free(old);
}

static noinline void map_and_unmap(void)
{
        char *m = mmap(NULL, CHURN_MAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        require(m != MAP_FAILED);
        memset(m, 0x44, CHURN_MAP_BYTES);
        require(munmap(m, CHURN_MAP_BYTES) == 0);
}

static void *churn(void *arg)
{
        struct holder **t = global_table;
        uint64_t x = 88172645463325252ull;

        for (uint64_t n = 0;; n++) {
                uint64_t r = next_random(&x);

                move_one(t, r);
                if (n % 16 == 0)
                        replace_holder(t, (r >> 40) % HOLDERS);
                if (n % 4096 == 0)
                        map_and_unmap();
        }
        return NULL;
}

int main(void)
{
        pthread_t churner;

        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        make_blocks();
        require(pthread_create(&churner, NULL, churn, NULL) == 0);
        say("made");
        while (wait_line() == 0)
                say("alive");
        return 0;
}
