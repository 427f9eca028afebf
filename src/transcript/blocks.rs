//! Which anthropic-xml `thinking` or `function_calls` block is open, for the
//! structure-aware stop scanner (TR-74).
//!
//! This is a minimal tracker: it knows the four block tags, plain or with the
//! `antml:` prefix, and nothing inside a block. It should give way to the
//! anthropic-xml dialect's machine once that lands (that machine also knows
//! parameters, so a literal closer inside a parameter value stays content). The
//! interface is made for that swap: text is fed as it arrives, the state may be
//! known only up to some offset (`known_until`), and the scanner asks about a byte
//! only once the state there is known.

use std::collections::VecDeque;

use super::finder::{Cursor, Gate, Hit, Patterns};

/// The tag prefix, assembled from pieces: some tooling treats the literal
/// prefixed tags as live markup (DESIGN §5, practical note).
const PREFIX: &str = concat!("ant", "ml:");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    Thinking,
    FunctionCalls,
}

/// The block tags, in the order [`tag`] decodes.
fn tags() -> Vec<String> {
    let mut tags = Vec::new();
    for prefix in ["", PREFIX] {
        for name in ["thinking", "function_calls"] {
            tags.push(format!("<{prefix}{name}>"));
            tags.push(format!("</{prefix}{name}>"));
        }
    }
    tags
}

/// (block, is closer) of tag number `index` of [`tags`].
fn tag(index: usize) -> (Block, bool) {
    let block = if index % 4 < 2 {
        Block::Thinking
    } else {
        Block::FunctionCalls
    };
    (block, index % 2 == 1)
}

/// Block state over the continuation, fed as it arrives.
#[derive(Clone, Debug)]
pub(crate) struct Blocks {
    patterns: Patterns,
    cursor: Cursor,
    done: Vec<Hit>,
    /// The block open after the last byte fed.
    open: Option<Block>,
    /// Absolute offset of the next byte to feed.
    fed: usize,
    /// State changes not yet asked about: (offset of the byte after which it
    /// holds, whether a block is open from then on).
    changes: VecDeque<(usize, bool)>,
    /// Whether a block is open after the last byte asked about.
    asked_open: bool,
}

impl Blocks {
    /// Outside any block, at offset 0.
    pub fn new() -> Self {
        Blocks {
            patterns: Patterns::new(&tags()),
            cursor: Cursor::default(),
            done: Vec::new(),
            open: None,
            fed: 0,
            changes: VecDeque::new(),
            asked_open: false,
        }
    }

    /// Feeds `text`, which starts at absolute offset `base`; bytes fed before are
    /// skipped, so the caller may offer its whole pending text each time. `eof`
    /// says no more text will come (this tracker decides each byte at once and
    /// needs no end-of-input rule).
    pub fn feed(&mut self, text: &str, base: usize, _eof: bool) {
        let bytes = text.as_bytes();
        let mut i = self.fed.saturating_sub(base);
        while i < bytes.len() {
            if self.cursor.is_idle() {
                // Only a `<` can start a tag.
                match memchr::memchr(b'<', &bytes[i..]) {
                    Some(k) => i += k,
                    None => break,
                }
            }
            let at = base + i;
            self.done.clear();
            self.cursor
                .step(&self.patterns, bytes[i], at, &mut self.done);
            for hit in &self.done {
                let (block, closer) = tag(hit.pattern);
                let next = match (self.open, closer) {
                    // Outside, an opener opens; a stray closer is text.
                    (None, false) => Some(block),
                    (None, true) => None,
                    // Inside, only the block's own closer (either spelling) closes it.
                    (Some(open), true) if open == block => None,
                    (open, _) => open,
                };
                if next != self.open {
                    self.open = next;
                    self.changes.push_back((at, next.is_some()));
                }
            }
            i += 1;
        }
        self.fed = self.fed.max(base + bytes.len());
    }

    /// The state is known after every byte before this absolute offset.
    pub fn known_until(&self) -> usize {
        self.fed
    }

    /// The most bytes the tracker lags behind what was fed (none: it decides
    /// each byte as it comes).
    pub fn lag_bound(&self) -> usize {
        0
    }
}

impl Gate for Blocks {
    fn allows_after(&mut self, at: usize) -> bool {
        while let Some(&(offset, open)) = self.changes.front() {
            if offset > at {
                break;
            }
            self.asked_open = open;
            self.changes.pop_front();
        }
        !self.asked_open
    }
}

impl Gate for Option<Blocks> {
    fn allows_after(&mut self, at: usize) -> bool {
        self.as_mut().is_none_or(|b| b.allows_after(at))
    }
}
