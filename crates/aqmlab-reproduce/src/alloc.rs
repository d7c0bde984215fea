//! A global allocator that asks Linux to back large allocations with
//! transparent huge pages.
//!
//! With 10⁵ flows nearly every event misses in cache on a flow record, a
//! link record and a packet slot, spread over hundreds of MiB. On 4 KiB
//! pages each of those misses also misses in the TLB; on 2 MiB pages the
//! page walk is mostly cached. Measured on the 2-core machine of the README
//! (random independent cache lines of a 512 MiB array): 21 ns per line on
//! 4 KiB pages, 13 ns on 2 MiB pages.
//!
//! Most distributions set `/sys/kernel/mm/transparent_hugepage/enabled` to
//! `madvise`, so a process gets huge pages only where it asks for them with
//! `madvise(MADV_HUGEPAGE)` (Linux `Documentation/admin-guide/mm/transhuge`,
//! "Transparent Hugepage Support"). This allocator passes every request to
//! the system allocator and advises the pages of each block of at least
//! [`MIN_ADVISED`] bytes ([`aqmlab::engine::advise_huge_pages`], which the
//! library also applies to its flow records whatever the allocator): the
//! per-flow and per-link arrays of a large run, not the small objects.
//! The advice changes which pages back
//! memory, never its contents, so results are the same with or without it;
//! it is ignored where the kernel disables huge pages and is not made on
//! other systems.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks at least this large are advised: the per-link and per-flow
/// arrays of runs with tens of thousands of flows (the star's 2·10⁵ link
/// records at 10⁵ flows take 141 MB). Advising every block of 4 MiB
/// or more (a huge page is 2 MiB) gave the star with 10⁵ flows no more
/// speed than this, and cost the rio-ps reproduction, whose web runs
/// allocate and free many blocks of a few MiB, 3 % more CPU time (kernel
/// time zeroing huge pages: 9.5 → 14.7 s); with this threshold, 1 %.
pub const MIN_ADVISED: usize = 32 << 20;

/// The system allocator, with huge-page advice on large blocks.
pub struct HugePages;

fn advise(p: *mut u8, len: usize) {
    aqmlab::engine::advise_huge_pages(p, len);
}

// SAFETY: every method forwards to `System` with the caller's arguments and
// returns its pointer unchanged; `advise` only gives advice on the block.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if layout.size() >= MIN_ADVISED && !p.is_null() {
            advise(p, layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if layout.size() >= MIN_ADVISED && !p.is_null() {
            advise(p, layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if new_size >= MIN_ADVISED && !p.is_null() {
            advise(p, new_size);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_and_small_blocks_keep_their_contents() {
        let a = HugePages;
        for size in [64, MIN_ADVISED - 1, MIN_ADVISED, MIN_ADVISED + 4097] {
            let layout = Layout::from_size_align(size, 64).unwrap();
            unsafe {
                let p = a.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert_eq!(p as usize % 64, 0);
                let s = std::slice::from_raw_parts_mut(p, size);
                assert!(s.iter().all(|&b| b == 0), "zeroed block of {size} bytes");
                s[0] = 7;
                s[size - 1] = 9;
                let q = a.realloc(p, layout, 2 * size);
                assert!(!q.is_null());
                assert_eq!((*q, *q.add(size - 1)), (7, 9), "realloc of {size} bytes");
                a.dealloc(q, Layout::from_size_align(2 * size, 64).unwrap());
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_large_block_is_advised() {
        // The kernel lists an advised range's flag `hg` in /proc/self/smaps
        // where transparent huge pages exist at all; elsewhere there is
        // nothing to check.
        if !std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .is_ok_and(|s| !s.contains("[never]"))
        {
            return;
        }
        let a = HugePages;
        let layout = Layout::from_size_align(2 * MIN_ADVISED, 4096).unwrap();
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
            let addr = p as usize + MIN_ADVISED;
            let mut inside = false;
            let mut flags = None;
            for line in smaps.lines() {
                if let Some((range, _)) = line.split_once(' ') {
                    if let Some((lo, hi)) = range.split_once('-') {
                        if let (Ok(lo), Ok(hi)) =
                            (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                        {
                            inside = lo <= addr && addr < hi;
                            continue;
                        }
                    }
                }
                if inside {
                    if let Some(f) = line.strip_prefix("VmFlags:") {
                        flags = Some(f.to_string());
                    }
                }
            }
            a.dealloc(p, layout);
            let flags = flags.expect("the block's mapping is listed in smaps");
            assert!(
                flags.split_whitespace().any(|f| f == "hg"),
                "VmFlags of the block: {flags}"
            );
        }
    }
}
