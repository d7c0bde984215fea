//! The TCP receiver: cumulative ACKs, out-of-order buffering, delayed ACKs
//! and ECN echo.
//!
//! Sources: RFC 5681 §4.2 (delayed ACKs: an ACK for at least every second
//! full-sized segment, within the delayed-ACK timeout; an immediate ACK for an
//! out-of-order segment and for a segment that fills all or part of a gap);
//! RFC 1122 §4.2.3.2; RFC 3168 §6.1.3 (ECE set on every ACK from the arrival
//! of a CE packet until a CWR packet arrives, and on the ACK covering a CE
//! packet even if a CWR arrived before that delayed ACK). ACKs are pure (`header_bytes`
//! on the wire). The extension slot of ACKs (`net/ext.rs`) follows the
//! congestion control's rule ([`ExtEcho`], `CcAlgorithm::EXT_ECHO`): nothing,
//! or the slot of the last forward packet (MaxNet's price and spare capacity).
//!
//! With [`EcnEcho::PerPacket`] (chosen by the congestion control: DCTCP)
//! the echo is RFC 8257 §3.2's instead: ECE on exactly the ACKs of CE-marked
//! segments, and when the CE state of arriving segments changes, the
//! segments received before (if their ACK was delayed) are acknowledged at
//! once with the old state, and the changing segment is acknowledged
//! immediately (as Linux `dctcp_ece_ack_update`). CWR is ignored.
//!
//! SACK (RFC 2018, `sack = true`): every ACK sent while out-of-order data
//! is held carries SACK blocks; the first block is the contiguous run
//! holding the segment that triggered the ACK (unless that segment advanced
//! the cumulative ACK), the others repeat the most recently reported blocks
//! (§4), at most 4 blocks, or 3 with timestamps (§3). The option costs
//! 4 + 8·n bytes on the wire (2 + 8·n, padded with two NOPs, as Linux sends
//! it). Blocks are found in an interval map of the held runs, O(log n) per
//! segment.
//!
//! Timestamps (RFC 7323 §4.3, `timestamps = true`): the ACK echoes
//! TS.Recent, the TSval of the last segment that arrived with
//! `seq <= Last.ACK.sent` — with delayed ACKs the earliest unacknowledged
//! segment, and for out-of-order arrivals the last in-order one. The option
//! adds 12 bytes (10 + 2 NOPs) to every segment and ACK.
//!
//! A segment carrying FIN (`tcp.fin`: the last of a sized transfer) is
//! acknowledged at once, as ns-3 and Linux do.
//!
//! AccECN (RFC 9768, `tcp.ecn_feedback = "accecn"`, `tcp/ecn.rs`): the
//! SYN-ACK answers the SYN's AE/CWR/ECE as §3.1.1 says (Table 2), and
//! in AccECN mode every ACK carries ACE = r.cep mod 8 (r.cep: CE-marked
//! data segments received, from 5) in place of the RFC 3168 echo; an ACK
//! goes at once when a CE segment follows a non-CE one (§3.2.2.5.1,
//! change-triggered) and when 2 CE segments arrived since the last ACK
//! (increment-triggered, n = 2 with new data to acknowledge).
//!
//! Parameters (from [`TcpParams`]): `delayed_ack`, `delack_count`,
//! `delack_timeout`, `header_bytes`, `sack`, `timestamps`, `ecn`,
//! `ecn_feedback`.

use super::ecn::{self, EcnMode};
use super::{TcpCtx, TcpParams, TimerKind};
use crate::engine::Time;
use crate::engine::{Timer, TimerAction};
use crate::net::ext::{Ext, ExtEcho};
use crate::net::packet::{flags, Ecn, FlowId, NodeId, OptTime, Packet, SackBlock, MAX_SACK_BLOCKS};
use std::collections::{BTreeMap, VecDeque};

/// Bytes of the timestamps option on the wire (RFC 7323 §3: 10, padded).
pub const TS_OPTION_BYTES: u32 = 12;

/// Bytes of a SACK option with `n` blocks on the wire (RFC 2018 §3: 2 + 8·n,
/// padded to a 4-byte boundary with two NOPs).
pub fn sack_option_bytes(n: usize) -> u32 {
    if n == 0 {
        0
    } else {
        4 + 8 * n as u32
    }
}

/// How the receiver echoes CE marks in ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnEcho {
    /// RFC 3168 §6.1.3: ECE from a CE segment until CWR.
    #[default]
    Rfc3168,
    /// RFC 8257 §3.2: ECE on exactly the ACKs of CE segments.
    PerPacket,
}

/// The fields a data segment or the delayed-ACK timer of a common
/// receiver (no SACK, no timestamps) touches come first and together
/// ([`Receiver::HOT_BYTES`], about two cache lines), for the cache hints
/// (`sim/hints.rs`; `#[repr(C)]` keeps the declared order; the order has no other
/// effect).
#[repr(C)]
pub struct Receiver {
    // -- hot: every data segment and delayed ACK --
    pub delack_timer: Timer,
    delack_timeout: u64,
    /// `ooo[i]`: segment `rcv_nxt + i` is buffered (index 0 is always false).
    ooo: VecDeque<bool>,
    /// ACKs sent (SYN-ACKs included); the delayed-ACK tests count them.
    pub acks_sent: u64,
    flow: FlowId,
    node: NodeId,
    peer: NodeId,
    delack_count: u32,
    /// Next segment expected.
    pub rcv_nxt: u32,
    ooo_count: u32,
    pending: u32,
    last_ack_sent: u32,
    /// Header bytes of an ACK (at most `MAX_HEADER`, 120: a u16 leaves
    /// room in the hot lines for the AccECN state below).
    header: u16,
    echo: EcnEcho,
    /// RFC 8257 `DCTCP.CE`: the CE state of the last data segment.
    ce_state: bool,
    delayed_ack: bool,
    /// `ack_first_segment`: the first data segment is ACKed at once.
    ack_first: bool,
    ack_next: bool,
    ece: bool,
    /// A CE-marked segment arrived that no ACK has acknowledged yet.
    ce_unacked: bool,
    sack: bool,
    timestamps: bool,
    /// What the ACKs carry in their extension slot, and the flow's CC's
    /// rule for updating it from forward packets.
    ext_echo: ExtEcho,
    echoed: Ext,
    /// The ECN feedback mode: what the keys ask for until a SYN arrives,
    /// then what the handshake settled (`tcp/ecn.rs`).
    pub ecn_mode: EcnMode,
    /// The last data segment was CE (AccECN change-triggered ACKs).
    last_ce: bool,
    /// CE segments since the last ACK (AccECN increment-triggered ACKs).
    ce_since_ack: u8,
    // -- cold: SACK and timestamps, AccECN's counter (in what was the
    // record's end padding) --
    ts_recent: Option<Time>,
    /// Held out-of-order runs `start -> end` (SACK only).
    runs: BTreeMap<u32, u32>,
    /// Blocks most recently reported, most recent first (RFC 2018 §4).
    recent: Vec<SackBlock>,
    /// The block holding the segment that triggered the next ACK.
    trigger: Option<SackBlock>,
    /// RFC 9768 r.cep: CE-marked segments received (from 5).
    pub r_cep: u32,
}

impl Receiver {
    /// Bytes from the start of a receiver that its hot fields span (see
    /// [`Receiver`]).
    pub const HOT_BYTES: usize = std::mem::offset_of!(Receiver, ts_recent);

    pub fn new(p: &TcpParams, flow: FlowId, node: NodeId, peer: NodeId) -> Receiver {
        Receiver {
            echo: EcnEcho::Rfc3168,
            ce_state: false,
            flow,
            node,
            peer,
            header: p.header_bytes as u16,
            delayed_ack: p.delayed_ack,
            delack_count: p.delack_count,
            delack_timeout: p.delack_timeout,
            ack_first: p.ack_first_segment,
            ack_next: false,
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            ooo_count: 0,
            pending: 0,
            delack_timer: Timer::default(),
            ece: false,
            ce_unacked: false,
            ext_echo: ExtEcho::Nothing,
            echoed: Ext::None,
            sack: p.sack,
            timestamps: p.timestamps,
            runs: BTreeMap::new(),
            recent: Vec::new(),
            trigger: None,
            ts_recent: None,
            ecn_mode: EcnMode::requested(p.ecn, p.ecn_feedback),
            r_cep: ecn::CEP_INIT,
            ce_since_ack: 0,
            last_ce: false,
            last_ack_sent: 0,
            acks_sent: 0,
        }
    }

    /// Use the echo rule `echo` (see [`EcnEcho`]).
    pub fn with_echo(mut self, echo: EcnEcho) -> Self {
        self.echo = echo;
        self
    }

    /// Echo extension fields by the rule `echo` (see [`ExtEcho`]; the
    /// CC's `CcAlgorithm::EXT_ECHO`).
    pub fn with_ext_echo(mut self, echo: ExtEcho) -> Self {
        self.ext_echo = echo;
        self
    }

    /// Segments buffered out of order.
    pub fn out_of_order(&self) -> u32 {
        self.ooo_count
    }

    fn send_ack(&mut self, extra: u8, ctx: &mut TcpCtx) {
        self.pending = 0;
        self.delack_timer.cancel();
        let mut f = flags::ACK | extra;
        // RFC 3168 §6.1.3: ECE on every ACK from a CE segment until CWR, and
        // on the ACK that acknowledges a CE segment even if a CWR arrived
        // meanwhile (a delayed ACK covering both).
        if self.ecn_mode == EcnMode::AccEcn {
            // RFC 9768 §3.2.2: ACE on every ACK after the handshake
            if extra & flags::SYN == 0 {
                f |= ecn::ace_flags(self.r_cep & 7);
            }
            self.ce_since_ack = 0;
        } else {
            let ece = match self.echo {
                EcnEcho::Rfc3168 => self.ece || self.ce_unacked,
                EcnEcho::PerPacket => self.ce_state,
            };
            if ece {
                f |= flags::ECE;
            }
        }
        self.ce_unacked = false;
        self.acks_sent += 1;
        let mut size = self.header as u32;
        let mut pkt = Packet {
            flow: self.flow,
            src: self.node,
            dst: self.peer,
            // Its TSval with timestamps (RFC 7323 §3); read by traces only.
            sent_time: ctx.now,
            ack: self.rcv_nxt,
            flags: f,
            ecn: Ecn::NotEct,
            ext: self.echoed,
            ..Default::default()
        };
        if self.timestamps {
            size += TS_OPTION_BYTES;
            pkt.ts_ecr = OptTime::new(self.ts_recent);
        }
        if self.sack {
            let n = self.fill_sack(&mut pkt);
            size += sack_option_bytes(n);
        }
        pkt.size = size;
        self.last_ack_sent = self.rcv_nxt;
        ctx.out.push(pkt);
    }

    /// RFC 2018 §4: the block of the triggering segment first, then the
    /// most recently reported blocks, none covering acknowledged data.
    fn fill_sack(&mut self, pkt: &mut Packet) -> usize {
        let max = if self.timestamps {
            MAX_SACK_BLOCKS - 1
        } else {
            MAX_SACK_BLOCKS
        };
        let rcv_nxt = self.rcv_nxt;
        self.recent.retain(|b| b.1 > rcv_nxt);
        if let Some(t) = self.trigger.take() {
            // Drop reported blocks the new one has absorbed, then put it first.
            self.recent.retain(|b| b.1 < t.0 || b.0 > t.1);
            self.recent.insert(0, t);
        }
        self.recent.truncate(max);
        for (i, b) in self.recent.iter().enumerate() {
            pkt.sack[i] = *b;
        }
        pkt.nsack = self.recent.len() as u8;
        self.recent.len()
    }

    /// Record segment `seq` (> rcv_nxt) as held; return its run.
    fn hold(&mut self, seq: u32) -> SackBlock {
        let mut s = seq;
        let mut e = seq + 1;
        if let Some((&ps, &pe)) = self.runs.range(..=seq).next_back() {
            if pe >= seq {
                s = ps;
                e = e.max(pe);
                self.runs.remove(&ps);
            }
        }
        if let Some(&ne) = self.runs.get(&e) {
            self.runs.remove(&e);
            e = ne;
        }
        self.runs.insert(s, e);
        (s, e)
    }

    /// rcv_nxt advanced: forget runs now below it.
    fn release_runs(&mut self) {
        while let Some((&s, &e)) = self.runs.first_key_value() {
            if e <= self.rcv_nxt {
                self.runs.remove(&s);
            } else {
                debug_assert!(s > self.rcv_nxt);
                break;
            }
        }
    }

    /// A data segment or SYN arrived.
    pub fn on_packet(&mut self, p: &Packet, ctx: &mut TcpCtx) {
        self.ext_echo.on_forward(&mut self.echoed, p.ext);
        if p.has(flags::SYN) {
            // RFC 3168 §6.1.1 / RFC 9768 §3.1.1: answer the SYN's ECN bits
            let (f, mode) = ecn::answer_syn(self.ecn_mode, p.flags, p.ecn);
            self.ecn_mode = mode;
            self.send_ack(flags::SYN | f, ctx);
            self.ack_next = self.ack_first; // ns-3: ACK the first data at once
            return;
        }
        let mut ack_now = false;
        if self.ecn_mode == EcnMode::AccEcn {
            let ce = p.ecn == Ecn::Ce;
            if ce {
                self.r_cep = self.r_cep.wrapping_add(1);
                self.ce_since_ack = self.ce_since_ack.saturating_add(1);
                // §3.2.2.5.1: change- and increment-triggered ACKs
                ack_now = !self.last_ce || self.ce_since_ack >= 2;
            }
            self.last_ce = ce;
        } else {
            self.classic_echo(p, &mut ack_now, ctx);
        }
        self.on_segment(p, ack_now, ctx);
    }

    /// RFC 3168's and RFC 8257's echo state on a data segment.
    fn classic_echo(&mut self, p: &Packet, ack_now: &mut bool, ctx: &mut TcpCtx) {
        if p.has(flags::CWR) {
            self.ece = false;
        }
        if p.ecn == Ecn::Ce {
            self.ece = true;
            self.ce_unacked = true;
        }
        // RFC 8257 §3.2: a change of CE state is acknowledged at once.
        if self.echo == EcnEcho::PerPacket && (p.ecn == Ecn::Ce) != self.ce_state {
            if self.pending > 0 {
                self.send_ack(0, ctx); // the earlier segments, old state
            }
            self.ce_state = p.ecn == Ecn::Ce;
            *ack_now = true;
        }
    }

    /// Buffering and acknowledgement of a data segment.
    fn on_segment(&mut self, p: &Packet, ack_now: bool, ctx: &mut TcpCtx) {
        let seq = p.seq;
        if self.timestamps && seq <= self.last_ack_sent {
            // RFC 7323 §4.3 (2): TS.Recent from a segment at or below the
            // last ACK sent (the left edge).
            self.ts_recent = Some(p.sent_time);
        }
        if seq == self.rcv_nxt {
            let filled_gap = self.ooo_count > 0;
            self.ooo.pop_front();
            self.rcv_nxt += 1;
            while self.ooo.front() == Some(&true) {
                self.ooo.pop_front();
                self.ooo_count -= 1;
                self.rcv_nxt += 1;
            }
            if self.ooo.front() == Some(&false) && self.ooo_count == 0 {
                self.ooo.clear();
            }
            if self.sack {
                self.release_runs();
            }
            // a FIN is acknowledged at once (ns-3 `DoPeerClose`; Linux
            // `tcp_fin` schedules the ACK), not after the delayed-ACK timer
            let fin = p.has(flags::FIN);
            if filled_gap
                || !self.delayed_ack
                || ack_now
                || fin
                || std::mem::take(&mut self.ack_next)
            {
                self.send_ack(0, ctx);
            } else {
                self.pending += 1;
                if self.pending >= self.delack_count {
                    self.send_ack(0, ctx);
                } else if !self.delack_timer.is_armed() {
                    if let TimerAction::Schedule(t) =
                        self.delack_timer.arm(ctx.now + self.delack_timeout)
                    {
                        ctx.timers.push((t, TimerKind::DelAck));
                    }
                }
            }
        } else if seq > self.rcv_nxt {
            let i = (seq - self.rcv_nxt) as usize;
            if self.ooo.len() <= i {
                self.ooo.resize(i + 1, false);
            }
            if !self.ooo[i] {
                self.ooo[i] = true;
                self.ooo_count += 1;
                if self.sack {
                    self.trigger = Some(self.hold(seq));
                }
            } else if self.sack {
                // A duplicate of held data: report its run first (§4).
                if let Some((&s, &e)) = self.runs.range(..=seq).next_back() {
                    self.trigger = Some((s, e));
                }
            }
            self.send_ack(0, ctx); // immediate duplicate ACK
        } else {
            self.send_ack(0, ctx);
        }
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack(&mut self, ctx: &mut TcpCtx) {
        if self.pending > 0 {
            self.send_ack(0, ctx);
        }
    }
}
