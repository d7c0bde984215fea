//! The workload registry: the trait a workload's spec implements, and the
//! macro that turns the list in `traffic/mod.rs` (one line per workload)
//! into [`super::WorkloadSpec`], its names, parsing, validation and
//! building. See `crate::registry` for the parsing rules.

use super::Workload;
pub use crate::registry::{KindInfo, Param, Registered};
use crate::tcp::TcpOptions;

/// A workload's spec: its `kind`, parameters, hosts and constructor.
pub trait WorkloadKind: Registered {
    /// The running workload for a run with `seed`; `tcp` is the scenario's
    /// global `[tcp]` table.
    fn build(&self, tcp: &TcpOptions, seed: u64) -> Box<dyn Workload>;
    /// The workload's `name`.
    fn name(&self) -> &str;
    /// (key, host) pairs it runs between, e.g. `("client", "h1")`.
    fn hosts(&self) -> Vec<(&'static str, &str)>;
    /// Its TCP overrides, if it runs TCP.
    fn tcp_options(&self) -> Option<&TcpOptions> {
        None
    }
    /// Flows it opens over a run of `duration` ns (expected value, for the
    /// resource limits), and the key that sets their number.
    fn expected_flows(&self, duration: u64) -> (u64, &'static str);
    /// The largest transfers it opens, bytes, by the key that sets them
    /// (`mss` converts sizes counted in segments), for the segment-counter
    /// check.
    fn largest_transfers(&self, mss: u32) -> Vec<(&'static str, u64)>;
    /// Its lists of hosts that may hold `prefix*` patterns, by key (expanded
    /// to the matching hosts when the scenario is loaded); none by default.
    fn host_lists_mut(&mut self) -> Vec<(&'static str, &mut Vec<String>)> {
        Vec::new()
    }
}

/// Register workloads: `module::Spec => Variant,` per line. The module is
/// declared here (`pub mod module;`), `Spec` implements [`WorkloadKind`],
/// and `WorkloadSpec::Variant(Spec)` is the enum case.
macro_rules! workload_kinds {
    ($($m:ident :: $cfg:ident => $var:ident,)*) => {
        $(pub mod $m;)*

        /// The workloads a scenario can declare in `[[workloads]]`, by
        /// `kind` (generated from the registry in `traffic/mod.rs`).
        #[derive(Clone, Debug)]
        pub enum WorkloadSpec {
            $(
                #[doc = concat!("`", stringify!($m), "`: see [`", stringify!($m), "::", stringify!($cfg), "`].")]
                $var($m::$cfg),
            )*
        }

        impl WorkloadSpec {
            /// The names accepted for `kind`, in registration order.
            pub const KINDS: &'static [&'static str] =
                &[$(<$m::$cfg as $crate::registry::Registered>::KIND),*];

            /// Every registered workload, for listing and tests.
            pub fn registry() -> Vec<$crate::registry::KindInfo> {
                vec![$($crate::registry::KindInfo::of::<$m::$cfg>()),*]
            }

            fn as_kind(&self) -> &dyn $crate::traffic::registry::WorkloadDyn {
                match self {
                    $(WorkloadSpec::$var(c) => c,)*
                }
            }

            fn as_kind_mut(&mut self) -> &mut dyn $crate::traffic::registry::WorkloadDyn {
                match self {
                    $(WorkloadSpec::$var(c) => c,)*
                }
            }

            /// Its host lists that may hold `prefix*` patterns, by key
            /// (see [`WorkloadKind::host_lists_mut`]).
            pub fn host_lists_mut(&mut self) -> Vec<(&'static str, &mut Vec<String>)> {
                self.as_kind_mut().host_lists_mut()
            }

            /// Flows it opens over a run of `duration` ns, and the key
            /// that sets their number (see [`WorkloadKind::expected_flows`]).
            pub fn expected_flows(&self, duration: u64) -> (u64, &'static str) {
                self.as_kind().expected_flows(duration)
            }

            /// Its largest transfers, bytes, by key (see
            /// [`WorkloadKind::largest_transfers`]).
            pub fn largest_transfers(&self, mss: u32) -> Vec<(&'static str, u64)> {
                self.as_kind().largest_transfers(mss)
            }

            pub fn kind(&self) -> &'static str {
                match self {
                    $(WorkloadSpec::$var(_) => <$m::$cfg as $crate::registry::Registered>::KIND,)*
                }
            }

            /// Parse a `{ kind = "...", ... }` table; errors are (key path
            /// inside the table, message).
            pub fn from_value(v: toml::Value) -> Result<WorkloadSpec, (String, String)> {
                let (kind, rest) = $crate::registry::split_kind(v, "workload kind", Self::KINDS, false)?;
                $(
                    if kind == <$m::$cfg as $crate::registry::Registered>::KIND {
                        return $crate::registry::parse_kind::<$m::$cfg>(rest).map(WorkloadSpec::$var);
                    }
                )*
                unreachable!("split_kind checked the kind")
            }
        }

        impl serde::Serialize for WorkloadSpec {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(WorkloadSpec::$var(c) => $crate::registry::serialize_tagged(
                        <$m::$cfg as $crate::registry::Registered>::KIND, c, s),)*
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for WorkloadSpec {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <toml::Value as serde::Deserialize>::deserialize(d)?;
                WorkloadSpec::from_value(v).map_err(|(p, m)| {
                    <D::Error as serde::de::Error>::custom($crate::registry::nested(&p, &m))
                })
            }
        }
    };
}
pub(crate) use workload_kinds;

/// The object-safe part of [`WorkloadKind`], for dispatch.
pub trait WorkloadDyn {
    fn build(&self, tcp: &TcpOptions, seed: u64) -> Box<dyn Workload>;
    fn name(&self) -> &str;
    fn hosts(&self) -> Vec<(&'static str, &str)>;
    fn tcp_options(&self) -> Option<&TcpOptions>;
    fn validate(&self) -> Result<(), (String, String)>;
    fn expected_flows(&self, duration: u64) -> (u64, &'static str);
    fn largest_transfers(&self, mss: u32) -> Vec<(&'static str, u64)>;
    fn host_lists_mut(&mut self) -> Vec<(&'static str, &mut Vec<String>)>;
}

impl<W: WorkloadKind> WorkloadDyn for W {
    fn build(&self, tcp: &TcpOptions, seed: u64) -> Box<dyn Workload> {
        WorkloadKind::build(self, tcp, seed)
    }
    fn name(&self) -> &str {
        WorkloadKind::name(self)
    }
    fn hosts(&self) -> Vec<(&'static str, &str)> {
        WorkloadKind::hosts(self)
    }
    fn tcp_options(&self) -> Option<&TcpOptions> {
        WorkloadKind::tcp_options(self)
    }
    fn validate(&self) -> Result<(), (String, String)> {
        Registered::validate(self)
    }
    fn expected_flows(&self, duration: u64) -> (u64, &'static str) {
        WorkloadKind::expected_flows(self, duration)
    }
    fn largest_transfers(&self, mss: u32) -> Vec<(&'static str, u64)> {
        WorkloadKind::largest_transfers(self, mss)
    }
    fn host_lists_mut(&mut self) -> Vec<(&'static str, &mut Vec<String>)> {
        WorkloadKind::host_lists_mut(self)
    }
}
