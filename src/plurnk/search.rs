//! The search for close tags and next openers in a body, a lookahead or a skipped
//! statement: memchr to the next candidate byte (`:`, and `<` when openers count),
//! then the parsing machine runs the mode's entry rule of grammar/plurnk.pest from
//! there, resumed as the candidate's bytes arrive.
//!
//! The candidate's bytes are copied as they arrive (a candidate is a close tag or
//! an opener: a few bytes), so the bytes before and inside it can be released while
//! it is undecided: a skipped statement holds nothing of a partial close tag (PL-22).

use crate::machine::{Outcome, ParsingMachine, RuleId};

/// What a search step found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// A candidate matched the entry rule over `start..end` (absolute offsets); its
    /// captures are [`Search::captures`].
    Match {
        /// Where the candidate starts.
        start: usize,
        /// Where its match ends.
        end: usize,
    },
    /// Every byte given was looked at and nothing matched yet.
    Pending,
}

/// A resumable search for the candidates of one entry rule.
#[derive(Clone, Debug)]
pub struct Search {
    machine: ParsingMachine<'static>,
    rule: RuleId,
    /// Whether `<` starts a candidate too (`:` always does).
    openers: bool,
    /// The longest undecided candidate worth keeping: one longer cannot be the
    /// statement's own close tag (nor an opener, which is shorter).
    cap: usize,
    /// Bytes `buf_start..scanned` copied and not yet released: the active candidate
    /// (from its start), or bytes still to be looked at for candidates.
    buf: Vec<u8>,
    buf_start: usize,
    active: bool,
    /// Absolute offset of the first byte not yet copied or skipped.
    scanned: usize,
}

impl Search {
    /// A search on `machine`'s program, idle until [`Self::reset`].
    pub fn new(machine: ParsingMachine<'static>) -> Self {
        Search {
            machine,
            rule: RuleId(0),
            openers: false,
            cap: 0,
            buf: Vec::new(),
            buf_start: 0,
            active: false,
            scanned: 0,
        }
    }

    /// Starts a search for `rule` at absolute offset `from`; `<` starts candidates
    /// when `openers`; `tag_len` is the length of the statement's `OPsuffix`.
    pub fn reset(&mut self, rule: RuleId, openers: bool, tag_len: usize, from: usize) {
        self.rule = rule;
        self.openers = openers;
        self.cap = (tag_len + 1).max(6);
        self.buf.clear();
        self.buf_start = from;
        self.active = false;
        self.scanned = from;
    }

    /// Where the active candidate starts, if one is undecided.
    pub fn active(&self) -> Option<usize> {
        self.active.then_some(self.buf_start)
    }

    /// The bytes of the candidate that matched last, or of the active one, from its
    /// start (and perhaps bytes after it).
    pub fn candidate(&self) -> &[u8] {
        &self.buf
    }

    fn candidate_byte(&self, bytes: &[u8]) -> Option<usize> {
        if self.openers {
            memchr::memchr2(b':', b'<', bytes)
        } else {
            memchr::memchr(b':', bytes)
        }
    }

    /// Looks at `text` (which starts at absolute offset `base`, at or before the
    /// first byte not looked at yet); `last` when no byte after `text` counts.
    pub fn step(&mut self, text: &[u8], base: usize, last: bool) -> Found {
        loop {
            if self.active {
                // Copy no more than the longest candidate worth keeping, and one byte
                // (a candidate is decided within it): the text may be the whole rest
                // of the input.
                let from = (self.scanned.max(base) - base).min(text.len());
                let take = (text.len() - from).min((self.cap + 1).saturating_sub(self.buf.len()));
                self.buf.extend_from_slice(&text[from..from + take]);
                self.scanned = base + from + take;
                let complete = from + take == text.len();
                let outcome = if last && complete {
                    self.machine.finish(&self.buf)
                } else {
                    self.machine.resume(&self.buf)
                };
                match outcome {
                    Outcome::NeedMore if self.buf.len() <= self.cap => return Found::Pending,
                    Outcome::Matched { end } => {
                        self.active = false;
                        return Found::Match {
                            start: self.buf_start,
                            end: self.buf_start + end,
                        };
                    }
                    // Not a candidate after all: look again from its second byte.
                    _ => {
                        self.active = false;
                        self.buf.remove(0);
                        self.buf_start += 1;
                    }
                }
            }
            if let Some(k) = self.candidate_byte(&self.buf) {
                self.buf.drain(..k);
                self.buf_start += k;
                self.start();
                continue;
            }
            self.buf.clear();
            let from = self.scanned.max(base) - base;
            match self.candidate_byte(&text[from.min(text.len())..]) {
                Some(k) => {
                    self.scanned = base + from + k;
                    self.buf_start = self.scanned;
                    self.start();
                }
                None => {
                    self.scanned = self.scanned.max(base + text.len());
                    self.buf_start = self.scanned;
                    return Found::Pending;
                }
            }
        }
    }

    fn start(&mut self) {
        self.machine.start(self.rule);
        self.active = true;
    }

    /// Goes on after a match the caller does not take: from its end.
    pub fn skip_match(&mut self, end: usize) {
        let k = end.saturating_sub(self.buf_start).min(self.buf.len());
        self.buf.drain(..k);
        self.buf_start = end;
        self.scanned = self.scanned.max(end);
    }

    /// Where the active candidate's match would end if the input ended now
    /// (without ending the search).
    pub fn match_at_end(&self) -> Option<usize> {
        if !self.active {
            return None;
        }
        match self.machine.clone().finish(&self.buf) {
            Outcome::Matched { end } => Some(self.buf_start + end),
            _ => None,
        }
    }
}
