//! The queue-discipline registry: the trait a discipline's config
//! implements, and the macro that turns the list in `aqm/mod.rs` (one line
//! per discipline) into [`super::QueueSpec`], its names, parsing, validation
//! and building. See `crate::registry` for the parsing rules.

use super::QueueDisc;
use crate::engine::{RngStream, Time};
pub use crate::registry::{KindInfo, Param, Registered};

/// What a discipline may use when it is built for an egress port.
pub struct PortCtx<'a> {
    /// Link rate, bit/s.
    pub rate_bps: u64,
    /// One-way propagation delay of the link.
    pub delay: Time,
    /// The port's own random stream (e.g. a hash perturbation).
    pub rng: &'a mut RngStream,
}

/// A queue discipline's config: its `kind`, parameters and constructor.
pub trait QueueKind: Registered {
    /// The discipline serves packets in arrival order (one queue). A
    /// scheduler over several queues leaves it false and keeps per-flow order
    /// only. The property tests (`tests/proptest_aqm.rs`) hold each kind to
    /// the order it declares here.
    const FIFO: bool = false;
    /// An arrival may mark a packet already queued, not only the one it
    /// handles (MarkMax marks the fattest flow's head-most packet).
    const MARKS_QUEUED: bool = false;

    /// Build the discipline for one egress port.
    fn build(&self, port: &mut PortCtx) -> Box<dyn QueueDisc>;
}

/// Register queue disciplines: `module::Config => Variant,` per line. The
/// module is declared here (`pub mod module;`), `Config` implements
/// [`QueueKind`], and `QueueSpec::Variant(Box<Config>)` is the enum case.
macro_rules! queue_kinds {
    ($($m:ident :: $cfg:ident => $var:ident,)*) => {
        $(pub mod $m;)*

        /// The queue kinds a scenario can name, each with its parameters
        /// (generated from the registry in `aqm/mod.rs`). The parameters are
        /// boxed: a spec is then 16 bytes, not the largest kind's size, and a
        /// link of a scenario holds three (`queue`, `queue_ab`, `queue_ba`),
        /// for each of 10⁵ generated links.
        #[derive(Clone, Debug)]
        pub enum QueueSpec {
            $(
                #[doc = concat!("`", stringify!($m), "`: see [`", stringify!($m), "::", stringify!($cfg), "`].")]
                $var(Box<$m::$cfg>),
            )*
        }

        impl QueueSpec {
            /// The names accepted for `kind`, in registration order.
            pub const KINDS: &'static [&'static str] =
                &[$(<$m::$cfg as $crate::registry::Registered>::KIND),*];

            /// Every registered discipline, for listing and tests.
            pub fn registry() -> Vec<$crate::registry::KindInfo> {
                vec![$($crate::registry::KindInfo::of::<$m::$cfg>()),*]
            }

            /// [`QueueKind::FIFO`] of the kind named `kind` (false if none is).
            pub fn is_fifo(kind: &str) -> bool {
                $(
                    if kind == <$m::$cfg as $crate::registry::Registered>::KIND {
                        return <$m::$cfg as $crate::aqm::registry::QueueKind>::FIFO;
                    }
                )*
                false
            }

            /// [`QueueKind::MARKS_QUEUED`] of the kind named `kind`.
            pub fn marks_queued(kind: &str) -> bool {
                $(
                    if kind == <$m::$cfg as $crate::registry::Registered>::KIND {
                        return <$m::$cfg as $crate::aqm::registry::QueueKind>::MARKS_QUEUED;
                    }
                )*
                false
            }

            pub fn kind(&self) -> &'static str {
                match self {
                    $(QueueSpec::$var(_) => <$m::$cfg as $crate::registry::Registered>::KIND,)*
                }
            }

            /// Check parameter ranges. The error names the offending key.
            pub fn validate(&self) -> Result<(), (String, String)> {
                match self {
                    $(QueueSpec::$var(c) => $crate::registry::Registered::validate(&**c),)*
                }
            }

            /// Build the discipline for an egress port on a link of
            /// `rate_bps` and one-way delay `delay`; `rng` is the port's own
            /// stream (e.g. for FQ-CoDel's hash perturbation).
            pub fn build(
                &self,
                rate_bps: u64,
                delay: $crate::engine::Time,
                rng: &mut $crate::engine::RngStream,
            ) -> Box<dyn QueueDisc> {
                let mut port = $crate::aqm::registry::PortCtx { rate_bps, delay, rng };
                match self {
                    $(QueueSpec::$var(c) => $crate::aqm::registry::QueueKind::build(&**c, &mut port),)*
                }
            }

            /// Parse a `{ kind = "...", ... }` value; errors are (key path
            /// inside the value, message).
            pub fn from_value(v: toml::Value) -> Result<QueueSpec, (String, String)> {
                let (kind, rest) =
                    $crate::registry::split_kind(v, "queue kind", Self::KINDS, false)?;
                $(
                    if kind == <$m::$cfg as $crate::registry::Registered>::KIND {
                        return $crate::registry::parse_kind::<$m::$cfg>(rest)
                            .map(|c| QueueSpec::$var(Box::new(c)));
                    }
                )*
                unreachable!("split_kind checked the kind")
            }
        }

        impl serde::Serialize for QueueSpec {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(QueueSpec::$var(c) => $crate::registry::serialize_tagged(
                        <$m::$cfg as $crate::registry::Registered>::KIND, &**c, s),)*
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for QueueSpec {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <toml::Value as serde::Deserialize>::deserialize(d)?;
                QueueSpec::from_value(v).map_err(|(p, m)| {
                    <D::Error as serde::de::Error>::custom($crate::registry::nested(&p, &m))
                })
            }
        }
    };
}
pub(crate) use queue_kinds;
