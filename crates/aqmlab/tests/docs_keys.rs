//! The scenario reference (`docs/src/reference/scenario.md`) against the
//! parser: every key the parser accepts has a row (or, for a small inline
//! table, an item) there, every key the page names is accepted, and the
//! defaults and allowed values the page gives are the code's.
//!
//! The keys are read from the parser's own declarations, so no second list
//! is kept by hand: a struct's keys are the field names serde's derive
//! passes to `deserialize_struct` (caught by [`Grab`]); a `kind` table's
//! keys are its registry's `PARAMS` (which `tests/registry.rs` checks
//! against serde); the `[tcp]` keys are `catalogue::TCP_PARAMS`, checked here
//! against `TcpOptions`. Defaults are read by deserializing a minimal
//! scenario and serializing it back; allowed values of an enum key from
//! serde's "unknown variant" error.

mod docs_common;

use aqmlab::registry::KindInfo;
use aqmlab::scenario::{self, Scenario};
use docs_common::*;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use std::collections::{BTreeMap, BTreeSet};

const PAGE: &str = "docs/src/reference/scenario.md";

/// A deserializer that takes the field names a derived struct declares
/// (or the variants of a derived enum) and deserializes nothing.
struct Grab<'a>(&'a mut Vec<&'static str>);

impl<'de> Deserializer<'de> for Grab<'_> {
    type Error = de::value::Error;
    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a derived struct"))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.extend(fields);
        Err(de::Error::custom("fields taken"))
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        enum identifier ignored_any
    }
}

/// The keys a derived struct accepts.
fn fields<T: DeserializeOwned>() -> Vec<String> {
    let mut f = Vec::new();
    let _ = T::deserialize(Grab(&mut f));
    assert!(
        !f.is_empty(),
        "{} declares no fields (not a derived struct?)",
        std::any::type_name::<T>()
    );
    f.iter().map(|s| s.to_string()).collect()
}

/// Problems found, reported together.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, at: impl std::fmt::Display, msg: impl std::fmt::Display) {
        self.0.push(format!("{at}: {msg}"));
    }
    fn check(self, what: &str) {
        if !self.0.is_empty() {
            panic!(
                "{what}: {} problem(s)\n  {}\n{HOW}",
                self.0.len(),
                self.0.join("\n  ")
            );
        }
    }
}

/// The smallest text the parser's serde layer accepts with every section
/// present once: only keys the page documents as `required` are written.
const RAW: &str = r#"
name = "m"
duration = "1s"
[nodes]
[routing]
[output]
[tcp]
[[links]]
a = "h1"
b = "h2"
delay = "1ms"
[[flows]]
group = "g"
src = "h1"
dst = "h2"
[[events]]
at = "1ms"
[sweep]
[[sweep.vary]]
key = "seed"
values = [1]
"#;

/// A scenario that validates, for keys that validation (not serde) requires.
const VALID: &str = r#"
name = "m"
duration = "1s"
[nodes]
hosts = ["h1", "h2"]
[[links]]
a = "h1"
b = "h2"
rate = "1Mbps"
delay = "1ms"
[[flows]]
group = "g"
src = "h1"
dst = "h2"
"#;

fn raw_table() -> toml::Table {
    toml::from_str(RAW).unwrap()
}

/// Deserialize (serde only, no validation) and serialize back: every key
/// with a default then holds it.
fn effective(t: &toml::Table) -> Result<toml::Table, String> {
    let sc: Scenario = toml::Value::Table(t.clone())
        .try_into()
        .map_err(|e: toml::de::Error| e.to_string())?;
    toml::Table::try_from(&sc).map_err(|e| e.to_string())
}

/// The value at a dotted path; an array of tables is entered at its first.
fn get<'a>(t: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut parts = path.split('.');
    let mut cur = t.get(parts.next()?)?;
    for p in parts {
        if let toml::Value::Array(a) = cur {
            cur = a.first()?;
        }
        cur = cur.as_table()?.get(p)?;
    }
    Some(cur)
}

fn table_at<'a>(t: &'a mut toml::Table, parent: &[&str]) -> Option<&'a mut toml::Table> {
    let mut cur = t;
    for p in parent {
        let v = cur.get_mut(*p)?;
        let v = match v {
            toml::Value::Array(a) => a.first_mut()?,
            v => v,
        };
        cur = v.as_table_mut()?;
    }
    Some(cur)
}

fn set(t: &mut toml::Table, path: &str, v: Option<toml::Value>) -> bool {
    let parts: Vec<&str> = path.split('.').collect();
    let (leaf, parent) = parts.split_last().unwrap();
    let Some(tab) = table_at(t, parent) else {
        return false;
    };
    match v {
        Some(v) => tab.insert(leaf.to_string(), v),
        None => tab.remove(*leaf),
    };
    true
}

/// The allowed values serde names for an enum key given a bad value
/// (`unknown variant `x`, expected one of `a`, `b``), if it is one.
fn variants_in(msg: &str) -> Option<Vec<String>> {
    let tail = msg.split("unknown variant").nth(1)?;
    let tail = tail.split("expected").nth(1)?;
    let line = tail.lines().next().unwrap_or("");
    Some(backticked(line))
}

/// Candidate literals of a documented default, best first: the first
/// alternative of its first clause (`fj93` of "`fj93`; `ns3`: ...", `5 ms`
/// of "5 ms, ..."), its first word, its first two words joined (`1 s` →
/// `1s`), the whole text.
fn candidates(text: &str) -> Vec<String> {
    let t = text.replace('`', "");
    let t = t.trim();
    if t == "\"\"" {
        return vec![String::new()];
    }
    let head = [" (", ";", ",", ":"]
        .iter()
        .filter_map(|c| t.find(c))
        .min()
        .map_or(t, |i| &t[..i]);
    let alt = head.split('|').next().unwrap_or(head).trim();
    let mut v = vec![alt.to_string()];
    let words: Vec<&str> = alt.split_whitespace().collect();
    if let Some(w) = words.first() {
        v.push(w.to_string());
    }
    if words.len() >= 2 {
        v.push(format!("{}{}", words[0], words[1]));
    }
    v.push(t.to_string());
    v.iter()
        .map(|s| s.trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn number(s: &str) -> Option<f64> {
    let s = s.replace([' ', '\u{202f}', '\u{2009}'], "");
    if let Some((a, b)) = s.split_once('/') {
        return Some(a.parse::<f64>().ok()? / b.parse::<f64>().ok()?);
    }
    s.parse().ok()
}

/// What a value is, for comparing a page's text with it.
#[derive(PartialEq, Debug)]
enum Lit {
    Num(f64),
    Dur(u64),
    Rate(u64),
    Size(u64),
    Bool(bool),
    Text(String),
    EmptyList,
}

/// The code's value (a serialized default) as a [`Lit`].
fn lit_of(v: &toml::Value) -> Option<Lit> {
    Some(match v {
        toml::Value::Integer(i) => Lit::Num(*i as f64),
        toml::Value::Float(f) => Lit::Num(*f),
        toml::Value::Boolean(b) => Lit::Bool(*b),
        toml::Value::Array(a) if a.is_empty() => Lit::EmptyList,
        toml::Value::String(s) => text_lit(s),
        toml::Value::Table(t) => Lit::Text(t.get("kind")?.as_str()?.to_string()),
        _ => return None,
    })
}

/// A catalogue default (`5ms`, `0.1`, `{ kind = "newreno" }`) as a [`Lit`].
fn text_lit(s: &str) -> Lit {
    if let Some(k) = s.strip_prefix("{ kind = \"") {
        return Lit::Text(k.split('"').next().unwrap_or("").to_string());
    }
    if let Some(n) = number(s) {
        return Lit::Num(n);
    }
    if let Ok(d) = aqmlab::units::parse_duration(s) {
        return Lit::Dur(d);
    }
    if let Ok(r) = aqmlab::units::parse_rate(s) {
        return Lit::Rate(r);
    }
    if let Ok(b) = aqmlab::units::parse_size(s) {
        return Lit::Size(b);
    }
    match s {
        "true" => Lit::Bool(true),
        "false" => Lit::Bool(false),
        "[]" => Lit::EmptyList,
        s => Lit::Text(s.to_string()),
    }
}

/// The page's text read as the same kind of value as `like`.
fn doc_lit(text: &str, like: &Lit) -> Option<Lit> {
    candidates(text).iter().find_map(|c| {
        let l = match like {
            Lit::Num(_) => Lit::Num(number(c)?),
            Lit::Dur(_) => Lit::Dur(aqmlab::units::parse_duration(c).ok()?),
            Lit::Rate(_) => Lit::Rate(aqmlab::units::parse_rate(c).ok()?),
            Lit::Size(_) => Lit::Size(aqmlab::units::parse_size(c).ok()?),
            Lit::Bool(_) => Lit::Bool(c.parse().ok()?),
            Lit::EmptyList => (c == "[]").then_some(Lit::EmptyList)?,
            // a word: only the first one written counts
            Lit::Text(_) => Lit::Text(candidates(text).first()?.clone()),
        };
        Some(l)
    })
}

/// Words a page uses for "no value".
fn says_none(text: &str) -> bool {
    let t = text.trim().trim_matches('`').to_lowercase();
    ["none", "off", "absent", "unset", "unlimited", "no "]
        .iter()
        .any(|w| t.starts_with(w))
}

/// Compare a documented default with the code's (`show`n) default:
/// `Some(true)` agree, `Some(false)` differ, `None` the text is words.
fn agrees(doc: &str, code: &str) -> Option<bool> {
    let doc = doc.trim();
    if code == "required" {
        return Some(doc.starts_with("required"));
    }
    if code == "none" {
        return if says_none(doc) {
            Some(true)
        } else if number(candidates(doc).last()?).is_some() || doc.starts_with("required") {
            Some(false)
        } else {
            None
        };
    }
    if doc.starts_with("required") {
        return Some(false);
    }
    if code.starts_with('{') && !code.starts_with("{ kind") {
        // a table of defaults (RIO's per-class tables): described in words
        return None;
    }
    let want = text_lit(code);
    let got = doc_lit(doc, &want)?;
    Some(got == want)
}

/// One row of the key table.
struct DocKey {
    line: usize,
    ty: String,
    default: String,
    meaning: String,
}

/// The page's main key table: key → row; a row naming several keys
/// (`links.a`, `links.b`) gives each.
fn doc_keys(page: &Page) -> BTreeMap<String, DocKey> {
    let t = page.table("Scenario reference", &["key", "type", "default", "meaning"]);
    let mut out = BTreeMap::new();
    for r in &t.rows {
        for k in backticked(&r.cells[0]) {
            let k = k.trim_matches(|c| c == '[' || c == ']').to_string();
            out.insert(
                k,
                DocKey {
                    line: r.line,
                    ty: r.cells[1].clone(),
                    default: r.cells[2].clone(),
                    meaning: r.cells[3].clone(),
                },
            );
        }
    }
    out
}

/// Every key of the scenario file outside the `kind` tables and `[tcp]`:
/// top-level keys and the keys of each section, from the structs.
fn code_keys() -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for f in fields::<Scenario>() {
        let sub = match f.as_str() {
            "nodes" => fields::<scenario::NodesSpec>(),
            "links" => fields::<scenario::LinkSpec>(),
            "routing" => fields::<scenario::RoutingSpec>(),
            "flows" => fields::<scenario::FlowSpec>(),
            "output" => fields::<scenario::OutputSpec>(),
            "events" => fields::<scenario::EventSpec>(),
            "sweep" => fields::<scenario::SweepSpec>(),
            _ => vec![],
        };
        for s in sub {
            if f == "sweep" && s == "vary" {
                for v in fields::<scenario::VaryAxis>() {
                    keys.insert(format!("sweep.vary.{v}"));
                }
            }
            keys.insert(format!("{f}.{s}"));
        }
        keys.insert(f);
    }
    keys
}

/// Inline tables documented as items of their key's row, with the struct
/// that declares their keys and a table the struct parses from.
fn inline_tables() -> Vec<(&'static str, Vec<String>, toml::Value)> {
    vec![
        (
            "links.classifier_ab",
            fields::<aqmlab::net::classifier::ClassifierSpec>(),
            toml::Value::try_from(aqmlab::net::classifier::ClassifierSpec::default()).unwrap(),
        ),
        (
            "flows.cbr",
            fields::<aqmlab::traffic::CbrSpec>(),
            toml::Value::try_from(
                toml::from_str::<aqmlab::traffic::CbrSpec>("rate = \"1Mbps\"").unwrap(),
            )
            .unwrap(),
        ),
    ]
}

#[test]
fn every_scenario_key_is_documented_with_its_default() {
    let page = Page::read(PAGE);
    let doc = doc_keys(&page);
    let code = code_keys();
    let mut p = Problems::default();
    let first = doc.values().map(|d| d.line).min().unwrap_or(0);

    // both ways
    for k in &code {
        if !doc.contains_key(k) {
            p.add(
                page.at(first),
                format!("the parser accepts `{k}`, but the key table has no row for it"),
            );
        }
    }
    for (k, d) in &doc {
        if !code.contains(k) {
            p.add(
                page.at(d.line),
                format!("`{k}` is documented, but the parser does not accept it"),
            );
        }
    }

    // defaults: the code's, read from a minimal scenario serialized back
    let raw = raw_table();
    let eff = effective(&raw).expect("the minimal scenario parses");
    for (k, d) in &doc {
        if !code.contains(k) || d.ty == "table" && d.default.is_empty() {
            continue;
        }
        let at = page.at(d.line);
        if d.default.starts_with("required") {
            let mut t = raw.clone();
            let raw_refuses = set(&mut t, k, None) && effective(&t).is_err();
            let leaf = k.rsplit('.').next().unwrap();
            let valid_refuses = {
                let mut v: toml::Table = toml::from_str(VALID).unwrap();
                set(&mut v, k, None)
                    && Scenario::from_toml(&toml::to_string(&v).unwrap(), "t.toml")
                        .err()
                        .is_some_and(|e| e.to_string().contains(leaf))
            };
            if !raw_refuses && !valid_refuses {
                p.add(
                    &at,
                    format!(
                        "`{k}` is documented as required, but a scenario without it is accepted"
                    ),
                );
            }
            continue;
        }
        match get(&eff, k).and_then(lit_of) {
            Some(want) => {
                let ok = match doc_lit(&d.default, &want) {
                    Some(got) => got == want,
                    None => false,
                };
                if !ok {
                    p.add(
                        &at,
                        format!(
                            "`{k}`: the default column says `{}`, the code's default is {}",
                            d.default,
                            get(&eff, k).unwrap()
                        ),
                    );
                }
                let ty = d.ty.to_lowercase();
                let ty_ok = match (get(&eff, k).unwrap(), &want) {
                    (_, Lit::Dur(_)) => ty.starts_with("time"),
                    (_, Lit::Rate(_)) => ty.starts_with("rate"),
                    (_, Lit::Size(_)) => ty.starts_with("size"),
                    (toml::Value::Integer(_), _) => ty.starts_with("integer"),
                    (toml::Value::Float(_), _) => {
                        ty.starts_with("float") || ty.starts_with("number")
                    }
                    (toml::Value::Boolean(_), _) => ty.starts_with("bool"),
                    (toml::Value::Array(_), _) => ty.starts_with('[') || ty.starts_with("array"),
                    _ => true,
                };
                if !ty_ok {
                    p.add(
                        &at,
                        format!(
                            "`{k}`: the type column says `{}`, the code's value is {}",
                            d.ty,
                            get(&eff, k).unwrap()
                        ),
                    );
                }
            }
            None if get(&eff, k).is_none() => {
                // No value when absent (or one left out when serialized
                // because it is the default): a literal on the page must
                // be that default, i.e. vanish when written.
                let lit = candidates(&d.default)
                    .into_iter()
                    .next()
                    .unwrap_or_default();
                let text = d.default.replace('`', "");
                let text = text.trim();
                let literal = if text == format!("\"{lit}\"") {
                    Some(toml::Value::String(lit.clone()))
                } else if text == lit {
                    toml::from_str::<toml::Table>(&format!("v = {lit}"))
                        .ok()
                        .and_then(|mut t| t.remove("v"))
                        .or_else(|| {
                            aqmlab::units::parse_duration(&lit)
                                .ok()
                                .map(|_| toml::Value::String(lit.clone()))
                        })
                } else {
                    None // words
                };
                if let Some(v) = literal {
                    let mut t = raw.clone();
                    let written = set(&mut t, k, Some(v));
                    match effective(&t) {
                        Ok(e) if written && get(&e, k).is_none() => {}
                        Ok(_) => p.add(&at, format!("`{k}`: the page gives the default `{}`, but that is not the code's default (written, the key differs from absent)", d.default)),
                        Err(e) => p.add(&at, format!("`{k}`: the default `{}` is not accepted: {e}", d.default)),
                    }
                }
            }
            None => {}
        }
    }

    // allowed values of enum keys: every one the parser takes is on the
    // page, and every quoted value on the page is taken
    for (k, d) in &doc {
        if !code.contains(k) || !d.ty.starts_with("string") {
            continue;
        }
        let mut t = raw.clone();
        if !set(
            &mut t,
            k,
            Some(toml::Value::String("zz-not-a-value".into())),
        ) {
            continue;
        }
        let Err(e) = effective(&t) else { continue };
        let Some(vs) = variants_in(&e) else { continue };
        let text = format!("{} {}", d.default, d.meaning);
        for v in &vs {
            if !text.contains(&format!("\"{v}\"")) && !text.contains(&format!("`{v}`")) {
                p.add(
                    page.at(d.line),
                    format!("`{k}` accepts `\"{v}\"`, which the row does not list"),
                );
            }
        }
        for q in backticked(&d.meaning) {
            if let Some(v) = q.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
                if !vs.iter().any(|x| x == v) {
                    p.add(page.at(d.line), format!("`{k}`: the row lists `\"{v}\"`, which the parser refuses (it takes {vs:?})"));
                }
            }
        }
    }

    // inline tables: each key an item of the row, with its default
    for (k, keys, defaults) in inline_tables() {
        let Some(d) = doc.get(k) else { continue };
        let listed = items(&d.meaning);
        let names: BTreeSet<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
        for f in &keys {
            if !names.contains(f.as_str()) {
                p.add(
                    page.at(d.line),
                    format!("`{k}` accepts `{f}`, which the row does not list"),
                );
            }
        }
        for (n, paren) in &listed {
            if !keys.contains(n) {
                p.add(
                    page.at(d.line),
                    format!("`{k}.{n}` is listed, but the parser does not accept it"),
                );
                continue;
            }
            let (Some(paren), Some(v)) = (paren, defaults.get(n.as_str())) else {
                continue;
            };
            if let Some(want) = lit_of(v) {
                if doc_lit(paren, &want).is_some_and(|g| g != want) {
                    p.add(
                        page.at(d.line),
                        format!("`{k}.{n}`: the row says ({paren}), the code's default is {v}"),
                    );
                }
            }
        }
    }
    p.check(PAGE);
}

/// The `kind` tables of the page (queue disciplines, congestion controls,
/// workloads) against the registries: every kind has a row, every
/// parameter is an item of it, and a default the row writes as a value is
/// the catalogue's.
#[test]
fn every_kind_and_parameter_is_documented_with_its_default() {
    let page = Page::read(PAGE);
    let mut p = Problems::default();
    let mut checked = 0;
    let mut words = 0;
    for (heading, reg) in [
        ("Queue disciplines", aqmlab::aqm::QueueSpec::registry()),
        ("Congestion control", aqmlab::tcp::cc::CcConfig::registry()),
        ("Workloads", aqmlab::traffic::WorkloadSpec::registry()),
    ] {
        let t = page
            .tables()
            .into_iter()
            .find(|t| {
                t.heading.starts_with(heading) && t.header.first().is_some_and(|h| h == "kind")
            })
            .unwrap_or_else(|| {
                panic!("{PAGE}: no `| kind | ...` table under \"{heading}\"; {HOW}")
            });
        let rows: BTreeMap<String, &Row> = t
            .rows
            .iter()
            .filter_map(|r| Some((backticked(&r.cells[0]).first()?.clone(), r)))
            .collect();
        for (kind, r) in &rows {
            if !reg.iter().any(|k| k.kind == kind) {
                p.add(
                    page.at(r.line),
                    format!(
                        "{heading}: kind `{kind}` is documented, but the parser has no such kind"
                    ),
                );
            }
        }
        let first = t.rows.first().map(|r| r.line).unwrap_or(0);
        for k in &reg {
            let Some(r) = rows.get(k.kind) else {
                p.add(
                    page.at(first),
                    format!(
                        "{heading}: the parser has kind `{}`, which the table does not list",
                        k.kind
                    ),
                );
                continue;
            };
            check_kind(&page, r, k, &mut p, &mut checked, &mut words);
        }
    }
    eprintln!("kind defaults: {checked} compared, {words} written in words");
    p.check(PAGE);
}

fn check_kind(
    page: &Page,
    r: &Row,
    k: &KindInfo,
    p: &mut Problems,
    checked: &mut usize,
    words: &mut usize,
) {
    let listed = items(&r.cells[1]);
    let names: BTreeSet<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
    let cat = k.catalogue();
    for prm in k.params {
        if !names.contains(prm.name) {
            p.add(
                page.at(r.line),
                format!(
                    "`{}` accepts `{}`, which its row does not list",
                    k.kind, prm.name
                ),
            );
        }
    }
    for (n, paren) in &listed {
        let Some((prm, _, default)) = cat.iter().find(|(q, _, _)| q.name == n) else {
            p.add(
                page.at(r.line),
                format!(
                    "`{}`: `{n}` is listed, but the parser does not accept it",
                    k.kind
                ),
            );
            continue;
        };
        let Some(paren) = paren else { continue };
        match agrees(paren, default) {
            Some(true) => *checked += 1,
            Some(false) => p.add(
                page.at(r.line),
                format!("`{}.{n}`: the row says ({paren}), the code's default is {default} (`aqmlab list {}`)", k.kind, k.kind),
            ),
            None => *words += 1,
        }
        // an enum key: every value the parser takes is named
        let mut t = k.required_example();
        t.insert(
            prm.name.into(),
            toml::Value::String("zz-not-a-value".into()),
        );
        if let Err((_, msg)) = (k.effective)(t) {
            if let Some(vs) = variants_in(&msg) {
                for v in vs {
                    if !paren.contains(&format!("`{v}`")) && !paren.contains(&format!("\"{v}\"")) {
                        p.add(
                            page.at(r.line),
                            format!(
                                "`{}.{n}` accepts `{v}`, which the row does not list",
                                k.kind
                            ),
                        );
                    }
                }
            }
        }
    }
}

/// `[topology]` kinds: one row each, every key of the kind's struct an
/// item of it.
#[test]
fn every_topology_kind_and_key_is_documented() {
    use aqmlab::scenario::{generate, import};
    let page = Page::read(PAGE);
    let t = page.table("Generated topologies", &["kind", "parameters", "names"]);
    let mut p = Problems::default();
    let code: Vec<(&str, Vec<String>)> = vec![
        ("dumbbell", fields::<generate::DumbbellSpec>()),
        ("star", fields::<generate::StarSpec>()),
        ("parking-lot", fields::<generate::ParkingLotSpec>()),
        ("fat-tree", fields::<generate::FatTreeSpec>()),
        ("edges", fields::<import::EdgesSpec>()),
        ("graphml", fields::<import::GraphmlSpec>()),
    ];
    let names: Vec<&str> = code.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        names,
        generate::KINDS,
        "tests/docs_keys.rs lists the topology kinds' structs: add the new kind"
    );
    for (kind, keys) in &code {
        let Some(r) = t
            .rows
            .iter()
            .find(|r| backticked(&r.cells[0]).first().is_some_and(|k| k == kind))
        else {
            p.add(
                page.at(t.rows[0].line),
                format!("topology kind `{kind}` has no row"),
            );
            continue;
        };
        let listed: BTreeSet<String> = items(&r.cells[1]).into_iter().map(|(n, _)| n).collect();
        for k in keys {
            if !listed.contains(k) {
                p.add(
                    page.at(r.line),
                    format!("topology `{kind}` accepts `{k}`, which its row does not list"),
                );
            }
        }
        for k in &listed {
            if !keys.contains(k) {
                p.add(
                    page.at(r.line),
                    format!(
                        "topology `{kind}`: `{k}` is listed, but the parser does not accept it"
                    ),
                );
            }
        }
    }
    for r in &t.rows {
        let k = backticked(&r.cells[0]).first().cloned().unwrap_or_default();
        if !names.contains(&k.as_str()) {
            p.add(
                page.at(r.line),
                format!("topology kind `{k}` is documented, but the parser has no such kind"),
            );
        }
    }
    p.check(PAGE);
}

/// The TCP table: one row per `[tcp]` key, defaults as the catalogue's;
/// and the catalogue's `TCP_PARAMS` lists exactly `TcpOptions`' keys.
#[test]
fn every_tcp_key_is_documented_with_its_default() {
    use aqmlab::catalogue::{tcp_catalogue, TCP_PARAMS};
    let mut declared: Vec<String> = fields::<aqmlab::tcp::TcpOptions>();
    let mut listed: Vec<String> = TCP_PARAMS.iter().map(|p| p.name.to_string()).collect();
    declared.sort();
    listed.sort();
    assert_eq!(
        listed, declared,
        "catalogue::TCP_PARAMS must list exactly the keys TcpOptions accepts (then regenerate \
         docs/src/reference/catalogue.md: cargo run --release -- list --markdown)"
    );
    let page = Page::read(PAGE);
    let t = page
        .tables()
        .into_iter()
        .find(|t| {
            t.heading.starts_with("TCP parameters") && t.header.first().is_some_and(|h| h == "key")
        })
        .unwrap_or_else(|| {
            panic!("{PAGE}: no `| key | default | ...` table under \"TCP parameters\"; {HOW}")
        });
    let mut p = Problems::default();
    let rows: BTreeMap<String, &Row> = t
        .rows
        .iter()
        .filter(|r| {
            backticked(&r.cells[0]).len() == 1
                && r.cells[0].starts_with('`')
                && r.cells[0].ends_with('`')
        })
        .map(|r| (backticked(&r.cells[0])[0].clone(), r))
        .collect();
    let cat = tcp_catalogue();
    let raw = raw_table();
    for (prm, _, default) in &cat {
        let Some(r) = rows.get(prm.name) else {
            p.add(
                page.at(t.rows[0].line),
                format!("`tcp.{}` has no row in the TCP table", prm.name),
            );
            continue;
        };
        if agrees(&r.cells[1], default) == Some(false) {
            p.add(
                page.at(r.line),
                format!(
                    "`tcp.{}`: the default column says `{}`, the code's default is {default}",
                    prm.name, r.cells[1]
                ),
            );
        }
        let mut tt = raw.clone();
        set(
            &mut tt,
            &format!("tcp.{}", prm.name),
            Some(toml::Value::String("zz-not-a-value".into())),
        );
        if let Some(vs) = effective(&tt).err().as_deref().and_then(variants_in) {
            let text = r.cells.join(" ");
            for v in vs {
                if !text.contains(&format!("`{v}`")) && !text.contains(&format!("\"{v}\"")) {
                    p.add(
                        page.at(r.line),
                        format!(
                            "`tcp.{}` accepts `{v}`, which the row does not list",
                            prm.name
                        ),
                    );
                }
            }
        }
    }
    for (k, r) in &rows {
        if !listed.contains(k) {
            p.add(
                page.at(r.line),
                format!("`tcp.{k}` is documented, but the parser does not accept it"),
            );
        }
    }
    p.check(PAGE);
}
