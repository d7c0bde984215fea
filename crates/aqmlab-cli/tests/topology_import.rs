//! `[topology] kind = "edges" | "graphml"` as a user meets it: the shipped
//! examples run, an edge list gives byte for byte the files of the same
//! topology written as `[[links]]`, and a bad file is one line, exit 2, no
//! output folder.

mod common;

use common::{aqmlab, output, root, write};
use serde_json::Value;
use std::fs;
use std::path::Path;

/// `aqmlab run file --out out --duration 1s` → (exit code, stderr).
fn run(file: &Path, out: &Path) -> (i32, String) {
    let mut c = aqmlab();
    c.arg("run")
        .arg(file)
        .args(["--duration", "1s", "--out"])
        .arg(out);
    let (code, _, err) = output(&mut c);
    (code, err)
}

fn summary(dir: &Path) -> Value {
    let mut v: Value =
        serde_json::from_slice(&fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_seconds").expect("wall_seconds");
    o.remove("timings").expect("timings");
    v
}

/// scenarios/import/ring.toml with its edge list written out as the
/// `nodes` and `[[links]]` the import documents: hosts in order of first
/// appearance, then routers; one link per row in file order, each with
/// the `[topology]` queue.
const RING_BY_HAND: &str = r#"
name = "ring"
duration = "3s"
seed = 1
[nodes]
hosts = ["client0", "client1", "server0", "server1"]
routers = ["r0", "r1", "r2", "r3"]
[[links]]
a = "client0"
b = "r0"
rate = "1Gbps"
delay = "1ms"
queue = { kind = "codel" }
[[links]]
a = "client1"
b = "r0"
rate = "1Gbps"
delay = "1ms"
queue = { kind = "codel" }
[[links]]
name = "west"
a = "r0"
b = "r1"
rate = "100Mbps"
delay = "5ms"
queue = { kind = "codel" }
[[links]]
name = "bottleneck"
a = "r1"
b = "r2"
rate = "50Mbps"
delay = "10ms"
queue = { kind = "codel" }
[[links]]
name = "east"
a = "r2"
b = "r3"
rate = "100Mbps"
delay = "5ms"
queue = { kind = "codel" }
[[links]]
a = "r3"
b = "r0"
rate = "100Mbps"
delay = "20ms"
queue = { kind = "codel" }
[[links]]
a = "r2"
b = "server0"
rate = "1Gbps"
delay = "1ms"
queue = { kind = "codel" }
[[links]]
a = "r2"
b = "server1"
rate = "1Gbps"
delay = "1ms"
queue = { kind = "codel" }
[[flows]]
group = "bulk"
src = "client*"
dst = "server*"
cc = "cubic"
"#;

#[test]
fn an_edge_list_gives_the_files_of_the_hand_written_links() {
    let d = tempfile::tempdir().unwrap();
    let (imported, hand) = (d.path().join("imported"), d.path().join("hand"));
    let (code, err) = run(&root().join("scenarios/import/ring.toml"), &imported);
    assert_eq!(code, 0, "{err}");
    let (code, err) = run(&write(d.path(), "ring.toml", RING_BY_HAND), &hand);
    assert_eq!(code, 0, "{err}");
    for f in ["flows.csv", "links.csv", "queues.csv"] {
        let (a, b) = (
            fs::read(imported.join(f)).unwrap(),
            fs::read(hand.join(f)).unwrap(),
        );
        assert!(a.len() > 200, "{f}: {} bytes", a.len());
        assert!(a == b, "{f} differs between the import and [[links]]");
    }
    assert_eq!(summary(&imported), summary(&hand));
    // the import's provenance names the CSV it read, with its SHA-256
    let p: Value =
        serde_json::from_slice(&fs::read(imported.join("provenance.json")).unwrap()).unwrap();
    let files = p["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{p}");
    assert_eq!(files[0]["key"], "topology.file");
    assert!(files[0]["path"].as_str().unwrap().ends_with("ring.csv"));
    assert_eq!(files[0]["sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn the_graphml_example_runs_and_names_its_hosts_after_the_cities() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    let (code, err) = run(&root().join("scenarios/import/us-backbone.toml"), &out);
    assert_eq!(code, 0, "{err}");
    let flows = common::csv_rows(&out.join("flows.csv"));
    assert_eq!(flows.len(), 3);
    assert_eq!(flows[0]["src"], "Seattle-h0");
    assert_eq!(flows[0]["dst"], "New_York-h0");
    assert!(flows.iter().all(|f| f["bytes_acked"].as_u64().unwrap() > 0));
    // the scenario.toml of the run names the GraphML by its absolute path
    let s = fs::read_to_string(out.join("scenario.toml")).unwrap();
    let want = root()
        .join("scenarios/import/us-backbone.graphml")
        .canonicalize()
        .unwrap();
    let t: toml::Value = toml::from_str(&s).unwrap();
    let got = Path::new(t["topology"]["file"].as_str().unwrap())
        .canonicalize()
        .unwrap();
    assert_eq!(got, want);
}

#[test]
fn a_bad_edge_list_is_one_line_exit_2_and_no_output() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "t.csv",
        "a,b,rate,delay\nh1,r,100Mbps,1ms\nr,h2,10Mbsp,5ms\n",
    );
    let f = write(
        d.path(),
        "s.toml",
        "name = \"e\"\nduration = \"1s\"\n[topology]\nkind = \"edges\"\nfile = \"t.csv\"\nhosts = [\"h*\"]\n[[flows]]\ngroup = \"g\"\nsrc = \"h1\"\ndst = \"h2\"\n",
    );
    let out = d.path().join("out");
    let (code, err) = run(&f, &out);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("`topology.file`")
            && err.contains("t.csv` line 3, column `rate`")
            && err.contains("10Mbsp")
            && err.contains("Mbps"),
        "{err}"
    );
    assert!(!out.exists(), "a refused run left {}", out.display());
}
