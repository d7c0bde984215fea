//! The three registries (queue kinds, congestion controls, workloads),
//! checked by iterating them: every registered kind parses, validates and
//! builds; every parameter the catalogue lists is one the parser accepts and
//! vice versa; every listed out-of-range value is rejected by the kind's
//! `validate` (or its parser) naming that key; and scenario errors name the
//! innermost key, list the allowed kinds and carry no Rust type names.

use aqmlab::aqm::QueueSpec;
use aqmlab::engine::RngStream;
use aqmlab::registry::{literal, KindInfo};
use aqmlab::tcp::cc::CcConfig;
use aqmlab::traffic::WorkloadSpec;
use aqmlab::Scenario;

type Parse = fn(toml::Value) -> Result<(), (String, String)>;

fn families() -> Vec<(&'static str, Vec<KindInfo>, Parse)> {
    vec![
        ("queue", QueueSpec::registry(), |v| {
            QueueSpec::from_value(v).map(|_| ())
        }),
        ("cc", CcConfig::registry(), |v| {
            CcConfig::from_value(v).map(|_| ())
        }),
        ("workload", WorkloadSpec::registry(), |v| {
            WorkloadSpec::from_value(v).map(|_| ())
        }),
    ]
}

fn with_kind(kind: &str, mut t: toml::Table) -> toml::Value {
    t.insert("kind".into(), toml::Value::String(kind.into()));
    toml::Value::Table(t)
}

/// A queue spec is a tag and a pointer to its kind's parameters, whatever
/// the largest kind's size: a scenario link holds three (`queue`,
/// `queue_ab`, `queue_ba`) and a generated topology 10⁵ links. Held
/// inline, the largest kind (176 bytes) made a link 848 bytes, 85 MB of a
/// 10⁵-host star's set-up.
#[test]
fn a_queue_spec_is_two_words() {
    assert_eq!(std::mem::size_of::<QueueSpec>(), 16);
    assert_eq!(std::mem::size_of::<Option<QueueSpec>>(), 16);
    let link = std::mem::size_of::<aqmlab::scenario::LinkSpec>();
    assert!(link <= 400, "{link}");
}

#[test]
fn registries_list_the_same_names_as_their_kinds() {
    let names = |r: Vec<KindInfo>| r.iter().map(|k| k.kind).collect::<Vec<_>>();
    assert_eq!(names(QueueSpec::registry()), QueueSpec::KINDS);
    assert_eq!(names(CcConfig::registry()), CcConfig::NAMES);
    assert_eq!(names(WorkloadSpec::registry()), WorkloadSpec::KINDS);
    for (fam, reg, _) in families() {
        let mut seen = std::collections::HashSet::new();
        for k in &reg {
            assert!(seen.insert(k.kind), "{fam}: `{}` registered twice", k.kind);
            assert!(!k.about.is_empty(), "{fam} `{}` has no description", k.kind);
        }
    }
}

#[test]
fn every_kind_parses_validates_and_builds() {
    for k in QueueSpec::registry() {
        let q = QueueSpec::from_value(with_kind(k.kind, k.required_example()))
            .unwrap_or_else(|e| panic!("queue `{}`: {e:?}", k.kind));
        assert_eq!(q.kind(), k.kind);
        q.validate().unwrap();
        let mut rng = RngStream::new(1, 2);
        let d = q.build(10_000_000, 1_000_000, &mut rng);
        assert_eq!(d.kind(), k.kind);
        // serialize and parse back: the same configuration
        let back = QueueSpec::from_value(toml::Value::try_from(&q).unwrap()).unwrap();
        assert_eq!(format!("{back:?}"), format!("{q:?}"));
    }
    for k in CcConfig::registry() {
        let c = CcConfig::from_value(with_kind(k.kind, k.required_example())).unwrap();
        assert_eq!(c.name(), k.kind);
        assert_eq!(c.build().name(), k.kind);
        // the bare-name shorthand
        let c2 = CcConfig::from_value(toml::Value::String(k.kind.into())).unwrap();
        assert_eq!(c, c2);
        let back = CcConfig::from_value(toml::Value::try_from(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
    for k in WorkloadSpec::registry() {
        let w = WorkloadSpec::from_value(with_kind(k.kind, k.required_example()))
            .unwrap_or_else(|e| panic!("workload `{}`: {e:?}", k.kind));
        assert_eq!(w.kind(), k.kind);
        w.validate().unwrap();
        let built = w.build(&Default::default(), 1);
        assert_eq!(built.kind(), k.kind);
    }
}

/// The catalogue (`aqmlab list <kind>`) and the parser agree: every key the
/// parsed config has is listed, and every listed key is accepted.
#[test]
fn catalogue_matches_what_the_parser_accepts() {
    for (fam, reg, parse) in families() {
        for k in reg {
            let eff = (k.effective)(k.required_example()).unwrap();
            let listed: Vec<&str> = k.params.iter().map(|p| p.name).collect();
            for key in eff.keys() {
                assert!(
                    listed.contains(&key.as_str()),
                    "{fam} `{}`: key `{key}` not listed",
                    k.kind
                );
            }
            let mut seen = std::collections::HashSet::new();
            for p in k.params {
                assert!(
                    seen.insert(p.name),
                    "{fam} `{}`: `{}` listed twice",
                    k.kind,
                    p.name
                );
                // accepted at its default (or example) value
                let mut t = k.required_example();
                if let Some(v) = eff.get(p.name) {
                    t.insert(p.name.into(), v.clone());
                }
                parse(with_kind(k.kind, t.clone()))
                    .unwrap_or_else(|e| panic!("{fam} `{}` `{}`: {e:?}", k.kind, p.name));
                // an unknown key next to it is refused, naming the key
                t.insert("no_such_key".into(), toml::Value::Integer(1));
                let (path, msg) = parse(with_kind(k.kind, t)).unwrap_err();
                assert_eq!(path, "no_such_key", "{fam} `{}`: {msg}", k.kind);
            }
            let rows = k.catalogue();
            assert_eq!(rows.len(), k.params.len());
            for (p, ty, default) in rows {
                assert!(
                    !ty.is_empty() && !default.is_empty(),
                    "{} {}",
                    k.kind,
                    p.name
                );
                assert!(
                    !p.range.is_empty() && !p.about.is_empty(),
                    "{} {}",
                    k.kind,
                    p.name
                );
                if let Some(v) = eff.get(p.name) {
                    if p.example.is_empty() {
                        // the default shown is the parsed default
                        assert_eq!(default, aqmlab::registry::show(v), "{} {}", k.kind, p.name);
                        // and the value shown parses back to the same default
                        let mut t = k.required_example();
                        let lit = match v {
                            toml::Value::String(_) => toml::Value::String(default.clone()),
                            other => other.clone(),
                        };
                        t.insert(p.name.into(), lit);
                        let back = (k.effective)(t).unwrap();
                        assert_eq!(back.get(p.name), Some(v), "{} {}", k.kind, p.name);
                    }
                }
            }
        }
    }
}

/// Each listed out-of-range value is rejected, and the error names the key:
/// this runs every registered kind's `validate` through the parser.
#[test]
fn every_kinds_validation_runs_and_names_the_key() {
    let mut checked = 0;
    for (fam, reg, parse) in families() {
        for k in reg {
            for p in k.params.iter().filter(|p| !p.bad.is_empty()) {
                let mut t = k.required_example();
                t.insert(p.name.into(), literal(p.bad));
                let r = parse(with_kind(k.kind, t));
                let (path, msg) = r.expect_err(&format!(
                    "{fam} `{}`: {} = {} accepted",
                    k.kind, p.name, p.bad
                ));
                assert!(
                    path == p.name || path.starts_with(&format!("{}.", p.name)),
                    "{fam} `{}`: {} = {} reported at `{path}`: {msg}",
                    k.kind,
                    p.name,
                    p.bad
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 60, "only {checked} bad values checked");
}

const MINI: &str = r#"
name = "mini"
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
queue = { kind = "red", limit = 20, min_th = 5, max_th = 15 }
[[flows]]
group = "bulk"
src = "h1"
dst = "h2"
cc = { kind = "cubic" }
[[workloads]]
kind = "http"
name = "mice"
client = "h1"
server = "h2"
connections = 2
"#;

fn err(text: &str, set: &[&str]) -> String {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let e = Scenario::from_toml_with(text, "t.toml", &set)
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\u{1}'), "internal marker leaked: {e:?}");
    for rust in [
        "struct ",
        "enum ",
        "QueueSpec",
        "LinkSpec",
        "CcConfig",
        "f64",
        "u32",
    ] {
        assert!(!e.contains(rust), "Rust type name `{rust}` in: {e}");
    }
    assert!(!e.contains('\n'), "not one line: {e}");
    e
}

#[test]
fn errors_name_the_innermost_key() {
    Scenario::from_toml(MINI, "t.toml").unwrap();
    let e = err(MINI, &["links.r-h2.queue.max_p=\"abc\""]);
    assert!(
        e.starts_with("t.toml: `links[1].queue.max_p`: expected a number, got string \"abc\""),
        "{e}"
    );
    assert!(e.contains("expected a number"), "{e}");
    let e = err(
        MINI,
        &["links.r-h2.queue_ab={ kind = \"red\", min_th = 5, max_th = 15 }"],
    );
    assert_eq!(e, "t.toml: `links[1].queue_ab.limit`: required");
    let e = err(MINI, &["flows.bulk.cc.beta=\"x\""]);
    assert!(e.contains("`flows[0].cc.beta`"), "{e}");
    let e = err(MINI, &["workloads.0.cc={ kind = \"vegas\", alpha = -1 }"]);
    assert!(e.contains("`workloads[0].cc.alpha`"), "{e}");
    let e = err(MINI, &["workloads.0.connections=0"]);
    assert!(
        e.contains("`workloads[0].connections`: must be at least 1"),
        "{e}"
    );
    let e = err(MINI, &["links.r-h2.queue.min_thresh=1"]);
    assert!(
        e.contains("`links[1].queue.min_thresh`: unknown key"),
        "{e}"
    );
    assert!(e.contains("max_p"), "allowed keys listed: {e}");
}

#[test]
fn a_wrong_kind_lists_the_allowed_kinds_whatever_its_type() {
    for bad in ["\"blue\"", "3", "true", "[1, 2]", "{ a = 1 }"] {
        let e = err(MINI, &[&format!("links.r-h2.queue.kind={bad}")]);
        assert!(e.contains("`links[1].queue.kind`"), "{e}");
        for k in QueueSpec::KINDS {
            assert!(e.contains(&format!("`{k}`")), "{k} missing: {e}");
        }
    }
    for bad in ["\"cubicle\"", "3", "[\"reno\"]"] {
        let e = err(MINI, &[&format!("flows.bulk.cc={bad}")]);
        assert!(e.contains("`flows[0].cc"), "{e}");
        for k in CcConfig::NAMES {
            assert!(e.contains(&format!("`{k}`")), "{k} missing: {e}");
        }
    }
    let e = err(MINI, &["links.r-h2.queue=7"]);
    assert!(
        e.contains("`links[1].queue`") && e.contains("`droptail`"),
        "{e}"
    );
    let e = err(MINI, &["links.r-h2.queue={ limit = 7 }"]);
    assert!(
        e.contains("`links[1].queue.kind`: required") && e.contains("`codel`"),
        "{e}"
    );
    let e = err(MINI, &["workloads.0.kind=\"ftp\""]);
    assert!(
        e.contains("`workloads[0].kind`") && e.contains("`http`") && e.contains("`web`"),
        "{e}"
    );
}

#[test]
fn echoed_input_is_cut() {
    let long = "x".repeat(5000);
    let e = err(MINI, &[&format!("links.r-h2.queue.max_p=\"{long}\"")]);
    assert!(e.len() < 250, "{} characters: {e}", e.len());
    assert!(e.contains('…'), "{e}");
    let e = err(MINI, &[&format!("links.r-h2.queue.kind=\"{long}\"")]);
    assert!(e.len() < 400, "{} characters: {e}", e.len());
    let e = err(MINI, &["links.0=3"]);
    assert!(
        e.contains("`links[0]`") && e.contains("expected a table"),
        "{e}"
    );
}

/// `aqmlab list tcp` lists exactly the keys a `[tcp]` table takes, with the
/// defaults the parser fills in, and each listed bound is enforced.
#[test]
fn tcp_catalogue_matches_the_tcp_table() {
    use aqmlab::catalogue::{tcp_catalogue, TCP_PARAMS};
    let resolved = toml::Table::try_from(aqmlab::tcp::TcpParams::default()).unwrap();
    // Keys without a default (`profile`, `recovery`, `syn_rto`,
    // `rto_restart`, `sack_variant`, `rto_ssthresh`) are absent from the
    // resolved table;
    // every other listed key must be there, and no more.
    let mut listed: Vec<&str> = TCP_PARAMS
        .iter()
        .map(|p| p.name)
        .filter(|n| {
            !matches!(
                n,
                &"profile"
                    | &"recovery"
                    | &"syn_rto"
                    | &"rto_restart"
                    | &"sack_variant"
                    | &"rto_ssthresh"
            )
        })
        .collect();
    let mut keys: Vec<&str> = resolved.keys().map(|k| k.as_str()).collect();
    listed.sort_unstable();
    keys.sort_unstable();
    assert_eq!(listed, keys);
    for (p, ty, default) in tcp_catalogue() {
        if default == "none" {
            assert!(!resolved.contains_key(p.name), "tcp.{}", p.name);
            let e = err(MINI, &[&format!("tcp.{}={}", p.name, p.bad)]);
            assert!(e.contains(&format!("`tcp.{}`", p.name)), "{e}");
            continue;
        }
        // the default as written parses and resolves to the default
        let lit = if ty == "duration" {
            format!("\"{default}\"")
        } else {
            default.clone()
        };
        let sc = Scenario::from_toml_with(MINI, "t.toml", &[format!("tcp.{}={lit}", p.name)])
            .unwrap_or_else(|e| panic!("tcp.{} = {lit}: {e}", p.name));
        let got = toml::Table::try_from(sc.tcp_params(0)).unwrap();
        assert_eq!(got[p.name], resolved[p.name], "tcp.{}", p.name);
        if !p.bad.is_empty() {
            let e = err(MINI, &[&format!("tcp.{}={}", p.name, p.bad)]);
            assert!(e.contains(&format!("`tcp.{}`", p.name)), "{e}");
        }
    }
}

/// The text `aqmlab list` and `aqmlab list <kind>` print names every kind
/// and every parameter with its default.
#[test]
fn list_text_covers_every_kind_and_parameter() {
    use aqmlab::catalogue::{describe, list_all, names};
    let all = list_all();
    for f in aqmlab::catalogue::families() {
        for k in &f.kinds {
            assert!(
                all.contains(&format!("  {:<12} {}", k.kind, k.about)),
                "{}",
                k.kind
            );
            let text = describe(k.kind).unwrap();
            assert!(text.contains(k.about));
            for (p, ty, default) in k.catalogue() {
                assert!(
                    text.contains(&format!("| {} | {ty} | {default} |", p.name)),
                    "{} {}: {text}",
                    k.kind,
                    p.name
                );
            }
        }
    }
    assert!(describe("tcp")
        .unwrap()
        .contains("| mss | integer | 1000 |"));
    assert!(describe("nope").is_none());
    assert!(names().contains(&"fq_pie") && names().contains(&"dctcp") && names().contains(&"tcp"));
}

/// A CBR source's own validation runs where the scenario is parsed.
#[test]
fn cbr_is_validated_naming_the_key() {
    let text = MINI.replace(
        "cc = { kind = \"cubic\" }",
        "cbr = { rate = \"1Mbps\", packet_size = 0 }",
    );
    let e = err(&text, &[]);
    assert!(
        e.contains("`flows[0].cbr.packet_size`: must be 1..=65535"),
        "{e}"
    );
    let e = err(&text, &["flows.bulk.cbr.packet_size=\"x\""]);
    assert!(e.contains("`flows[0].cbr.packet_size`"), "{e}");
    let e = err(&text, &["flows.bulk.cbr=3"]);
    assert!(e.contains("`flows[0].cbr`: expected a table"), "{e}");
    Scenario::from_toml_with(&text, "t.toml", &["flows.bulk.cbr.packet_size=100".into()]).unwrap();
}
