/* A library whose call frames the unwind-table test knows: built with and without frame pointers,
 * and with .debug_frame only, each function shaping its frame differently. */
#include <stdlib.h>
#include <string.h>

int unwind_fixture_leaf(int x);
int unwind_fixture_small_frame(int n);
long unwind_fixture_big_frame(int n);
long unwind_fixture_saves_registers(const long *v, int n);
long unwind_fixture_variable_frame(int n);
void *unwind_fixture_calls_through_plt(size_t n);

/* No frame at all: the CFA stays rsp+8 throughout. */
__attribute__((noinline)) int unwind_fixture_leaf(int x)
{
        return x * 3 + 1;
}

/* A few hundred bytes of stack kept across a call: CFA = rsp + (frame size). */
__attribute__((noinline)) int unwind_fixture_small_frame(int n)
{
        volatile char buf[256];

        for (int i = 0; i < n && i < (int) sizeof(buf); i++)
                buf[i] = (char) i;
        return buf[n & 255] + unwind_fixture_leaf(n);
}

/* More stack than a 16-bit offset holds. */
__attribute__((noinline)) long unwind_fixture_big_frame(int n)
{
        volatile char buf[70000];

        buf[(unsigned) n % sizeof(buf)] = 1;
        return buf[(unsigned) n * 7 % sizeof(buf)] + unwind_fixture_leaf(n);
}

/* Values live across calls in callee-saved registers, rbp among them when it is not the frame
 * pointer: the CFI says where each was pushed. */
__attribute__((noinline)) long unwind_fixture_saves_registers(const long *v, int n)
{
        long a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5];

        for (int i = 0; i < n; i++) {
                a += unwind_fixture_leaf((int) b);
                b ^= unwind_fixture_leaf((int) c);
                c -= unwind_fixture_leaf((int) d);
                d += unwind_fixture_leaf((int) e) * f;
                e |= unwind_fixture_leaf((int) a);
                f += a ^ e;
        }
        return a + b + c + d + e + f;
}

/* A frame whose size is known only at run time: even -fomit-frame-pointer keeps rbp as the frame
 * pointer here, so the CFA is rbp+16. */
__attribute__((noinline)) long unwind_fixture_variable_frame(int n)
{
        char buf[n > 0 ? n : 1];

        memset(buf, n, sizeof(buf));
        return buf[n / 2] + unwind_fixture_small_frame(n);
}

/* Calls into libc go through the .plt, whose entries have their own CFI. */
__attribute__((noinline)) void *unwind_fixture_calls_through_plt(size_t n)
{
        void *p = malloc(n);

        if (p)
                memset(p, 0, n);
        return p;
}
