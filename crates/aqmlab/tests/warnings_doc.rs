//! The causes of warnings listed in the running guide are exactly
//! `aqmlab::scenario::warnings::CAUSES`.

use aqmlab::scenario::warnings::CAUSES;

#[test]
fn the_running_guide_lists_every_cause() {
    let page = "docs/src/guide/running.md";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(page);
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("\n## Warnings\n").expect("a Warnings section");
    let section = &text[start..];
    let end = section[1..].find("\n## ").map_or(section.len(), |i| i + 1);
    let mut listed = Vec::new();
    for (n, line) in section[..end].lines().enumerate() {
        if let Some(rest) = line.strip_prefix("| `") {
            let cause = &rest[..rest.find('`').unwrap()];
            listed.push((cause.to_string(), n));
        }
    }
    for (cause, _) in CAUSES {
        assert!(
            listed.iter().any(|(c, _)| c == cause),
            "{page}, section Warnings: the cause `{cause}` (scenario/warnings.rs CAUSES) has no row; add one"
        );
    }
    for (c, n) in &listed {
        assert!(
            CAUSES.iter().any(|(k, _)| k == c),
            "{page}, line {} of section Warnings: `{c}` is not a cause in scenario/warnings.rs CAUSES",
            n + 1
        );
    }
}
