//! What the process gives back to the system once a large structure is freed.
//!
//! An import makes millions of small allocations (names, ids, labels, hash entries) and frees
//! many of them between its stages: the read's look-ups once the program is placed, the
//! activities once the case is built. glibc's allocator keeps such freed pages mapped, so
//! they still count in the peak resident size of the next stage: at ×10 of
//! `df_index_resolver` about 18 MB (BENCHMARKS.md, issue 24's memory sections). A
//! [`give_back_freed`] between the stages of a large read returns the free pages; after a
//! small read, or with another C library, it does nothing. [`map_large_blocks`] keeps the
//! large lists out of the heap, so that their growth and their freeing leave no holes.
//! (mimalloc, measured as an alternative, ran 15 % less CPU but held 2.7× the resident
//! memory at ×1.)

/// The size from which a block is mapped on its own ([`map_large_blocks`]): 1 MiB.
pub const LARGE_BLOCK_BYTES: usize = 1 << 20;

/// Maps every block of at least [`LARGE_BLOCK_BYTES`] on its own, for the whole process
/// (glibc's `M_MMAP_THRESHOLD`, fixed). By default glibc raises that threshold each time a
/// mapped block is freed, up to 32 MiB, so an import's large lists (the calls, the work, the
/// plan, each a few MiB to a few tens) end up inside the heap, where a list grown by doubling
/// leaves its old copies as holes that still count as resident. Mapped on their own, a list
/// grows in place (`mremap`) and a freed one goes back to the system at once. At ×10 of
/// `df_index_resolver` the peak resident size fell from 197 to 180 MB (BENCHMARKS.md).
/// No effect on other C libraries.
pub fn map_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a tuning parameter of the allocator; it touches no
    // allocation, and a threshold in range is always accepted.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES as libc::c_int);
    }
}

/// The number of events from which a read is large enough for [`give_back_freed`] to pay:
/// below it the pages a trim returns are few and its system calls are not (1,024 ranks of
/// 4,800 events each took 3.5 s more system time with a trim per rank, 5.0 s against 1.5 s).
/// `df_index_resolver` has 216,092 events.
pub const LARGE_READ_EVENTS: usize = 100_000;

/// Returns the pages the allocator holds free to the system (glibc's `malloc_trim`) after a
/// read of `events_read` events, when that is a large read ([`LARGE_READ_EVENTS`]): a trim
/// costs a walk over the heap's free lists and system calls. No effect on other C libraries.
pub fn give_back_freed(events_read: usize) {
    if events_read < LARGE_READ_EVENTS {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases memory the allocator holds free; it touches no
    // live allocation and is safe to call at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
