//! The packet's extension slot: the header fields of one protocol that
//! only a matching pair of components reads and writes, instead of a field
//! per protocol in every [`Packet`](super::packet::Packet).
//!
//! | variant | written by | read by | echoed into ACKs |
//! |---|---|---|---|
//! | [`Ext::MaxNet`] | the MaxNet source (unstamped), MaxNet links (`aqm/maxnet.rs`) | the MaxNet source (`tcp/cc/maxnet.rs`) | yes ([`ExtEcho::LastForward`]) |
//! | [`Ext::Rio`] | the RIO-PS edge classifier (`net/classifier.rs`) | RIO (`aqm/rio.rs`), the port's per-class counters | no |
//! | [`Ext::Dscp`] | a sender whose flow group sets `dscp` (TCP `tcp/sender.rs`, CBR `traffic/cbr.rs`) | CAKE's tin selection (`aqm/cake.rs`), pcap's TOS byte | no |
//!
//! A packet carries at most one protocol's fields. A congestion control
//! says what its segments carry when sent (`CongestionControl::ext`) and
//! what its receiver copies into ACKs (`CcAlgorithm::EXT_ECHO`); the
//! receiver and the forwarding path never name a protocol. Scenario
//! validation rejects a MaxNet source whose path crosses a classifier,
//! since the classifier's tag would overwrite the price, and, likewise, a
//! flow with a `dscp` that is a MaxNet source or crosses a classifier.
//! A packet without `Ext::Dscp` has DSCP 0 (CS0, best effort); ACKs carry
//! none (the receiver's socket sets no TOS).
//!
//! A new protocol adds a variant here (its fields stored so that the enum
//! stays byte-aligned: [`Ext`] is 9 bytes, and `Packet` 104), the writer
//! and reader that match it, and, if the receiver must echo it, an
//! [`ExtEcho`] rule.

/// Service class tag of RIO-style disciplines (`Default` when untagged).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Class {
    #[default]
    Default = 0,
    /// "In" / short-flow packets.
    In = 1,
    /// "Out" / long-flow packets.
    Out = 2,
}

/// An `f32` kept as its bytes, so that [`Ext`] needs no 4-byte alignment
/// (the tag and the fields then pack into 9 bytes instead of 12).
#[derive(Clone, Copy, PartialEq, Eq)]
struct F32Bytes([u8; 4]);

impl F32Bytes {
    #[inline]
    const fn new(v: f32) -> Self {
        F32Bytes(v.to_bits().to_ne_bytes())
    }
    #[inline]
    fn get(self) -> f32 {
        f32::from_bits(u32::from_ne_bytes(self.0))
    }
}

/// MaxNet's two header fields: the price, the **maximum** of the link
/// prices on the path (Wydrowski, Andrew, Zukerman, "MaxNet: A Congestion
/// Control Architecture for Scalable Networks", IEEE Comm. Letters 7(10),
/// 2003), and the **minimum** spare capacity on the path that MaxStart
/// reads (Suchara et al., "Implementation of Provably Stable MaxNet",
/// BROADNETS 2008, as summarised in Phan et al., "MaxNet and TCP Reno/RED
/// on Mice Traffic", §3). Kept as `f32`, as before the slot existed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MaxNetFields {
    price: F32Bytes,
    spare: F32Bytes,
}

impl MaxNetFields {
    /// As a source sends them: price 0, spare capacity not set (∞).
    pub const UNSTAMPED: MaxNetFields = MaxNetFields {
        price: F32Bytes::new(0.0),
        spare: F32Bytes::new(f32::INFINITY),
    };

    pub fn new(price: f32, spare: f32) -> Self {
        MaxNetFields {
            price: F32Bytes::new(price),
            spare: F32Bytes::new(spare),
        }
    }

    /// The largest price of the links stamped so far, seconds.
    #[inline]
    pub fn price(self) -> f32 {
        self.price.get()
    }

    /// The smallest spare capacity of the links stamped so far, bit/s
    /// (`f32::INFINITY` when none set it).
    #[inline]
    pub fn spare(self) -> f32 {
        self.spare.get()
    }

    /// A link's stamp: the price field keeps the larger of its value and
    /// the link's price (the bottleneck's, MaxNet's max rule), the spare
    /// field the smaller of its value and the link's spare capacity.
    #[inline]
    pub fn stamp(&mut self, price: f32, spare: f32) {
        self.price = F32Bytes::new(self.price().max(price));
        self.spare = F32Bytes::new(self.spare().min(spare));
    }
}

impl std::fmt::Debug for MaxNetFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaxNetFields")
            .field("price", &self.price())
            .field("spare", &self.spare())
            .finish()
    }
}

/// The extension slot of a [`Packet`](super::packet::Packet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ext {
    /// No protocol-specific fields.
    #[default]
    None,
    /// MaxNet's price and spare-capacity fields.
    MaxNet(MaxNetFields),
    /// RIO's service class.
    Rio(Class),
    /// The DSCP of the IP header (RFC 2474 §3: the upper six bits of the
    /// TOS byte; the ECN bits are `Packet::ecn`), 1..=63.
    Dscp(u8),
}

impl Ext {
    /// RIO's class: the classifier's tag, or `Class::Default` when the
    /// packet was not tagged.
    #[inline]
    pub fn class(self) -> Class {
        match self {
            Ext::Rio(c) => c,
            _ => Class::Default,
        }
    }

    /// The packet's DSCP: its flow's, or 0 (CS0) when it carries none.
    #[inline]
    pub fn dscp(self) -> u8 {
        match self {
            Ext::Dscp(d) => d,
            _ => 0,
        }
    }

    /// The slot of a packet whose flow sets DSCP `d` (0: none).
    #[inline]
    pub fn with_dscp(d: u8) -> Ext {
        match d {
            0 => Ext::None,
            d => Ext::Dscp(d & 63),
        }
    }

    /// MaxNet's fields, if the packet carries them.
    #[inline]
    pub fn maxnet(self) -> Option<MaxNetFields> {
        match self {
            Ext::MaxNet(m) => Some(m),
            _ => None,
        }
    }
}

/// What a receiver puts in its ACKs' extension slot: the echo rule of the
/// flow's congestion control (`CcAlgorithm::EXT_ECHO`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExtEcho {
    /// ACKs carry no extension.
    #[default]
    Nothing,
    /// Every ACK carries the extension of the last data segment or SYN
    /// received (nothing before the first): MaxNet's receiver returns the
    /// price and spare capacity the links stamped on the forward path.
    LastForward,
}

impl ExtEcho {
    /// Update `held`, the extension the next ACKs carry, for a forward
    /// packet that arrived with `arrived`.
    #[inline]
    pub fn on_forward(self, held: &mut Ext, arrived: Ext) {
        match self {
            ExtEcho::Nothing => {}
            ExtEcho::LastForward => *held = arrived,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_is_nine_bytes_and_byte_aligned() {
        assert_eq!(std::mem::size_of::<Ext>(), 9);
        assert_eq!(std::mem::align_of::<Ext>(), 1);
    }

    #[test]
    fn maxnet_stamp_keeps_max_price_and_min_spare() {
        let mut m = MaxNetFields::UNSTAMPED;
        assert_eq!((m.price(), m.spare()), (0.0, f32::INFINITY));
        m.stamp(0.25, 1e6);
        m.stamp(0.125, 2e6);
        assert_eq!((m.price(), m.spare()), (0.25, 1e6));
        m.stamp(0.5, 5e5);
        assert_eq!((m.price(), m.spare()), (0.5, 5e5));
        // the f32 round trip is exact, NaN payloads included
        let odd = f32::from_bits(0x7fc0_1234);
        assert_eq!(MaxNetFields::new(odd, 3.0).price().to_bits(), 0x7fc0_1234);
    }

    #[test]
    fn class_of_untagged_packets_is_default() {
        assert_eq!(Ext::None.class(), Class::Default);
        assert_eq!(Ext::MaxNet(MaxNetFields::UNSTAMPED).class(), Class::Default);
        assert_eq!(Ext::Rio(Class::Out).class(), Class::Out);
        assert_eq!(Ext::Rio(Class::In).maxnet(), None);
    }

    #[test]
    fn echo_rules() {
        let stamped = Ext::MaxNet(MaxNetFields::new(0.5, 7.0));
        let mut held = Ext::None;
        ExtEcho::Nothing.on_forward(&mut held, stamped);
        assert_eq!(held, Ext::None);
        ExtEcho::LastForward.on_forward(&mut held, stamped);
        assert_eq!(held, stamped);
    }
}
