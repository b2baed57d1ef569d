// SPDX-License-Identifier: MIT
// A class hierarchy leaking through a virtual factory, and a leak inside an inlined helper, built
// the way users build C++: -O2 -g with frame pointers, libstdc++ as Debian ships it.
//
// Ground truth (tests/integration/test_cxx_shapes.py keeps the same numbers):
//   CircleFactory::create()       CIRCLES blocks of sizeof(Circle) = 16 bytes, reached through
//                                 the virtual ShapeFactory::create() from build_scene()
//   Polygon::Polygon(int)         POLYGONS blocks of 6 * sizeof(double) = 48 bytes (its vertices,
//                                 which ~Polygon forgets), beside the Polygon objects it deletes
//   make_buffer (inlined)         BUFFERS blocks of 40 bytes (new char[]), inlined into
//                                 fill_buffers(): the frame is make_buffer [inlined] at its line,
//                                 then fill_buffers() at the line that called it
//   SquareFactory::create()       balanced: every Square is deleted through Shape* (virtual dtor)
// Protocol: print "ready", wait for a line ("go"), leak, print "done", wait for EOF.
#include <cstddef>
#include <cstring>

extern "C" {
#include "leak-util.h"
}

#define noinline __attribute__((noinline))

static const int CIRCLES = 4;
static const int SQUARES = 9;
static const int POLYGONS = 3;
static const int BUFFERS = 5;

void *volatile keep[64];
static int n_keep;

struct Shape {
        virtual ~Shape() = default;
        virtual double area() const = 0;
};

struct Circle : Shape {
        explicit Circle(double r) : radius(r) {}
        double area() const override { return 3.14159 * radius * radius; }
        double radius;
};

struct Square : Shape {
        explicit Square(double s) : side(s) {}
        double area() const override { return side * side; }
        double side;
};

struct Polygon : Shape {
        noinline explicit Polygon(int n);
        ~Polygon() override {}          // the bug: vertices are never deleted
        double area() const override { return vertices[0]; }
        double *vertices;
};

noinline Polygon::Polygon(int n)
{
        vertices = new double[n];       // site: Polygon::Polygon
        for (int i = 0; i < n; i++)
                vertices[i] = i;
}

struct ShapeFactory {
        virtual ~ShapeFactory() = default;
        virtual Shape *create(double size) = 0;
};

struct CircleFactory : ShapeFactory {
        noinline Shape *create(double size) override
        {
                return new Circle(size);        // site: CircleFactory::create
        }
};

struct SquareFactory : ShapeFactory {
        noinline Shape *create(double size) override
        {
                return new Square(size);        // site: SquareFactory::create
        }
};

// The factory is picked at run time, so the compiler cannot devirtualize the call.
noinline double build_scene(ShapeFactory *const *factories, int n_factories)
{
        double total = 0;

        for (int i = 0; i < CIRCLES + SQUARES; i++) {
                ShapeFactory *f = factories[i < CIRCLES ? 0 : n_factories - 1];
                Shape *s = f->create(i + 1.0);

                total += s->area();
                if (i < CIRCLES)
                        keep[n_keep++] = s;     // circles are kept: leaked
                else
                        delete s;               // squares go through the virtual destructor
        }
        return total;
}

noinline double polygons()
{
        double total = 0;

        for (int i = 0; i < POLYGONS; i++) {
                Shape *p = new Polygon(6);
                total += p->area();
                delete p;                       // the Polygon goes, its vertices stay
        }
        return total;
}

__attribute__((always_inline)) static inline char *make_buffer(std::size_t n)
{
        char *b = new char[n];                  // site: make_buffer
        std::memset(b, 'x', n);
        return b;
}

noinline void fill_buffers()
{
        for (int i = 0; i < BUFFERS; i++)
                keep[n_keep++] = make_buffer(40);       // site: fill_buffers
}

int main()
{
        CircleFactory circles;
        SquareFactory squares;
        ShapeFactory *factories[] = { &circles, &squares };
        volatile int n_factories = 2;

        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        require(build_scene(factories, n_factories) > 0);
        require(polygons() == 0);
        fill_buffers();
        say("done");
        wait_line();
        return 0;
}
