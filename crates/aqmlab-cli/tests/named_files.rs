//! Files a scenario names (a link's `trace`, a cdf workload's `sizes`):
//! relative to the scenario file's folder, `--set` paths relative to the
//! working directory, their SHA-256 in `provenance.json`, a run folder's
//! `scenario.toml` rerunnable from anywhere, and a FIFO refused at once.

mod common;
use common::{aqmlab, output, write};
use std::path::Path;
use std::time::{Duration, Instant};

/// A traced link and a CDF workload, both files named relative to the
/// scenario's folder.
const SCENARIO: &str = r#"
name = "files"
duration = "2s"
[nodes]
hosts = ["a", "b"]
[[links]]
a = "a"
b = "b"
delay = "5ms"
trace = "link.trace"
queue = { kind = "codel", limit = 200 }
[[flows]]
group = "bulk"
src = "a"
dst = "b"
[[workloads]]
kind = "cdf"
name = "w"
senders = ["a"]
receivers = ["b"]
flows = 20
rate = 20.0
sizes = "sizes.cdf"
"#;

/// One 1504-byte opportunity every ms, twice (~24 Mbit/s).
const TRACE: &str = "1\n1\n2\n2\n3\n3\n4\n4\n5\n5\n";
const CDF: &str = "1000 0\n20000 50\n100000 100\n";

fn setup(d: &Path) -> std::path::PathBuf {
    let s = d.join("scen");
    std::fs::create_dir(&s).unwrap();
    write(&s, "link.trace", TRACE);
    write(&s, "sizes.cdf", CDF);
    write(&s, "s.toml", SCENARIO)
}

fn prov(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("provenance.json")).unwrap()).unwrap()
}

#[test]
fn files_are_found_from_the_scenario_folder_and_hashed() {
    let d = tempfile::tempdir().unwrap();
    let f = setup(d.path());
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let (code, _, err) = output(
        aqmlab()
            .current_dir(&elsewhere)
            .arg("run")
            .arg(&f)
            .args(["--out", "r1"]),
    );
    assert_eq!(code, 0, "{err}");
    let r1 = elsewhere.join("r1");
    let p = prov(&r1);
    let files = p["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{p}");
    let canon = |n: &str| d.path().join("scen").join(n).display().to_string();
    for (k, n, text) in [
        ("links[0].trace", "link.trace", TRACE),
        ("workloads[0].sizes", "sizes.cdf", CDF),
    ] {
        let e = files.iter().find(|e| e["key"] == k).expect(k);
        assert_eq!(e["path"], canon(n).as_str());
        assert_eq!(
            e["sha256"],
            aqmlab::output::sha256_hex(text).as_str(),
            "{k}"
        );
        assert_eq!(e["bytes"], text.len() as u64);
    }
    // the run folder's scenario.toml names the files by absolute path: it
    // reruns from another folder, with the same results
    let sc = std::fs::read_to_string(r1.join("scenario.toml")).unwrap();
    assert!(
        sc.contains(&format!("trace = \"{}\"", canon("link.trace"))),
        "{sc}"
    );
    let again = d.path().join("again");
    std::fs::create_dir(&again).unwrap();
    let (code, _, err) = output(
        aqmlab()
            .current_dir(&again)
            .arg("run")
            .arg(r1.join("scenario.toml"))
            .args(["--out", "r2"]),
    );
    assert_eq!(code, 0, "{err}");
    for t in ["flows.csv", "links.csv", "requests.csv"] {
        let (a, b) = (r1.join(t), again.join("r2").join(t));
        if a.exists() {
            assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap(), "{t}");
        }
    }
    assert_eq!(prov(&again.join("r2"))["files"], p["files"]);
}

#[test]
fn a_set_path_is_relative_to_the_working_directory() {
    let d = tempfile::tempdir().unwrap();
    let f = setup(d.path());
    // a trace only in the working directory, not in the scenario's folder
    write(d.path(), "other.trace", "1\n2\n3\n");
    let (code, _, err) = output(aqmlab().current_dir(d.path()).arg("run").arg(&f).args([
        "--set",
        "links.0.trace=other.trace",
        "--out",
        "r",
    ]));
    assert_eq!(code, 0, "{err}");
    let p = prov(&d.path().join("r"));
    let want = d.path().join("other.trace").display().to_string();
    assert!(
        p["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["path"] == want.as_str()),
        "{p}"
    );
    // the same name written in the file is looked up in its folder only
    let (code, _, err) = output(aqmlab().current_dir(d.path()).arg("run").arg(&f).args([
        "--set",
        "links.0.trace=nope.trace",
        "--out",
        "r3",
    ]));
    assert_eq!(code, 2);
    assert!(
        err.contains("links[0].trace") && err.contains("nope.trace"),
        "{err}"
    );
}

/// Run `aqmlab run` and give up (failing) after 30 s: a FIFO opened for
/// reading would block until a writer came.
fn run_bounded(cwd: &Path, args: &[&str]) -> (i32, String) {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("aqmlab"));
    let mut child = c
        .current_dir(cwd)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (s.code().unwrap_or(-1), err);
        }
        if t0.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("`aqmlab {}` still running after 30 s", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_fifo_or_device_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let f = setup(d.path());
    let made = std::process::Command::new("mkfifo")
        .arg(d.path().join("scen").join("fifo"))
        .status();
    let mut cases = vec![
        ("links.0.trace", "/dev/zero"),
        ("workloads.0.sizes", "/dev/zero"),
    ];
    if made.is_ok_and(|s| s.success()) {
        cases.push(("links.0.trace", "scen/fifo"));
        cases.push(("workloads.0.sizes", "scen/fifo"));
    }
    let f = f.display().to_string();
    for (k, v) in cases {
        if !Path::new("/dev/zero").exists() && v == "/dev/zero" {
            continue;
        }
        let set = format!("{k}={v}");
        let out = d.path().join("o").display().to_string();
        let (code, err) = run_bounded(d.path(), &["run", &f, "--set", &set, "--out", &out]);
        assert_eq!(code, 2, "{set}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{set}: {err}");
        assert!(err.contains("not a regular file"), "{set}: {err}");
        assert!(!Path::new(&out).exists(), "{set}: partial output");
    }
}

/// A resumed sweep skips a run only if the files it read are the same: a
/// trace edited since is run again.
#[test]
fn a_sweep_reruns_what_an_edited_file_changes() {
    let d = tempfile::tempdir().unwrap();
    let f = setup(d.path());
    let text = std::fs::read_to_string(&f).unwrap()
        + "[sweep]\nlink = \"a->b\"\n[[sweep.vary]]\nkey = \"links.0.queue.kind\"\nvalues = [\"codel\", \"pie\"]\n";
    std::fs::write(&f, text).unwrap();
    let sweep = || {
        let (code, _, err) = output(
            aqmlab()
                .arg("sweep")
                .arg(&f)
                .arg("--out")
                .arg(d.path().join("sw")),
        );
        assert_eq!(code, 0, "{err}");
        err
    };
    assert!(sweep().contains("sweep: 2 runs computed now"));
    assert!(sweep().contains("sweep: 0 runs computed now"));
    write(&d.path().join("scen"), "link.trace", "1\n2\n3\n4\n5\n");
    assert!(sweep().contains("sweep: 2 runs computed now"));
}
