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
    /// Inside a brace value at `depth`, possibly inside a string.
    Brace { depth: usize, quote: Quote },
    /// Right after a quoted or brace value: whitespace, `/` or `>`.
    AfterValue,
    /// After the `/` of a self-closing tag: only `>`.
    Slash,
}

/// Probes an opening tag of a registered section.
#[derive(Clone, Debug)]
pub struct OpenerProbe {
    state: OpenState,
    scanned: usize,
    name: NameMatch,
    /// The section named, once the name is complete.
    section: Option<usize>,
    /// Whether any attribute follows the name.
    has_attributes: bool,
}

impl OpenerProbe {
    /// A probe for a candidate whose `<` is the first byte of the unit.
    pub fn new() -> Self {
        OpenerProbe {
            state: OpenState::Lt,
            scanned: 1,
            name: NameMatch::default(),
            section: None,
            has_attributes: false,
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
                Lt if is_name_byte(b) => {
                    self.name = registry.start(None);
                    if !registry.narrow(&mut self.name, b, None) {
                        return Verdict::Rejected;
                    }
                    Name
                }
                Lt => return Verdict::Rejected,
                Name if is_name_byte(b) => {
                    if !registry.narrow(&mut self.name, b, None) {
                        return Verdict::Rejected;
                    }
                    Name
                }
                Name => {
                    self.section = registry.matched(&self.name, None);
                    if self.section.is_none() {
                        return Verdict::Rejected;
                    }
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
                Gap if is_key_byte(b) => {
                    self.has_attributes = true;
                    Key
                }
                Gap | AfterValue => return Verdict::Rejected,
                Key | KeyGap if b == b'>' => return Verdict::Complete(i + 1),
                Key | KeyGap if b == b'/' => Slash,
                Key | KeyGap if b == b'=' => Eq,
                Key | KeyGap if is_ws(b) => KeyGap,
                Key | KeyGap if is_key_byte(b) => Key,
                Key | KeyGap => return Verdict::Rejected,
                Eq => match b {
                    _ if is_ws(b) => Eq,
                    b'"' => Quoted(Quote::Double),
                    b'\'' => Quoted(Quote::Single),
                    b'{' => Brace {
                        depth: 1,
                        quote: Quote::None,
                    },
                    b'/' => Bare {
                        slash: true,
                        nonempty: false,
                    },
                    b'>' | b'<' | b'`' => return Verdict::Rejected,
                    _ => Bare {
                        slash: false,
                        nonempty: true,
                    },
                },
                Bare { slash, nonempty } => match b {
                    b'>' if slash && !nonempty => return Verdict::Rejected,
                    b'>' => return Verdict::Complete(i + 1),
                    b'"' | b'\'' | b'`' | b'<' => return Verdict::Rejected,
                    b'/' => Bare {
                        slash: true,
                        nonempty: nonempty || slash,
                    },
                    _ if is_ws(b) => Gap,
                    _ => Bare {
                        slash: false,
                        nonempty: true,
                    },
                },
                Quoted(Quote::Double) if b == b'"' => AfterValue,
                Quoted(Quote::Single) if b == b'\'' => AfterValue,
                Quoted(q) => {
                    // Skip to the closing quote in one step (memchr).
                    let close = if q == Quote::Double { b'"' } else { b'\'' };
                    let limit = unit.len().min(max);
                    match memchr::memchr(close, &unit[self.scanned..limit]) {
                        Some(k) => {
                            self.scanned += k + 1;
                            AfterValue
                        }
                        None => {
                            self.scanned = limit;
                            Quoted(q)
                        }
                    }
                }
                Brace { depth, quote } => match (quote, b) {
                    (Quote::None, b'{') if depth >= MAX_BRACE_DEPTH => return Verdict::Rejected,
                    (Quote::None, b'{') => Brace {
                        depth: depth + 1,
                        quote,
                    },
                    (Quote::None, b'}') if depth == 1 => AfterValue,
                    (Quote::None, b'}') => Brace {
                        depth: depth - 1,
                        quote,
                    },
                    (Quote::None, b'"') => Brace {
                        depth,
                        quote: Quote::Double,
                    },
                    (Quote::None, b'\'') => Brace {
                        depth,
                        quote: Quote::Single,
                    },
                    (Quote::None, b'`') => Brace {
                        depth,
                        quote: Quote::Back,
                    },
                    (Quote::Double, b'"') | (Quote::Single, b'\'') | (Quote::Back, b'`') => Brace {
                        depth,
                        quote: Quote::None,
                    },
                    _ => Brace { depth, quote },
                },
                Slash if b == b'>' => return Verdict::Complete(i + 1),
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

    /// Whether a complete opener has attributes (only then is there anything for
    /// pest to extract).
    pub fn has_attributes(&self) -> bool {
        self.has_attributes
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
                Slash if is_name_byte(b) => {
                    self.name = registry.start(Some(section));
                    if !registry.narrow(&mut self.name, b, Some(section)) {
                        return Verdict::Rejected;
                    }
                    Name
                }
                Slash => return Verdict::Rejected,
                Name if is_name_byte(b) => {
                    if !registry.narrow(&mut self.name, b, Some(section)) {
                        return Verdict::Rejected;
                    }
                    Name
                }
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
