/* An allocator built with jemalloc's --with-jemalloc-prefix=PREFIX (je_, or _rjem_ as Rust's
 * tikv-jemallocator builds it): only prefixed names, so the object is jemalloc and defines malloc
 * & co without a symbol called malloc. */
#include <stddef.h>

#define PASTE(a, b) a##b
#define PREFIXED(a, b) PASTE(a, b)
#define je_malloc PREFIXED(PREFIX, malloc)
#define je_free PREFIXED(PREFIX, free)
#define je_mallocx PREFIXED(PREFIX, mallocx)
#define je_xallocx PREFIXED(PREFIX, xallocx)
#define je_sdallocx PREFIXED(PREFIX, sdallocx)

void *je_malloc(size_t size);
void je_free(void *p);
void *je_mallocx(size_t size, int flags);
size_t je_xallocx(void *p, size_t size, size_t extra, int flags);
void je_sdallocx(void *p, size_t size, int flags);

static char arena[4096];
static size_t used;

void *je_malloc(size_t size)
{
        void *p = arena + used;

        used += (size + 15) & ~(size_t)15;
        return p;
}

void je_free(void *p)
{
        (void)p;
}

void *je_mallocx(size_t size, int flags)
{
        (void)flags;
        return je_malloc(size);
}

size_t je_xallocx(void *p, size_t size, size_t extra, int flags)
{
        (void)p, (void)extra, (void)flags;
        return size;
}

void je_sdallocx(void *p, size_t size, int flags)
{
        (void)size, (void)flags;
        je_free(p);
}
