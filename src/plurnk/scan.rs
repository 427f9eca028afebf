//! Complete pieces of a statement taken apart without pest: the header, a signal's
//! tags and entries, a path's URL scheme test. Each follows one rule of
//! grammar/plurnk.pest exactly; that rule stays the oracle, and the tests check that
//! both agree on every input.

use super::model::Op;
use super::probe::is_ident;

fn is_header_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// One slot of a header, with the offsets of its parts in the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot<'a> {
    /// `[text]`; `at` is where `text` starts.
    Signal {
        /// Offset of the text.
        at: usize,
        /// The raw content.
        text: &'a str,
    },
    /// `(text)`; `at` is where `text` starts.
    Path {
        /// Offset of the text.
        at: usize,
        /// The raw content.
        text: &'a str,
    },
    /// `<first>` or `<first-last>`, each integer with its offset, as written.
    Marker {
        /// The first integer.
        first: (usize, &'a str),
        /// The second integer, if any.
        last: Option<(usize, &'a str)>,
    },
}

/// A header the `header` rule accepts: `<<`, OP, suffix, slots, `:`.
#[derive(Clone, Copy, Debug)]
pub struct Header<'a> {
    text: &'a str,
    /// The OP.
    pub op: Op,
    /// The suffix.
    pub suffix: &'a str,
}

/// `-? digit+` from `i`; the end of the integer.
fn int_end(b: &[u8], mut i: usize) -> Option<usize> {
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    (i > digits).then_some(i)
}

/// The content of a bracketed slot from `i`: up to `close`, never across a line
/// break or `<<`; the offset of `close`.
fn slot_end(b: &[u8], mut i: usize, close: u8) -> Option<usize> {
    while i < b.len() {
        match b[i] {
            x if x == close => return Some(i),
            b'\r' | b'\n' => return None,
            b'<' if b.get(i + 1) == Some(&b'<') => return None,
            _ => i += 1,
        }
    }
    None
}

/// Reads the slot at `i` (not whitespace): the slot and where it ends, or `None` if
/// no slot starts there.
fn slot_at<'a>(text: &'a str, i: usize) -> Option<(Slot<'a>, usize)> {
    let b = text.as_bytes();
    match b.get(i)? {
        b'[' => {
            let end = slot_end(b, i + 1, b']')?;
            let slot = Slot::Signal {
                at: i + 1,
                text: &text[i + 1..end],
            };
            Some((slot, end + 1))
        }
        b'(' => {
            let end = slot_end(b, i + 1, b')')?;
            let slot = Slot::Path {
                at: i + 1,
                text: &text[i + 1..end],
            };
            Some((slot, end + 1))
        }
        b'<' => {
            let first_end = int_end(b, i + 1)?;
            let first = (i + 1, &text[i + 1..first_end]);
            let mut j = first_end;
            let mut last = None;
            // `("-" ~ int)?`: taken only when an integer follows the `-`.
            if b.get(j) == Some(&b'-') {
                if let Some(end) = int_end(b, j + 1) {
                    last = Some((j + 1, &text[j + 1..end]));
                    j = end;
                }
            }
            if b.get(j) != Some(&b'>') {
                return None;
            }
            Some((Slot::Marker { first, last }, j + 1))
        }
        _ => None,
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_header_ws(b[i]) {
        i += 1;
    }
    i
}

impl<'a> Header<'a> {
    /// Takes apart `text` as the `header` rule would; `None` where it refuses it.
    pub fn scan(text: &'a str) -> Option<Self> {
        let b = text.as_bytes();
        if b.len() < 7 || !b.starts_with(b"<<") {
            return None;
        }
        let op = Op::from_bytes(&b[2..6])?;
        let mut i = 6;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        let header = Header {
            text,
            op,
            suffix: &text[6..i],
        };
        let mut slots = header.slots_from(i);
        for _ in &mut slots {}
        let colon = skip_ws(b, slots.at);
        (colon + 1 == b.len() && b[colon] == b':').then_some(header)
    }

    /// The slots in order.
    pub fn slots(&self) -> Slots<'a> {
        self.slots_from(6 + self.suffix.len())
    }

    fn slots_from(&self, at: usize) -> Slots<'a> {
        Slots {
            text: self.text,
            at,
        }
    }
}

/// The slots of a header (`(header_ws* ~ slot)*`); `at` is where the first byte
/// no slot took stands.
pub struct Slots<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Slots<'a> {
    type Item = Slot<'a>;

    fn next(&mut self) -> Option<Slot<'a>> {
        let start = skip_ws(self.text.as_bytes(), self.at);
        let (slot, end) = slot_at(self.text, start)?;
        self.at = end;
        Some(slot)
    }
}

/// The tags of a signal (`tag_list`): split on commas, spaces and tabs, empty
/// entries dropped.
pub fn tags(content: &str) -> impl Iterator<Item = &str> {
    content
        .split([',', ' ', '\t'])
        .filter(|tag| !tag.is_empty())
}

/// Whether `entry` is an integer (`int_entry`).
pub fn is_int_entry(entry: &str) -> bool {
    int_end(entry.as_bytes(), 0) == Some(entry.len())
}

/// Whether `entry` is a runtime tag (`runtime_entry`).
pub fn is_runtime_entry(entry: &str) -> bool {
    let b = entry.as_bytes();
    b.first()
        .is_some_and(|&c| c == b'_' || c.is_ascii_alphabetic())
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'+'))
}

/// Whether `text` starts with a URL scheme and `://` (`url_prefix`).
pub fn has_url_prefix(text: &str) -> bool {
    let b = text.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    let mut i = 1;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'+' | b'.' | b'-')) {
        i += 1;
    }
    b[i..].starts_with(b"://")
}
