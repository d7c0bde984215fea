//! The warnings channel: a valid scenario that does not do what its names
//! say runs with one line per warning on stderr and the records in
//! `summary.json`; `--strict` refuses it (exit 2, nothing written).

mod common;
use common::*;

const PRAGUE_WITHOUT_ACCECN: &str = r#"
name = "w"
duration = "200ms"
[nodes]
hosts = ["h1", "h2"]
routers = ["r1"]
[[links]]
a = "h1"
b = "r1"
rate = "10Mbps"
delay = "5ms"
[[links]]
a = "r1"
b = "h2"
rate = "10Mbps"
delay = "5ms"
queue = { kind = "step", k = 20 }
[[flows]]
group = "l4s"
src = "h1"
dst = "h2"
cc = "prague"
"#;

#[test]
fn a_warning_is_printed_and_listed_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, out) = run_scenario(dir.path(), PRAGUE_WITHOUT_ACCECN, &[]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("warning [")).collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("warning [prague-without-accecn]: flows[0].cc: "),
        "{err}"
    );
    assert!(
        lines[1].starts_with("warning [ecn-queue-without-ecn-flows]: links[1].queue: "),
        "{err}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let w = s["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 2);
    assert_eq!(w[0]["cause"], "prague-without-accecn");
    assert_eq!(w[0]["key"], "flows[0].cc");
    assert!(lines[0].ends_with(w[0]["message"].as_str().unwrap()));
}

#[test]
fn strict_refuses_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, out) = run_scenario(dir.path(), PRAGUE_WITHOUT_ACCECN, &["--strict"]);
    assert_eq!(code, 2, "{err}");
    let last = err.lines().last().unwrap();
    assert_eq!(
        last,
        "error: --strict: the scenario has 2 warnings (above); fix them or run without --strict"
    );
    assert!(!out.exists(), "nothing written under --strict");
}

#[test]
fn a_scenario_without_warnings_lists_none() {
    let dir = tempfile::tempdir().unwrap();
    let fixed = PRAGUE_WITHOUT_ACCECN.replace(
        "cc = \"prague\"",
        "cc = \"prague\"\ntcp = { ecn = true, ecn_feedback = \"accecn\" }",
    );
    let (code, err, out) = run_scenario(dir.path(), &fixed, &["--strict"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["warnings"], serde_json::json!([]));
}

/// The shipped scenarios do what their names say: none has a warning.
#[test]
fn shipped_scenarios_have_no_warnings() {
    let mut files = Vec::new();
    let mut stack = vec![root().join("scenarios"), root().join("examples")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut found = Vec::new();
    for f in &files {
        // matrix/paper files are not scenarios
        let Ok(sc) = aqmlab::Scenario::from_file(f) else {
            continue;
        };
        for w in sc.warnings() {
            found.push(format!("{}: {w}", f.display()));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_sweep_prints_each_warning_once_and_strict_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{PRAGUE_WITHOUT_ACCECN}\n[sweep]\nseeds = 1\n[[sweep.vary]]\nkey = \"flows.l4s.count\"\nvalues = [1, 2]\n"
    );
    let f = write(dir.path(), "s.toml", &text);
    let out = dir.path().join("out");
    let (code, _, err) = output(
        aqmlab()
            .arg("sweep")
            .arg(&f)
            .arg("--out")
            .arg(&out)
            .arg("--strict"),
    );
    assert_eq!(code, 2, "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("warning [")).collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].ends_with("(in 2 of 2 combinations, the first `1`)"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written under --strict");
}
