/* SPDX-License-Identifier: MIT */
/* A 32-bit x86 (i386) program, static and with no library at all (no 32-bit libc is needed to
 * build it): it pauses until it is killed. memleakd must refuse to trace it, whose calls pass
 * their arguments on the stack where its probes would read x86-64 registers. */
void _start(void);

void _start(void)
{
        for (;;)
                __asm__ volatile("int $0x80" : : "a"(29) : "memory");     /* pause() */
}
