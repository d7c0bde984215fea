//! The TCP receiver: cumulative ACKs, out-of-order buffering, delayed ACKs
//! and ECN echo.
//!
//! Sources: RFC 5681 §4.2 (delayed ACKs: an ACK for at least every second
//! full-sized segment, within the delayed-ACK timeout; an immediate ACK for an
//! out-of-order segment and for a segment that fills all or part of a gap);
//! RFC 1122 §4.2.3.2; RFC 3168 §6.1.3 (ECE set on every ACK from the arrival
//! of a CE packet until a CWR packet arrives, and on the ACK covering a CE
//! packet even if a CWR arrived before that delayed ACK). ACKs are pure (`header_bytes`
//! on the wire). MaxNet's explicit price in data packets is echoed in ACKs.
//!
//! With [`EcnEcho::PerPacket`] (chosen by the congestion control: DCTCP)
//! the echo is RFC 8257 §3.2's instead: ECE on exactly the ACKs of CE-marked
//! segments, and when the CE state of arriving segments changes, the
//! segments received before (if their ACK was delayed) are acknowledged at
//! once with the old state, and the changing segment is acknowledged
//! immediately (as Linux `dctcp_ece_ack_update`). CWR is ignored.
//!
//! Parameters (from [`TcpParams`]): `delayed_ack`, `delack_count`,
//! `delack_timeout`, `header_bytes`.

use super::{TcpCtx, TcpParams, TimerKind};
use crate::engine::{Timer, TimerAction};
use crate::net::packet::{flags, Ecn, FlowId, NodeId, Packet};
use std::collections::VecDeque;

/// How the receiver echoes CE marks in ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnEcho {
    /// RFC 3168 §6.1.3: ECE from a CE segment until CWR.
    #[default]
    Rfc3168,
    /// RFC 8257 §3.2: ECE on exactly the ACKs of CE segments.
    PerPacket,
}

pub struct Receiver {
    echo: EcnEcho,
    /// RFC 8257 `DCTCP.CE`: the CE state of the last data segment.
    ce_state: bool,
    flow: FlowId,
    node: NodeId,
    peer: NodeId,
    header: u32,
    delayed_ack: bool,
    delack_count: u32,
    delack_timeout: u64,
    /// Next segment expected.
    pub rcv_nxt: u32,
    /// `ooo[i]`: segment `rcv_nxt + i` is buffered (index 0 is always false).
    ooo: VecDeque<bool>,
    ooo_count: u32,
    pending: u32,
    pub delack_timer: Timer,
    ece: bool,
    /// A CE-marked segment arrived that no ACK has acknowledged yet.
    ce_unacked: bool,
    price: f32,
    spare: f32,
    /// Data segments that arrived (duplicates included).
    pub segments_received: u64,
    pub duplicates: u64,
    pub acks_sent: u64,
}

impl Receiver {
    pub fn new(p: &TcpParams, flow: FlowId, node: NodeId, peer: NodeId) -> Receiver {
        Receiver {
            echo: EcnEcho::Rfc3168,
            ce_state: false,
            flow,
            node,
            peer,
            header: p.header_bytes,
            delayed_ack: p.delayed_ack,
            delack_count: p.delack_count,
            delack_timeout: p.delack_timeout,
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            ooo_count: 0,
            pending: 0,
            delack_timer: Timer::default(),
            ece: false,
            ce_unacked: false,
            price: 0.0,
            spare: f32::INFINITY,
            segments_received: 0,
            duplicates: 0,
            acks_sent: 0,
        }
    }

    /// Use the echo rule `echo` (see [`EcnEcho`]).
    pub fn with_echo(mut self, echo: EcnEcho) -> Self {
        self.echo = echo;
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
        let ece = match self.echo {
            EcnEcho::Rfc3168 => self.ece || self.ce_unacked,
            EcnEcho::PerPacket => self.ce_state,
        };
        if ece {
            f |= flags::ECE;
        }
        self.ce_unacked = false;
        self.acks_sent += 1;
        ctx.out.push(Packet {
            flow: self.flow,
            src: self.node,
            dst: self.peer,
            ack: self.rcv_nxt,
            size: self.header,
            flags: f,
            ecn: Ecn::NotEct,
            price: self.price,
            spare: self.spare,
            ..Default::default()
        });
    }

    /// A data segment or SYN arrived.
    pub fn on_packet(&mut self, p: &Packet, ctx: &mut TcpCtx) {
        self.price = p.price;
        self.spare = p.spare;
        if p.has(flags::SYN) {
            self.send_ack(flags::SYN, ctx);
            return;
        }
        if p.has(flags::CWR) {
            self.ece = false;
        }
        if p.ecn == Ecn::Ce {
            self.ece = true;
            self.ce_unacked = true;
        }
        // RFC 8257 §3.2: a change of CE state is acknowledged at once.
        let mut ack_now = false;
        if self.echo == EcnEcho::PerPacket && (p.ecn == Ecn::Ce) != self.ce_state {
            if self.pending > 0 {
                self.send_ack(0, ctx); // the earlier segments, old state
            }
            self.ce_state = p.ecn == Ecn::Ce;
            ack_now = true;
        }
        self.segments_received += 1;
        let seq = p.seq;
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
            if filled_gap || !self.delayed_ack || ack_now {
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
            } else {
                self.duplicates += 1;
            }
            self.send_ack(0, ctx); // immediate duplicate ACK
        } else {
            self.duplicates += 1;
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
