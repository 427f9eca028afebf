//! What recovered spans reach (KX-16, KX-18), tracked as output text streams by.
//!
//! Each tracker sees every run of output text once, keeps O(1) state, and looks
//! only at the characters it needs (the first content character, the last one,
//! the newline or whitespace that ends it), so recovery adds no second pass over
//! the text and never holds any of it back.

/// Whether `c` is removed from the ends of a recovered span under
/// `trim_punctuation` (KX-16).
pub fn is_trim_char(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '!' | '"'
                | '\''
                | '('
                | ')'
                | ','
                | '-'
                | '.'
                | ':'
                | ';'
                | '?'
                | '['
                | ']'
                | '{'
                | '}'
                | '<'
                | '>'
                | '*'
                | '_'
                | '`'
                | '~'
        )
        || ('\u{2010}'..='\u{2027}').contains(&c)
        || c == '\u{3001}'
        || c == '\u{3002}'
}

/// The extent of the content seen in a window of output text: from its first
/// kept character to the end of its last one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extent {
    first: Option<usize>,
    last_end: usize,
}

impl Extent {
    /// Takes in `text`, which stands at output position `at` inside the window.
    pub fn feed(&mut self, text: &str, at: usize, trim: bool) {
        if text.is_empty() {
            return;
        }
        if !trim {
            self.first.get_or_insert(at);
            self.last_end = at + text.len();
            return;
        }
        if self.first.is_none() {
            match text.char_indices().find(|&(_, c)| !is_trim_char(c)) {
                Some((i, _)) => self.first = Some(at + i),
                None => return,
            }
        }
        if let Some((i, c)) = text.char_indices().rev().find(|&(_, c)| !is_trim_char(c)) {
            self.last_end = at + i + c.len_utf8();
        }
    }

    /// The span seen so far, if it has content.
    pub fn span(&self) -> Option<(usize, usize)> {
        self.first.map(|first| (first, self.last_end))
    }
}

/// The retro anchor and the content since it (KX-18).
#[derive(Clone, Copy, Debug, Default)]
pub struct LineTracker {
    extent: Extent,
}

impl LineTracker {
    /// Takes in a run of output text at output position `at`.
    pub fn feed(&mut self, text: &str, at: usize, trim: bool) {
        match memchr::memrchr(b'\n', text.as_bytes()) {
            Some(nl) => {
                self.extent = Extent::default();
                self.extent.feed(&text[nl + 1..], at + nl + 1, trim);
            }
            None => self.extent.feed(text, at, trim),
        }
    }

    /// A recognized tag took effect: the anchor moves to it.
    pub fn anchor_here(&mut self) {
        self.extent = Extent::default();
    }

    /// What `retro_line` annotates for a tag read now.
    pub fn retro_span(&self) -> Option<(usize, usize)> {
        self.extent.span()
    }
}

/// How far a forward strategy or self-closing target reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// To the closing tag start or the end of input.
    UntilTag,
    /// To the next newline.
    UntilNewline,
    /// Over the next token.
    NextToken,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Skipping whitespace before a token.
    Before,
    /// Inside the token or line.
    Inside,
    /// The token or line has ended; later text is not part of the span.
    Done,
}

/// Tracks the span of a forward strategy from the tag on.
#[derive(Clone, Copy, Debug)]
pub struct ForwardTracker {
    forward: Forward,
    phase: Phase,
    extent: Extent,
}

impl ForwardTracker {
    /// A tracker for a tag just read.
    pub fn new(forward: Forward) -> Self {
        let phase = if forward == Forward::NextToken {
            Phase::Before
        } else {
            Phase::Inside
        };
        ForwardTracker {
            forward,
            phase,
            extent: Extent::default(),
        }
    }

    /// Whether later text can no longer change the span.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Takes in a run of output text at output position `at`.
    pub fn feed(&mut self, mut text: &str, mut at: usize, trim: bool) {
        match (self.forward, self.phase) {
            (_, Phase::Done) => {}
            (Forward::UntilTag, _) => self.extent.feed(text, at, trim),
            (Forward::UntilNewline, _) => match memchr::memchr(b'\n', text.as_bytes()) {
                Some(nl) => {
                    self.extent.feed(&text[..nl], at, trim);
                    self.phase = Phase::Done;
                }
                None => self.extent.feed(text, at, trim),
            },
            (Forward::NextToken, _) => {
                if self.phase == Phase::Before {
                    match text.char_indices().find(|&(_, c)| !c.is_whitespace()) {
                        Some((i, _)) => {
                            text = &text[i..];
                            at += i;
                            self.phase = Phase::Inside;
                        }
                        None => return,
                    }
                }
                match text.char_indices().find(|&(_, c)| c.is_whitespace()) {
                    Some((end, _)) => {
                        self.extent.feed(&text[..end], at, trim);
                        self.phase = Phase::Done;
                    }
                    None => self.extent.feed(text, at, trim),
                }
            }
        }
    }

    /// The span reached, if it has content.
    pub fn span(&self) -> Option<(usize, usize)> {
        self.extent.span()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extent_trims_both_ends_across_runs() {
        let mut e = Extent::default();
        e.feed("  (ab", 10, true);
        e.feed("c), ", 15, true);
        assert_eq!(e.span(), Some((13, 16)));
    }

    #[test]
    fn extent_without_trim_covers_everything() {
        let mut e = Extent::default();
        e.feed(" , ", 3, false);
        assert_eq!(e.span(), Some((3, 6)));
    }

    #[test]
    fn next_token_stops_at_whitespace_in_a_later_run() {
        let mut f = ForwardTracker::new(Forward::NextToken);
        f.feed("  ", 0, true);
        f.feed("to", 2, true);
        f.feed("ken more", 4, true);
        assert!(f.is_done());
        assert_eq!(f.span(), Some((2, 7)));
    }

    #[test]
    fn line_tracker_restarts_after_last_newline() {
        let mut l = LineTracker::default();
        l.feed("a\nb\n  cd ", 0, true);
        assert_eq!(l.retro_span(), Some((6, 8)));
    }
}
