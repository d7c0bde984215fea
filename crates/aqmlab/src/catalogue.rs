//! The model catalogue behind `aqmlab list`: the three algorithm families
//! (queue disciplines, congestion controls, workloads) with their kinds and
//! parameters, and the `[tcp]` keys. It names every family, so it sits above
//! them; the generic machinery they register with is [`crate::registry`].

use crate::registry::param;
use crate::registry::*;

/// The `[tcp]` keys (scenario-wide `[tcp]`, per-flow and per-workload
/// `tcp` tables), for `aqmlab list tcp`. Defaults are read from
/// `TcpParams::default()`.
pub const TCP_PARAMS: &[Param] = &[
    param!(
        "mss",
        "bytes",
        "1..=65495; an integer or a size (\"1000B\")",
        "0",
        "payload bytes per full segment"
    ),
    param!(
        "header_bytes",
        "bytes",
        "20..=120; an integer or a size (\"40B\")",
        "0",
        "TCP/IP header bytes per segment; a pure ACK's size"
    ),
    param!(
        "init_cwnd",
        "segments",
        "> 0",
        "0.0",
        "initial congestion window"
    ),
    param!(
        "init_ssthresh",
        "segments",
        "> 0",
        "0.0",
        "initial slow-start threshold"
    ),
    param!(
        "max_window",
        "segments",
        "≥ 1",
        "0",
        "receive window: cap on the sender's window"
    ),
    param!(
        "min_rto",
        "time",
        "≤ max_rto",
        "",
        "minimum retransmission timeout"
    ),
    param!(
        "max_rto",
        "time",
        "≥ min_rto",
        "",
        "maximum retransmission timeout"
    ),
    param!(
        "initial_rto",
        "time",
        "> 0",
        "",
        "RTO before an RTT sample (RFC 6298 §2.1)"
    ),
    param!(
        "syn_rto",
        "time",
        "> 0; absent = initial_rto",
        "\"1\"",
        "timeout of the handshake's SYN before backoff (ns-3 ConnTimeout)"
    ),
    param!(
        "granularity",
        "time",
        "≥ 0",
        "",
        "clock granularity G (RFC 6298 §2.3)"
    ),
    param!(
        "delayed_ack",
        "",
        "true/false",
        "",
        "one ACK per delack_count in-order segments"
    ),
    param!(
        "delack_count",
        "segments",
        "≥ 1",
        "0",
        "segments per delayed ACK"
    ),
    param!("delack_timeout", "time", "> 0", "", "delayed-ACK timeout"),
    param!(
        "dupack_threshold",
        "ACKs",
        "≥ 1",
        "0",
        "duplicate ACKs that trigger fast retransmit"
    ),
    param!(
        "handshake",
        "",
        "true/false",
        "",
        "open with a SYN / SYN-ACK handshake"
    ),
    param!(
        "ecn",
        "",
        "true/false",
        "",
        "ECN-capable transport (RFC 3168); needed by dctcp"
    ),
    param!(
        "ecn_feedback",
        "",
        "rfc3168 | accecn",
        "\"bogus\"",
        "ECN feedback: RFC 3168 ECE/CWR, or RFC 9768 AccECN (ACE counter), negotiated in the handshake"
    ),
    param!(
        "profile",
        "",
        "ns2-2.35 | ns3-3.44 | linux-6.1",
        "\"bogus\"",
        "a stack's defaults under every explicit key (tcp/profile.rs)"
    ),
    param!(
        "sack",
        "",
        "true/false",
        "",
        "receiver sends SACK blocks (RFC 2018)"
    ),
    param!(
        "timestamps",
        "",
        "true/false",
        "",
        "timestamps option and RTTM (RFC 7323): +12 B per segment"
    ),
    param!(
        "recovery",
        "",
        "reno | newreno | sack",
        "\"bogus\"",
        "loss recovery scheme; none = the CC's own (Reno or NewReno)"
    ),
    param!(
        "prr",
        "",
        "true/false",
        "",
        "Proportional Rate Reduction in SACK recovery (RFC 6937)"
    ),
    param!(
        "rack",
        "",
        "true/false",
        "",
        "RACK time-based loss detection (RFC 8985 §6); needs recovery = sack"
    ),
    param!(
        "pacing",
        "",
        "true/false",
        "",
        "pace at Linux's rate: cwnd/srtt x 200 % in slow start, 120 % after"
    ),
    param!(
        "ack_first_segment",
        "",
        "true/false",
        "",
        "ACK the first data segment after the handshake at once (ns-3)"
    ),
    param!(
        "limited_transmit",
        "",
        "true/false",
        "",
        "Limited Transmit (RFC 3042; with SACK, RFC 6675 step 3: new data while pipe < cwnd)"
    ),
    param!(
        "rto_ssthresh",
        "",
        "\"hold\" or \"cut\"",
        "\"sometimes\"",
        "a repeated timeout: hold ssthresh (RFC 5681 §3.1, Linux, ns-3; default) or cut it again (ns-2)"
    ),
    param!(
        "tlp",
        "",
        "true/false",
        "",
        "Tail Loss Probe (RFC 8985 §7) after 2 x SRTT without an ACK; needs rack = true"
    ),
    param!(
        "rto_restart",
        "",
        "every-ack | first-partial-ack",
        "\"bogus\"",
        "which new ACKs in fast recovery restart the RTO; absent = the recovery scheme's rule"
    ),
    param!(
        "sack_variant",
        "",
        "rfc | ns3",
        "\"bogus\"",
        "SACK recovery as the RFCs write it, or as ns-3 3.44 codes it"
    ),
    param!(
        "fin",
        "",
        "true/false",
        "",
        "FIN on a sized transfer's last segment, ACKed at once (Linux, ns-3; not ns-2)"
    ),
];

/// One family of the catalogue: its name, where it is written, its kinds.
pub struct Family {
    pub name: &'static str,
    pub key: &'static str,
    pub kinds: Vec<KindInfo>,
}

/// Every registered family, in the order `aqmlab list` prints them.
pub fn families() -> Vec<Family> {
    vec![
        Family {
            name: "queue kinds",
            key: "links[].queue / queue_ab / queue_ba: kind = ...",
            kinds: crate::aqm::QueueSpec::registry(),
        },
        Family {
            name: "congestion controls",
            key: "flows[].cc, workloads[].cc: a name or { kind = ..., ... }",
            kinds: crate::tcp::cc::CcConfig::registry(),
        },
        Family {
            name: "workloads",
            key: "[[workloads]] kind = ...",
            kinds: crate::traffic::WorkloadSpec::registry(),
        },
    ]
}

/// Rows (param, type, default) of the `[tcp]` keys.
pub fn tcp_catalogue() -> Vec<(Param, String, String)> {
    let d = toml::Table::try_from(crate::tcp::TcpParams::default()).unwrap_or_default();
    TCP_PARAMS
        .iter()
        .map(|p| {
            let (ty, default) = match (d.get(p.name), p.unit) {
                (Some(toml::Value::Integer(ns)), "time") => {
                    ("duration".to_string(), pretty_unit(&format!("{ns}ns")))
                }
                (Some(v), _) => (type_name(v), show(v)),
                (None, _) => ("-".into(), "none".into()),
            };
            (*p, ty, default)
        })
        .collect()
}

/// `aqmlab list`: every family with its kinds, and the `[tcp]` keys.
pub fn list_all() -> String {
    let mut out = String::new();
    for f in families() {
        out.push_str(&format!(
            "{} ({}):
",
            f.name, f.key
        ));
        for k in &f.kinds {
            out.push_str(&format!(
                "  {:<12} {}
",
                k.kind, k.about
            ));
        }
        out.push('\n');
    }
    out.push_str("tcp keys ([tcp], flows[].tcp, workloads[].tcp):\n");
    for p in TCP_PARAMS {
        out.push_str(&format!("  {:<18} {}\n", p.name, p.about));
    }
    out.push_str(
        "\n`aqmlab list <name>` prints a kind's parameters (`aqmlab list tcp`: the tcp keys).\n",
    );
    out
}

fn param_table(rows: &[(Param, String, String)]) -> String {
    let mut out = String::from("| parameter | type | default | unit | allowed | description |\n|---|---|---|---|---|---|\n");
    for (p, ty, d) in rows {
        let cells = [
            p.name,
            ty,
            d,
            if p.unit.is_empty() { "-" } else { p.unit },
            p.range,
            p.about,
        ];
        // A `|` inside a cell (`reno | newreno | sack`) would end it.
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// `aqmlab list <name>`: the parameters of every kind called `name` (a
/// name can be both a queue kind and a congestion control, e.g. `maxnet`),
/// or of the `[tcp]` keys for `tcp`. `None` when nothing has that name.
pub fn describe(name: &str) -> Option<String> {
    if name == "tcp" {
        return Some(format!(
            "tcp keys ([tcp], flows[].tcp, workloads[].tcp; each overrides the level above)\n\n{}",
            param_table(&tcp_catalogue())
        ));
    }
    let mut out = Vec::new();
    for f in families() {
        for k in f.kinds.iter().filter(|k| k.kind == name) {
            let rows = k.catalogue();
            let table = if rows.is_empty() {
                "no parameters\n".to_string()
            } else {
                param_table(&rows)
            };
            out.push(format!(
                "{} `{}` ({})\nsource: {}\n\n{}",
                f.name, k.kind, f.key, k.about, table
            ));
        }
    }
    (!out.is_empty()).then(|| out.join("\n"))
}

/// `aqmlab list --markdown`: the whole catalogue as one Markdown page (the
/// documentation's model catalogue, `docs/src/reference/catalogue.md`; a
/// test fails when the committed page differs from this).
pub fn list_markdown() -> String {
    let mut out = String::from(
        "# Model catalogue\n\n\
         <!-- Generated by `aqmlab list --markdown` from the registry the scenario parser uses; \
         do not edit. Regenerate: cargo run --release -- list --markdown > docs/src/reference/catalogue.md -->\n\n\
         Every queue discipline, congestion control and workload aqmlab knows, with each \
         parameter's type, default, unit, allowed values and meaning, as the scenario parser \
         reads them. A default is the value the code uses when the key is absent; `required` \
         means the scenario must set the key; `none` means the key is optional and has no \
         value when absent. `aqmlab list NAME` prints one entry in the terminal.\n",
    );
    for f in families() {
        out.push_str(&format!(
            "\n## {}\n\nWritten as `{}`.\n",
            capital(f.name),
            f.key
        ));
        for k in &f.kinds {
            let rows = k.catalogue();
            let table = if rows.is_empty() {
                "No parameters.\n".to_string()
            } else {
                param_table(&rows)
            };
            out.push_str(&format!(
                "\n### `{}` ({})\n\n{}\n\n{}",
                k.kind,
                f.name
                    .trim_end_matches('s')
                    .replace("queue kind", "queue discipline"),
                k.about,
                table
            ));
        }
    }
    out.push_str(&format!(
        "\n## TCP keys\n\nWritten in `[tcp]`, `flows[].tcp` and `workloads[].tcp`; each level \
         overrides the one above.\n\n{}",
        param_table(&tcp_catalogue())
    ));
    out
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Every name `aqmlab list <name>` accepts.
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = families()
        .iter()
        .flat_map(|f| f.kinds.iter().map(|k| k.kind))
        .collect();
    v.push("tcp");
    v.sort_unstable();
    v.dedup();
    v
}
