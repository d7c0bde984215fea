//! Reading the documentation's Markdown for the tests that check it against
//! the program (`docs_keys.rs` here, `docs_outputs.rs` and `docs_examples.rs`
//! in `crates/aqmlab-cli/tests`, which include this file): pages, their
//! tables and code blocks, each with its line number, so that a failure
//! names the page and the line.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What a failure message ends with: where the rules are written.
pub const HOW: &str =
    "docs/src/contributing.md (\"Keys, columns and commands in the docs\") says how a key, \
     an output column or a documented command gets into the pages";

/// One Markdown page.
pub struct Page {
    /// Path from the repository root (`docs/src/reference/scenario.md`).
    pub path: String,
    pub lines: Vec<String>,
}

/// A table: the heading above it, its header cells and its rows.
pub struct Table {
    pub heading: String,
    pub header: Vec<String>,
    pub rows: Vec<Row>,
}

pub struct Row {
    /// 1-based line number.
    pub line: usize,
    pub cells: Vec<String>,
}

/// A fenced code block: the line of its opening fence (1-based), the info
/// string (`toml`, `sh`, `toml,fragment`), the body.
pub struct Block {
    pub line: usize,
    pub info: String,
    pub body: String,
    /// A `<!-- ... -->` comment on the line just above the fence, if any.
    pub note: Option<String>,
}

impl Page {
    pub fn read(path: &str) -> Page {
        let text =
            std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        Page {
            path: path.to_string(),
            lines: text.lines().map(str::to_string).collect(),
        }
    }

    /// `page:line`, for messages.
    pub fn at(&self, line: usize) -> String {
        format!("{}:{line}", self.path)
    }

    /// Every pipe table, outside code blocks.
    pub fn tables(&self) -> Vec<Table> {
        let mut out = Vec::new();
        let mut heading = String::new();
        let mut fenced = false;
        let mut i = 0;
        while i < self.lines.len() {
            let l = self.lines[i].trim_end();
            if l.starts_with("```") {
                fenced = !fenced;
            }
            if !fenced && l.starts_with('#') {
                heading = l.trim_start_matches('#').trim().to_string();
            }
            let sep = self.lines.get(i + 1).map(|s| s.trim()).unwrap_or("");
            let is_sep = sep.starts_with('|')
                && sep.contains('-')
                && sep.chars().all(|c| "|-: ".contains(c));
            if !fenced && l.starts_with('|') && is_sep {
                let header = cells(l);
                let mut rows = Vec::new();
                let mut j = i + 2;
                while j < self.lines.len() && self.lines[j].trim_start().starts_with('|') {
                    rows.push(Row {
                        line: j + 1,
                        cells: cells(&self.lines[j]),
                    });
                    j += 1;
                }
                out.push(Table {
                    heading: heading.clone(),
                    header,
                    rows,
                });
                i = j;
                continue;
            }
            i += 1;
        }
        out
    }

    /// The table whose header is `header` (cells as written), under a
    /// heading that contains `under`.
    pub fn table(&self, under: &str, header: &[&str]) -> Table {
        self.tables()
            .into_iter()
            .find(|t| {
                t.heading.contains(under)
                    && t.header
                        .iter()
                        .map(String::as_str)
                        .eq(header.iter().copied())
            })
            .unwrap_or_else(|| {
                panic!(
                    "{}: no table `| {} |` under a heading with \"{under}\"; {HOW}",
                    self.path,
                    header.join(" | ")
                )
            })
    }

    /// Every fenced code block.
    pub fn blocks(&self) -> Vec<Block> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.lines.len() {
            let l = self.lines[i].trim_start();
            if let Some(info) = l.strip_prefix("```") {
                let fence_indent = self.lines[i].len() - l.len();
                let mut body = Vec::new();
                let mut j = i + 1;
                while j < self.lines.len() && !self.lines[j].trim_start().starts_with("```") {
                    let raw = &self.lines[j];
                    body.push(
                        raw.get(fence_indent.min(raw.len() - raw.trim_start().len())..)
                            .unwrap_or(""),
                    );
                    j += 1;
                }
                let note = (i > 0)
                    .then(|| self.lines[i - 1].trim())
                    .filter(|p| p.starts_with("<!--") && p.ends_with("-->"))
                    .map(|p| {
                        p.trim_start_matches("<!--")
                            .trim_end_matches("-->")
                            .trim()
                            .to_string()
                    });
                out.push(Block {
                    line: i + 1,
                    info: info.trim().to_string(),
                    body: body.join("\n") + "\n",
                    note,
                });
                i = j + 1;
                continue;
            }
            i += 1;
        }
        out
    }
}

/// Every page of the book and the README (not the generated catalogue).
pub fn all_pages() -> Vec<Page> {
    let mut paths = vec!["README.md".to_string()];
    let mut stack = vec![repo().join("docs/src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                let rel = p
                    .strip_prefix(repo())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let rel = rel.trim_start_matches("./").to_string();
                paths.push(rel);
            }
        }
    }
    paths.sort();
    paths
        .iter()
        .filter(|p| !p.ends_with("reference/catalogue.md"))
        .map(|p| Page::read(p))
        .collect()
}

/// The cells of a table row, trimmed (`\|` inside a cell stays, as `|`).
pub fn cells(line: &str) -> Vec<String> {
    let t = line.trim().trim_start_matches('|');
    let t = t.strip_suffix('|').unwrap_or(t);
    let mut out = vec![String::new()];
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'|') {
            out.last_mut().unwrap().push('|');
            chars.next();
        } else if c == '|' {
            out.push(String::new());
        } else {
            out.last_mut().unwrap().push(c);
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// The `code` spans of a text.
pub fn backticked(s: &str) -> Vec<String> {
    s.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// A key name: letters, digits, `_`, `.`, `-`, `[`, `]`.
pub fn is_key(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '[')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-[]".contains(c))
}

/// The items of a parameter list such as ``"`limit` (1000 p), `target` (5
/// ms), `ecn`"``: each `code` span outside parentheses that is a key, with
/// the text of the parenthesis that follows it (before the next key).
pub fn items(cell: &str) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    let mut depth = 0usize;
    let mut in_code = false;
    let mut code = String::new();
    let mut paren = String::new();
    let mut after_key = false;
    for c in cell.chars() {
        if c == '`' {
            if in_code {
                if depth == 0 && is_key(&code) {
                    out.push((code.clone(), None));
                    after_key = true;
                } else if depth > 0 {
                    paren.push('`');
                    paren.push_str(&code);
                    paren.push('`');
                } else {
                    after_key = false;
                }
                code.clear();
            }
            in_code = !in_code;
            continue;
        }
        if in_code {
            code.push(c);
            continue;
        }
        match c {
            '(' => {
                if depth > 0 {
                    paren.push(c);
                }
                depth += 1;
            }
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    if after_key {
                        if let Some(last) = out.last_mut() {
                            if last.1.is_none() {
                                last.1 = Some(paren.trim().to_string());
                            }
                        }
                    }
                    paren.clear();
                } else {
                    paren.push(c);
                }
            }
            _ if depth > 0 => paren.push(c),
            ',' | ';' => after_key = false,
            _ => {}
        }
    }
    out
}
