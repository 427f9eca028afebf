//! An incremental structural scan of one JSON value, for families whose arguments
//! are JSON: it finds where the value ends as its bytes arrive, so that a closer
//! counts only after the value is complete and the value's bytes can be streamed
//! before it is.
//!
//! The scan checks structure only: strings and their escapes, matching brackets,
//! and that no byte outside a string is one JSON never has there (a `<`, say). The
//! complete value is then validated by parsing it (serde_json). Work is O(1) per
//! byte and the state is the bracket stack.

/// What a [`JsonScan`] says after a stretch of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scanned {
    /// Every byte so far may belong to the value; more are needed.
    NeedMore,
    /// The value ends after this many bytes of the stretch.
    Complete(usize),
    /// The byte at this offset of the stretch cannot continue the value.
    Invalid(usize),
}

/// The incremental scan of one JSON value (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct JsonScan {
    stack: Vec<u8>,
    started: bool,
    in_string: bool,
    escape: bool,
    /// A top-level scalar (number or literal) is in progress.
    scalar: bool,
}

impl JsonScan {
    /// A scan before the value's first byte (leading whitespace is skipped).
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the value's first byte has been seen.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Whether the scan is inside a string.
    pub fn in_string(&self) -> bool {
        self.in_string
    }

    /// Scans the next stretch of the value's bytes.
    pub fn scan(&mut self, bytes: &[u8]) -> Scanned {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if self.in_string {
                // Jump to the next quote or backslash.
                if self.escape {
                    self.escape = false;
                } else {
                    match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                        None => return Scanned::NeedMore,
                        Some(k) => {
                            i += k;
                            if bytes[i] == b'\\' {
                                self.escape = true;
                            } else {
                                self.in_string = false;
                                if self.stack.is_empty() {
                                    return Scanned::Complete(i + 1);
                                }
                            }
                        }
                    }
                }
                i += 1;
                continue;
            }
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => {
                    if self.scalar {
                        return Scanned::Complete(i);
                    }
                }
                b'{' | b'[' if !self.scalar => {
                    self.started = true;
                    self.stack.push(b);
                }
                b'}' | b']' => {
                    let open = if b == b'}' { b'{' } else { b'[' };
                    if self.scalar {
                        return Scanned::Complete(i);
                    }
                    if self.stack.pop() != Some(open) {
                        return Scanned::Invalid(i);
                    }
                    if self.stack.is_empty() {
                        return Scanned::Complete(i + 1);
                    }
                }
                b'"' if !self.scalar => {
                    self.started = true;
                    self.in_string = true;
                }
                b',' | b':' if !self.stack.is_empty() => {}
                b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'-' | b'+' | b'.' => {
                    if !self.started && self.stack.is_empty() {
                        self.scalar = true;
                    }
                    self.started = true;
                }
                _ if self.scalar => return Scanned::Complete(i),
                _ => return Scanned::Invalid(i),
            }
            i += 1;
        }
        Scanned::NeedMore
    }

    /// At end of input: whether the value is complete (a top-level scalar ends
    /// there; anything else was cut).
    pub fn complete_at_end(&self) -> bool {
        self.scalar && !self.in_string
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str) -> Scanned {
        JsonScan::new().scan(text.as_bytes())
    }

    #[test]
    fn a_value_ends_at_its_last_bracket_even_with_closers_in_strings() {
        assert_eq!(whole(r#"{"a": "</tool_call>}"} x"#), Scanned::Complete(22));
        assert_eq!(whole(r#"{"a": [1, {"b": "\"}"}]}"#), Scanned::Complete(24));
        assert_eq!(whole(r#"{"a": 1"#), Scanned::NeedMore);
        assert_eq!(whole(r#"{"a": 1]"#), Scanned::Invalid(7));
        assert_eq!(whole("{\"a\": <"), Scanned::Invalid(6));
        assert_eq!(whole("12 "), Scanned::Complete(2));
    }

    #[test]
    fn any_split_gives_the_same_end() {
        let text = br#"{"k": "v\"}", "n": [1, 2]} tail"#;
        for cut in 0..text.len() {
            let mut scan = JsonScan::new();
            let first = scan.scan(&text[..cut]);
            let end = match first {
                Scanned::Complete(n) => n,
                Scanned::NeedMore => match scan.scan(&text[cut..]) {
                    Scanned::Complete(n) => cut + n,
                    other => panic!("{other:?} at {cut}"),
                },
                other => panic!("{other:?} at {cut}"),
            };
            assert_eq!(end, 26, "cut {cut}");
        }
    }
}
