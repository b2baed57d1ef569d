/* SPDX-License-Identifier: MIT */
/* A function in assembly with no CFI (no .cfi_* directives, so no FDE covers it): the walker
 * stops at it, visibly. Leaks one 97-byte block and returns it. */
        .text
        .globl  nocfi_leak
        .type   nocfi_leak, @function
nocfi_leak:
        sub     $8, %rsp
        mov     $97, %edi
        call    malloc@PLT
        add     $8, %rsp
        ret
        .size   nocfi_leak, . - nocfi_leak
        .section .note.GNU-stack, "", @progbits
