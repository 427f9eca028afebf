//! The resumable boundary probe for kindaxml tags (KX-6 to KX-8, KX-11).
//!
//! The probe is handed the candidate unit from its `<` each time more text has
//! arrived and looks only at the bytes it has not seen yet. It recognizes exactly
//! the `start_tag`, `end_tag` and `unknown_end_tag` rules of grammar/kindaxml.pest
//! (tests check that they agree) plus the `<![CDATA[` opener, within the tag's
//! *region*: up to the next `<` or `max_tag_bytes`, and up to a newline unless the
//! tag's name is recognized. Rejecting on the very byte that rules a candidate out
//! is what lets text be emitted promptly (S4).

use super::options::{is_name_byte, Config, UnknownMode};
use crate::reentry::Verdict;

const CDATA_OPEN: &[u8] = b"<![CDATA[";

/// Whitespace inside a tag (KX-6).
pub(crate) fn is_tag_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Whether `b` belongs to an attribute key (KX-6).
pub(crate) fn is_key_byte(b: u8) -> bool {
    !is_tag_ws(b) && !matches!(b, b'=' | b'>' | b'/' | b'"' | b'\'' | b'<')
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
    /// Between the tokens of a start tag.
    Body,
    /// After a `/` that ends a self-closing tag if only whitespace and `>` follow.
    Slash,
    /// Inside a key.
    Key,
    /// Whitespace after a key: `=` may still come.
    KeyGap,
    /// After `=` and any whitespace.
    Eq,
    /// Inside an unquoted value.
    Bare,
    /// Inside a value quoted with this byte.
    Quoted(u8),
    /// After `</`.
    EndSlash,
    /// Whitespace between `</` and the name (only a recognized name may follow).
    EndLead,
    /// Inside an end tag's name.
    EndName,
    /// Blanks after an unknown end tag's name.
    EndGap,
    /// After a recognized end tag's name: anything up to `>`.
    EndTail,
    /// Matching `<![CDATA[`.
    Cdata,
}

/// Probes one candidate tag; the unit always starts with its `<`.
#[derive(Clone, Debug)]
pub struct TagProbe {
    state: State,
    scanned: usize,
    /// Where the name being read starts.
    name_start: usize,
    /// Where that name ends, once it has.
    name_end: usize,
    /// Whether the name, once complete, is recognized.
    recognized: bool,
    /// Whether whitespace came between `</` and the name.
    lead_ws: bool,
    /// Whether the start tag holds more than its name, whitespace and a final `/`.
    needs_scan: bool,
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
            recognized: false,
            lead_ws: false,
            needs_scan: false,
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

    /// Whether the tag's name is recognized, once the name has ended.
    #[cfg(test)]
    pub fn recognized(&self) -> bool {
        self.recognized
    }

    /// Whether the start tag has attributes or junk to take apart (a tag of only
    /// its name, whitespace and a final `/` needs no scanner).
    pub fn needs_scan(&self) -> bool {
        self.needs_scan
    }

    /// The region ended (the next `<`, the tag bound, the end of input, or a
    /// newline a tag of this name cannot hold): only a quote left open with a `>`
    /// after it can still end the tag (KX-8).
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

    /// The state after byte `b` (not `>`) between the tokens of a start tag.
    fn body_byte(&mut self, b: u8) -> State {
        match b {
            _ if is_tag_ws(b) => State::Body,
            b'/' => State::Slash,
            b'=' | b'"' | b'\'' => {
                // Junk: skipped (KX-6).
                self.needs_scan = true;
                State::Body
            }
            _ => {
                self.needs_scan = true;
                State::Key
            }
        }
    }

    /// Looks at the bytes of `unit` not seen yet.
    pub fn resume(&mut self, unit: &[u8], config: &Config) -> Verdict {
        use State::*;
        let max = config.max_tag_bytes;
        while self.scanned < unit.len() {
            let i = self.scanned;
            let b = unit[i];
            if i >= max || b == b'<' {
                return self.region_end();
            }
            // Only a recognized name lets a tag continue past a newline (KX-7);
            // before the name has ended, the states below decide.
            let named = !matches!(self.state, Lt | Name | EndSlash | EndLead | EndName | Cdata);
            if b == b'\n' && named && !self.recognized {
                return self.region_end();
            }
            self.scanned += 1;
            let done = Verdict::Complete(i + 1);
            self.state = match self.state {
                Lt => match b {
                    b'/' => {
                        self.kind = UnitKind::End;
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
                    let name = &unit[self.name_start..i];
                    if !self.name_ok(name, config, true) {
                        return Verdict::Rejected;
                    }
                    self.name_end = i;
                    self.recognized = config.lookup(name).is_some();
                    let end = self.state == EndName;
                    match b {
                        b'\n' if !self.recognized => return Verdict::Rejected,
                        b'>' if !(end && self.lead_ws && !self.recognized) => return done,
                        _ if !end && is_tag_ws(b) => Body,
                        b'/' if !end => Slash,
                        _ if end && self.recognized && (is_tag_ws(b) || b == b'/') => EndTail,
                        b' ' | b'\t' if end && !self.lead_ws => EndGap,
                        _ => return Verdict::Rejected,
                    }
                }
                Body if b == b'>' => return done,
                Body => self.body_byte(b),
                Slash => match b {
                    b'>' => return done,
                    _ if is_tag_ws(b) => Slash,
                    _ => {
                        // The `/` was junk.
                        self.needs_scan = true;
                        self.body_byte(b)
                    }
                },
                Key | KeyGap if b == b'>' => return done,
                Key | KeyGap if b == b'=' => Eq,
                Key | KeyGap if is_tag_ws(b) => KeyGap,
                Key | KeyGap => self.body_byte(b),
                Eq => match b {
                    _ if is_tag_ws(b) => Eq,
                    b'"' | b'\'' => {
                        self.first_gt = None;
                        Quoted(b)
                    }
                    b'>' => return done,
                    _ => Bare,
                },
                Bare => match b {
                    b'>' => return done,
                    _ if is_tag_ws(b) => Body,
                    _ => Bare,
                },
                Quoted(q) if b == q => Body,
                Quoted(_) if b == b'\n' => match self.first_gt {
                    // No matching quote on the line: it closed at the first `>`.
                    Some(gt) => return Verdict::Complete(gt + 1),
                    // No `>` either: the value closes at the end of its line.
                    None => Body,
                },
                Quoted(q) => {
                    if b == b'>' && self.first_gt.is_none() {
                        self.first_gt = Some(i);
                    }
                    Quoted(q)
                }
                EndSlash | EndLead if is_tag_ws(b) => {
                    self.lead_ws = true;
                    EndLead
                }
                EndSlash | EndLead
                    if b.is_ascii_alphabetic() && self.name_ok(&unit[i..=i], config, false) =>
                {
                    self.name_start = i;
                    EndName
                }
                EndSlash | EndLead => return Verdict::Rejected,
                EndGap if b == b' ' || b == b'\t' => EndGap,
                EndGap if b == b'>' => return done,
                EndGap => return Verdict::Rejected,
                EndTail if b == b'>' => return done,
                EndTail => EndTail,
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
