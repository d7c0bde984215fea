//! Regression tests for issue 35's "figures the physics forbids" (item 1),
//! through the command as a user runs it: goodput inside a measurement
//! window, the all-flows goodput of a sweep, utilisation of an idle link.

mod common;

use common::{aqmlab, csv_rows, write};
use std::fs;

/// One 10 Mbit/s bottleneck (s → r → d), `flows` and `extra` appended.
fn bottleneck(duration: &str, flows: &str, extra: &str) -> String {
    format!(
        r#"name = "fig"
duration = "{duration}"
[nodes]
hosts = ["s", "d"]
routers = ["r"]
[[links]]
a = "s"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[links]]
name = "bottleneck"
a = "r"
b = "d"
rate = "10Mbps"
delay = "5ms"
{flows}
{extra}
"#
    )
}

/// A 60 KB transfer with `warmup = "0.149s"`: two ACKs in the window's
/// last 0.95 ms read 16.8 Mbit/s on a 10 Mbit/s link, and the idle
/// link's utilisation read 8.15e-18.
#[test]
fn goodput_in_a_late_window_stays_under_the_link_rate_and_idle_is_zero() {
    let d = tempfile::tempdir().unwrap();
    let flows = "[[flows]]\ngroup = \"t\"\nsrc = \"s\"\ndst = \"d\"\nsize = \"60KB\"\n";
    for warmup in ["0.149s", "0.05s", "0.01s"] {
        let f = write(
            d.path(),
            "s.toml",
            &bottleneck("0.15s", flows, &format!("[output]\nwarmup = \"{warmup}\"")),
        );
        let out = d.path().join(format!("out-{warmup}"));
        aqmlab()
            .arg("run")
            .arg(&f)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        for r in csv_rows(&out.join("flows.csv")) {
            let g = r["goodput_bps"].as_f64().unwrap_or(0.0);
            // one packet of slack over the window (1040 B in 1 ms)
            assert!(g <= 10e6 * 1.001 + 1040.0 * 8.0 / 0.001, "{warmup}: {g}");
            assert!(g <= 10.1e6, "{warmup}: goodput {g} above 10 Mbit/s");
        }
        for r in csv_rows(&out.join("links.csv")) {
            let u = r["utilization"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&u), "{warmup}: {}: {u}", r["link"]);
            let tx = r["tx_packets"].as_u64().unwrap();
            if tx == 0 {
                assert_eq!(u, 0.0, "{warmup}: idle {} reads {u}", r["link"]);
            }
        }
    }
}

/// Two 1 MB transfers started 1 s apart through 10 Mbit/s: the sweep's
/// all-flows `goodput_bps` read 13.4 Mbit/s at 89 % utilisation (per-flow
/// rates over different intervals, summed).
#[test]
fn a_sweeps_all_flows_goodput_never_exceeds_the_bottleneck() {
    let d = tempfile::tempdir().unwrap();
    let flows = "[[flows]]\ngroup = \"a\"\nsrc = \"s\"\ndst = \"d\"\nsize = \"1MB\"\n\
                 [[flows]]\ngroup = \"b\"\nsrc = \"s\"\ndst = \"d\"\nsize = \"1MB\"\nstart = \"1s\"\n";
    let sweep = "[sweep]\nlink = \"r->d\"\n[[sweep.vary]]\nkey = \"links.bottleneck.queue\"\n\
                 values = [{ kind = \"droptail\", limit = 50 }, { kind = \"codel\" }]\n";
    let f = write(d.path(), "s.toml", &bottleneck("3s", flows, sweep));
    let out = d.path().join("sw");
    aqmlab()
        .arg("sweep")
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let rows = csv_rows(&out.join("sweep.csv"));
    assert!(!rows.is_empty());
    for r in rows {
        let g = r["goodput_bps"].as_f64().unwrap();
        let u = r["utilization"].as_f64().unwrap();
        assert!(g <= 10e6, "all-flows goodput {g} above 10 Mbit/s");
        // 2 MB of payload over 3 s, and no more than the link carried
        assert!(g > 4.5e6, "goodput {g}: less than the 2 MB delivered");
        assert!(
            g <= u * 10e6 * 1.0001 + 1.0,
            "goodput {g} above utilisation {u}"
        );
    }
    assert!(fs::metadata(out.join("sweep.csv")).unwrap().len() > 0);
}
