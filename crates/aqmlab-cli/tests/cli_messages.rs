//! Messages a person can act on: each refusal below is one line naming the
//! key path, the value (at most 200 characters of it) and what is allowed,
//! exits with status 2 and writes nothing; and `--allow-large` lifts the
//! size limit on the files a scenario names.

mod common;

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

const GOOD: &str = r#"
name = "messages"
duration = "50ms"
[nodes]
hosts = ["h1", "h2"]
routers = ["r"]
[[links]]
a = "h1"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[links]]
name = "bottleneck"
a = "r"
b = "h2"
rate = "10Mbps"
delay = "10ms"
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
"#;

/// `aqmlab run` on `text` in `dir` with `extra` flags → (exit code,
/// stderr); a failed run must leave no output folder.
fn run(dir: &Path, text: &str, extra: &[&str]) -> (i32, String) {
    let out = dir.join("out");
    let _ = fs::remove_dir_all(&out);
    let (code, err, out) = common::run_scenario(dir, text, extra);
    if code != 0 {
        assert!(!out.exists(), "a failed run wrote {}", out.display());
    }
    (code, err)
}

/// A refusal: exit 2, one line (`error: ` and the message), naming `key`,
/// holding every one of `needles`, none of `absent`, and no echo: at most
/// `most` characters in all.
fn refused(
    dir: &Path,
    text: &str,
    extra: &[&str],
    key: &str,
    needles: &[&str],
    most: usize,
) -> String {
    let (code, err) = run(dir, text, extra);
    assert_eq!(code, 2, "{err}");
    let err = err.trim_end().to_string();
    assert_eq!(err.lines().count(), 1, "more than one line: {err}");
    assert!(err.contains(&format!("`{key}")), "no key `{key}`: {err}");
    for n in needles {
        assert!(err.contains(n), "no `{n}` in: {err}");
    }
    for a in [
        "invalid type",
        "unit variant",
        "expected string only",
        "CSV error",
    ] {
        assert!(!err.contains(a), "`{a}` in: {err}");
    }
    assert!(
        err.chars().count() <= most,
        "{} characters: {err}",
        err.chars().count()
    );
    err
}

#[test]
fn a_key_path_of_7000_parts_is_refused_with_the_limit() {
    let d = tempfile::tempdir().unwrap();
    let deep = vec!["a"; 7_000].join(".");
    refused(
        d.path(),
        GOOD,
        &["--set", &format!("{deep}=1")],
        "a.a.a",
        &["7000 parts", "at most 32 parts and 500 characters"],
        600,
    );
}

/// A number where a string-only enum is expected: the allowed names and
/// the value (serde said "invalid type: unit variant, expected string
/// only").
#[test]
fn a_number_for_a_name_lists_the_names() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("tcp.ecn_feedback", "[tcp]\necn_feedback = 7\n", "`accecn`"),
        ("tcp.recovery", "[tcp]\nrecovery = 7\n", "`newreno`"),
        ("output.format", "[output]\nformat = 7\n", "`csv`"),
    ];
    for (key, extra, name) in cases {
        refused(
            d.path(),
            &format!("{GOOD}{extra}"),
            &[],
            key,
            &["expected one of", name, "got integer 7"],
            400,
        );
    }
}

/// `--set` into the links of a generated topology, or into `[[events]]`
/// the file does not have (serde said "`links`: invalid type: map,
/// expected an array").
#[test]
fn a_path_into_generated_links_or_absent_events_says_why() {
    let d = tempfile::tempdir().unwrap();
    let gen = r#"
name = "g"
duration = "50ms"
[topology]
kind = "dumbbell"
hosts = 2
access_rate = "100Mbps"
access_delay = "1ms"
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
[[flows]]
group = "f"
src = "src0"
dst = "dst0"
"#;
    refused(
        d.path(),
        gen,
        &["--set", "links.bottleneck.rate=\"5Mbps\""],
        "links.bottleneck.rate",
        &["generated", "topology.bottleneck_rate"],
        400,
    );
    refused(
        d.path(),
        GOOD,
        &["--set", "events.0.rate=\"5Mbps\""],
        "events.0.rate",
        &["no `[[events]]` entries", "add a `[[events]]` entry"],
        400,
    );
}

/// A trace line of 10⁶ digits is echoed to 200 characters.
#[test]
fn a_million_digit_trace_line_is_cut() {
    let d = tempfile::tempdir().unwrap();
    let t = common::write(d.path(), "t.trace", &format!("{}\n", "9".repeat(1_000_000)));
    let text = GOOD.replace(
        "delay = \"10ms\"",
        &format!("delay = \"10ms\"\ntrace = \"{}\"", t.display()),
    );
    let e = refused(
        d.path(),
        &text,
        &[],
        "links[1].trace",
        &[
            "line 1",
            "(999800 more characters)",
            "whole number of milliseconds",
        ],
        600,
    );
    assert!(
        e.contains(&"9".repeat(200)) && !e.contains(&"9".repeat(201)),
        "{e}"
    );
}

/// An edge list of 10⁴ links and one unknown link name: the names listed
/// to 200 characters and how many more, with the closest one.
#[test]
fn an_unknown_link_on_an_imported_topology_lists_a_few_names() {
    let d = tempfile::tempdir().unwrap();
    let mut csv = String::from("a,b,rate,delay\nh1,r0,1Gbps,1ms\n");
    for i in 0..10_000 {
        writeln!(csv, "r{i},r{},1Gbps,1ms", i + 1).unwrap();
    }
    writeln!(csv, "r10000,h2,1Gbps,1ms").unwrap();
    let f = common::write(d.path(), "e.csv", &csv);
    let text = format!(
        "name = \"e\"\nduration = \"10ms\"\n[topology]\nkind = \"edges\"\nfile = \"{}\"\nhosts = [\"h1\", \"h2\"]\n[output]\npcap = [\"r5-r7\"]\n[[flows]]\ngroup = \"f\"\nsrc = \"h1\"\ndst = \"h2\"\n",
        f.display()
    );
    let e = refused(
        d.path(),
        &text,
        &[],
        "output.pcap[0]",
        &["unknown link `r5-r7`", "did you mean", "more"],
        500,
    );
    assert!(e.contains(" and 99") || e.contains(" and 100"), "{e}");
}

/// A 100 000-deep array is not echoed back.
#[test]
fn a_deep_array_is_not_echoed() {
    let d = tempfile::tempdir().unwrap();
    let text = GOOD.replace(
        "group = \"bulk\"",
        &format!(
            "group = \"bulk\"\ncc = {}{}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
    );
    let (code, err) = run(d.path(), &text, &[]);
    assert_eq!(code, 2, "{}", &err[..err.len().min(500)]);
    assert!(
        err.chars().count() < 1000,
        "{} characters",
        err.chars().count()
    );
    assert!(!err.contains(&"[".repeat(201)), "{}", &err[..500]);
}

/// A GraphML file with a DTD: refused saying DTDs are not accepted.
#[test]
fn a_graphml_dtd_is_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let g = common::write(
        d.path(),
        "g.graphml",
        "<?xml version=\"1.0\"?>\n<!DOCTYPE graphml [<!ENTITY a \"aaaa\">]>\n<graphml><graph><node id=\"0\"/></graph></graphml>\n",
    );
    let text = format!(
        "name = \"g\"\nduration = \"10ms\"\n[topology]\nkind = \"graphml\"\nfile = \"{}\"\ndefault_rate = \"1Gbps\"\ndefault_delay = \"1ms\"\naccess_rate = \"1Gbps\"\naccess_delay = \"1ms\"\n[[flows]]\ngroup = \"f\"\nsrc = \"a-h0\"\ndst = \"b-h0\"\n",
        g.display()
    );
    refused(
        d.path(),
        &text,
        &[],
        "topology.file",
        &["has a DTD", "not accepted", "<!DOCTYPE"],
        400,
    );
}

/// A short edge-list row: the file, the line, how many columns and which.
#[test]
fn a_short_edge_list_row_names_line_and_columns() {
    let d = tempfile::tempdir().unwrap();
    let f = common::write(d.path(), "e.csv", "a,b,rate,delay\nh1,r,1Gbps,1ms\nr,h2\n");
    let text = format!(
        "name = \"e\"\nduration = \"10ms\"\n[topology]\nkind = \"edges\"\nfile = \"{}\"\nhosts = [\"h1\", \"h2\"]\n[[flows]]\ngroup = \"f\"\nsrc = \"h1\"\ndst = \"h2\"\n",
        f.display()
    );
    refused(
        d.path(),
        &text,
        &[],
        "topology.file",
        &["line 3: 2 columns where the header has 4 (a,b,rate,delay)"],
        400,
    );
}

/// An unknown congestion control gets the closest name, as a queue kind
/// does (one mechanism: `registry::unknown`).
#[test]
fn unknown_cc_and_queue_names_get_did_you_mean() {
    let d = tempfile::tempdir().unwrap();
    refused(
        d.path(),
        &GOOD.replace("group = \"bulk\"", "group = \"bulk\"\ncc = \"cubix\""),
        &[],
        "flows[0].cc",
        &[
            "unknown congestion control `cubix`",
            "did you mean `cubic`?",
            "`newreno`",
        ],
        400,
    );
    refused(
        d.path(),
        &GOOD.replace(
            "delay = \"10ms\"",
            "delay = \"10ms\"\nqueue = { kind = \"fq_codle\" }",
        ),
        &[],
        "links[1].queue.kind",
        &["unknown queue kind `fq_codle`", "did you mean `fq_codel`?"],
        400,
    );
}

/// CAKE's `bandwidth = "0bps"` names CAKE's minimum, not a rate's.
#[test]
fn cake_zero_bandwidth_names_its_minimum() {
    let d = tempfile::tempdir().unwrap();
    for v in ["0bps", "0Mbps", "100bps"] {
        refused(
            d.path(),
            &GOOD.replace(
                "delay = \"10ms\"",
                &format!("delay = \"10ms\"\nqueue = {{ kind = \"cake\", bandwidth = \"{v}\" }}"),
            ),
            &[],
            "links[1].queue.bandwidth",
            &["at least 512 bit/s"],
            400,
        );
    }
}

/// A GraphML graph of 10⁵ nodes (about 8 MB) is refused by size without
/// `--allow-large`, naming the flag, and imported and run with it.
#[test]
fn allow_large_lifts_the_file_limit_for_an_imported_graph() {
    let d = tempfile::tempdir().unwrap();
    let g = d.path().join("big.graphml");
    let mut x = String::from(
        "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n<key attr.name=\"label\" attr.type=\"string\" for=\"node\" id=\"d0\"/>\n<graph edgedefault=\"undirected\">\n",
    );
    let n = 100_000;
    for i in 0..n {
        writeln!(
            x,
            "<node id=\"{i}\"><data key=\"d0\">Router {i}</data></node>"
        )
        .unwrap();
    }
    // a binary tree: every node within 17 hops of the root
    for i in 1..n {
        writeln!(x, "<edge source=\"{}\" target=\"{i}\"/>", (i - 1) / 2).unwrap();
    }
    x.push_str("</graph>\n</graphml>\n");
    assert!(x.len() > 5 << 20, "{} bytes", x.len());
    fs::write(&g, &x).unwrap();
    let text = format!(
        r#"name = "big"
duration = "10ms"
[nodes]
hosts = ["a", "b"]
[[links]]
a = "a"
b = "Router_0"
rate = "1Gbps"
delay = "1ms"
[[links]]
a = "b"
b = "Router_{last}"
rate = "1Gbps"
delay = "1ms"
[topology]
kind = "graphml"
file = "{file}"
default_rate = "1Gbps"
default_delay = "1ms"
hosts_per_node = 0
[[flows]]
group = "f"
src = "a"
dst = "b"
"#,
        last = n - 1,
        file = g.display()
    );
    refused(
        d.path(),
        &text,
        &[],
        "topology.file",
        &["at most 4194304 bytes", "--allow-large"],
        400,
    );
    let (code, err) = run(d.path(), &text, &["--allow-large"]);
    assert_eq!(code, 0, "{err}");
    let prov = fs::read_to_string(d.path().join("out/provenance.json")).unwrap();
    assert!(
        prov.contains("big.graphml") && prov.contains(&x.len().to_string()),
        "{prov}"
    );
}
