//! The resumable boundary probe for kindaxml tags (KX-6 to KX-8, KX-11).
//!
//! The probe is handed the candidate unit from its `<` each time more text has
//! arrived and looks only at the bytes it has not seen yet. It recognizes exactly
//! the `start_tag` and `end_tag` rules of grammar/kindaxml.pest (a test checks that
//! the two agree) plus the `<![CDATA[` opener, within the tag's *region*: up to a
//! newline, the next `<`, or `max_tag_bytes`. Rejecting on the very byte that rules
//! a candidate out is what lets text be emitted promptly (S4).

use super::options::{is_name_byte, Config, UnknownMode};
use crate::reentry::Verdict;

const CDATA_OPEN: &[u8] = b"<![CDATA[";

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_key_byte(b: u8) -> bool {
    !is_ws(b) && !matches!(b, b'=' | b'>' | b'/' | b'"' | b'\'' | b'<' | b'\n')
}

/// What a complete candidate turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// A start or self-closing tag.
    Start,
    /// An end tag.
    End,
    /// The `<![CDATA[` that opens a literal block.
    CdataOpen,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Just after `<`.
    Lt,
    /// Inside a start tag's name.
    Name,
    /// After whitespace: a key, `/` or `>` may come.
    Gap,
    /// Inside a key.
    Key,
    /// Whitespace after a key: `=`, another key, `/` or `>`.
    KeyGap,
    /// After `=` and any whitespace.
    Eq,
    /// Inside an unquoted value.
    Bare,
    /// Inside a value quoted with this byte.
    Quoted(u8),
    /// Right after a closing quote.
    AfterQuoted,
    /// After the `/` of a self-closing tag.
    Slash,
    /// After `</`.
    EndSlash,
    /// Inside an end tag's name.
    EndName,
    /// Whitespace after an end tag's name.
    EndGap,
    /// Matching `<![CDATA[`.
    Cdata,
}

/// Probes one candidate tag; the unit always starts with its `<`.
#[derive(Clone, Debug)]
pub struct TagProbe {
    state: State,
    scanned: usize,
    /// Where the name being read starts (1 for start tags, 2 for end tags).
    name_start: usize,
    /// Where that name ends, once it has.
    name_end: usize,
    /// Whether an attribute key was seen.
    has_attrs: bool,
    /// The first `>` after the quote that is open, if any.
    first_gt: Option<usize>,
    kind: UnitKind,
}

impl Default for TagProbe {
    fn default() -> Self {
        Self::new()
    }
}

impl TagProbe {
    /// A probe for a candidate whose `<` is the first byte of the unit.
    pub fn new() -> Self {
        TagProbe {
            state: State::Lt,
            scanned: 1,
            name_start: 1,
            name_end: 1,
            has_attrs: false,
            first_gt: None,
            kind: UnitKind::Start,
        }
    }

    /// What the candidate is, once the probe said [`Verdict::Complete`].
    pub fn kind(&self) -> UnitKind {
        self.kind
    }

    /// The tag's name as a byte range of the unit, once the name has ended.
    pub fn name(&self) -> std::ops::Range<usize> {
        self.name_start..self.name_end.max(self.name_start)
    }

    /// Whether the tag has attributes (only those need to be taken apart).
    pub fn has_attrs(&self) -> bool {
        self.has_attrs
    }

    /// The region ended (newline, `<`, the tag bound, or end of input): only a
    /// quote left open with a `>` after it can still end the tag (KX-8).
    pub fn region_end(&self) -> Verdict {
        match (self.state, self.first_gt) {
            (State::Quoted(_), Some(gt)) => Verdict::Complete(gt + 1),
            _ => Verdict::Rejected,
        }
    }

    fn name_ok(&self, name: &[u8], config: &Config, complete: bool) -> bool {
        if config.unknown_mode != UnknownMode::TreatAsText {
            return true;
        }
        if complete {
            config.lookup(name).is_some()
        } else {
            config.is_prefix(name)
        }
    }

    /// Looks at the bytes of `unit` not seen yet.
    pub fn resume(&mut self, unit: &[u8], config: &Config) -> Verdict {
        use State::*;
        let max = config.max_tag_bytes;
        while self.scanned < unit.len() {
            let i = self.scanned;
            let b = unit[i];
            if i >= max || b == b'\n' || b == b'<' {
                return self.region_end();
            }
            self.scanned += 1;
            let done = Verdict::Complete(i + 1);
            self.state = match self.state {
                Lt => match b {
                    b'/' => {
                        self.kind = UnitKind::End;
                        self.name_start = 2;
                        EndSlash
                    }
                    b'!' if config.cdata => {
                        self.kind = UnitKind::CdataOpen;
                        Cdata
                    }
                    _ if b.is_ascii_alphabetic() && self.name_ok(&unit[1..=i], config, false) => {
                        Name
                    }
                    _ => return Verdict::Rejected,
                },
                Name | EndName if is_name_byte(b) => {
                    if !self.name_ok(&unit[self.name_start..=i], config, false) {
                        return Verdict::Rejected;
                    }
                    self.state
                }
                Name | EndName => {
                    if !self.name_ok(&unit[self.name_start..i], config, true) {
                        return Verdict::Rejected;
                    }
                    self.name_end = i;
                    match (self.state, b) {
                        (_, b'>') => return done,
                        (Name, b'/') => Slash,
                        (Name, _) if is_ws(b) => Gap,
                        (EndName, _) if is_ws(b) => EndGap,
                        _ => return Verdict::Rejected,
                    }
                }
                Gap | AfterQuoted | Key | KeyGap if b == b'>' => return done,
                Gap | AfterQuoted | Key | KeyGap if b == b'/' => Slash,
                Gap | AfterQuoted if is_ws(b) => Gap,
                Gap if is_key_byte(b) => {
                    self.has_attrs = true;
                    Key
                }
                Gap | AfterQuoted => return Verdict::Rejected,
                Key | KeyGap if b == b'=' => Eq,
                Key | KeyGap if is_ws(b) => KeyGap,
                Key | KeyGap if is_key_byte(b) => Key,
                Key | KeyGap => return Verdict::Rejected,
                Eq => match b {
                    _ if is_ws(b) => Eq,
                    b'"' | b'\'' => {
                        self.first_gt = None;
                        Quoted(b)
                    }
                    b'>' => return done,
                    _ => Bare,
                },
                Bare => match b {
                    b'>' => return done,
                    _ if is_ws(b) => Gap,
                    _ => Bare,
                },
                Quoted(q) if b == q => AfterQuoted,
                Quoted(q) => {
                    if b == b'>' && self.first_gt.is_none() {
                        self.first_gt = Some(i);
                    }
                    Quoted(q)
                }
                Slash if b == b'>' => return done,
                Slash => return Verdict::Rejected,
                EndSlash
                    if b.is_ascii_alphabetic() && self.name_ok(&unit[2..=i], config, false) =>
                {
                    EndName
                }
                EndSlash => return Verdict::Rejected,
                EndGap if is_ws(b) => EndGap,
                EndGap if b == b'>' => return done,
                EndGap => return Verdict::Rejected,
                Cdata if b == CDATA_OPEN[i] => {
                    if i + 1 == CDATA_OPEN.len() {
                        return done;
                    }
                    Cdata
                }
                Cdata => return Verdict::Rejected,
            };
        }
        if self.scanned >= max {
            // The next byte would lie past the tag bound, whatever it is.
            return self.region_end();
        }
        Verdict::NeedMore
    }
}
