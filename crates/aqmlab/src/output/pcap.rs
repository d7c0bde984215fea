//! libpcap traces of link directions (`output.pcap = ["bottleneck", …]`).
//!
//! Format: the libpcap file format ("tcpdump" format, as documented by the
//! tcpdump/libpcap project and draft-ietf-opsawg-pcap), with the
//! nanosecond-resolution magic `0xa1b23c4d`, link type Ethernet. Each
//! packet transmitted on the link direction (after its queue, as `tcpdump`
//! on the sending interface sees it) is written as Ethernet II + IPv4 (RFC 791) + TCP (RFC 9293) or UDP
//! (RFC 768, for CBR flows):
//!
//! - addresses: node `n` is `10.x.y.z` with x.y.z = n + 1 (24 bits), MAC
//!   `02:00:0a:x:y:z`; the flow's sender uses port `1024 + flow % 64000`,
//!   its receiver port 5001 (CBR: UDP to port 5001);
//! - sequence numbers count bytes: segment `s` of a flow with MSS `m` is
//!   sequence number `s·m` (the initial sequence number is 2³²−1, carried
//!   by the SYN, so data starts at 0); acknowledgement numbers likewise;
//! - the IP ECN field (RFC 3168 §5) is the packet's codepoint; TCP ECE,
//!   CWR and AE (RFC 9768 §3.1, the former NS bit) are its flags; data segments carry ACK and PSH;
//! - IPv4 total length is, for TCP, the real header length plus the
//!   payload (the scenario's `tcp.header_bytes` is not used: it models the
//!   bytes on the wire for timing, the trace shows the headers a real stack
//!   would send; with the default 40 B both agree), and for CBR the
//!   packet's size on the wire (UDP payload = size − 28 B);
//! - a packet is written once transmitted (so a trace holds exactly the
//!   packets `tx_packets` counts), stamped with the start of its
//!   transmission;
//! - checksums are computed (over a zero payload);
//! - only the first `output.pcap_snaplen` bytes (default 128: every header)
//!   are stored; the record keeps the original length, so tools report the
//!   true sizes.
//!
//! TCP options (RFC 9293 §3.1, laid out as Linux does, each option
//! 4-byte aligned with NOPs) are those of the flow's `tcp` keys:
//!
//! - SYN and SYN-ACK: MSS (the flow's `mss`), SACK-permitted (RFC 2018 §2)
//!   with `sack = true`, timestamps with `timestamps = true`;
//! - with `timestamps = true` (RFC 7323 §3), every segment: TSval = the time
//!   the segment's endpoint emitted it, in microseconds (mod 2³²); an
//!   ACK's TSecr = the TSval it echoes (the receiver's `ts_recent`), a data
//!   segment's TSecr = 0 (aqmlab's senders do not keep the receiver's TSval);
//! - with `sack = true`, an ACK's SACK blocks (RFC 2018 §3), most recent
//!   first, as byte sequence numbers (segment × MSS), left edge and right
//!   edge (one past the last byte).

use super::{path_err, Staging};
use crate::engine::Time;
use crate::net::packet::{flags, Ecn, FlowId, NodeId, Packet};
use crate::tcp::TcpParams;
use crate::{Scenario, Simulation};
use etherparse::TcpOptionElement as Opt;
use etherparse::{
    EtherType, Ethernet2Header, IpDscp, IpEcn, IpNumber, Ipv4Header, TcpHeader, UdpHeader,
};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Arc, Mutex};

/// Port of every receiver.
pub const RECEIVER_PORT: u16 = 5001;

pub use crate::scenario::SNAPLEN_RANGE;

/// IPv4 address of node `n`.
pub fn node_ip(n: NodeId) -> [u8; 4] {
    let v = n.0 + 1;
    [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn node_mac(n: NodeId) -> [u8; 6] {
    let ip = node_ip(n);
    [2, 0, ip[0], ip[1], ip[2], ip[3]]
}

/// Sender's port of flow `f`.
pub fn flow_port(f: FlowId) -> u16 {
    1024 + (f.0 % 64000) as u16
}

/// The link directions (`a->b`) a name in `output.pcap` selects: both
/// directions of the link with that name, or the one direction `a->b`.
/// Each with the pcap file's name, `<link>.<from>-<to>.pcap`.
pub fn directions(sc: &Scenario, name: &str) -> Vec<(String, String)> {
    (sc.link_directions(name).into_iter())
        .map(|(n, a, b)| (format!("{a}->{b}"), safe(&format!("{n}.{a}-{b}.pcap"))))
        .collect()
}

fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

struct Trace {
    w: Option<PcapWriter<BufWriter<File>>>,
    snaplen: usize,
    buf: Vec<u8>,
    zeros: Vec<u8>,
    packets: u64,
    err: Option<String>,
}

impl Trace {
    fn record(&mut self, t: Time, p: &Packet, tcp: Option<&TcpParams>) {
        if self.err.is_some() {
            return;
        }
        if let Err(e) = self.try_record(t, p, tcp) {
            self.err = Some(e);
        }
    }

    fn try_record(&mut self, t: Time, p: &Packet, tcp: Option<&TcpParams>) -> Result<(), String> {
        let mss = tcp.map_or(0, |c| c.mss);
        self.buf.clear();
        let fwd = p.is_forward();
        let (sport, dport) = if fwd {
            (flow_port(p.flow), RECEIVER_PORT)
        } else {
            (RECEIVER_PORT, flow_port(p.flow))
        };
        // CBR sizes are on the wire: IPv4 (20) + UDP (8) headers included.
        let payload = if mss == 0 {
            (p.size as usize).saturating_sub(28)
        } else {
            p.payload as usize
        };
        if self.zeros.len() < payload {
            self.zeros.resize(payload, 0);
        }
        let data = &self.zeros[..payload];
        let eth = Ethernet2Header {
            source: node_mac(p.src),
            destination: node_mac(p.dst),
            ether_type: EtherType::IPV4,
        };
        let (proto, l4): (IpNumber, Vec<u8>) = if mss == 0 {
            let u = UdpHeader::with_ipv4_checksum(
                sport,
                dport,
                &ipv4(IpNumber::UDP, p, 8 + payload)?,
                data,
            )
            .map_err(|e| e.to_string())?;
            (IpNumber::UDP, u.to_bytes().to_vec())
        } else {
            let isn = u32::MAX;
            let m = mss;
            let mut h = TcpHeader::new(sport, dport, 0, 65535);
            h.syn = p.has(flags::SYN);
            h.fin = p.has(flags::FIN);
            h.ece = p.has(flags::ECE);
            h.cwr = p.has(flags::CWR);
            // AE (RFC 9768 §3.1) is the bit RFC 3540 called NS
            h.ns = p.has(flags::AE);
            if p.is_data() {
                h.sequence_number = p.seq.wrapping_mul(m);
                h.psh = true;
                h.ack = true;
                h.acknowledgment_number = 0;
            } else if h.syn && !p.has(flags::ACK) {
                h.sequence_number = isn;
            } else {
                // From the receiver: a SYN-ACK (its own ISN) or an ACK.
                h.ack = true;
                h.sequence_number = if h.syn { isn } else { 0 };
                h.acknowledgment_number = p.ack.wrapping_mul(m);
            }
            if let Some(c) = tcp {
                let opts = options(p, c, h.syn);
                h.set_options(&opts).map_err(|e| e.to_string())?;
            }
            let ip = ipv4(IpNumber::TCP, p, h.header_len() + payload)?;
            h.checksum = h.calc_checksum_ipv4(&ip, data).map_err(|e| e.to_string())?;
            (IpNumber::TCP, h.to_bytes().to_vec())
        };
        let ip = ipv4(proto, p, l4.len() + payload)?;
        eth.write(&mut self.buf).map_err(|e| e.to_string())?;
        ip.write(&mut self.buf).map_err(|e| e.to_string())?;
        self.buf.extend_from_slice(&l4);
        let orig = self.buf.len() + payload;
        let keep = payload.min(self.snaplen.saturating_sub(self.buf.len()));
        self.buf.extend_from_slice(&data[..keep]);
        self.buf.truncate(self.snaplen);
        let ts = std::time::Duration::from_nanos(t);
        let w = self.w.as_mut().ok_or("trace closed")?;
        w.write_packet(&PcapPacket::new(ts, orig as u32, &self.buf))
            .map_err(write_err)?;
        self.packets += 1;
        Ok(())
    }
}

/// A time as a TCP timestamp value: microseconds, modulo 2³².
pub fn ts_value(t: Time) -> u32 {
    (t / 1_000) as u32
}

/// The TCP options of a segment of a flow with parameters `c` (see the
/// module's documentation).
fn options(p: &Packet, c: &TcpParams, syn: bool) -> Vec<Opt> {
    let mut o = Vec::new();
    if syn {
        o.push(Opt::MaximumSegmentSize(
            u16::try_from(c.mss).unwrap_or(u16::MAX),
        ));
        if c.sack {
            o.extend([Opt::Noop, Opt::Noop, Opt::SelectiveAcknowledgementPermitted]);
        }
    }
    if c.timestamps {
        let ecr = if p.is_forward() {
            0
        } else {
            p.ts_ecr.get().map_or(0, ts_value)
        };
        o.extend([
            Opt::Noop,
            Opt::Noop,
            Opt::Timestamp(ts_value(p.sent_time), ecr),
        ]);
    }
    let blocks = p.sack_blocks();
    if c.sack && !blocks.is_empty() && !p.is_forward() {
        let b = |&(l, r): &(u32, u32)| (l.wrapping_mul(c.mss), r.wrapping_mul(c.mss));
        let mut rest = [None; 3];
        for (i, x) in blocks.iter().skip(1).take(3).enumerate() {
            rest[i] = Some(b(x));
        }
        o.extend([
            Opt::Noop,
            Opt::Noop,
            Opt::SelectiveAcknowledgement(b(&blocks[0]), rest),
        ]);
    }
    o
}

fn ipv4(proto: IpNumber, p: &Packet, len: usize) -> Result<Ipv4Header, String> {
    let len = u16::try_from(len).map_err(|_| format!("packet of {len} bytes exceeds IPv4's"))?;
    let mut ip = Ipv4Header::new(len, 64, proto, node_ip(p.src), node_ip(p.dst))
        .map_err(|e| e.to_string())?;
    ip.ecn = match p.ecn {
        Ecn::NotEct => IpEcn::NotEct,
        Ecn::Ect1 => IpEcn::Ect1,
        Ecn::Ect0 => IpEcn::Ect0,
        Ecn::Ce => IpEcn::CongestionExperienced,
    };
    // the TOS byte's upper six bits: the flow's DSCP (`Ext::Dscp`, < 64)
    ip.dscp = IpDscp::try_new(p.ext.dscp()).map_err(|e| e.to_string())?;
    ip.header_checksum = ip.calc_header_checksum();
    Ok(ip)
}

/// A pcap writer's error as its cause: `pcap-file` words every I/O error
/// "Error reading bytes", even a write to a full disk.
fn write_err(e: PcapError) -> String {
    match e {
        PcapError::IoError(io) => format!("cannot write: {io}"),
        other => other.to_string(),
    }
}

/// The pcap traces of one run, open while it runs.
pub struct Capture {
    traces: Vec<(String, Arc<Mutex<Trace>>)>,
}

/// Open a pcap file (under its staging's temporary name) for every link
/// direction the scenario's `output.pcap` selects and tap the simulation.
pub fn attach(sim: &mut Simulation, sc: &Scenario, st: &mut Staging) -> std::io::Result<Capture> {
    let mut traces = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for name in &sc.output.pcap {
        for (dir, file) in directions(sc, name) {
            if !seen.insert(dir.clone()) {
                continue;
            }
            let path = st.path(&file);
            let f = File::create(&path).map_err(|e| path_err(&st.dir().join(&file), e))?;
            let header = PcapHeader {
                snaplen: sc.output.pcap_snaplen,
                datalink: DataLink::ETHERNET,
                ts_resolution: TsResolution::NanoSecond,
                endianness: Endianness::Little,
                ..Default::default()
            };
            let w = PcapWriter::with_header(BufWriter::new(f), header)
                .map_err(|e| path_err(&st.dir().join(&file), write_err(e)))?;
            let tr = Arc::new(Mutex::new(Trace {
                w: Some(w),
                snaplen: sc.output.pcap_snaplen as usize,
                buf: Vec::with_capacity(256),
                zeros: Vec::new(),
                packets: 0,
                err: None,
            }));
            let t2 = Arc::clone(&tr);
            sim.set_tap(
                &dir,
                Box::new(move |t, p, tcp| {
                    t2.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .record(t, p, tcp)
                }),
            );
            traces.push((st.dir().join(&file).display().to_string(), tr));
        }
    }
    Ok(Capture { traces })
}

impl Capture {
    /// Flush and close the files; returns (path, packets written) of each.
    pub fn finish(self) -> std::io::Result<Vec<(String, u64)>> {
        let mut out = Vec::new();
        for (path, tr) in self.traces {
            let mut t = tr.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(e) = t.err.take() {
                return Err(std::io::Error::other(format!("{path}: {e}")));
            }
            if let Some(w) = t.w.take() {
                w.into_writer()
                    .flush()
                    .map_err(|e| std::io::Error::other(format!("{path}: {e}")))?;
            }
            out.push((path, t.packets));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod write_tests {
    use super::*;

    /// The IPv4 TOS byte holds the flow's DSCP in its upper six bits and
    /// the ECN codepoint, intact, in its lower two (RFC 2474 §3, RFC 3168
    /// §5): CS1 (8) with CE is 8 << 2 | 3 = 0x23; no DSCP is CS0.
    #[test]
    fn tos_byte_carries_dscp_and_ecn() {
        let mut p = Packet {
            ecn: Ecn::Ce,
            ext: crate::net::ext::Ext::with_dscp(8),
            ..Default::default()
        };
        let tos = |p: &Packet| ipv4(IpNumber::TCP, p, 40).unwrap().to_bytes()[1];
        assert_eq!(tos(&p), 0x23);
        p.ext = crate::net::ext::Ext::with_dscp(46);
        p.ecn = Ecn::Ect1;
        assert_eq!(tos(&p), 46 << 2 | 1);
        p.ext = crate::net::ext::Ext::None;
        assert_eq!(tos(&p), 1);
    }

    #[test]
    fn a_full_disk_reads_as_a_full_disk() {
        let e = PcapError::IoError(std::io::Error::from_raw_os_error(28));
        let m = write_err(e);
        assert!(m.starts_with("cannot write: "), "{m}");
        assert!(!m.contains("reading"), "{m}");
        // and through the writer itself, onto a device that is always full
        if let Ok(f) = File::create("/dev/full") {
            let mut w = PcapWriter::new(BufWriter::with_capacity(0, f)).map_err(write_err);
            let m = match &mut w {
                Err(m) => m.clone(),
                Ok(w) => w
                    .write_packet(&PcapPacket::new(Default::default(), 4, &[0u8; 4]))
                    .map_err(write_err)
                    .unwrap_err(),
            };
            assert!(m.contains("No space left on device"), "{m}");
        }
    }
}
