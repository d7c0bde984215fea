//! The discrete-event engine: integer-nanosecond time, one event queue with a
//! model-derived tie-break, cheaply re-armable timers and per-component RNG
//! streams. It knows nothing of networks.

mod queue;
mod rng;
mod timer;

pub use queue::{EventQueue, Tie};
pub use rng::{splitmix64, stream_id, RngStream};
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
    fn secs_round_trip() {
        assert_eq!(secs(0.002), 2_000_000);
        assert_eq!(to_secs(secs(30.0)), 30.0);
    }
}
