//! Units as people write them: rates (`"51.7Mbps"`), durations (`"2ms"`,
//! `"30s"`) and sizes (`"4KB"`, `"1MiB"`). Rates are bits per second, times
//! integer nanoseconds, sizes bytes. Decimal prefixes are powers of 1000
//! (`KB` = 1000 B, as in iperf and ns-3); binary prefixes (`KiB`) are powers
//! of 1024.

use crate::engine::Time;
use serde::{Deserialize, Serialize};
use std::fmt;

fn split_number(s: &str) -> Result<(f64, &str), String> {
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
    Ok((v, s[end..].trim()))
}

/// Parse a rate in bit/s: `bps`, `kbps`/`Kbps`, `Mbps`, `Gbps`, `Tbps`
/// (also `bit/s`, `kbit/s`, `Mbit/s`, `Gbit/s`).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    const ALLOWED: &str = "bps, kbps, Mbps, Gbps, Tbps (or bit/s, kbit/s, Mbit/s, Gbit/s)";
    let (v, unit) = split_number(s).map_err(|e| format!("{e}; units: {ALLOWED}"))?;
    let mult = match unit {
        "bps" | "bit/s" | "b/s" => 1.0,
        "kbps" | "Kbps" | "kbit/s" | "Kbit/s" => 1e3,
        "Mbps" | "mbps" | "Mbit/s" => 1e6,
        "Gbps" | "gbps" | "Gbit/s" => 1e9,
        "Tbps" | "Tbit/s" => 1e12,
        "" => {
            return Err(format!(
                "missing unit; write e.g. \"{v}Mbps\" (units: {ALLOWED})"
            ))
        }
        u => return Err(format!("unknown rate unit `{u}`; allowed: {ALLOWED}")),
    };
    let bps = (v * mult).round();
    if bps <= 0.0 {
        return Err("a rate must be positive".into());
    }
    Ok(bps as u64)
}

/// Parse a duration: `ns`, `us`, `ms`, `s`, `min`.
pub fn parse_duration(s: &str) -> Result<Time, String> {
    const ALLOWED: &str = "ns, us, ms, s, min";
    let (v, unit) = split_number(s).map_err(|e| format!("{e}; units: {ALLOWED}"))?;
    let mult = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "min" => 60e9,
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
    Ok((v * mult).round() as Time)
}

/// Parse a size in bytes: `B`, `KB`, `MB`, `GB` (×1000), `KiB`, `MiB`, `GiB` (×1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    const ALLOWED: &str = "B, KB, MB, GB, KiB, MiB, GiB";
    let (v, unit) = split_number(s).map_err(|e| format!("{e}; units: {ALLOWED}"))?;
    let mult = match unit {
        "B" | "bytes" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "" => {
            return Err(format!(
                "missing unit; write e.g. \"{v}KB\" (units: {ALLOWED})"
            ))
        }
        u => return Err(format!("unknown size unit `{u}`; allowed: {ALLOWED}")),
    };
    let b = (v * mult).round();
    if b <= 0.0 {
        return Err("a size must be positive".into());
    }
    Ok(b as u64)
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
