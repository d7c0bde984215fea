//! The physical invariants of `aqmlab::metrics::invariants` (goodput and
//! throughput bins within the links' capacity, utilisation in [0, 1], delays
//! ≥ 0, no NaN or infinity, conservation) on random scenarios: a chain of
//! routers with random rates, delays, queues and random loss, TCP transfers
//! (bulk and sized, several congestion controls, staggered starts), a CBR
//! source, throughput bins and a measurement window at a random instant.

use aqmlab::metrics::invariants;
use aqmlab::{Scenario, Simulation};
use proptest::prelude::*;

const QUEUES: &[&str] = &[
    "{ kind = \"droptail\", limit = 30 }",
    "{ kind = \"droptail\", limit = \"20KB\" }",
    "{ kind = \"red\", limit = 60, min_th = 5, max_th = 15, max_p = 0.1 }",
    "{ kind = \"codel\", limit = 100 }",
    "{ kind = \"pie\", limit = 100 }",
    "{ kind = \"fq_codel\", limit = 100 }",
];
const CCS: &[&str] = &["newreno", "reno", "cubic", "dctcp", "htcp"];

#[derive(Clone, Debug)]
struct Hop {
    rate_mbps: u32,
    delay_us: u32,
    queue: usize,
    loss: f64,
}

#[derive(Clone, Debug)]
struct Group {
    count: u32,
    cc: usize,
    start_ms: u32,
    /// None: bulk; Some(kB).
    size_kb: Option<u32>,
    /// Enter at this router, leave at that one (a sub-path of the chain).
    enter: usize,
    leave: usize,
}

fn hop() -> impl Strategy<Value = Hop> {
    (
        1u32..200,
        10u32..20_000,
        0..QUEUES.len(),
        prop_oneof![3 => Just(0.0), 1 => 0.0..0.05],
    )
        .prop_map(|(rate_mbps, delay_us, queue, loss)| Hop {
            rate_mbps,
            delay_us,
            queue,
            loss,
        })
}

fn group(hops: usize) -> impl Strategy<Value = Group> {
    (
        1u32..4,
        0..CCS.len(),
        0u32..200,
        prop_oneof![Just(None), (1u32..400).prop_map(Some)],
        0..=hops,
        0..=hops,
    )
        .prop_map(|(count, cc, start_ms, size_kb, a, b)| Group {
            count,
            cc,
            start_ms,
            size_kb,
            enter: a.min(b),
            leave: a.max(b),
        })
}

/// The scenario: routers r0..r{hops}, each with a host `hI`; group g
/// sends from its entry router's host to its exit router's host (another
/// host, `xI`, when it enters and leaves at the same router).
fn text(
    hops: &[Hop],
    groups: &[Group],
    cbr_kbps: u32,
    dur_ms: u32,
    warm: Option<f64>,
    bin_ms: u32,
) -> String {
    let n = hops.len();
    let mut s = format!("name = \"p\"\nduration = \"{dur_ms}ms\"\n[nodes]\n");
    let hosts: Vec<String> = (0..=n)
        .flat_map(|i| [format!("\"h{i}\""), format!("\"x{i}\"")])
        .collect();
    let routers: Vec<String> = (0..=n).map(|i| format!("\"r{i}\"")).collect();
    s += &format!(
        "hosts = [{}]\nrouters = [{}]\n",
        hosts.join(", "),
        routers.join(", ")
    );
    for i in 0..=n {
        for h in ["h", "x"] {
            s += &format!(
                "[[links]]\na = \"{h}{i}\"\nb = \"r{i}\"\nrate = \"1Gbps\"\ndelay = \"100us\"\n"
            );
        }
    }
    for (i, h) in hops.iter().enumerate() {
        s += &format!(
            "[[links]]\na = \"r{i}\"\nb = \"r{}\"\nrate = \"{}Mbps\"\ndelay = \"{}us\"\nqueue = {}\nloss_ab = {}\n",
            i + 1,
            h.rate_mbps,
            h.delay_us,
            QUEUES[h.queue],
            h.loss
        );
    }
    for (g, x) in groups.iter().enumerate() {
        let dst = if x.enter == x.leave {
            format!("x{}", x.leave)
        } else {
            format!("h{}", x.leave)
        };
        s += &format!(
            "[[flows]]\ngroup = \"g{g}\"\nsrc = \"h{}\"\ndst = \"{dst}\"\ncount = {}\ncc = \"{}\"\nstart = \"{}ms\"\n",
            x.enter, x.count, CCS[x.cc], x.start_ms
        );
        if let Some(kb) = x.size_kb {
            s += &format!("size = \"{kb}KB\"\n");
        }
    }
    if cbr_kbps > 0 {
        s += &format!(
            "[[flows]]\ngroup = \"cbr\"\nsrc = \"h0\"\ndst = \"h{n}\"\ncbr = {{ rate = \"{cbr_kbps}kbps\" }}\n"
        );
    }
    s += &format!("[output]\nthroughput_bin = \"{bin_ms}ms\"\n");
    if let Some(w) = warm {
        s += &format!("warmup = \"{}us\"\n", (w * dur_ms as f64 * 1000.0) as u64);
    }
    s
}

fn scenario() -> impl Strategy<Value = (String, u64)> {
    prop::collection::vec(hop(), 1..4).prop_flat_map(|hops| {
        let n = hops.len();
        (
            Just(hops),
            prop::collection::vec(group(n), 1..4),
            prop_oneof![Just(0u32), 100u32..50_000],
            100u32..600,
            prop_oneof![Just(None), (0.05f64..0.95).prop_map(Some)],
            1u32..50,
            any::<u64>(),
        )
            .prop_map(|(hops, groups, cbr, dur, warm, bin, seed)| {
                (text(&hops, &groups, cbr, dur, warm, bin), seed % 1_000_000)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_scenarios_report_only_what_the_physics_allows((text, seed) in scenario()) {
        let sc = Scenario::from_toml(&text, "p.toml").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let r = Simulation::new(&sc, seed).run();
        if let Err(m) = invariants::check(&sc, seed, &r) {
            return Err(TestCaseError::fail(format!("{m}\nseed {seed}\n{text}")));
        }
    }
}

/// The checker is not vacuous: a result doctored past each bound is caught.
#[test]
fn the_checker_catches_each_broken_bound() {
    let t = text(
        &[Hop {
            rate_mbps: 10,
            delay_us: 5000,
            queue: 0,
            loss: 0.0,
        }],
        &[Group {
            count: 1,
            cc: 0,
            start_ms: 0,
            size_kb: None,
            enter: 0,
            leave: 1,
        }],
        0,
        300,
        None,
        10,
    );
    let sc = Scenario::from_toml(&t, "p.toml").unwrap();
    let r = Simulation::new(&sc, 1).run();
    invariants::check(&sc, 1, &r).unwrap();
    let broken = |f: &dyn Fn(&mut aqmlab::metrics::RunResult)| {
        let mut x = r.clone();
        f(&mut x);
        invariants::check(&sc, 1, &x).unwrap_err()
    };
    assert!(broken(&|x| x.flows[0].goodput_bps = 10.1e6).contains("goodput_bps"));
    assert!(broken(&|x| x.flows[0].bytes_acked = 1_000_000).contains("delivered"));
    assert!(broken(&|x| x.throughput[0].bytes[3] = 2_000_000).contains("throughput"));
    assert!(broken(&|x| x.links[0].utilization = 1.5).contains("utilization"));
    assert!(broken(&|x| x.links[0].utilization = 8.15e-18).contains("utilization"));
    assert!(broken(&|x| x.queues[0].mean_delay_s = -1e-9).contains("< 0"));
    assert!(broken(&|x| x.flows[0].srtt_s = Some(f64::NAN)).contains("not finite"));
    assert!(broken(&|x| x.conservation.delivered += 1).contains("conservation"));
}
