//! Python literals (as grammar/python-call.pest's `py_value` matched them) turned
//! into compact JSON text (spec/pythonic.md PY-6).
//!
//! The grammar has already checked the syntax; this reads the matched text once,
//! left to right, and writes JSON: strings decoded (Python escapes) and re-escaped,
//! numbers with their digits as written (so big integers stay exact), `True`,
//! `False`, `None` (and the JSON spellings) as `true`, `false`, `null`, lists as
//! arrays and dicts as objects. A value that has no JSON form is refused: nesting
//! deeper than [`MAX_DEPTH`], a dict key that is a list or a dict, a lone surrogate.

/// The deepest nesting of lists and dicts a value may have.
pub const MAX_DEPTH: usize = 128;

/// The compact JSON text of the Python literal `text`, or `None` when it has no
/// JSON form (see the module docs).
pub fn to_json(text: &str) -> Option<String> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        text,
        at: 0,
    };
    let mut out = String::with_capacity(text.len());
    reader.value(&mut out, 0)?;
    reader.ws();
    (reader.at == text.len()).then_some(out)
}

struct Reader<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, out: &mut String, depth: usize) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'"' | b'\'' => {
                let s = self.string()?;
                out.push_str(&serde_json::to_string(&s).ok()?);
            }
            b'[' => self.list(out, depth + 1)?,
            b'{' => self.dict(out, depth + 1)?,
            _ => {
                let word = self.scalar();
                out.push_str(&scalar_json(word)?);
            }
        }
        Some(())
    }

    /// A number or a word (`True`, …): up to the next delimiter.
    fn scalar(&mut self) -> &str {
        let start = self.at;
        while let Some(b) = self.peek() {
            if matches!(b, b',' | b']' | b'}' | b':' | b' ' | b'\t' | b'\r' | b'\n') {
                break;
            }
            self.at += 1;
        }
        &self.text[start..self.at]
    }

    fn list(&mut self, out: &mut String, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        out.push('[');
        let mut first = true;
        loop {
            if self.eat(b']') {
                break;
            }
            if !first {
                out.push(',');
            }
            self.value(out, depth)?;
            first = false;
            // A value is followed by `,` or the closer (the grammar has checked this
            // for a call's arguments; field typing reads unchecked text, FD-6).
            if self.eat(b',') {
                continue;
            }
            if self.eat(b']') {
                break;
            }
            return None;
        }
        out.push(']');
        Some(())
    }

    fn dict(&mut self, out: &mut String, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        out.push('{');
        let mut first = true;
        loop {
            if self.eat(b'}') {
                break;
            }
            if !first {
                out.push(',');
            }
            self.key(out)?;
            if !self.eat(b':') {
                return None;
            }
            out.push(':');
            self.value(out, depth)?;
            first = false;
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                break;
            }
            return None;
        }
        out.push('}');
        Some(())
    }

    /// A dict key: a string, or a scalar written as its JSON text (as Python's
    /// `json.dumps` does: `1` → `"1"`, `True` → `"true"`, `None` → `"null"`).
    fn key(&mut self, out: &mut String) -> Option<()> {
        self.ws();
        let key = match self.peek()? {
            b'"' | b'\'' => self.string()?,
            b'[' | b'{' => return None,
            _ => {
                let word = self.scalar();
                scalar_json(word)?
            }
        };
        out.push_str(&serde_json::to_string(&key).ok()?);
        Some(())
    }

    /// A string literal, decoded (PY-6 escapes).
    fn string(&mut self) -> Option<String> {
        let quote = self.bytes[self.at];
        self.at += 1;
        let mut s = String::new();
        loop {
            let rest = &self.text[self.at..];
            let stop = rest
                .bytes()
                .position(|b| b == quote || b == b'\\')
                .unwrap_or(rest.len());
            // A string stands on one line (PY-6).
            if rest[..stop].contains('\n') {
                return None;
            }
            s.push_str(&rest[..stop]);
            self.at += stop;
            match self.peek()? {
                b'\\' => {
                    self.at += 1;
                    self.escape(&mut s)?;
                }
                _ => {
                    self.at += 1;
                    return Some(s);
                }
            }
        }
    }

    /// The escape after a backslash.
    fn escape(&mut self, s: &mut String) -> Option<()> {
        let c = self.text[self.at..].chars().next()?;
        self.at += c.len_utf8();
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
            'x' => s.push(self.hex(2)?),
            'u' => s.push(self.hex(4)?),
            'U' => s.push(self.hex(8)?),
            '0'..='7' => {
                let mut value = c.to_digit(8)?;
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            self.at += 1;
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
    fn hex(&mut self, n: usize) -> Option<char> {
        let digits = self.text.get(self.at..self.at + n)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += n;
        char::from_u32(u32::from_str_radix(digits, 16).ok()?)
    }
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
