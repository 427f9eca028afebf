//! Resumable boundary probes for section tags.
//!
//! A probe is handed the candidate unit from its `<` each time more text has
//! arrived, and looks only at the bytes it has not seen yet. It is an exact
//! recognizer of the `opener` / `closer` rules of grammar/sections.pest (a property
//! test checks that the two agree), so it rejects a candidate on the very byte
//! that rules it out: that is what lets text be emitted promptly (S4).

use super::options::{NameMatch, Registry};
use crate::reentry::Verdict;

/// Deepest `{` nesting an attribute value may have (SEC-6).
pub const MAX_BRACE_DEPTH: usize = 64;

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0C)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_key_byte(b: u8) -> bool {
    !is_ws(b)
        && !matches!(
            b,
            b'"' | b'\'' | b'`' | b'<' | b'>' | b'/' | b'=' | b'{' | b'}'
        )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quote {
    None,
    Double,
    Single,
    Back,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpenState {
    /// Just after `<`.
    Lt,
    /// Inside the tag name, which started at byte 1.
    Name,
    /// After whitespace that follows the name or a value: a key, `/` or `>` may come.
    Gap,
    /// Inside a key.
    Key,
    /// Whitespace after a key: `=`, another key, `/` or `>`.
    KeyGap,
    /// After `=` (and any whitespace): a value must start.
    Eq,
    /// Inside an unquoted value; `slash` if its last byte was `/`, `nonempty` if it
    /// has a byte before that slash.
    Bare { slash: bool, nonempty: bool },
    /// Inside a quoted value.
    Quoted(Quote),
    /// Inside a brace value at `depth`, possibly inside a string; `escaped` right
    /// after a backslash in that string (the next byte cannot end it).
    Brace {
        depth: usize,
        quote: Quote,
        escaped: bool,
    },
    /// Right after a quoted or brace value: whitespace, `/`, `>` or the next key
    /// (SEC-4a: no whitespace is needed after a closing quote or brace).
    AfterValue,
    /// After the `/` of a self-closing tag: only `>`.
    Slash,
}

/// Where one attribute stands in a complete opener, as byte ranges of the tag: the
/// key, and the value as reported (SEC-5: quotes stripped, braces kept), if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrBounds {
    /// The key, as written.
    pub key: (usize, usize),
    /// The value, without quotes; `None` for a key without `=`.
    pub value: Option<(usize, usize)>,
}

/// Probes an opening tag of a registered section. While it recognizes the
/// `opener` rule it also records where the rule's parts are (the name, every
/// attribute, the self-closing slash), so a complete opener needs no second parse:
/// a property test checks that what it records equals what pest extracts.
#[derive(Clone, Debug)]
pub struct OpenerProbe {
    state: OpenState,
    scanned: usize,
    name: NameMatch,
    /// The section named, once the name is complete.
    section: Option<usize>,
    /// Where the tag name ends.
    name_end: usize,
    /// The attributes read so far, in source order.
    attrs: Vec<AttrBounds>,
    /// Whether the complete opener is `<name .../>`.
    self_closing: bool,
}

impl OpenerProbe {
    /// A probe for a candidate whose `<` is the first byte of the unit.
    pub fn new() -> Self {
        OpenerProbe {
            state: OpenState::Lt,
            scanned: 1,
            name: NameMatch::default(),
            section: None,
            name_end: 0,
            attrs: Vec::new(),
            self_closing: false,
        }
    }

    /// Starts a key at byte `i`.
    fn key_at(&mut self, i: usize) {
        self.attrs.push(AttrBounds {
            key: (i, i),
            value: None,
        });
    }

    /// Ends the current key at byte `i`.
    fn end_key(&mut self, i: usize) {
        if let Some(a) = self.attrs.last_mut() {
            a.key.1 = i;
        }
    }

    /// Starts the current attribute's value at byte `i`.
    fn value_at(&mut self, i: usize) {
        if let Some(a) = self.attrs.last_mut() {
            a.value = Some((i, i));
        }
    }

    /// Ends the current attribute's value at byte `i`.
    fn end_value(&mut self, i: usize) {
        if let Some((_, end)) = self.attrs.last_mut().and_then(|a| a.value.as_mut()) {
            *end = i;
        }
    }

    /// Looks at the bytes of `unit` not seen yet.
    pub fn resume(&mut self, unit: &[u8], registry: &Registry, max: usize) -> Verdict {
        use OpenState::*;
        while self.scanned < unit.len() {
            if self.scanned >= max {
                return Verdict::Rejected;
            }
            let b = unit[self.scanned];
            let i = self.scanned;
            self.scanned += 1;
            self.state = match self.state {
                Lt | Name if is_name_byte(b) => {
                    if self.state == Lt {
                        self.name = NameMatch::default();
                    }
                    // The rest of the name that is here, matched at once.
                    let limit = unit.len().min(max);
                    match registry.scan_name(&mut self.name, &unit[i..limit], None) {
                        Some(n) => self.scanned = i + n,
                        None => return Verdict::Rejected,
                    }
                    Name
                }
                Lt => return Verdict::Rejected,
                Name => {
                    self.section = registry.matched(&self.name, None);
                    if self.section.is_none() {
                        return Verdict::Rejected;
                    }
                    self.name_end = i;
                    match b {
                        b'>' => return Verdict::Complete(i + 1),
                        b'/' => Slash,
                        _ if is_ws(b) => Gap,
                        _ => return Verdict::Rejected,
                    }
                }
                Gap | AfterValue if b == b'>' => return Verdict::Complete(i + 1),
                Gap | AfterValue if b == b'/' => Slash,
                Gap | AfterValue if is_ws(b) => Gap,
                Gap | AfterValue if is_key_byte(b) => {
                    self.key_at(i);
                    Key
                }
                Gap | AfterValue => return Verdict::Rejected,
                Key if is_key_byte(b) => Key,
                Key if b == b'>' || b == b'/' || b == b'=' || is_ws(b) => {
                    self.end_key(i);
                    match b {
                        b'>' => return Verdict::Complete(i + 1),
                        b'/' => Slash,
                        b'=' => Eq,
                        _ => KeyGap,
                    }
                }
                KeyGap if b == b'>' => return Verdict::Complete(i + 1),
                KeyGap if b == b'/' => Slash,
                KeyGap if b == b'=' => Eq,
                KeyGap if is_ws(b) => KeyGap,
                KeyGap if is_key_byte(b) => {
                    self.key_at(i);
                    Key
                }
                Key | KeyGap => return Verdict::Rejected,
                Eq => match b {
                    _ if is_ws(b) => Eq,
                    b'"' => {
                        self.value_at(i + 1);
                        Quoted(Quote::Double)
                    }
                    b'\'' => {
                        self.value_at(i + 1);
                        Quoted(Quote::Single)
                    }
                    b'{' => {
                        self.value_at(i);
                        Brace {
                            depth: 1,
                            quote: Quote::None,
                            escaped: false,
                        }
                    }
                    b'>' | b'<' | b'`' => return Verdict::Rejected,
                    _ => {
                        self.value_at(i);
                        Bare {
                            slash: b == b'/',
                            nonempty: b != b'/',
                        }
                    }
                },
                Bare { slash, nonempty } => match b {
                    b'>' if slash && !nonempty => return Verdict::Rejected,
                    b'>' => {
                        // A `/` right before `>` is the self-closing slash (SEC-5).
                        self.end_value(if slash { i - 1 } else { i });
                        self.self_closing = slash;
                        return Verdict::Complete(i + 1);
                    }
                    b'"' | b'\'' | b'`' | b'<' => return Verdict::Rejected,
                    b'/' => Bare {
                        slash: true,
                        nonempty: nonempty || slash,
                    },
                    _ if is_ws(b) => {
                        self.end_value(i);
                        Gap
                    }
                    _ => Bare {
                        slash: false,
                        nonempty: true,
                    },
                },
                Quoted(Quote::Double) if b == b'"' => {
                    self.end_value(i);
                    AfterValue
                }
                Quoted(Quote::Single) if b == b'\'' => {
                    self.end_value(i);
                    AfterValue
                }
                Quoted(q) => {
                    // Skip to the closing quote in one step (memchr).
                    let close = if q == Quote::Double { b'"' } else { b'\'' };
                    let limit = unit.len().min(max);
                    match memchr::memchr(close, &unit[self.scanned..limit]) {
                        Some(k) => {
                            self.scanned += k + 1;
                            self.end_value(self.scanned - 1);
                            AfterValue
                        }
                        None => {
                            self.scanned = limit;
                            Quoted(q)
                        }
                    }
                }
                // In a string, a backslash escapes the next byte (SEC-5); a
                // multibyte character's later bytes are never quotes, so skipping
                // only its first byte is the same as skipping the character.
                Brace {
                    depth,
                    quote,
                    escaped: true,
                } => Brace {
                    depth,
                    quote,
                    escaped: false,
                },
                Brace { depth, quote, .. } => {
                    let (depth, quote, escaped) = match (quote, b) {
                        (Quote::None, b'{') if depth >= MAX_BRACE_DEPTH => {
                            return Verdict::Rejected
                        }
                        (Quote::None, b'{') => (depth + 1, quote, false),
                        (Quote::None, b'}') if depth == 1 => {
                            self.end_value(i + 1);
                            self.state = AfterValue;
                            continue;
                        }
                        (Quote::None, b'}') => (depth - 1, quote, false),
                        (Quote::None, b'"') => (depth, Quote::Double, false),
                        (Quote::None, b'\'') => (depth, Quote::Single, false),
                        (Quote::None, b'`') => (depth, Quote::Back, false),
                        (Quote::Double, b'"') | (Quote::Single, b'\'') | (Quote::Back, b'`') => {
                            (depth, Quote::None, false)
                        }
                        (Quote::None, _) => (depth, quote, false),
                        (_, b'\\') => (depth, quote, true),
                        _ => (depth, quote, false),
                    };
                    Brace {
                        depth,
                        quote,
                        escaped,
                    }
                }
                Slash if b == b'>' => {
                    self.self_closing = true;
                    return Verdict::Complete(i + 1);
                }
                Slash => return Verdict::Rejected,
            };
        }
        if self.scanned >= max {
            // The next byte would exceed the bound whatever it is.
            return Verdict::Rejected;
        }
        Verdict::NeedMore
    }

    /// The section a complete opener names.
    pub fn section(&self) -> Option<usize> {
        self.section
    }

    /// Where the tag name of a complete opener ends (it starts at byte 1).
    pub fn name_end(&self) -> usize {
        self.name_end
    }

    /// The attributes of a complete opener, in source order.
    pub fn attrs(&self) -> &[AttrBounds] {
        &self.attrs
    }

    /// Whether a complete opener is self-closing.
    pub fn self_closing(&self) -> bool {
        self.self_closing
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CloseState {
    Lt,
    Slash,
    Name,
    After,
}

/// Probes a closing tag of one section (any spelling of its canonical name).
#[derive(Clone, Debug)]
pub struct CloserProbe {
    state: CloseState,
    scanned: usize,
    name: NameMatch,
}

impl CloserProbe {
    /// A probe for a candidate whose `<` is the first byte of the unit.
    pub fn new() -> Self {
        CloserProbe {
            state: CloseState::Lt,
            scanned: 1,
            name: NameMatch::default(),
        }
    }

    /// Looks at the bytes of `unit` not seen yet; `section` is the open section.
    pub fn resume(
        &mut self,
        unit: &[u8],
        registry: &Registry,
        section: usize,
        max: usize,
    ) -> Verdict {
        use CloseState::*;
        while self.scanned < unit.len() {
            if self.scanned >= max {
                return Verdict::Rejected;
            }
            let b = unit[self.scanned];
            let i = self.scanned;
            self.scanned += 1;
            self.state = match self.state {
                Lt if b == b'/' => Slash,
                Lt => return Verdict::Rejected,
                Slash if is_ws(b) => Slash,
                Slash | Name if is_name_byte(b) => {
                    if self.state == Slash {
                        self.name = NameMatch::default();
                    }
                    let limit = unit.len().min(max);
                    match registry.scan_name(&mut self.name, &unit[i..limit], Some(section)) {
                        Some(n) => self.scanned = i + n,
                        None => return Verdict::Rejected,
                    }
                    Name
                }
                Slash => return Verdict::Rejected,
                Name => {
                    if registry.matched(&self.name, Some(section)).is_none() {
                        return Verdict::Rejected;
                    }
                    match b {
                        b'>' => return Verdict::Complete(i + 1),
                        _ if is_ws(b) => After,
                        _ => return Verdict::Rejected,
                    }
                }
                After if is_ws(b) => After,
                After if b == b'>' => return Verdict::Complete(i + 1),
                After => return Verdict::Rejected,
            };
        }
        if self.scanned >= max {
            return Verdict::Rejected;
        }
        Verdict::NeedMore
    }
}
