//! The congestion-control registry: the trait an algorithm's config
//! implements, and the macro that turns the list in `tcp/cc/mod.rs` (one
//! line per algorithm) into [`super::CcConfig`], its names, parsing,
//! validation and building. See `crate::registry` for the parsing rules.
//!
//! In a scenario, `cc` is either a name (`cc = "newreno"`, every parameter
//! at its default) or a table with `kind` and parameters
//! (`cc = { kind = "cubic", variant = "linux-2.6.22" }`).

use super::CongestionControl;
pub use crate::net::ext::ExtEcho;
pub use crate::registry::{KindInfo, Param, Registered};
pub use crate::tcp::receiver::EcnEcho;

/// A congestion control's config: its name, parameters and constructor.
pub trait CcAlgorithm: Registered {
    /// How the receiver must echo CE marks for this algorithm.
    const ECN_ECHO: EcnEcho = EcnEcho::Rfc3168;
    /// What the receiver copies into ACKs' extension slot (`net/ext.rs`).
    const EXT_ECHO: ExtEcho = ExtEcho::Nothing;
    fn build(&self) -> Box<dyn CongestionControl>;
}

/// Register congestion controls: `module::Config => Variant,` per line.
/// The module is declared here (`pub mod module;`), `Config` implements
/// [`CcAlgorithm`], and `CcConfig::Variant(Config)` is the enum case.
macro_rules! cc_kinds {
    ($($m:ident :: $cfg:ident => $var:ident,)*) => {
        $(pub mod $m;)*

        /// The algorithms a scenario can name in `cc`, each with its
        /// parameters (generated from the registry in `tcp/cc/mod.rs`).
        #[derive(Clone, Debug, PartialEq)]
        pub enum CcConfig {
            $(
                #[doc = concat!("`", stringify!($m), "`: see [`", stringify!($m), "::", stringify!($cfg), "`].")]
                $var($m::$cfg),
            )*
        }

        impl CcConfig {
            /// The names accepted for `cc`, in registration order.
            pub const NAMES: &'static [&'static str] =
                &[$(<$m::$cfg as $crate::registry::Registered>::KIND),*];

            /// Every registered algorithm, for listing and tests.
            pub fn registry() -> Vec<$crate::registry::KindInfo> {
                vec![$($crate::registry::KindInfo::of::<$m::$cfg>()),*]
            }

            pub fn name(&self) -> &'static str {
                match self {
                    $(CcConfig::$var(_) => <$m::$cfg as $crate::registry::Registered>::KIND,)*
                }
            }

            /// Range checks; the error names the key.
            pub fn validate(&self) -> Result<(), (String, String)> {
                match self {
                    $(CcConfig::$var(c) => $crate::registry::Registered::validate(c),)*
                }
            }

            /// The receiver's ECN echo rule this algorithm needs.
            pub fn ecn_echo(&self) -> $crate::tcp::receiver::EcnEcho {
                match self {
                    $(CcConfig::$var(_) => <$m::$cfg as $crate::tcp::cc::registry::CcAlgorithm>::ECN_ECHO,)*
                }
            }

            /// The receiver's extension echo rule this algorithm needs.
            pub fn ext_echo(&self) -> $crate::net::ext::ExtEcho {
                match self {
                    $(CcConfig::$var(_) => <$m::$cfg as $crate::tcp::cc::registry::CcAlgorithm>::EXT_ECHO,)*
                }
            }

            pub fn build(&self) -> Box<dyn CongestionControl> {
                match self {
                    $(CcConfig::$var(c) => $crate::tcp::cc::registry::CcAlgorithm::build(c),)*
                }
            }

            /// Parse a name or a `{ kind = "...", ... }` table; errors are
            /// (key path inside the value, message).
            pub fn from_value(v: toml::Value) -> Result<CcConfig, (String, String)> {
                let (kind, rest) =
                    $crate::registry::split_kind(v, "congestion control", Self::NAMES, true)?;
                $(
                    if kind == <$m::$cfg as $crate::registry::Registered>::KIND {
                        return $crate::registry::parse_kind::<$m::$cfg>(rest).map(CcConfig::$var);
                    }
                )*
                unreachable!("split_kind checked the kind")
            }
        }

        impl serde::Serialize for CcConfig {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(CcConfig::$var(c) => $crate::registry::serialize_tagged(
                        <$m::$cfg as $crate::registry::Registered>::KIND, c, s),)*
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for CcConfig {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <toml::Value as serde::Deserialize>::deserialize(d)?;
                CcConfig::from_value(v).map_err(|(p, m)| {
                    <D::Error as serde::de::Error>::custom($crate::registry::nested(&p, &m))
                })
            }
        }
    };
}
pub(crate) use cc_kinds;
