//! Bounded memory, measured: a peer sending an endless line never makes
//! the reader allocate more than the line limit plus one read chunk.
//!
//! A global allocator records the largest single allocation made on each
//! thread, so tests running in parallel do not see each other's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io;

use io_reader::EndlessLine;
use io_run::run;
use ioloop::io::{DEFAULT_MAX_LINE_LENGTH, StreamReader};
use testkit::{io_reader, io_run};

/// The reader's growth unit: the slack in the memory bound.
const CHUNK: usize = 8 * 1024;

struct LargestAllocation;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn record(size: usize) {
    // `try_with`: the allocator also runs while thread locals are torn down.
    let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
}

/// The largest allocation on this thread since the last call.
fn take_largest() -> usize {
    LARGEST.with(|largest| largest.replace(0))
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are ours; recording touches only a
// const-initialised thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for LargestAllocation {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: LargestAllocation = LargestAllocation;

#[test]
fn an_endless_line_never_grows_memory_past_the_bound() -> io::Result<()> {
    run(|| async {
        // 32 MiB without a newline: 500 times the limit.
        let peer = EndlessLine::new(32 << 20, b"\nstill here\n");
        let mut reader = StreamReader::new(peer);
        take_largest();
        let err = reader.read_line().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        // Skips the remaining 32 MiB, then reads the next line.
        assert_eq!(reader.read_line().await?, Some(&b"still here"[..]));
        let largest = take_largest();
        let bound = DEFAULT_MAX_LINE_LENGTH + CHUNK;
        assert!(
            largest <= bound,
            "allocated {largest} bytes at once, bound {bound}"
        );
        assert!(reader.get_ref().largest_offer <= bound);
        assert!(reader.capacity() <= bound);
        Ok(())
    })
}

#[test]
fn an_endless_line_under_a_small_limit_costs_one_chunk() -> io::Result<()> {
    run(|| async {
        let peer = EndlessLine::new(8 << 20, b"\n");
        let mut reader = StreamReader::new(peer);
        reader.set_max_line_length(100);
        take_largest();
        assert!(reader.read_line().await.is_err());
        assert_eq!(reader.read_line().await?, None);
        let largest = take_largest();
        assert!(largest <= 100 + CHUNK, "allocated {largest} bytes at once");
        Ok(())
    })
}
