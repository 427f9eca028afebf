//! What recovered spans reach (KX-16, KX-18), tracked as output text streams by.
//!
//! Each tracker sees every run of output text once, keeps O(1) state, and looks
//! only at the characters it needs (the first content character, the last one,
//! the newline or whitespace that ends it), so recovery adds no second pass over
//! the text and never holds any of it back.

use std::collections::VecDeque;

/// Whether `c` is removed from the ends of a recovered span under
/// `trim_punctuation` (KX-16). `<` and `>` are not: in the output text they are
/// markup kept as text or operators, and trimming them cut `see <br>` short.
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

/// The retro anchors of the current output line and the content since each
/// (KX-18): the line start and the most recent `reach` recognized tags on it.
///
/// A tag's `retro_line` span starts at the first content after the latest of the
/// line start and the `reach`-th most recent tag, so the tracker keeps only those
/// `reach` tags: at most `max_retro_overlap` entries, each set once.
#[derive(Clone, Debug)]
pub struct LineTracker {
    reach: usize,
    /// The first content position after the line start.
    line_first: Option<usize>,
    /// For each recent recognized tag on the line, oldest first: the first content
    /// position after it. The `None`s are a suffix.
    tags: VecDeque<Option<usize>>,
    /// The end of the last content character on the line.
    last_end: usize,
}

impl LineTracker {
    /// A tracker whose spans reach back past at most `reach - 1` tags (`reach >= 1`).
    pub fn new(reach: usize) -> Self {
        LineTracker {
            reach: reach.max(1),
            line_first: None,
            tags: VecDeque::new(),
            last_end: 0,
        }
    }

    /// Whether some anchor still waits for its first content.
    fn waiting(&self) -> bool {
        self.line_first.is_none() || self.tags.back().is_some_and(Option::is_none)
    }

    /// Takes in a run of output text at output position `at`.
    pub fn feed(&mut self, mut text: &str, mut at: usize, trim: bool) {
        if let Some(nl) = memchr::memrchr(b'\n', text.as_bytes()) {
            self.line_first = None;
            self.tags.clear();
            text = &text[nl + 1..];
            at += nl + 1;
        }
        if text.is_empty() {
            return;
        }
        if !trim {
            self.content_at(at);
            self.last_end = at + text.len();
            return;
        }
        if self.waiting() {
            match text.char_indices().find(|&(_, c)| !is_trim_char(c)) {
                Some((i, _)) => self.content_at(at + i),
                None => return,
            }
        }
        if let Some((i, c)) = text.char_indices().rev().find(|&(_, c)| !is_trim_char(c)) {
            self.last_end = at + i + c.len_utf8();
        }
    }

    /// Content starts at `first`: every anchor still waiting gets it.
    fn content_at(&mut self, first: usize) {
        for slot in self.tags.iter_mut().rev() {
            if slot.is_some() {
                break;
            }
            *slot = Some(first);
        }
        self.line_first.get_or_insert(first);
    }

    /// A recognized tag took effect here: it becomes the most recent anchor.
    pub fn anchor_here(&mut self) {
        if self.tags.len() == self.reach {
            self.tags.pop_front();
        }
        self.tags.push_back(None);
    }

    /// What `retro_line` annotates for a tag read now.
    pub fn retro_span(&self) -> Option<(usize, usize)> {
        let first = if self.tags.len() == self.reach {
            self.tags.front().copied().flatten()
        } else {
            self.line_first
        };
        first.map(|first| (first, self.last_end))
    }
}

/// How far a forward strategy or self-closing target reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// To the next tag, the next newline, or the tag start that closed it.
    UntilTag,
    /// To the next newline.
    UntilNewline,
    /// Over the next token with content.
    NextToken,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Skipping whitespace (and, when trimming, tokens of trim characters only)
    /// before a token.
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

    /// A tag was read (whatever it does): `forward_until_tag` stops here.
    pub fn tag_read(&mut self) {
        if self.forward == Forward::UntilTag {
            self.phase = Phase::Done;
        }
    }

    /// Takes in a run of output text at output position `at`.
    pub fn feed(&mut self, mut text: &str, mut at: usize, trim: bool) {
        match (self.forward, self.phase) {
            (_, Phase::Done) => {}
            (Forward::UntilTag | Forward::UntilNewline, _) => {
                match memchr::memchr(b'\n', text.as_bytes()) {
                    Some(nl) => {
                        self.extent.feed(&text[..nl], at, trim);
                        self.phase = Phase::Done;
                    }
                    None => self.extent.feed(text, at, trim),
                }
            }
            (Forward::NextToken, _) => loop {
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
                let Some((end, _)) = text.char_indices().find(|&(_, c)| c.is_whitespace()) else {
                    self.extent.feed(text, at, trim);
                    return;
                };
                self.extent.feed(&text[..end], at, trim);
                if self.extent.span().is_some() {
                    self.phase = Phase::Done;
                    return;
                }
                // A token of trim characters only: the next token may have content.
                self.phase = Phase::Before;
                text = &text[end..];
                at += end;
            },
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
    fn extent_keeps_angle_brackets_at_both_ends() {
        let mut e = Extent::default();
        e.feed(" <br", 0, true);
        e.feed("> ", 4, true);
        assert_eq!(e.span(), Some((1, 5)));
        assert!(!is_trim_char('<') && !is_trim_char('>'));
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
        let mut l = LineTracker::new(16);
        l.feed("a\nb\n  cd ", 0, true);
        assert_eq!(l.retro_span(), Some((6, 8)));
    }

    #[test]
    fn line_tracker_reaches_past_at_most_reach_minus_one_tags() {
        let mut l = LineTracker::new(2);
        l.feed("a ", 0, true);
        l.anchor_here();
        l.feed("b ", 2, true);
        // One tag on the line: the span reaches back to the line start.
        assert_eq!(l.retro_span(), Some((0, 3)));
        l.anchor_here();
        l.feed("c ", 4, true);
        // Two tags: the older one bounds the span.
        assert_eq!(l.retro_span(), Some((2, 5)));
        l.anchor_here();
        assert_eq!(l.retro_span(), Some((4, 5)));
        l.anchor_here();
        assert_eq!(l.retro_span(), None);
    }

    #[test]
    fn next_token_skips_tokens_of_trim_characters_only() {
        let mut f = ForwardTracker::new(Forward::NextToken);
        f.feed(" ... -- (hel", 0, true);
        assert!(!f.is_done());
        f.feed("lo) x", 12, true);
        assert!(f.is_done());
        assert_eq!(f.span(), Some((9, 14)));
    }

    #[test]
    fn until_tag_stops_at_a_tag_or_a_newline() {
        let mut f = ForwardTracker::new(Forward::UntilTag);
        f.feed(" ab ", 0, true);
        f.tag_read();
        f.feed("cd", 4, true);
        assert_eq!(f.span(), Some((1, 3)));
        let mut g = ForwardTracker::new(Forward::UntilTag);
        g.feed("ab\ncd", 0, true);
        assert!(g.is_done());
        assert_eq!(g.span(), Some((0, 2)));
    }
}
