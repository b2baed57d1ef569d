// SPDX-License-Identifier: MIT
// A Rust program on the system allocator (rustc from Debian), leaking through Box::leak and an
// Rc cycle, beside balanced churn. Built twice: legacy symbol mangling and v0.
//
// Ground truth (tests/integration/test_rust.py keeps the same numbers):
//   leak_rust::leak_boxes      BOXES blocks of 96 bytes (Box<[u8; 96]>, Box::leak)
//   leak_rust::leak_rc_cycle   2 * CYCLES blocks of 72 bytes: each RcBox<RefCell<Node>> is two
//                              counts (16) + the RefCell's borrow flag (8) + Node (8 + 40)
//   leak_rust::balanced_churn  Vec, String and Box churn, all dropped: nothing outstanding
// Protocol: print "ready", wait for a line ("go"), leak, print "done", wait for EOF.
//
// Built with --cfg rjem, its global allocator calls _rjem_malloc & co, defined in the program
// itself, as Rust's tikv-jemallocator links jemalloc in (here they serve the blocks from libc's
// malloc, inside them): the same ground truth.
use std::cell::RefCell;
use std::io::{self, BufRead, Write};
use std::rc::Rc;

const BOXES: usize = 7;
const CYCLES: usize = 3;

struct Node {
    next: Option<Rc<RefCell<Node>>>,
    payload: [u64; 5],
}

static mut KEEP: [usize; 16] = [0; 16];

#[cfg(rjem)]
mod rjem {
    use std::alloc::{GlobalAlloc, Layout};

    extern "C" {
        fn malloc(size: usize) -> *mut u8;
        fn calloc(n: usize, size: usize) -> *mut u8;
        fn realloc(ptr: *mut u8, size: usize) -> *mut u8;
        fn free(ptr: *mut u8);
    }

    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn _rjem_malloc(size: usize) -> *mut u8 {
        malloc(size)
    }

    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn _rjem_calloc(n: usize, size: usize) -> *mut u8 {
        calloc(n, size)
    }

    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn _rjem_realloc(ptr: *mut u8, size: usize) -> *mut u8 {
        realloc(ptr, size)
    }

    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn _rjem_sdallocx(ptr: *mut u8, _size: usize, _flags: i32) {
        free(ptr)
    }

    // Every allocation of this program is aligned to 16 bytes at most: malloc's alignment.
    pub struct Jemalloc;

    unsafe impl GlobalAlloc for Jemalloc {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            assert!(layout.align() <= 16);
            _rjem_malloc(layout.size())
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            assert!(layout.align() <= 16);
            _rjem_calloc(1, layout.size())
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            assert!(layout.align() <= 16);
            _rjem_realloc(ptr, new_size)
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            _rjem_sdallocx(ptr, layout.size(), 0)
        }
    }

    #[global_allocator]
    static GLOBAL: Jemalloc = Jemalloc;
}

#[inline(never)]
fn leak_boxes() {
    for i in 0..BOXES {
        let leaked: &'static mut [u8; 96] = Box::leak(Box::new([i as u8; 96])); // site: leak_boxes
        // Kept where the optimizer cannot see through, so the allocation stays.
        unsafe { std::ptr::write_volatile(&mut KEEP[i], leaked.as_ptr() as usize) };
    }
}

#[inline(never)]
fn leak_rc_cycle() {
    for i in 0..CYCLES {
        let a = Rc::new(RefCell::new(Node { next: None, payload: [i as u64; 5] })); // site: leak_rc_cycle
        let b = Rc::new(RefCell::new(Node { next: Some(a.clone()), payload: [0; 5] })); // site: leak_rc_cycle
        a.borrow_mut().next = Some(b.clone());
        // a and b go out of scope here, but each keeps the other alive: both leak.
        assert_eq!(Rc::strong_count(&a), 2);
        assert_eq!(a.borrow().payload[0] + b.borrow().payload[0], i as u64);
    }
}

#[inline(never)]
fn balanced_churn() -> usize {
    let mut total = 0;
    for round in 0..50 {
        let mut v: Vec<u64> = Vec::new();
        for i in 0..(round + 1) * 10 {
            v.push(i as u64); // grows through realloc
        }
        let s = format!("round {} of {}", round, v.len());
        let b = Box::new([round as u8; 300]);
        total += v.len() + s.len() + b[0] as usize;
    }
    total
}

fn wait_line(stdin: &io::Stdin) -> bool {
    let mut line = String::new();
    matches!(stdin.lock().read_line(&mut line), Ok(n) if n > 0)
}

fn say(word: &str) {
    let mut out = io::stdout().lock();
    writeln!(out, "{}", word).unwrap();
    out.flush().unwrap();
}

fn main() {
    // stdin's buffer and stdout's are allocated here, before the test attaches.
    let stdin = io::stdin();
    say("ready");
    if !wait_line(&stdin) {
        std::process::exit(1);
    }
    leak_boxes();
    leak_rc_cycle();
    assert!(balanced_churn() > 0);
    say("done");
    wait_line(&stdin);
}
