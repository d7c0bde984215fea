//! Every registered spec's `validate` runs when a scenario loads: for each
//! queue kind, workload kind, the CBR source, the edge classifier and the
//! TCP parameters, one out-of-range value is refused with its full key path
//! (issue 13, item 1).

use aqmlab::aqm::QueueSpec;
use aqmlab::registry::literal;
use aqmlab::Scenario;

const BASE: &str = r#"
name = "ranges"
duration = "1s"
[nodes]
hosts = ["h1", "h2"]
routers = ["r"]
[[links]]
a = "h1"
b = "r"
rate = "10Mbps"
delay = "1ms"
[[links]]
a = "r"
b = "h2"
rate = "1Mbps"
delay = "5ms"
QUEUE
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
FLOW
"#;

fn load(queue: &str, flow: &str, extra: &str) -> Result<Scenario, String> {
    let text = BASE.replace("QUEUE", queue).replace("FLOW", flow) + extra;
    Scenario::from_toml(&text, "t.toml").map_err(|e| e.to_string())
}

fn refused(r: Result<Scenario, String>, key: &str) {
    match r {
        Ok(_) => panic!("`{key}`: accepted"),
        // a key path that starts with `key` (parse errors may name a deeper key)
        Err(e) => assert!(e.contains(&format!("`{key}")), "expected `{key}` in: {e}"),
    }
}

/// For every registered queue kind, each parameter's catalogued out-of-range
/// value (`Param::bad`) is refused when a scenario loads, at its full key
/// path: a kind added to the registry is covered without an edit here.
#[test]
fn each_queue_kind_runs_its_validation() {
    let mut checked = 0;
    for k in QueueSpec::registry() {
        let mut cases = 0;
        for p in k.params.iter().filter(|p| !p.bad.is_empty()) {
            let mut t = k.required_example();
            t.insert("kind".into(), toml::Value::String(k.kind.into()));
            t.insert(p.name.into(), literal(p.bad));
            let inline = toml::Value::Table(t).to_string();
            let q = format!("queue_ab = {inline}");
            refused(load(&q, "", ""), &format!("links[1].queue_ab.{}", p.name));
            cases += 1;
        }
        assert!(
            cases > 0,
            "queue kind `{}` catalogues no refused value",
            k.kind
        );
        checked += cases;
    }
    assert!(checked >= QueueSpec::KINDS.len());
}

#[test]
fn cbr_classifier_workloads_and_tcp_run_their_validation() {
    refused(
        load("", "cbr = { rate = \"1Mbps\", packet_size = 0 }", ""),
        "flows[0].cbr.packet_size",
    );
    refused(
        load("classifier_ab = { slr = 0.0 }", "", ""),
        "links[1].classifier_ab.slr",
    );
    let http = "[[workloads]]\nkind = \"http\"\nname = \"w\"\nclient = \"h1\"\nserver = \"h2\"\n";
    refused(
        load("", "", &format!("{http}connections = 0\n")),
        "workloads[0].connections",
    );
    refused(
        load("", "", &format!("{http}connections = 1\nrate = 1e-9\n")),
        "workloads[0].rate",
    );
    refused(
        load(
            "",
            "",
            &format!("{http}connections = 1\nresponse_size = \"5000000000000B\"\n"),
        ),
        "workloads[0].response_size",
    );
    let web = "[[workloads]]\nkind = \"web\"\nname = \"w\"\nclient = \"h1\"\nserver = \"h2\"\n";
    refused(
        load("", "", &format!("{web}sessions = 0\n")),
        "workloads[0].sessions",
    );
    refused(
        load(
            "",
            "",
            &format!("{web}sessions = 1\nobjects_max = 100000\n"),
        ),
        "workloads[0].objects_max",
    );
    refused(
        load(
            "",
            "",
            &format!("{web}sessions = 1\ninter_page = \"2000000s\"\n"),
        ),
        "workloads[0].inter_page",
    );
    refused(
        load("", "", &format!("{web}sessions = 1\nsize_max = 1e300\n")),
        "workloads[0].size_max",
    );
    refused(load("", "tcp = { mss = 0 }", ""), "flows[0].tcp.mss");
    refused(load("", "tcp = { mss = 65496 }", ""), "flows[0].tcp.mss");
    refused(
        load("", "tcp = { header_bytes = 19 }", ""),
        "flows[0].tcp.header_bytes",
    );
    refused(
        load("", "", "[tcp]\nheader_bytes = 121\n"),
        "tcp.header_bytes",
    );
    // the bounds themselves are accepted
    load("", "tcp = { mss = 65495, header_bytes = 120 }", "").unwrap();
    load("", "tcp = { mss = 1, header_bytes = 20 }", "").unwrap();
}
