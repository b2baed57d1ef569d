/* An object defining a few allocator entry points, two of them aliases of one function. */
#include <stddef.h>

void *malloc(size_t size);
void free(void *p);
void *memalign(size_t align, size_t size);
int not_an_allocator(int x);

static char arena[4096];
static size_t used;

void *malloc(size_t size)
{
        void *p = arena + used;

        used += (size + 15) & ~(size_t)15;
        return p;
}

void free(void *p)
{
        (void)p;
}

void *memalign(size_t align, size_t size)
{
        (void)align;
        return malloc(size);
}

/* Same address as memalign: one probe site, not two. */
void *aligned_alloc(size_t align, size_t size) __attribute__((alias("memalign")));

int not_an_allocator(int x)
{
        return x + 1;
}
