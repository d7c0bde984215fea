//! What the three algorithm registries (queue disciplines in `aqm`,
//! congestion controls in `tcp::cc`, workloads in `traffic`) share: parsing a
//! `kind`-tagged table in two stages, error messages that name the innermost
//! key, and the parameter record ([`Param`]) each algorithm declares. The
//! catalogue that names the families (`aqmlab list`) is
//! [`crate::catalogue`], above them.
//!
//! Each family has one registration macro (`aqm::queue_kinds!`,
//! `tcp::cc::cc_kinds!`, `traffic::workload_kinds!`): one line per
//! algorithm, naming its module, its config type and its enum variant. The
//! config type implements the family's trait (`KIND`, `ABOUT`, `PARAMS`,
//! `validate`, `build`), and the macro generates the enum, the list of
//! names, parsing (with validation) and building from it.
//!
//! Parsing goes in two stages so that every error names the key inside the
//! table: first the `kind` is read (a wrong or missing kind lists the
//! allowed ones, whatever the value's type), then the rest of the table is
//! deserialized into that kind's config with key paths
//! (`serde_path_to_error`), then the config's `validate` runs. The inner
//! key path travels to the scenario loader inside the error message (see
//! [`nested`] and [`split_nested`]), which joins it to the outer path:
//! `links[1].queue.max_p: invalid type: string "abc", expected a number`.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// One parameter of an algorithm, as `aqmlab list <kind>` prints it. The
/// type and the default are not written here: they are read from the config
/// itself (see [`KindInfo::catalogue`]), so they cannot drift from the code.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// The key, as written in scenarios.
    pub name: &'static str,
    /// Unit of the value (`"s"`, `"packets"`, `"bit/s"`, `""` for none).
    pub unit: &'static str,
    /// The values validation accepts, in words (`"(0, 1]"`, `"≥ 1"`).
    pub range: &'static str,
    /// A value outside `range` as a TOML literal, or `""` where every value
    /// of the type is allowed. Tests check that parsing rejects it naming
    /// this key.
    pub bad: &'static str,
    /// For a key without default (or one a valid config must set): a valid
    /// value as a TOML literal; the catalogue and the tests fill it in.
    pub example: &'static str,
    /// One line: what it is.
    pub about: &'static str,
}

/// Shorthand for [`Param`] in the algorithm files:
/// `param!(name, unit, range, bad, about)`, or with `required = "example"`
/// first for a key that has no default.
macro_rules! param {
    ($name:literal, $unit:literal, $range:literal, $bad:literal, $about:literal) => {
        $crate::registry::Param {
            name: $name,
            unit: $unit,
            range: $range,
            bad: $bad,
            example: "",
            about: $about,
        }
    };
    (required = $ex:literal, $name:literal, $unit:literal, $range:literal, $bad:literal, $about:literal) => {
        $crate::registry::Param {
            name: $name,
            unit: $unit,
            range: $range,
            bad: $bad,
            example: $ex,
            about: $about,
        }
    };
}
pub(crate) use param;

/// What every registered algorithm's config provides (the family traits
/// `QueueKind`, `CcAlgorithm`, `WorkloadKind` extend it).
pub trait Registered: Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + Sync {
    /// The name written in scenarios (`kind = "red"`, `cc = "cubic"`).
    const KIND: &'static str;
    /// One line: what it is and its source (paper, RFC, kernel file).
    const ABOUT: &'static str;
    /// Every key the config accepts.
    const PARAMS: &'static [Param];
    /// Range checks; the error is (key inside the table, message).
    fn validate(&self) -> Result<(), (String, String)> {
        Ok(())
    }
}

/// A registry entry, for listing and for tests that iterate a family.
#[derive(Clone, Copy)]
pub struct KindInfo {
    pub kind: &'static str,
    pub about: &'static str,
    pub params: &'static [Param],
    /// Parse and validate a table (without `kind`) and serialize the result
    /// back: the effective configuration with every default filled in.
    pub effective: fn(toml::Table) -> Result<toml::Table, (String, String)>,
}

impl KindInfo {
    pub fn of<C: Registered>() -> KindInfo {
        KindInfo {
            kind: C::KIND,
            about: C::ABOUT,
            params: C::PARAMS,
            effective: |t| {
                let c: C = parse_kind(t)?;
                match toml::Table::try_from(&c) {
                    Ok(t) => Ok(t),
                    Err(e) => Err((String::new(), e.to_string())),
                }
            },
        }
    }

    /// The table of the keys that have an example (every key without a
    /// default, and keys a valid config needs set), each at its example.
    pub fn required_example(&self) -> toml::Table {
        let mut t = toml::Table::new();
        for p in self.params.iter().filter(|p| !p.example.is_empty()) {
            t.insert(p.name.into(), literal(p.example));
        }
        t
    }

    /// One row per parameter: (param, type, default). The default is read
    /// from the config parsed with the example keys only; a key whose
    /// absence the parser or validation refuses (an error at that key) says
    /// `required`; an optional key without default says `none`.
    pub fn catalogue(&self) -> Vec<(Param, String, String)> {
        let example = self.required_example();
        let eff = (self.effective)(example.clone()).unwrap_or_default();
        let ty_of = |lit: &str| {
            if lit.is_empty() {
                "-".into()
            } else {
                type_name(&literal(lit))
            }
        };
        self.params
            .iter()
            .map(|p| {
                let (ty, default) = if p.example.is_empty() {
                    match eff.get(p.name) {
                        Some(v) => (type_name(v), show(v)),
                        None => (ty_of(p.bad), "none".into()),
                    }
                } else {
                    let default = match (self.effective)(without(&example, p.name)) {
                        Err((k, _)) if k == p.name => "required".into(),
                        Ok(d) => d.get(p.name).map(show).unwrap_or_else(|| "none".into()),
                        Err(_) => "-".into(),
                    };
                    let ty = eff
                        .get(p.name)
                        .map(type_name)
                        .unwrap_or_else(|| ty_of(p.example));
                    (ty, default)
                };
                (*p, kind_of_value(&ty, p.unit), default)
            })
            .collect()
    }
}

fn without(t: &toml::Table, key: &str) -> toml::Table {
    let mut t = t.clone();
    t.remove(key);
    t
}

/// A TOML literal as a value (`"5ms"`, `0.1`, `{ a = 1 }`).
pub fn literal(text: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// A value's type in words, with the unit's kind for strings.
fn kind_of_value(ty: &str, unit: &str) -> String {
    match (ty, unit) {
        ("string", "time") => "duration".into(),
        ("string", "bit/s") => "rate".into(),
        ("string" | "integer", u) if u.starts_with("packets, or bytes") => "limit".into(),
        (t, _) => t.into(),
    }
}

pub fn type_name(v: &toml::Value) -> String {
    match v {
        toml::Value::String(_) => "string",
        toml::Value::Integer(_) => "integer",
        toml::Value::Float(_) => "number",
        toml::Value::Boolean(_) => "bool",
        toml::Value::Array(_) => "array",
        toml::Value::Table(_) => "table",
        toml::Value::Datetime(_) => "datetime",
    }
    .into()
}

/// A value as the catalogue shows it (times and rates in a readable unit).
pub fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => pretty_unit(s),
        toml::Value::Table(t) if t.is_empty() => "{}".into(),
        other => other.to_string(),
    }
}

/// `"15000000ns"` → `"15ms"`, `"20000000bps"` → `"20Mbps"` (exact only).
pub fn pretty_unit(s: &str) -> String {
    let scale = |n: u64, units: &[(u64, &str)]| {
        units
            .iter()
            .find(|(m, _)| n >= *m && (n / m) * m == n)
            .map(|(m, u)| format!("{}{u}", n / m))
    };
    if let Some(n) = s.strip_suffix("ns").and_then(|x| x.parse::<u64>().ok()) {
        let units = [
            (1_000_000_000, "s"),
            (1_000_000, "ms"),
            (1_000, "us"),
            (1, "ns"),
        ];
        return scale(n, &units).unwrap_or_else(|| "0s".into());
    }
    if let Some(n) = s.strip_suffix("bps").and_then(|x| x.parse::<u64>().ok()) {
        let units = [
            (1_000_000_000, "Gbps"),
            (1_000_000, "Mbps"),
            (1_000, "kbps"),
            (1, "bps"),
        ];
        return scale(n, &units).unwrap_or_else(|| s.to_string());
    }
    s.to_string()
}

/// Marks a message that carries the key path inside a table.
const NEST: char = '\u{1}';

/// An error message carrying `path` (relative to the value being
/// deserialized) for the scenario loader to join to the outer path.
pub fn nested(path: &str, msg: &str) -> String {
    // A message that already carries a path (a registry inside a registry,
    // e.g. a workload's `cc`) gets the two paths joined.
    let (inner, msg) = split_nested(msg);
    let full = join(path, inner.as_deref().unwrap_or(""));
    format!("{NEST}{full}{NEST}{msg}")
}

/// Split a message made by [`nested`] into (inner path, message).
pub fn split_nested(msg: &str) -> (Option<String>, String) {
    if let Some(rest) = msg.strip_prefix(NEST) {
        if let Some((path, m)) = rest.split_once(NEST) {
            return (Some(path.to_string()), m.to_string());
        }
    }
    (None, msg.to_string())
}

/// Join key paths: `a` + `b` → `a.b`, `a` + `[1].c` → `a[1].c`.
pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty() || a == ".", b.is_empty() || b == ".") {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ if b.starts_with('[') => format!("{a}{b}"),
        _ => format!("{a}.{b}"),
    }
}

/// Deserialize `table` into `C` with key paths; a missing key is reported
/// at its own path as `required`.
pub fn parse_config<C: DeserializeOwned>(table: toml::Table) -> Result<C, (String, String)> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let path = e.path().to_string();
        let (inner, msg) = split_nested(&e.into_inner().to_string());
        let path = join(&path, inner.as_deref().unwrap_or(""));
        tidy(&path, &msg)
    })
}

/// Make a deserializer message fit for a user: no Rust type names, the
/// missing key in the path, no toml key suffix, long echoed input cut.
pub fn tidy(path: &str, msg: &str) -> (String, String) {
    let mut msg = msg.to_string();
    if let Some(i) = msg.rfind("\nin `") {
        if msg[i..].trim_end().ends_with('`') {
            msg.truncate(i);
        }
    }
    let msg = msg.trim_end().to_string();
    if let Some(rest) = msg.strip_prefix("missing field `") {
        if let Some(key) = rest.strip_suffix('`') {
            return (join(path, key), "required".into());
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((key, allowed)) = rest.split_once('`') {
            let allowed = allowed
                .trim_start_matches(',')
                .trim()
                .replacen("expected one of", "allowed keys:", 1)
                .replacen("expected", "allowed key:", 1)
                .replace("there are no fields", "this table takes no keys");
            let path = if path == key || path.ends_with(&format!(".{key}")) {
                path.to_string()
            } else {
                join(path, key)
            };
            let names: Vec<&str> = allowed.split('`').skip(1).step_by(2).collect();
            let hint = suggest(key, &names)
                .map(|k| format!(" did you mean `{k}`?"))
                .unwrap_or_default();
            let allowed = if names.is_empty() {
                allowed
            } else {
                format!("allowed keys: {}", crate::echo::list(&names))
            };
            return (path, cut(&format!("unknown key;{hint} {allowed}")));
        }
    }
    (path.to_string(), cut(&plain_types(&reword(&msg))))
}

/// What [`reword`] says for a string-only enum given another type (the
/// scenario loader then lists the names: it can see the whole document).
pub const ENUM_NOT_STRING: &str = "expected one of the allowed names (a string)";

/// serde's phrasing in words: "invalid type: X, expected Y" → "expected
/// Y, got X"; "unknown variant `x`, expected one of …" → [`unknown`] (the
/// name, the closest allowed one, the allowed ones); a string-only enum
/// given another type (toml's "invalid type: unit variant, expected string
/// only") → "expected a name (a string)". A message in other words comes
/// back as it is.
pub fn reword(msg: &str) -> String {
    if msg.contains("unit variant, expected string only") {
        return ENUM_NOT_STRING.into();
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        if let Some((name, allowed)) = rest.split_once('`') {
            let names: Vec<&str> = allowed.split('`').skip(1).step_by(2).collect();
            return unknown("value", name, &names, "allowed");
        }
    }
    for (head, got_word) in [("invalid type: ", "got"), ("invalid value: ", "got")] {
        if let Some(rest) = msg.strip_prefix(head) {
            // the last ", expected " splits what came from what was wanted
            // (an echoed string may hold the phrase itself)
            if let Some((got, want)) = rest.rsplit_once(", expected ") {
                return format!("expected {want}, {got_word} {got}");
            }
        }
    }
    if let Some(rest) = msg.strip_prefix("invalid length ") {
        if let Some((n, want)) = rest.split_once(", expected ") {
            return format!("expected {want}, got {n} elements");
        }
    }
    msg.to_string()
}

/// The name among `names` closest to a mistyped `key`, when it is close:
/// an edit distance (insertions, deletions, substitutions, adjacent
/// transpositions) of at most 1 for keys up to 4 characters, 2 up to 8,
/// 3 beyond, and the nearest (first in `names` on a tie).
pub fn suggest<'a>(key: &str, names: &[&'a str]) -> Option<&'a str> {
    let k: Vec<char> = key.to_lowercase().chars().collect();
    let most = match k.len() {
        0..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    names
        .iter()
        .map(|n| {
            (
                edit_distance(&k, &n.to_lowercase().chars().collect::<Vec<_>>()),
                *n,
            )
        })
        .filter(|&(d, _)| d <= most)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// Optimal-string-alignment distance (Damerau–Levenshtein without
/// repeated edits of a substring), O(|a|·|b|).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    if a.len().abs_diff(b.len()) > 3 || a.len() > 64 || b.len() > 64 {
        return usize::MAX; // never close
    }
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let sub = d[(i - 1) * w + j - 1] + (a[i - 1] != b[j - 1]) as usize;
                let mut v = sub.min(d[(i - 1) * w + j] + 1).min(d[i * w + j - 1] + 1);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[(i - 2) * w + j - 2] + 1);
                }
                v
            };
        }
    }
    d[a.len() * w + b.len()]
}

/// Replace serde's Rust type names with words.
pub fn plain_types(msg: &str) -> String {
    let mut out = msg.to_string();
    for (from, to) in [
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
        ("expected u64", "expected a non-negative integer"),
        (
            "expected u32",
            "expected a non-negative integer (at most 4294967295)",
        ),
        (
            "expected u16",
            "expected a non-negative integer (at most 65535)",
        ),
        (
            "expected u8",
            "expected a non-negative integer (at most 255)",
        ),
        ("expected i64", "expected an integer"),
        ("expected usize", "expected a non-negative integer"),
        ("expected a boolean", "expected true or false"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected a table"),
        ("expected a string", "expected a string"),
    ] {
        out = out.replace(from, to);
    }
    for word in ["struct ", "internally tagged enum ", "enum "] {
        while let Some(i) = out.find(&format!("expected {word}")) {
            let start = i + "expected ".len();
            let end = out[start + word.len()..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map(|e| start + word.len() + e)
                .unwrap_or(out.len());
            let repl = if word == "struct " {
                "a table"
            } else {
                "one of the allowed names"
            };
            out.replace_range(start..end, repl);
        }
    }
    out
}

/// Cut every quoted or backticked span of echoed input to about 100
/// characters, and the whole message to about 400.
pub fn cut(msg: &str) -> String {
    const SPAN: usize = 100;
    let mut out = String::with_capacity(msg.len().min(512));
    let mut quote: Option<char> = None;
    let mut span = 0usize;
    let mut total = 0usize;
    for c in msg.chars() {
        total += 1;
        if total > 400 {
            out.push('…');
            break;
        }
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(c);
            }
            Some(_) => {
                span += 1;
                if span <= SPAN {
                    out.push(c);
                } else if span == SPAN + 1 {
                    out.push('…');
                }
            }
            None => {
                if c == '"' || c == '`' {
                    quote = Some(c);
                    span = 0;
                }
                out.push(c);
            }
        }
    }
    out
}

/// `a`, `b`, `c` for an error message (at most 200 characters, then how
/// many more: [`crate::echo::list`]).
pub fn one_of(names: &[&str]) -> String {
    crate::echo::list(names)
}

/// The message for `name` that names none of `names` (`what` in the
/// singular, `plural` for the list): the name (cut), the closest name when
/// one is close ([`suggest`]), and the names (cut: [`crate::echo::list`]).
/// Every "unknown queue kind / cc / link / node / group" message is this.
pub fn unknown<S: AsRef<str>>(what: &str, name: &str, names: &[S], plural: &str) -> String {
    let refs: Vec<&str> = names.iter().map(|n| n.as_ref()).collect();
    let hint = suggest(name, &refs)
        .map(|k| format!(" did you mean `{}`?", crate::echo::echo(k)))
        .unwrap_or_default();
    let listed = if refs.is_empty() {
        "(none)".to_string()
    } else {
        crate::echo::list(&refs)
    };
    format!(
        "unknown {what} `{}`;{hint} {plural}: {listed}",
        crate::echo::echo(name)
    )
}

/// Stage one of parsing a `kind`-tagged value: check the value is a table
/// (or, where `shorthand`, a bare name), read and check `kind`, and return
/// the kind and the rest of the table. Errors are (key path, message).
pub fn split_kind(
    value: toml::Value,
    family: &str,
    kinds: &[&str],
    shorthand: bool,
) -> Result<(String, toml::Table), (String, String)> {
    let allowed = || format!("expected one of {}", one_of(kinds));
    let check = |name: &str, path: &str| {
        if kinds.contains(&name) {
            Ok(())
        } else {
            Err((path.to_string(), unknown(family, name, kinds, "allowed")))
        }
    };
    let mut table = match value {
        toml::Value::String(name) if shorthand => {
            check(&name, "")?;
            return Ok((name, toml::Table::new()));
        }
        toml::Value::Table(t) => t,
        other => {
            let what = if shorthand {
                format!("a {family} name or a table {{ kind = \"...\", ... }}")
            } else {
                "a table { kind = \"...\", ... }".to_string()
            };
            return Err((
                String::new(),
                cut(&format!(
                    "expected {what}, got {} {}; kinds: {}",
                    other.type_str(),
                    other,
                    one_of(kinds)
                )),
            ));
        }
    };
    match table.remove("kind") {
        Some(toml::Value::String(name)) => {
            check(&name, "kind")?;
            Ok((name, table))
        }
        Some(other) => Err((
            "kind".into(),
            cut(&format!(
                "expected a {family} name, got {} {}; {}",
                other.type_str(),
                other,
                allowed()
            )),
        )),
        None => Err(("kind".into(), format!("required; {}", allowed()))),
    }
}

/// Stage two: deserialize the rest of the table into `C` and validate it.
pub fn parse_kind<C: Registered>(table: toml::Table) -> Result<C, (String, String)> {
    let c: C = parse_config(table)?;
    c.validate().map_err(|(k, m)| (k, cut(&m)))?;
    Ok(c)
}

/// Serialize a config with its `kind` first.
pub fn serialize_tagged<S: serde::Serializer, C: Serialize>(
    kind: &'static str,
    config: &C,
    s: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Tagged<'a, C> {
        kind: &'static str,
        #[serde(flatten)]
        config: &'a C,
    }
    Tagged { kind, config }.serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_paths_join_and_round_trip() {
        let m = nested("max_p", "bad");
        assert_eq!(split_nested(&m), (Some("max_p".into()), "bad".into()));
        let m = nested("cc", &nested("beta", "bad"));
        assert_eq!(split_nested(&m), (Some("cc.beta".into()), "bad".into()));
        assert_eq!(join("links[1]", "queue"), "links[1].queue");
        assert_eq!(join("links", "[1].a"), "links[1].a");
        assert_eq!(join(".", "a"), "a");
    }

    #[test]
    fn tidy_names_missing_keys_and_hides_type_names() {
        assert_eq!(
            tidy("links[1].queue_ab", "missing field `limit`"),
            ("links[1].queue_ab.limit".into(), "required".into())
        );
        let (_, m) = tidy(
            "links[0]",
            "invalid type: integer `3`, expected struct LinkSpec",
        );
        assert_eq!(m, "expected a table, got integer `3`");
        let (_, m) = tidy("x", "invalid type: string \"abc\", expected f64\nin `x`\n");
        assert_eq!(m, "expected a number, got string \"abc\"");
        let (_, m) = tidy("x", "unknown variant `ns2`, expected one of `linux`, `ns3`");
        assert_eq!(
            m,
            "unknown value `ns2`; did you mean `ns3`? allowed: `linux`, `ns3`"
        );
        let long = format!("invalid value: string \"{}\"", "a".repeat(5000));
        let (_, m) = tidy("x", &long);
        assert!(m.len() < 140 && m.contains('…'), "{m}");
    }
}
