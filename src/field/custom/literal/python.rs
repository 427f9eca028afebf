//! Python literals (as grammar/python-call.pest's `py_value` matched them) turned
//! into compact JSON text (spec/pythonic.md PY-6).
//!
//! Strings are decoded (Python escapes) and re-escaped, numbers keep their digits as
//! written (so big integers stay exact), `True`, `False`, `None` (and the JSON
//! spellings) become `true`, `false`, `null`, lists arrays and dicts objects. A value
//! that has no JSON form is refused: nesting deeper than [`super::MAX_DEPTH`], a dict
//! key that is a list or a dict, a lone surrogate.

use super::{Reader, Syntax};
use crate::field::typing::{push_json_string, Shape};

/// The compact JSON text of the Python literal `text`, or `None` when it has no
/// JSON form (see the module docs).
pub fn to_json(text: &str) -> Option<String> {
    super::to_json(&Python, text, None)
}

struct Python;

impl Syntax for Python {
    fn leaf(&self, reader: &mut Reader<'_>, out: &mut String, _: Option<&Shape>) -> Option<()> {
        match reader.peek()? {
            b'"' | b'\'' => {
                push_json_string(out, &string(reader)?);
            }
            _ => out.push_str(&scalar_json(scalar(reader))?),
        }
        Some(())
    }

    /// A dict key: a string, or a scalar written as its JSON text (as Python's
    /// `json.dumps` does: `1` → `"1"`, `True` → `"true"`, `None` → `"null"`).
    fn key(&self, reader: &mut Reader<'_>, out: &mut String) -> Option<()> {
        let key = match reader.peek()? {
            b'"' | b'\'' => string(reader)?,
            b'[' | b'{' => return None,
            _ => scalar_json(scalar(reader))?,
        };
        push_json_string(out, &key);
        Some(())
    }
}

/// A number or a word (`True`, …): up to the next delimiter.
fn scalar<'a>(reader: &mut Reader<'a>) -> &'a str {
    reader.run(|r| {
        matches!(
            r.peek(),
            Some(b',' | b']' | b'}' | b':' | b' ' | b'\t' | b'\r' | b'\n')
        )
    })
}

/// A string literal, decoded (PY-6 escapes).
fn string(reader: &mut Reader<'_>) -> Option<String> {
    let quote = reader.peek()?;
    reader.at += 1;
    let mut s = String::new();
    loop {
        let rest = reader.rest();
        let stop = rest
            .bytes()
            .position(|b| b == quote || b == b'\\')
            .unwrap_or(rest.len());
        // A string stands on one line (PY-6).
        if rest[..stop].contains('\n') {
            return None;
        }
        s.push_str(&rest[..stop]);
        reader.at += stop;
        let end = reader.peek()?;
        reader.at += 1;
        if end == quote {
            return Some(s);
        }
        escape(reader, &mut s)?;
    }
}

/// The escape after a backslash.
fn escape(reader: &mut Reader<'_>, s: &mut String) -> Option<()> {
    let c = reader.text[reader.at..].chars().next()?;
    reader.at += c.len_utf8();
    let simple = match c {
        '\\' => Some('\\'),
        '\'' => Some('\''),
        '"' => Some('"'),
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        _ => None,
    };
    if let Some(ch) = simple {
        s.push(ch);
        return Some(());
    }
    match c {
        // A line continuation: nothing.
        '\n' => {}
        'x' => s.push(hex(reader, 2)?),
        'u' => s.push(hex(reader, 4)?),
        'U' => s.push(hex(reader, 8)?),
        '0'..='7' => {
            let mut value = c.to_digit(8)?;
            for _ in 0..2 {
                match reader.peek() {
                    Some(d @ b'0'..=b'7') => {
                        value = value * 8 + u32::from(d - b'0');
                        reader.at += 1;
                    }
                    _ => break,
                }
            }
            s.push(char::from_u32(value)?);
        }
        // An unknown escape keeps its backslash (as Python does).
        other => {
            s.push('\\');
            s.push(other);
        }
    }
    Some(())
}

/// `n` hex digits as a character (a surrogate or a value beyond U+10FFFF has
/// no JSON form).
fn hex(reader: &mut Reader<'_>, n: usize) -> Option<char> {
    let digits = reader.text.get(reader.at..reader.at + n)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    reader.at += n;
    char::from_u32(u32::from_str_radix(digits, 16).ok()?)
}

/// The JSON text of a number or a word.
fn scalar_json(word: &str) -> Option<String> {
    match word {
        "True" | "true" => return Some("true".into()),
        "False" | "false" => return Some("false".into()),
        "None" | "null" => return Some("null".into()),
        _ => {}
    }
    let (sign, digits) = match word.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", word),
    };
    let (mantissa, exponent) = match digits.find(['e', 'E']) {
        Some(k) => (&digits[..k], &digits[k..]),
        None => (digits, ""),
    };
    if mantissa.is_empty() || !mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    // JSON wants digits on both sides of the point: `1.` is `1.0`, `.5` is `0.5`.
    let mantissa = match mantissa.split_once('.') {
        None => mantissa.to_string(),
        Some((int, frac)) => {
            let int = if int.is_empty() { "0" } else { int };
            let frac = if frac.is_empty() { "0" } else { frac };
            format!("{int}.{frac}")
        }
    };
    Some(format!("{sign}{mantissa}{exponent}"))
}

#[cfg(test)]
mod tests {
    use super::to_json;

    #[test]
    fn literals_become_compact_json() {
        assert_eq!(to_json("'it\\'s'").as_deref(), Some("\"it's\""));
        assert_eq!(to_json("\"a\\nb\"").as_deref(), Some("\"a\\nb\""));
        assert_eq!(to_json("True").as_deref(), Some("true"));
        assert_eq!(to_json("None").as_deref(), Some("null"));
        assert_eq!(to_json("-12").as_deref(), Some("-12"));
        assert_eq!(to_json("1.").as_deref(), Some("1.0"));
        assert_eq!(to_json("-.5e3").as_deref(), Some("-0.5e3"));
        assert_eq!(
            to_json("123456789012345678901234567890").as_deref(),
            Some("123456789012345678901234567890")
        );
        assert_eq!(
            to_json("[1, 'x', {'k': [True, None]}, ]").as_deref(),
            Some("[1,\"x\",{\"k\":[true,null]}]")
        );
        assert_eq!(
            to_json("{1: 'a', None: 2}").as_deref(),
            Some("{\"1\":\"a\",\"null\":2}")
        );
        assert_eq!(
            to_json("'\\x41\\u00e9\\101\\q'").as_deref(),
            Some("\"AéA\\\\q\"")
        );
    }

    #[test]
    fn values_without_a_json_form_are_refused() {
        assert_eq!(to_json("{[1]: 2}"), None);
        assert_eq!(to_json("'\\ud800'"), None);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(to_json(&deep), None);
    }
}
