//! Report prose lives in Markdown templates (`reproduce/templates/*.md`,
//! compiled in with `include_str!`); `{{name}}` placeholders are filled from
//! the run. A placeholder without a value, or a value without a placeholder,
//! is an internal error, so a template and its driver cannot drift apart.

use crate::{CliError, CliResult};

/// Fill every `{{name}}` in `template` from `vars`.
pub fn render(template: &str, vars: &[(&str, String)]) -> CliResult<String> {
    let mut out = String::with_capacity(template.len() * 2);
    let mut used = vec![false; vars.len()];
    let mut rest = template;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let j = after
            .find("}}")
            .ok_or_else(|| CliError::Internal("template: unclosed {{".into()))?;
        let name = after[..j].trim();
        let k = vars
            .iter()
            .position(|(n, _)| *n == name)
            .ok_or_else(|| CliError::Internal(format!("template: no value for {{{{{name}}}}}")))?;
        used[k] = true;
        out.push_str(&vars[k].1);
        rest = &after[j + 2..];
    }
    out.push_str(rest);
    if let Some(k) = used.iter().position(|u| !u) {
        return Err(CliError::Internal(format!(
            "template: value {} has no placeholder",
            vars[k].0
        )));
    }
    Ok(out)
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
}
