//! Every registered spec's `validate` runs when a scenario loads: for each
//! queue kind, workload kind, the CBR source, the edge classifier and the
//! TCP parameters, one out-of-range value is refused with its full key path
//! (issue 13, item 1).

use aqmlab::aqm::QueueSpec;
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

#[test]
fn each_queue_kind_runs_its_validation() {
    // one value each validate refuses (droptail's only parameter, `limit`,
    // is refused while parsing: a zero limit never reaches validate)
    let bad: &[(&str, &str, &str)] = &[
        ("droptail", "limit = 0", "links[1].queue_ab"),
        (
            "red",
            "limit = 50, min_th = 20, max_th = 10",
            "links[1].queue_ab.max_th",
        ),
        ("codel", "target = \"0s\"", "links[1].queue_ab.target"),
        ("fq_codel", "flows = 0", "links[1].queue_ab.flows"),
        ("fq_pie", "flows = 0", "links[1].queue_ab.flows"),
        ("sfq_codel", "bins = 0", "links[1].queue_ab.bins"),
        ("pie", "target = \"0s\"", "links[1].queue_ab.target"),
        (
            "ared",
            "limit = 50, min_th = 5, max_th = 15, interval = \"0s\"",
            "links[1].queue_ab.interval",
        ),
        ("markmax", "theta = 0", "links[1].queue_ab.theta"),
        (
            "step",
            "k = 20, k_sojourn = \"1ms\"",
            "links[1].queue_ab.k_sojourn",
        ),
        ("maxnet", "mu = 0.0", "links[1].queue_ab.mu"),
        (
            "rio",
            "limit = 50, mean_pktsize = 0",
            "links[1].queue_ab.mean_pktsize",
        ),
        ("dualpi2", "c_weight = 101", "links[1].queue_ab.c_weight"),
        ("cobalt", "increment = 1.5", "links[1].queue_ab.increment"),
        ("cake", "overhead = 300", "links[1].queue_ab.overhead"),
    ];
    assert_eq!(
        bad.len(),
        QueueSpec::KINDS.len(),
        "a queue kind was added: give it a case here"
    );
    for (kind, params, key) in bad {
        assert!(QueueSpec::KINDS.contains(kind), "{kind}");
        let q = format!("queue_ab = {{ kind = \"{kind}\", {params} }}");
        refused(load(&q, "", ""), key);
    }
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
