/* SPDX-License-Identifier: GPL-2.0-only */
/* Which C++ operators of the standard runtime only pass the call on. libstdc++'s operator new
 * calls malloc (aligned_alloc for the aligned forms), its operator delete calls free, and every
 * other form calls one of those; LLVM's (libc++abi, or libc++) do the same. Such an operator need not be probed: the
 * malloc or free inside records the call (one trap a call where probing the operator too takes
 * two), and the report drops the operator's own frame from the top of the stack. */
#pragma once

#include <libelf.h>
#include "alloc-sites.h"

/* Set forwards on each site of s (read from elf) that is such an operator: elf is the C++
 * runtime (DT_SONAME libstdc++.so.*, libc++.so.* or libc++abi.so.*) and defines no malloc of its own, the site is
 * an operator new or delete, and its function calls or jumps (call/jmp rel32) to the PLT entry
 * of an allocator function of its side: malloc & co or a new for a new, free or a delete for a
 * delete, by a jump (a tail call) or by a call whose return the object's CFI (.eh_frame) covers,
 * so that a walk from there reaches the operator's caller. Whatever resolves that PLT entry in
 * the process is probed or forwards in turn.
 * Nothing is set for any other object, nor where elf cannot be read or is larger than the
 * runtime could be (the work is bounded: a file that calls itself libstdc++ is read once, in
 * time linear in its size). */
void cxx_forwarders_mark(Elf *elf, struct alloc_sites *s);
