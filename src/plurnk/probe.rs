//! Resumable scanners for plurnk statements.
//!
//! [`StatementProbe`] is handed the candidate unit from its first `<` each time more text
//! has arrived and looks only at the bytes it has not seen yet: the opener (PL-4, PL-5),
//! the header up to its `:` (PL-6), then the body up to the close tag (PL-7). It recognizes
//! exactly the `header` rule of grammar/plurnk.pest, so each header is taken apart once.
//! After an opener and a character that starts no slot, it looks ahead for the opener's
//! close tag or the next opener, whichever comes first (PL-5a), within the statement limit.
//! [`CloseMatcher`] and [`OpenerMatcher`] are byte automata for a close tag and for the
//! next opener; they carry their state across chunks, so nothing is ever scanned twice.

use super::model::{Op, Source};

/// Whether `b` may continue a suffix (and so stops a close tag, PL-7).
pub fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_header_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// What one byte did to a [`CloseMatcher`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseStep {
    /// Nothing decided.
    Pending,
    /// The close tag ended just before this byte.
    Closed,
}

/// Recognizes `:OPsuffix` not followed by `[A-Za-z0-9_]`, one byte at a time. The tag
/// starts with `:` and has no other `:`, so a mismatch only ever restarts at a `:`.
#[derive(Clone, Debug)]
pub struct CloseMatcher {
    tag: Box<[u8]>,
    matched: usize,
}

impl CloseMatcher {
    /// A matcher for the close tag of `open_tag` (`OPsuffix`).
    pub fn new(open_tag: &[u8]) -> Self {
        let mut tag = Vec::with_capacity(open_tag.len() + 1);
        tag.push(b':');
        tag.extend_from_slice(open_tag);
        CloseMatcher {
            tag: tag.into_boxed_slice(),
            matched: 0,
        }
    }

    /// Whether the matcher is idle, so bytes up to the next `:` can be skipped.
    pub fn idle(&self) -> bool {
        self.matched == 0
    }

    /// Whether the whole tag has been seen and only its follower is missing: at end of
    /// input that is a close.
    pub fn awaiting_follower(&self) -> bool {
        self.matched == self.tag.len()
    }

    /// Feeds one byte.
    pub fn step(&mut self, b: u8) -> CloseStep {
        if self.matched == self.tag.len() {
            if is_ident(b) {
                self.matched = 0;
                return CloseStep::Pending;
            }
            self.matched = 0;
            return CloseStep::Closed;
        }
        if b == self.tag[self.matched] {
            self.matched += 1;
        } else {
            self.matched = usize::from(b == b':');
        }
        CloseStep::Pending
    }
}

/// Recognizes the next opener `<<OP` (PL-4) inside a broken statement (PL-18 (b)).
#[derive(Clone, Debug, Default)]
pub struct OpenerMatcher {
    /// `<` seen in a row, at most 2 counted.
    lts: usize,
    /// Bytes of an OP after `<<`.
    op: [u8; 4],
    op_len: usize,
}

impl OpenerMatcher {
    /// Whether the matcher is idle, so bytes up to the next `<` can be skipped.
    pub fn idle(&self) -> bool {
        self.lts == 0
    }

    /// How many bytes at the end of what was fed may still begin an opener.
    pub fn partial(&self) -> usize {
        if self.op_len > 0 {
            2 + self.op_len
        } else {
            self.lts
        }
    }

    /// Feeds one byte; true when it completed `<<OP` (which began 5 bytes earlier).
    pub fn step(&mut self, b: u8) -> bool {
        if b == b'<' {
            self.lts = if self.op_len > 0 {
                1
            } else {
                (self.lts + 1).min(2)
            };
            self.op_len = 0;
            return false;
        }
        if self.lts == 2 {
            self.op[self.op_len] = b;
            self.op_len += 1;
            if Op::is_prefix(&self.op[..self.op_len]) {
                if self.op_len == 4 {
                    *self = OpenerMatcher::default();
                    return true;
                }
                return false;
            }
        }
        *self = OpenerMatcher::default();
        false
    }
}

/// Which part of a statement the probe is in; at end of input it names what is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// `<`: a second `<` must follow.
    Lt,
    /// After `<<`, matching the OP.
    Op,
    /// In the suffix.
    Suffix,
    /// After the suffix, nothing committed yet (PL-5); `lt` if a `<` was just seen.
    Uncommitted { lt: bool },
    /// After an uncommitted opener, a character that starts no slot: looking ahead for
    /// the opener's own close tag (an error, PL-5a) or the next opener (text).
    Stray,
    /// Between slots; `lt` if a `<` was just seen.
    Header { lt: bool },
    /// Inside `[...]`; `lt` if the last byte was `<`.
    Signal { lt: bool },
    /// Inside `(...)`; `lt` if the last byte was `<`.
    Path { lt: bool },
    /// Inside a line marker.
    Marker(MarkerState),
    /// In the body, looking for the close tag.
    Body,
}

/// Where a line marker's scan stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerState {
    /// After `<` (or after the range `-`): `-` or a digit.
    Start { second: bool },
    /// After a leading `-`: a digit.
    Minus { second: bool },
    /// In the digits.
    Digits { second: bool },
}

/// What the probe decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeVerdict {
    /// Every byte so far fits; more input is needed.
    NeedMore,
    /// The bytes are not a statement: the first `<` is text.
    NotStatement,
    /// A malformed header (PL-18): `at` is the offending byte, `report` where and what.
    HeaderError {
        /// Offset of the offending byte; recovery searches from here.
        at: usize,
        /// Offset the error is reported at, its source and text.
        report: (usize, Source, String),
    },
    /// The statement is longer than the limit (PL-20).
    Overflow,
    /// The statement closed; its close tag ends at this offset.
    Closed(usize),
}

/// Which slots the header has had so far.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    signal: bool,
    path: bool,
    marker: bool,
}

/// The resumable scanner of one statement, whose first `<` is the unit's first byte.
#[derive(Clone, Debug)]
pub struct StatementProbe {
    place: Place,
    scanned: usize,
    op_start: usize,
    suffix_end: usize,
    seen: Seen,
    /// Offset of the current line marker's `<`.
    marker_start: usize,
    /// Offset where the body starts, once the header's `:` was seen.
    body_start: usize,
    close: Option<CloseMatcher>,
    /// Offset of the character that started a stray lookahead (PL-5a).
    stray_at: usize,
    /// The next opener, while looking ahead after a stray character.
    next_opener: OpenerMatcher,
    /// The first structural error (PL-17), reported when the statement ends.
    deferred: Option<(usize, Source, String)>,
}

impl StatementProbe {
    /// A probe for a unit that starts with `<`.
    pub fn new() -> Self {
        StatementProbe {
            place: Place::Lt,
            scanned: 1,
            op_start: 2,
            suffix_end: 0,
            seen: Seen::default(),
            marker_start: 0,
            body_start: 0,
            close: None,
            stray_at: 0,
            next_opener: OpenerMatcher::default(),
            deferred: None,
        }
    }

    /// Where the scan stands.
    pub fn place(&self) -> Place {
        self.place
    }

    /// Whether the opener committed to a statement (PL-5).
    pub fn committed(&self) -> bool {
        matches!(
            self.place,
            Place::Header { .. }
                | Place::Signal { .. }
                | Place::Path { .. }
                | Place::Marker(_)
                | Place::Body
        )
    }

    /// `OPsuffix`, once the suffix is complete (empty before that).
    pub fn open_tag<'a>(&self, unit: &'a str) -> &'a str {
        unit.get(self.op_start..self.suffix_end.max(self.op_start))
            .unwrap_or("")
    }

    /// Bytes of the unit looked at so far.
    pub fn scanned(&self) -> usize {
        self.scanned
    }

    /// Ends a suffix that reached the end of input, so [`Self::open_tag`] is complete.
    pub fn end_suffix(&mut self, len: usize) {
        if self.place == Place::Suffix {
            self.suffix_end = len;
        }
    }

    /// Where the body starts (after the header's `:`).
    pub fn body_start(&self) -> usize {
        self.body_start
    }

    /// The first structural error found in the header, if any.
    pub fn deferred(&self) -> Option<&(usize, Source, String)> {
        self.deferred.as_ref()
    }

    /// The close-tag matcher, once in the body (or after a header error, a fresh one).
    pub fn close_matcher(&self, unit: &str) -> CloseMatcher {
        match &self.close {
            Some(m) => m.clone(),
            None => CloseMatcher::new(self.open_tag(unit).as_bytes()),
        }
    }

    fn op(&self, unit: &[u8]) -> Option<Op> {
        Op::from_bytes(&unit[self.op_start..self.op_start + 4])
    }

    fn defer(&mut self, at: usize, source: Source, text: String) {
        if self.deferred.is_none() {
            self.deferred = Some((at, source, text));
        }
    }

    fn header_error(&self, at: usize, report_at: usize, text: String) -> ProbeVerdict {
        let report = match &self.deferred {
            Some(d) => d.clone(),
            None => (report_at, Source::Lexer, text),
        };
        ProbeVerdict::HeaderError { at, report }
    }

    /// Opens a slot at `i` (its bracket) after checking that it is the first of its kind.
    fn open_slot(&mut self, b: u8, i: usize, unit: &[u8]) -> Place {
        match b {
            b'[' => {
                if self.seen.signal {
                    self.defer(i, Source::Parser, "duplicate signal".into());
                }
                self.seen.signal = true;
                Place::Signal { lt: false }
            }
            b'(' => {
                if self.seen.path {
                    self.defer(i, Source::Parser, "duplicate path".into());
                }
                self.seen.path = true;
                Place::Path { lt: false }
            }
            _ => {
                if self.seen.marker {
                    self.defer(i, Source::Parser, "duplicate line marker".into());
                }
                if let Some(op @ (Op::SEND | Op::EXEC)) = self.op(unit) {
                    self.defer(
                        i,
                        Source::Parser,
                        format!("line marker not allowed on {}", op.as_str()),
                    );
                }
                self.seen.marker = true;
                self.marker_start = i;
                Place::Marker(MarkerState::Start { second: false })
            }
        }
    }

    /// Looks at the bytes of `unit` not seen yet. `max` is `max_statement_bytes`.
    pub fn resume(&mut self, unit: &str, max: usize) -> ProbeVerdict {
        let bytes = unit.as_bytes();
        while self.scanned < bytes.len() {
            if self.place == Place::Body {
                return self.resume_body(bytes, max);
            }
            let i = self.scanned;
            if i >= max {
                return if self.committed() {
                    ProbeVerdict::Overflow
                } else {
                    ProbeVerdict::NotStatement
                };
            }
            let b = bytes[i];
            self.scanned += 1;
            self.place = match self.place {
                Place::Lt if b == b'<' => Place::Op,
                Place::Lt => return ProbeVerdict::NotStatement,
                Place::Op => {
                    // A third `<` means the opener starts one byte later (PL-4).
                    if b == b'<' || !Op::is_prefix(&bytes[self.op_start..=i]) {
                        return ProbeVerdict::NotStatement;
                    }
                    if i + 1 - self.op_start == 4 {
                        Place::Suffix
                    } else {
                        Place::Op
                    }
                }
                Place::Suffix if is_ident(b) => Place::Suffix,
                Place::Suffix => {
                    self.suffix_end = i;
                    self.scanned = i;
                    Place::Uncommitted { lt: false }
                }
                Place::Uncommitted { lt: true } => {
                    if b == b'-' || b.is_ascii_digit() {
                        let place = self.open_slot(b'<', i - 1, bytes);
                        self.scanned = i;
                        place
                    } else {
                        self.stray(i - 1, unit)
                    }
                }
                Place::Uncommitted { lt: false } | Place::Header { lt: false } => {
                    let committed = self.place == (Place::Header { lt: false });
                    match b {
                        _ if is_header_ws(b) => self.place,
                        b'[' | b'(' => self.open_slot(b, i, bytes),
                        b':' => self.enter_body(i + 1, unit),
                        b'<' if committed => Place::Header { lt: true },
                        b'<' => Place::Uncommitted { lt: true },
                        _ if !committed => self.stray(i, unit),
                        _ => return self.header_error(i, i, stray_message(unit, i)),
                    }
                }
                Place::Header { lt: true } => {
                    if b == b'<' {
                        return self.header_error(i - 1, i - 1, stray_message(unit, i - 1));
                    }
                    let place = self.open_slot(b'<', i - 1, bytes);
                    self.scanned = i;
                    place
                }
                Place::Signal { lt } | Place::Path { lt } => {
                    let signal = matches!(self.place, Place::Signal { .. });
                    let slot = if !signal {
                        "path"
                    } else if matches!(self.op(bytes), Some(Op::SEND | Op::EXEC)) {
                        "signal"
                    } else {
                        // The published package's name for a signal of tags.
                        "tag signal"
                    };
                    match b {
                        b'\r' | b'\n' => {
                            return self.header_error(i, i, format!("line break in {slot}"))
                        }
                        b'<' if lt => {
                            return self.header_error(
                                i - 1,
                                i - 1,
                                format!("unrecognized character '<<' in {slot}"),
                            )
                        }
                        b']' if signal => Place::Header { lt: false },
                        b')' if !signal => Place::Header { lt: false },
                        _ if signal => Place::Signal { lt: b == b'<' },
                        _ => Place::Path { lt: b == b'<' },
                    }
                }
                Place::Marker(state) => match self.marker_step(state, b) {
                    Some(place) => place,
                    None => {
                        return self.header_error(
                            i,
                            self.marker_start,
                            "malformed line marker; expected <N> or <N-M>".into(),
                        )
                    }
                },
                Place::Stray => {
                    if self.close.as_mut().map(|c| c.step(b)) == Some(CloseStep::Closed) {
                        return self.stray_error(unit);
                    }
                    if self.next_opener.step(b) {
                        return ProbeVerdict::NotStatement;
                    }
                    self.skip_idle(bytes, max);
                    Place::Stray
                }
                // Handled before the limit check above: the body has its own.
                Place::Body => Place::Body,
            };
        }
        if self.place == Place::Body {
            return self.resume_body(bytes, max);
        }
        // A stray opener's close tag that fills the limit exactly is still decided by
        // the end of input; any next byte would lie beyond the limit (PL-5a).
        let close_at_limit = self.place == Place::Stray
            && self.close.as_ref().is_some_and(|c| c.awaiting_follower());
        if self.scanned >= max && !close_at_limit {
            return if self.committed() {
                ProbeVerdict::Overflow
            } else {
                ProbeVerdict::NotStatement
            };
        }
        ProbeVerdict::NeedMore
    }

    /// Starts looking ahead from the stray character at `at` (PL-5a); the matchers are
    /// fed from that character on.
    fn stray(&mut self, at: usize, unit: &str) -> Place {
        self.stray_at = at;
        self.scanned = at;
        self.close = Some(CloseMatcher::new(self.open_tag(unit).as_bytes()));
        self.next_opener = OpenerMatcher::default();
        Place::Stray
    }

    /// While neither matcher is inside a match, jumps to the next `:` or `<` (within the
    /// limit: the lookahead is text once it reaches `max` undecided).
    fn skip_idle(&mut self, bytes: &[u8], max: usize) {
        let idle = self.close.as_ref().is_none_or(|c| c.idle()) && self.next_opener.idle();
        if idle {
            let limit = bytes.len().min(max).max(self.scanned);
            self.scanned += memchr::memchr2(b':', b'<', &bytes[self.scanned..limit])
                .unwrap_or(limit - self.scanned);
        }
    }

    /// The error of an opener followed by a stray character whose own close tag came
    /// first (PL-5a): reported at that character, recovered as PL-18 recovers.
    pub fn stray_error(&self, unit: &str) -> ProbeVerdict {
        ProbeVerdict::HeaderError {
            at: self.stray_at,
            report: (
                self.stray_at,
                Source::Lexer,
                stray_message(unit, self.stray_at),
            ),
        }
    }

    fn marker_step(&self, state: MarkerState, b: u8) -> Option<Place> {
        use MarkerState::*;
        Some(Place::Marker(match state {
            Start { second } if b == b'-' => Minus { second },
            Start { second } | Minus { second } if b.is_ascii_digit() => Digits { second },
            Digits { second } if b.is_ascii_digit() => Digits { second },
            Digits { second: false } if b == b'-' => Start { second: true },
            Digits { .. } if b == b'>' => return Some(Place::Header { lt: false }),
            _ => return None,
        }))
    }

    fn enter_body(&mut self, body_start: usize, unit: &str) -> Place {
        self.body_start = body_start;
        self.close = Some(CloseMatcher::new(self.open_tag(unit).as_bytes()));
        Place::Body
    }

    fn resume_body(&mut self, bytes: &[u8], max: usize) -> ProbeVerdict {
        let Some(close) = self.close.as_mut() else {
            return ProbeVerdict::NeedMore;
        };
        while self.scanned < bytes.len() {
            if self.scanned > max {
                return ProbeVerdict::Overflow;
            }
            if close.idle() {
                let limit = bytes.len().min(max.saturating_add(1));
                match memchr::memchr(b':', &bytes[self.scanned..limit]) {
                    Some(k) => self.scanned += k,
                    None => {
                        self.scanned = limit;
                        continue;
                    }
                }
            }
            let i = self.scanned;
            self.scanned += 1;
            if close.step(bytes[i]) == CloseStep::Closed {
                return ProbeVerdict::Closed(i);
            }
            if i == max {
                return ProbeVerdict::Overflow;
            }
        }
        if self.scanned >= max && !close.awaiting_follower() {
            return ProbeVerdict::Overflow;
        }
        ProbeVerdict::NeedMore
    }
}

impl Default for StatementProbe {
    fn default() -> Self {
        Self::new()
    }
}

/// The error for a character at byte `i` of `unit` that starts no slot (PL-18): the
/// published package's wording, with `<<` named as one character as it does.
fn stray_message(unit: &str, i: usize) -> String {
    let shown = if unit.as_bytes().get(i..i + 2) == Some(b"<<") {
        "<<".to_string()
    } else {
        char_at(unit, i).to_string()
    };
    format!(
        "unrecognized character '{shown}' in slot region; \
         expected [signal], (path), <L> or :body: in any order"
    )
}

/// The character that starts at byte `i` of `unit`.
fn char_at(unit: &str, i: usize) -> char {
    unit.get(i..)
        .and_then(|s| s.chars().next())
        .unwrap_or(char::REPLACEMENT_CHARACTER)
}
