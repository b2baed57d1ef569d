/* SPDX-License-Identifier: MIT */
/* Leaks before, while and after memleakd is down, and frees meanwhile blocks it had: a daemon that
 * adopts it after a restart must report exactly what it still holds.
 *
 * Ground truth (tests/integration/test_restart.py keeps the same numbers):
 *   leak_before      BEFORE_COUNT blocks of BEFORE_SIZE bytes, before the daemon goes
 *   held_then_freed  HELD_COUNT blocks of HELD_SIZE bytes, made before, freed while it is down
 *   leak_while_down  DOWN_COUNT blocks of DOWN_SIZE bytes, made while it is down
 *   churn            CHURN_COUNT blocks of CHURN_SIZE bytes, each freed at once, while it is down
 *   leak_after       AFTER_COUNT blocks of AFTER_SIZE bytes, after it is back
 *
 * Protocol: print "ready"; at each line received, do the next step and print its name: "before",
 * "down", "after". */
#include <stdlib.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define BEFORE_SIZE     1001u
#define BEFORE_COUNT    16
#define HELD_SIZE       3003u
#define HELD_COUNT      8
#define DOWN_SIZE       2002u
#define DOWN_COUNT      24
#define CHURN_SIZE      505u
#define CHURN_COUNT     1000
#define AFTER_SIZE      4004u
#define AFTER_COUNT     4

static void *kept[BEFORE_COUNT + DOWN_COUNT + AFTER_COUNT];
static int n_kept;
static void *held[HELD_COUNT];

static noinline void leak_before(void)
{
        for (int i = 0; i < BEFORE_COUNT; i++) {
                kept[n_kept] = malloc(BEFORE_SIZE); /* site: leak_before */
                require(kept[n_kept++]);
        }
}

static noinline void held_then_freed(void)
{
        for (int i = 0; i < HELD_COUNT; i++) {
                held[i] = malloc(HELD_SIZE); /* site: held_then_freed */
                require(held[i]);
        }
}

static noinline void leak_while_down(void)
{
        for (int i = 0; i < DOWN_COUNT; i++) {
                kept[n_kept] = malloc(DOWN_SIZE); /* site: leak_while_down */
                require(kept[n_kept++]);
        }
}

static noinline void churn(void)
{
        for (int i = 0; i < CHURN_COUNT; i++) {
                void *p = malloc(CHURN_SIZE); /* site: churn */

                require(p);
                free(p);
        }
}

static noinline void leak_after(void)
{
        for (int i = 0; i < AFTER_COUNT; i++) {
                kept[n_kept] = malloc(AFTER_SIZE); /* site: leak_after */
                require(kept[n_kept++]);
        }
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        leak_before();
        held_then_freed();
        say("before");
        if (wait_line() < 0)
                return 1;
        leak_while_down();
        for (int i = 0; i < HELD_COUNT; i++)
                free(held[i]);
        churn();
        say("down");
        if (wait_line() < 0)
                return 1;
        leak_after();
        say("after");
        wait_line();
        return 0;
}
