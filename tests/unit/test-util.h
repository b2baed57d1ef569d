/* SPDX-License-Identifier: MIT */
/* Minimal assertions for the unit tests: print where and what, then abort. */
#pragma once

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ASSERT_TRUE(expr) do {                                                          \
                if (!(expr)) {                                                          \
                        fprintf(stderr, "%s:%d: assertion failed: %s\n",                \
                                __FILE__, __LINE__, #expr);                             \
                        abort();                                                        \
                }                                                                       \
        } while (0)

#define ASSERT_EQ(a, b) do {                                                            \
                long long _a = (long long)(a), _b = (long long)(b);                     \
                if (_a != _b) {                                                         \
                        fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",       \
                                __FILE__, __LINE__, #a, #b, _a, _b);                    \
                        abort();                                                        \
                }                                                                       \
        } while (0)

#define ASSERT_STREQ(a, b) do {                                                         \
                const char *_a = (a), *_b = (b);                                        \
                if (!_a || !_b || strcmp(_a, _b) != 0) {                                \
                        fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",   \
                                __FILE__, __LINE__, #a, #b, _a ? _a : "(null)",         \
                                _b ? _b : "(null)");                                    \
                        abort();                                                        \
                }                                                                       \
        } while (0)

/* Each test file lists its tests in a table and runs them all, naming each. */
struct unit_test {
        const char *name;
        void (*fn)(void);
};

static inline int run_unit_tests(const struct unit_test *tests, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                fprintf(stderr, "running %s\n", tests[i].name);
                tests[i].fn();
        }
        fprintf(stderr, "%zu tests passed\n", n);
        return 0;
}
#define TEST(name) { #name, name }
