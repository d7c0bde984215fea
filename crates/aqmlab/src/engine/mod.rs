//! The discrete-event engine: integer-nanosecond time, one event queue with a
//! model-derived tie-break, cheaply re-armable timers and per-component RNG
//! streams. It knows nothing of networks.

mod queue;
mod rng;
mod timer;

pub use queue::{EventQueue, TieBreak};
pub use rng::{splitmix64, stream_id, stream_id_of, RngStream};
pub use timer::{Timer, TimerAction};

/// Simulated time in integer nanoseconds. No floating-point clock anywhere.
pub type Time = u64;

/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Convert seconds (as written in a scenario, possibly fractional) to [`Time`],
/// rounding to the nearest nanosecond.
pub fn secs(s: f64) -> Time {
    (s * NS_PER_SEC as f64).round() as Time
}

/// Convert a [`Time`] to seconds for reporting.
pub fn to_secs(t: Time) -> f64 {
    t as f64 / NS_PER_SEC as f64
}

/// Serialisation delay of `bytes` on a link of `rate_bps`, rounded to the
/// nearest nanosecond: `size · 8 / rate`.
pub fn tx_time(bytes: u32, rate_bps: u64) -> Time {
    let bits = bytes as u128 * 8 * NS_PER_SEC as u128;
    ((bits + rate_bps as u128 / 2) / rate_bps as u128) as Time
}

/// Ask the CPU to bring the cache lines of `x` (at most `max_lines` of
/// 64 bytes from its start) into cache, without waiting for them and without
/// any effect on the program's results. The event loop calls it for the
/// state the *next* event will touch, so that with 10⁵ flows — whose
/// records do not fit in cache — the memory latency of that event overlaps
/// the work of the current one.
#[inline(always)]
pub fn prefetch<T>(x: &T, max_lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = x as *const T as *const i8;
        let n = std::mem::size_of::<T>().div_ceil(64).min(max_lines);
        for i in 0..n {
            // SAFETY: a prefetch is a hint: it never faults and has no
            // architectural effect; `p + 64 i` lies within `*x` (SSE is part
            // of the x86_64 baseline).
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(64 * i),
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (x, max_lines);
}

/// Like [`prefetch`], for one cache line at a raw address (the data of a
/// boxed object or a buffer whose owner is already in cache). Any address,
/// even a dangling one, is allowed: a prefetch never faults.
#[inline(always)]
pub fn prefetch_addr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults and has no
    // architectural effect, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Ask the kernel to back the buffer of `v` (its whole capacity) with
/// transparent huge pages (see [`advise_huge_pages`]). A hint with no
/// effect on results: with 10⁵ flows each event touches a flow record at
/// random in 100 MiB, and with 4 KiB pages nearly every such access also
/// misses the TLB (a page walk before the cache miss). Call it before the
/// buffer is filled: the pages are chosen when first touched.
pub fn huge_pages<T>(v: &Vec<T>) {
    advise_huge_pages(
        v.as_ptr() as *const u8,
        v.capacity() * std::mem::size_of::<T>(),
    );
}

/// Ask the kernel to back the whole 2 MiB pages inside `[start, start +
/// bytes)`, a block of memory the caller owns, with transparent huge pages
/// (Linux `madvise(MADV_HUGEPAGE)`, which most distributions require
/// before they use huge pages for a process's memory; elsewhere, or for a
/// block under 4 MiB, nothing). The advice changes how the pages are
/// backed, never their contents; a failure (huge pages disabled) is
/// ignored.
pub fn advise_huge_pages(start: *const u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if bytes < 2 * HUGE {
            return;
        }
        let from = (start as usize).next_multiple_of(HUGE);
        let end = (start as usize + bytes) & !(HUGE - 1);
        if end > from {
            // SAFETY: [from, end) lies within the caller's block;
            // MADV_HUGEPAGE changes how its pages are backed, not their
            // contents, and a failure (e.g. THP disabled) is harmless.
            unsafe {
                libc::madvise(from as *mut libc::c_void, end - from, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
}

/// Prefetch every cache line that bytes `[from, to)` touch (see
/// [`prefetch`]); the addresses need not be valid.
#[inline(always)]
pub fn prefetch_range(from: *const u8, to: *const u8) {
    // the first line starts at or below `from`, so the offsets are taken
    // modulo 2^64 (a line start below `from` is a negative offset)
    let first = from as usize & !63;
    let mut a = first;
    while a < to as usize {
        prefetch_addr(from.wrapping_add(a.wrapping_sub(from as usize)));
        a += 64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_size_times_8_over_rate() {
        // 572-byte packet on 51.7 Mbit/s: 4576 bits / 51.7e6 = 88.51 us.
        assert_eq!(tx_time(572, 51_700_000), 88_511);
        assert_eq!(tx_time(1500, 1_000_000_000), 12_000);
        assert_eq!(tx_time(1000, 8_000), NS_PER_SEC);
    }

    #[test]
    fn prefetch_range_takes_an_address_inside_a_line() {
        // `from` 1 byte into a line: the first line starts below it (the
        // fuzz profile's overflow checks caught a subtraction here)
        let buf = [0u8; 256];
        let p = buf
            .as_ptr()
            .wrapping_add(64 - (buf.as_ptr() as usize % 64) + 1);
        prefetch_range(p, p.wrapping_add(100));
        prefetch_range(p, p);
    }

    #[test]
    fn secs_round_trip() {
        assert_eq!(secs(0.002), 2_000_000);
        assert_eq!(to_secs(secs(30.0)), 30.0);
    }
}
