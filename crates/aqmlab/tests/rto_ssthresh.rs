//! `tcp.rto_ssthresh`: what repeated retransmission timeouts do to
//! ssthresh, per profile. A 20 Mbit/s path goes down for 2 s; the timer
//! fires several times (backing off) while it is down. RFC 5681 §3.1,
//! Linux 6.1 (`tcp_enter_loss`) and ns-3 3.44 (`TcpSocketBase::ReTxTimeout`)
//! keep the ssthresh of the first timeout; ns-2.35 (`TcpAgent::timeout`)
//! recomputes it on each one.

use aqmlab::metrics::RunResult;
use aqmlab::{Scenario, Simulation};

const DOWN: f64 = 5.0;
const UP: f64 = 7.0;
const RATE: f64 = 20e6;

fn outage(tcp: &str) -> RunResult {
    let text = format!(
        r#"name = "outage"
duration = "14s"
[nodes]
hosts = ["s", "d"]
routers = ["r"]
[tcp]
mss = 1448
max_window = 10000
{tcp}
[[links]]
a = "s"
b = "r"
rate = "1Gbps"
delay = "1ms"
[[links]]
name = "last"
a = "r"
b = "d"
rate = "20Mbps"
delay = "19ms"
queue = {{ kind = "droptail", limit = 100 }}
[[flows]]
group = "bulk"
src = "s"
dst = "d"
cc = "newreno"
trace_cwnd = true
[output]
throughput_bin = "100ms"
cwnd_interval = "5ms"
[[events]]
at = "{DOWN}s"
link = "last"
down = true
[[events]]
at = "{UP}s"
link = "last"
up = true
"#
    );
    let sc = Scenario::from_toml(&text, "outage.toml").unwrap();
    let r = Simulation::new(&sc, sc.seed).run();
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    r
}

/// (ssthresh before the outage, after the first timeout, when the link
/// returns; timeouts; seconds from the return until a 100-ms bin carries
/// 95 % of the rate).
fn figures(r: &RunResult) -> (f64, f64, f64, u64, f64) {
    let s = &r.cwnd[0].samples;
    let at = |t: f64| {
        s.iter()
            .take_while(|x| x.time_s <= t)
            .last()
            .and_then(|x| x.ssthresh)
            .unwrap_or(f64::INFINITY)
    };
    let before = at(DOWN);
    // the first timeout (one RTO after the link went down) leaves the
    // loss window: the first sample with cwnd = 1
    let first = s
        .iter()
        .filter(|x| x.time_s > DOWN && x.time_s < UP)
        .find(|x| x.cwnd <= 1.0)
        .and_then(|x| x.ssthresh)
        .unwrap_or(f64::NAN);
    let end = at(UP);
    let t = &r.throughput[0];
    let back = (t.bytes.iter().enumerate())
        .map(|(i, &b)| (i as f64 * t.bin_s, b as f64 * 8.0 / t.bin_s))
        .find(|&(at, bps)| at >= UP && bps >= 0.95 * RATE)
        .map_or(f64::INFINITY, |(at, _)| at + t.bin_s - UP);
    let timeouts = r.flows[0].timeouts;
    (before, first, end, timeouts, back)
}

fn check_hold(tcp: &str) -> (f64, f64, f64, u64, f64) {
    let f = figures(&outage(tcp));
    eprintln!(
        "{tcp:?}: ssthresh {} -> {} -> {}, {} timeouts, back to 95 % in {:.1} s",
        f.0, f.1, f.2, f.3, f.4
    );
    assert!(f.3 >= 2, "{tcp}: repeated timeouts while down: {f:?}");
    assert!(f.1.is_finite(), "{tcp}: a timeout while down: {f:?}");
    assert_eq!(f.2, f.1, "{tcp}: repeated timeouts hold ssthresh: {f:?}");
    f
}

/// No profile (RFC 5681), ns-3 3.44 and Linux 6.1, with SACK off (Reno's
/// and NewReno's timeouts) and with each stack's own recovery: the
/// ssthresh of the first timeout is the one the link returns to.
#[test]
fn repeated_timeouts_hold_ssthresh_as_rfc_linux_and_ns3() {
    check_hold("");
    check_hold("recovery = \"reno\"");
    check_hold("rto_ssthresh = \"hold\"");
    check_hold("profile = \"ns3-3.44\"\nsack = false\nrecovery = \"newreno\"");
    check_hold("profile = \"linux-6.1\"\nsack = false\nrecovery = \"newreno\"\nrack = false");
    check_hold("profile = \"ns3-3.44\"");
    check_hold("profile = \"linux-6.1\"");
}

/// ns-2.35 recomputes ssthresh on every timeout from `window()`, which
/// after the first is the one-segment loss window, so the next timeout sets
/// the floor of two segments and the flow leaves slow start far below the
/// path's window when the link returns: 45 → 2 segments, 95 % of the rate
/// again after 4.0 s against 2.3 s under the hold rule (measured).
#[test]
fn ns2_cuts_ssthresh_on_every_timeout() {
    let hold = check_hold("profile = \"ns2-2.35\"\nrto_ssthresh = \"hold\"");
    let f = figures(&outage("profile = \"ns2-2.35\""));
    eprintln!(
        "ns2-2.35: ssthresh {} -> {} -> {}, {} timeouts, back to 95 % in {:.1} s",
        f.0, f.1, f.2, f.3, f.4
    );
    assert!(f.3 >= 3, "{f:?}");
    assert!(f.1 > 2.0, "{f:?}");
    assert_eq!(f.2, 2.0, "a repeated timeout cuts to the floor: {f:?}");
    assert_eq!(
        (hold.0, hold.1),
        (f.0, f.1),
        "the same run until the second timeout"
    );
    assert!(f.4 > hold.4, "cut {f:?} against hold {hold:?}");
}

/// The key is refused with anything but its two values, naming it.
#[test]
fn bad_rto_ssthresh_names_the_key() {
    let text = "name = \"x\"\nduration = \"1s\"\n[nodes]\nhosts = [\"a\", \"b\"]\n[tcp]\nrto_ssthresh = \"sometimes\"\n[[links]]\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\ngroup = \"g\"\nsrc = \"a\"\ndst = \"b\"\n";
    let e = Scenario::from_toml(text, "x.toml").unwrap_err().to_string();
    assert!(e.contains("rto_ssthresh") && e.contains("sometimes"), "{e}");
    assert!(e.contains("hold") && e.contains("cut"), "{e}");
}
