//! Per-component random-number streams.
//!
//! Every component (a queue, a lossy link, a flow group) draws from its own
//! stream, seeded from `(run seed, component id)` through SplitMix64, so adding
//! a flow does not change another component's draws. Component ids come from a
//! stable hash of the component's name ([`stream_id`]), never from creation
//! order. The generator is PCG-64 (MCG variant, `rand_pcg::Pcg64Mcg`), whose
//! output sequence is fixed by its specification, so results do not change with
//! the `rand` version.

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// SplitMix64 finaliser (Steele, Lea, Flood 2014), used to spread seeds.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stable 64-bit id for a component name (FNV-1a), independent of build order.
pub fn stream_id(name: &str) -> u64 {
    stream_id_of(&[name])
}

/// [`stream_id`] of the concatenation of `parts`, without building it.
pub fn stream_id_of(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in parts.iter().flat_map(|p| p.as_bytes()) {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A random stream owned by one component.
#[derive(Clone, Debug)]
pub struct RngStream(Pcg64Mcg);

impl RngStream {
    /// The stream of component `component` in a run with seed `seed`.
    pub fn new(seed: u64, component: u64) -> Self {
        let a = splitmix64(seed ^ splitmix64(component));
        let b = splitmix64(a ^ 0xD1B5_4A32_D192_ED03);
        let s = ((a as u128) << 64) | b as u128;
        RngStream(Pcg64Mcg::new(s | 1))
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Bernoulli trial with success probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((self.0.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

impl RngCore for RngStream {
    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.fill_bytes(dest)
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.0.try_fill_bytes(dest)
    }
}

impl SeedableRng for RngStream {
    type Seed = [u8; 16];
    fn from_seed(seed: Self::Seed) -> Self {
        RngStream(Pcg64Mcg::from_seed(seed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_component_same_stream() {
        let mut a = RngStream::new(7, stream_id("queue:gw->sink"));
        let mut b = RngStream::new(7, stream_id("queue:gw->sink"));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_differ_by_seed_and_component() {
        let x = RngStream::new(1, 1).next_u64();
        assert_ne!(x, RngStream::new(2, 1).next_u64());
        assert_ne!(x, RngStream::new(1, 2).next_u64());
    }

    #[test]
    fn uniform_mean_is_half() {
        let mut r = RngStream::new(3, 4);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((m - 0.5).abs() < 0.005, "mean {m}");
    }
}
