//! How an error message quotes what the user wrote: at most [`MAX_ECHO`]
//! characters of any one value, name, line or list, saying how much was
//! left out, so that a message about a 1 MB trace line or 10⁵ link names
//! stays one readable line. Every message that echoes input goes through
//! [`echo`] (one value) or [`list`] (several), and every scenario error
//! through [`bound`] on its way out (`ScenarioError`'s constructors), which
//! catches an echo a message forgot.

/// Most characters of one echoed value or list.
pub const MAX_ECHO: usize = 200;

/// Most characters of one line of a message (its words and its echoes).
pub const MAX_LINE: usize = 1000;

/// `s` as a message quotes it: line breaks and control characters escaped
/// (the message stays one line), then at most [`MAX_ECHO`] characters and
/// `… (N more characters)`.
pub fn echo(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_ECHO + 32));
    let mut chars = s.chars();
    for (shown, c) in chars.by_ref().enumerate() {
        if shown == MAX_ECHO {
            let rest = 1 + chars.count();
            out.push_str(&format!("… ({rest} more characters)"));
            return out;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Names as a message lists them: `` `a`, `b` `` (each through [`echo`])
/// while the list stays within [`MAX_ECHO`] characters, then `and N more`.
/// The first name is always shown.
pub fn list<S: AsRef<str>>(names: &[S]) -> String {
    let mut out = String::new();
    for (i, n) in names.iter().enumerate() {
        let item = format!("`{}`", echo(n.as_ref()));
        let sep = if i == 0 { "" } else { ", " };
        if i > 0 && out.chars().count() + sep.len() + item.chars().count() > MAX_ECHO {
            out.push_str(&format!(" and {} more", names.len() - i));
            return out;
        }
        out.push_str(sep);
        out.push_str(&item);
    }
    out
}

/// A whole message bounded: every backticked or double-quoted span, and
/// every run of characters without a space, at most [`MAX_ECHO`]
/// characters (`… (N more characters)`), and every line at most
/// [`MAX_LINE`]. A message within those bounds comes back unchanged.
pub fn bound(msg: &str) -> String {
    if msg.lines().all(|l| l.chars().count() <= MAX_ECHO) {
        return msg.to_string();
    }
    let mut out = String::with_capacity(msg.len().min(4 * MAX_LINE));
    for (i, line) in msg.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&bound_line(line));
    }
    out
}

fn bound_line(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut shown = 0usize;
    let mut i = 0;
    while i < chars.len() {
        if shown >= MAX_LINE {
            out.push_str(&format!("… ({} more characters)", chars.len() - i));
            break;
        }
        let c = chars[i];
        // a span: a quoted one up to its closing quote, else a word
        let end = if c == '`' || c == '"' {
            match chars[i + 1..].iter().position(|&x| x == c) {
                Some(p) => i + 1 + p + 1,
                None => chars.len(),
            }
        } else if c == ' ' {
            i + 1
        } else {
            i + chars[i..]
                .iter()
                .position(|&x| x == ' ' || x == '`' || x == '"')
                .unwrap_or(chars.len() - i)
        };
        let span = &chars[i..end];
        // an echo already cut ([`echo`]) counts up to its `…`
        let shown_len = span
            .iter()
            .position(|&x| x == '…')
            .filter(|_| {
                span.iter()
                    .collect::<String>()
                    .contains(" more characters)")
            })
            .unwrap_or(span.len());
        // (a quoted span counts its opening quote)
        if shown_len > MAX_ECHO + usize::from(c == '`' || c == '"') {
            out.extend(&span[..MAX_ECHO]);
            out.push_str(&format!("… ({} more characters)", span.len() - MAX_ECHO));
            // keep a closing quote so the message still reads as quoted
            if (c == '`' || c == '"') && span.last() == Some(&c) {
                out.push(c);
            }
            shown += MAX_ECHO;
        } else {
            out.extend(span);
            shown += span.len();
        }
        i = end.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_cuts_at_the_limit_and_counts_the_rest() {
        assert_eq!(echo("abc"), "abc");
        let s = "7".repeat(1_000_000);
        let e = echo(&s);
        assert_eq!(
            e,
            format!("{}… (999800 more characters)", "7".repeat(MAX_ECHO))
        );
        assert_eq!(echo("a\nb\u{1}"), "a\\nb\\u{1}");
        assert_eq!(echo(&"é".repeat(MAX_ECHO)), "é".repeat(MAX_ECHO));
    }

    #[test]
    fn list_shows_what_fits_and_counts_the_rest() {
        assert_eq!(list(&["a", "b"]), "`a`, `b`");
        let names: Vec<String> = (0..100_000).map(|i| format!("r{i}-r{}", i + 1)).collect();
        let l = list(&names);
        assert!(l.chars().count() < MAX_ECHO + 20, "{l}");
        assert!(l.starts_with("`r0-r1`, `r1-r2`"), "{l}");
        let shown = l.matches('`').count() / 2;
        assert!(
            l.ends_with(&format!(" and {} more", 100_000 - shown)),
            "{l}"
        );
        // one name longer than the limit is still shown, cut
        let l = list(&["x".repeat(5000)]);
        assert!(l.contains("(4800 more characters)"), "{l}");
    }

    #[test]
    fn bound_cuts_spans_words_and_lines() {
        let m = "f: `k`: short";
        assert_eq!(bound(m), m);
        let m = format!("f: `k`: got `{}` here", "x".repeat(5000));
        let b = bound(&m);
        // the span counts its quotes: 200 shown, 4 802 left out
        assert!(b.contains("(4802 more characters)`"), "{b}");
        assert!(b.ends_with(" here"), "{b}");
        let m = format!("deep {} array", "[".repeat(100_000));
        let b = bound(&m);
        assert!(b.chars().count() < 300, "{b}");
        assert!(b.contains("(99800 more characters)") && b.ends_with(" array"));
        let m = "word ".repeat(10_000);
        let b = bound(&m);
        assert!(b.chars().count() < MAX_LINE + 40, "{}", b.len());
        // an echo cut by `echo` is kept with its count
        let m = format!("f: `k`: got `{}` here", echo(&"x".repeat(5000)));
        assert_eq!(bound(&m), m);
        // multi-line messages keep their lines
        let m = format!("a\n{}\nc", "y".repeat(300));
        assert_eq!(bound(&m).lines().count(), 3);
    }
}
