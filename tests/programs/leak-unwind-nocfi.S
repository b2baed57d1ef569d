/* SPDX-License-Identifier: MIT */
/* Functions in assembly with no CFI (no .cfi_* directives, so no FDE covers them).
 *
 * nocfi_leak keeps no frame pointer: it zeroes rbp (saved, and restored on return) as code that
 * uses rbp for data may leave anything there, so the walker, which may step code without CFI by
 * a frame pointer, finds none and stops at it, visibly. Leaks one 97-byte block and returns it.
 *
 * nocfi_frame_leak keeps one (push %rbp; mov %rsp, %rbp), as V8's builtins do: the walker steps
 * it by that frame pointer to its caller, whose CFI takes the walk on. Leaks one 101-byte block
 * and returns it. */
        .text
        .globl  nocfi_leak
        .type   nocfi_leak, @function
nocfi_leak:
        push    %rbp
        xor     %ebp, %ebp
        mov     $97, %edi
        call    malloc@PLT
        pop     %rbp
        ret
        .size   nocfi_leak, . - nocfi_leak

        .globl  nocfi_frame_leak
        .type   nocfi_frame_leak, @function
nocfi_frame_leak:
        push    %rbp
        mov     %rsp, %rbp
        mov     $101, %edi
        call    malloc@PLT
        pop     %rbp
        ret
        .size   nocfi_frame_leak, . - nocfi_frame_leak
        .section .note.GNU-stack, "", @progbits
