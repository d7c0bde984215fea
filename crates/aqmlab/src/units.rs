//! Units as people write them: rates (`"51.7Mbps"`), durations (`"2ms"`,
//! `"30s"`) and sizes (`"4KB"`, `"1MiB"`). Rates are bits per second, times
//! integer nanoseconds, sizes bytes. Decimal prefixes are powers of 1000
//! (`KB` = 1000 B, as in iperf and ns-3); binary prefixes (`KiB`) are powers
//! of 1024.
//!
//! Every value must fit its integer type without wrapping or saturating, and
//! stay within bounds that leave room for sums in the simulation:
//! - durations at most [`MAX_TIME`] = 10¹⁸ ns (10⁹ s, about 31.7 years), so
//!   that a start time plus a spread plus a run length never wraps `u64`;
//! - rates from 1 bit/s to [`MAX_RATE`] = 10 Tbit/s;
//! - sizes from 1 B to [`MAX_SIZE`] = 10¹⁵ B (1 PB).
//!
//! A value outside these bounds is an error naming the bound, never a
//! rounded or clamped number.

use crate::engine::Time;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Largest duration a scenario may give, in nanoseconds (10⁹ s).
pub const MAX_TIME: Time = 1_000_000_000_000_000_000;
/// Largest rate, bit/s (10 Tbit/s).
pub const MAX_RATE: u64 = 10_000_000_000_000;
/// Largest size, bytes (10¹⁵ B = 1 PB).
pub const MAX_SIZE: u64 = 1_000_000_000_000_000;

/// `number × mult`, rounded to an integer: exact (in integer arithmetic) when
/// the number is written as an integer, else through `f64`. `None` when the
/// product exceeds `max`; `Some(0)` for zero or a negative number.
fn scale(num: &str, v: f64, mult: u64, max: u64) -> Option<u64> {
    if let Ok(n) = num.trim_start_matches('+').parse::<u64>() {
        return (n as u128 * mult as u128 <= max as u128).then(|| n * mult);
    }
    let x = (v * mult as f64).round();
    if x <= 0.0 {
        Some(0)
    } else if x > max as f64 {
        None
    } else {
        Some(x as u64)
    }
}

fn split_number_raw(s: &str) -> Result<(f64, &str, &str), String> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')
        })
        .unwrap_or(s.len());
    // guard against a unit that starts with 'e' being eaten: retry shorter
    let mut end = end;
    while end > 0 && s[..end].parse::<f64>().is_err() {
        end -= 1;
    }
    if end == 0 {
        return Err("expected a number followed by a unit".into());
    }
    let v: f64 = s[..end]
        .parse()
        .map_err(|_| "expected a number".to_string())?;
    if !v.is_finite() {
        return Err("the number is not finite".into());
    }
    Ok((v, &s[..end], s[end..].trim()))
}

/// Parse a rate in bit/s: `bps`, `kbps`/`Kbps`, `Mbps`, `Gbps`, `Tbps`
/// (also `bit/s`, `kbit/s`, `Mbit/s`, `Gbit/s`).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    const ALLOWED: &str = "bps, kbps, Mbps, Gbps, Tbps (or bit/s, kbit/s, Mbit/s, Gbit/s)";
    let (v, num, unit) = split_number_raw(s).map_err(|e| format!("{e}; units: {ALLOWED}"))?;
    let mult: u64 = match unit {
        "bps" | "bit/s" | "b/s" => 1,
        "kbps" | "Kbps" | "kbit/s" | "Kbit/s" => 1_000,
        "Mbps" | "mbps" | "Mbit/s" => 1_000_000,
        "Gbps" | "gbps" | "Gbit/s" => 1_000_000_000,
        "Tbps" | "Tbit/s" => 1_000_000_000_000,
        "" => {
            return Err(format!(
                "missing unit; write e.g. \"{v}Mbps\" (units: {ALLOWED})"
            ))
        }
        u => return Err(format!("unknown rate unit `{u}`; allowed: {ALLOWED}")),
    };
    if v < 0.0 {
        return Err("a rate must be positive (at least 1bps)".into());
    }
    match scale(num, v, mult, MAX_RATE) {
        None => Err("a rate must be at most 10Tbps".into()),
        Some(0) => Err("a rate must be positive (at least 1bps)".into()),
        Some(b) => Ok(b),
    }
}

/// [`parse_rate`], reading a zero (or below 1 bit/s) non-negative rate
/// as 0: for a key whose own check names its minimum (CAKE's
/// `bandwidth`, at least 512 bit/s), so the message says that minimum.
pub fn parse_rate_or_zero(s: &str) -> Result<u64, String> {
    match parse_rate(s) {
        Err(m)
            if m.contains("at least 1bps")
                && split_number_raw(s).is_ok_and(|(v, _, _)| v >= 0.0) =>
        {
            Ok(0)
        }
        r => r,
    }
}

/// Parse a duration: `ns`, `us`, `ms`, `s`, `min`.
pub fn parse_duration(s: &str) -> Result<Time, String> {
    const ALLOWED: &str = "ns, us, ms, s, min";
    let (v, num, unit) = split_number_raw(s).map_err(|e| format!("{e}; units: {ALLOWED}"))?;
    let mult: u64 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "min" => 60_000_000_000,
        "" => {
            return Err(format!(
                "missing unit; write e.g. \"{v}ms\" (units: {ALLOWED})"
            ))
        }
        u => return Err(format!("unknown time unit `{u}`; allowed: {ALLOWED}")),
    };
    if v < 0.0 {
        return Err("a duration cannot be negative".into());
    }
    scale(num, v, mult, MAX_TIME)
        .ok_or_else(|| "a duration must be at most 1000000000s (10^18 ns)".into())
}

/// Parse a size in bytes: `B`, `KB`, `MB`, `GB` (×1000), `KiB`, `MiB`, `GiB` (×1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    const ALLOWED: &str = "B, KB, MB, GB, KiB, MiB, GiB";
    let (v, num, unit) = split_number_raw(s).map_err(|e| format!("{e}; units: {ALLOWED}"))?;
    let mult: u64 = match unit {
        "B" | "bytes" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "" => {
            return Err(format!(
                "missing unit; write e.g. \"{v}KB\" (units: {ALLOWED})"
            ))
        }
        u => return Err(format!("unknown size unit `{u}`; allowed: {ALLOWED}")),
    };
    if v < 0.0 {
        return Err("a size must be positive (at least 1B)".into());
    }
    match scale(num, v, mult, MAX_SIZE) {
        None => Err("a size must be at most 10^15 B (1000000GB)".into()),
        Some(0) => Err("a size must be positive (at least 1B)".into()),
        Some(b) => Ok(b),
    }
}

/// A byte count that fits in a `u32`, written either as a plain integer of
/// bytes (`mss = 1000`) or as a size with a unit like every other size
/// (`mss = "1000B"`, `"1.5KB"`; `--set tcp.mss=1000B`). For serde's
/// `deserialize_with` on `Option<u32>` fields (`tcp.mss`,
/// `tcp.header_bytes`); the range checks stay with the field's validation.
pub fn opt_bytes_u32<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = Option<u32>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(
                f,
                "a non-negative integer of bytes (at most 4294967295) or a size such as \"1000B\""
            )
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Option<u32>, E> {
            u32::try_from(v).map(Some).map_err(|_| {
                E::custom(format!(
                    "invalid value: integer `{v}`, expected a non-negative integer (at most 4294967295)"
                ))
            })
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Option<u32>, E> {
            match u64::try_from(v) {
                Ok(u) => self.visit_u64(u),
                Err(_) => Err(E::custom(format!(
                    "invalid value: integer `{v}`, expected a non-negative integer (at most 4294967295)"
                ))),
            }
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Option<u32>, E> {
            let b = parse_size(s).map_err(|m| E::custom(format!("invalid size `{s}`: {m}")))?;
            u32::try_from(b)
                .map(Some)
                .map_err(|_| E::custom(format!("invalid size `{s}`: at most 4294967295 B")))
        }
    }
    d.deserialize_any(V)
}

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:ident, $what:literal, $fmt:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "a {} string such as {}", $what, $fmt)
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s)
                            .map($name)
                            .map_err(|m| E::custom(format!("invalid {} `{}`: {}", $what, s, m)))
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!(
                            "invalid {} {}: a unit is required, e.g. {}",
                            $what, v, $fmt
                        )))
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(v as i64)
                    }
                    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!(
                            "invalid {} {}: a unit is required, e.g. {}",
                            $what, v, $fmt
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Rate, u64, parse_rate, "rate", "\"51.7Mbps\"");
unit_type!(Dur, Time, parse_duration, "duration", "\"2ms\"");
unit_type!(Size, u64, parse_size, "size", "\"4KB\"");

impl Serialize for Rate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}bps", self.0))
    }
}
impl Serialize for Dur {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}ns", self.0))
    }
}
impl Serialize for Size {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}B", self.0))
    }
}

impl Dur {
    pub fn secs(&self) -> f64 {
        crate::engine::to_secs(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("51.7Mbps").unwrap(), 51_700_000);
        assert_eq!(parse_rate("1Gbps").unwrap(), 1_000_000_000);
        assert_eq!(parse_rate("622 Mbit/s").unwrap(), 622_000_000);
        assert_eq!(parse_rate("300kbps").unwrap(), 300_000);
        assert!(parse_rate("-5Mbps").unwrap_err().contains("positive"));
        assert!(parse_rate("0Mbps").unwrap_err().contains("positive"));
        assert!(parse_rate("10Mbsp")
            .unwrap_err()
            .contains("unknown rate unit `Mbsp`"));
        assert!(parse_rate("10").unwrap_err().contains("missing unit"));
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2ms").unwrap(), 2_000_000);
        assert_eq!(parse_duration("30s").unwrap(), 30_000_000_000);
        assert_eq!(parse_duration("0.5s").unwrap(), 500_000_000);
        assert_eq!(parse_duration("10us").unwrap(), 10_000);
        assert_eq!(parse_duration("0s").unwrap(), 0);
        assert!(parse_duration("-1ms").is_err());
        assert!(parse_duration("5 fortnights")
            .unwrap_err()
            .contains("unknown time unit"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4KB").unwrap(), 4000);
        assert_eq!(parse_size("1KiB").unwrap(), 1024);
        assert_eq!(parse_size("62B").unwrap(), 62);
        assert_eq!(parse_size("1.5MB").unwrap(), 1_500_000);
        assert!(parse_size("12XB").is_err());
    }

    #[test]
    fn values_that_do_not_fit_are_rejected_not_wrapped() {
        // issue 13: these used to wrap or saturate silently
        assert!(parse_duration("1e30s").unwrap_err().contains("at most"));
        assert!(parse_duration("18446744073709551615ns")
            .unwrap_err()
            .contains("at most"));
        assert!(parse_duration("1000000001s").is_err());
        assert_eq!(parse_duration("1000000000s").unwrap(), MAX_TIME);
        // integers are exact beyond f64's 2^53
        assert_eq!(
            parse_duration("900719925474099393ns").unwrap(),
            900_719_925_474_099_393
        );
        assert!(parse_size("1e16B").unwrap_err().contains("at most"));
        assert_eq!(parse_size("1000000GB").unwrap(), MAX_SIZE);
        assert!(parse_rate("1e30Tbps")
            .unwrap_err()
            .contains("at most 10Tbps"));
        assert_eq!(parse_rate("10Tbps").unwrap(), MAX_RATE);
        assert!(parse_rate("0.0001bps").unwrap_err().contains("positive"));
        assert!(parse_size("0.2B").unwrap_err().contains("positive"));
        assert!(parse_duration("-0s").is_ok());
    }

    #[test]
    fn byte_counts_take_an_integer_or_a_size() {
        #[derive(Deserialize)]
        struct T {
            #[serde(default, deserialize_with = "opt_bytes_u32")]
            mss: Option<u32>,
        }
        let mss = |text: &str| toml::from_str::<T>(text).map(|t| t.mss);
        assert_eq!(mss("mss = 1000").unwrap(), Some(1000));
        assert_eq!(mss("mss = \"1000B\"").unwrap(), Some(1000));
        assert_eq!(mss("mss = \"1.5KB\"").unwrap(), Some(1500));
        assert_eq!(mss("mss = \"1KiB\"").unwrap(), Some(1024));
        assert_eq!(mss("").unwrap(), None);
        for bad in [
            "mss = -1",
            "mss = 4294967296",
            "mss = \"5GB\"",
            "mss = \"1000\"",
            "mss = 1.5",
        ] {
            assert!(mss(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn deserialize_requires_unit() {
        #[derive(Deserialize)]
        struct T {
            #[allow(dead_code)]
            r: Rate,
        }
        let e = toml::from_str::<T>("r = 10").err().unwrap().to_string();
        assert!(e.contains("a unit is required"), "{e}");
        let ok: T = toml::from_str("r = \"10Mbps\"").unwrap();
        assert_eq!(ok.r.0, 10_000_000);
    }
}
