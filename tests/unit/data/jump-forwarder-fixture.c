/* Entry points whose code only jumps to another, as musl's static libc has them: free is
 * jmp __libc_free, memalign jmp aligned_alloc (its arguments the same). malloc jumps to a
 * function that is no entry point, and calloc (endbr64 first) to free, whose arguments are not
 * calloc's: those stay sites. */
__asm__(".text\n"
        ".globl __libc_free\n.type __libc_free, @function\n__libc_free:\n"
        "        ret\n"
        ".globl free\n.type free, @function\nfree:\n"
        "        jmp __libc_free\n"
        ".globl aligned_alloc\n.type aligned_alloc, @function\naligned_alloc:\n"
        "        xor %eax, %eax\n"
        "        ret\n"
        ".globl memalign\n.type memalign, @function\nmemalign:\n"
        "        endbr64\n"
        "        jmp aligned_alloc\n"
        ".local malloc_body\n.type malloc_body, @function\nmalloc_body:\n"
        "        xor %eax, %eax\n"
        "        ret\n"
        ".globl malloc\n.type malloc, @function\nmalloc:\n"
        "        jmp malloc_body\n"
        ".globl calloc\n.type calloc, @function\ncalloc:\n"
        "        endbr64\n"
        "        jmp free\n");
