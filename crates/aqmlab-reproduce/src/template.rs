//! Report prose lives in Markdown templates (`papers/templates/*.md`,
//! compiled in with `include_str!`); `{{name}}` placeholders are filled from
//! the run. A placeholder without a value, or a value without a placeholder,
//! is an internal error, so a template and its driver cannot drift apart.
//!
//! A file can hold several named parts, each opened by a line
//! `<!-- part: NAME -->` (the sentence a driver picks from the measurement,
//! a section repeated per experiment); [`part`] returns one, without the
//! line break that ends it.

use crate::{Error, Result};

/// Fill every `{{name}}` in `template` from `vars`.
pub fn render(template: &str, vars: &[(&str, String)]) -> Result<String> {
    let mut out = String::with_capacity(template.len() * 2);
    let mut used = vec![false; vars.len()];
    let mut rest = template;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let j = after
            .find("}}")
            .ok_or_else(|| Error::Internal("template: unclosed {{".into()))?;
        let name = after[..j].trim();
        let k = vars
            .iter()
            .position(|(n, _)| *n == name)
            .ok_or_else(|| Error::Internal(format!("template: no value for {{{{{name}}}}}")))?;
        used[k] = true;
        out.push_str(&vars[k].1);
        rest = &after[j + 2..];
    }
    out.push_str(rest);
    if let Some(k) = used.iter().position(|u| !u) {
        return Err(Error::Internal(format!(
            "template: value {} has no placeholder",
            vars[k].0
        )));
    }
    Ok(out)
}

/// Part `name` of `file`: the text after its `<!-- part: name -->` line up
/// to the next part's line (or the end), less the one line break before it.
pub fn part<'a>(file: &'a str, name: &str) -> Result<&'a str> {
    let open = format!("<!-- part: {name} -->\n");
    let start = file
        .find(&open)
        .map(|i| i + open.len())
        .ok_or_else(|| Error::Internal(format!("template: no part `{name}`")))?;
    let rest = &file[start..];
    let end = rest.find("<!-- part: ").unwrap_or(rest.len());
    let text = &rest[..end];
    Ok(text.strip_suffix('\n').unwrap_or(text))
}

/// Part `yes` of `file` if `cond`, else part `no` (parts without
/// placeholders: the word or phrase a measured condition picks).
pub fn pick(file: &str, cond: bool, yes: &str, no: &str) -> Result<String> {
    part(file, if cond { yes } else { no }).map(str::to_string)
}

/// Part `name` of `file` with its `{{placeholders}}` filled from `vars`.
pub fn render_part(file: &str, name: &str, vars: &[(&str, String)]) -> Result<String> {
    render(part(file, name)?, vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_placeholders_and_rejects_mismatches() {
        let v = [("a", "1".to_string()), ("b", "two".to_string())];
        assert_eq!(
            render("x {{a}} y {{ b }} {{a}}", &v).unwrap(),
            "x 1 y two 1"
        );
        assert!(render("{{a}} {{c}}", &v).is_err());
        assert!(render("{{a}}", &v).is_err());
        assert!(render("{{a", &v[..1]).is_err());
    }

    #[test]
    fn parts_split_at_their_markers() {
        let f = "<!-- part: x -->\nfirst {{a}}\n<!-- part: y -->\nsecond\n\nend\n";
        assert_eq!(part(f, "x").unwrap(), "first {{a}}");
        assert_eq!(part(f, "y").unwrap(), "second\n\nend");
        assert!(part(f, "z").is_err());
        let v = [("a", "1".to_string())];
        assert_eq!(render_part(f, "x", &v).unwrap(), "first 1");
    }

    /// Every part a driver picks exists, and every part in a file is one a
    /// driver picks (the branches a short test run does not reach
    /// included).
    #[test]
    fn the_parts_the_drivers_pick_exist() {
        let files: [(&str, &[&str]); 4] = [
            (
                include_str!("papers/templates/red-gateway-parts.md"),
                &[
                    "scale-none",
                    "scale",
                    "plot-same",
                    "plot-differs",
                    "other-none",
                    "other-some",
                    "mismatch-none",
                    "mismatch",
                    "summary",
                    "findings-none",
                    "findings-some",
                    "finding-usage-flat",
                    "finding-c5-falls",
                    "finding-c5-drops-rise",
                    "finding-ten-senders",
                    "finding-short-queue",
                    "t4-monotone",
                    "t4-changes",
                ],
            ),
            (
                include_str!("papers/templates/rio-ps-parts.md"),
                &[
                    "experiment",
                    "shortened",
                    "lengthened",
                    "claim Exp1 (ITO=3s)",
                    "claim Exp1 (ITO=1s)",
                    "claim Exp2 (ITO=3s)",
                ],
            ),
            (
                include_str!("papers/templates/codel-highspeed-tcp-parts.md"),
                &["duration-note"],
            ),
            (
                include_str!("papers/templates/maxnet-mice-parts.md"),
                &[
                    "duration-note",
                    "late-mostly",
                    "late-partly",
                    "fig9-queue",
                    "fig8-queue",
                ],
            ),
        ];
        for (file, names) in files {
            let mut in_file: Vec<&str> = file
                .lines()
                .filter_map(|l| l.strip_prefix("<!-- part: "))
                .filter_map(|l| l.strip_suffix(" -->"))
                .collect();
            in_file.sort();
            let mut picked = names.to_vec();
            picked.sort();
            assert_eq!(in_file, picked);
            for n in names {
                assert!(!part(file, n).unwrap().is_empty(), "{n}");
            }
        }
    }
}
