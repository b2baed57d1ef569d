// SPDX-License-Identifier: MIT
// Benchmark workload helper: C++'s own allocation functions, for bench/alloc-churn's "cxx" mode.
#include <cstddef>
#include <new>

extern "C" void *cxx_new(std::size_t size)
{
        return ::operator new(size);
}

extern "C" void cxx_delete(void *block)
{
        ::operator delete(block);
}
