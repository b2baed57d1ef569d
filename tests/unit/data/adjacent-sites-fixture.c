/* Two entry points back to back: malloc's first instruction (test %rdi,%rdi, which a probe may
 * step over) runs into free's entry. Moving malloc's probe past it would put both on one address. */
__asm__(".text\n"
        ".globl malloc\n.type malloc, @function\nmalloc:\n"
        "        test %rdi, %rdi\n"
        ".globl free\n.type free, @function\nfree:\n"
        "        push %rbx\n"
        "        pop %rbx\n"
        "        ret\n");
