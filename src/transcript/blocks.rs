//! Minimal tracking of anthropic-xml `thinking` and `function_calls` blocks, for
//! the structure-aware stop scanner (TR-74).
//!
//! This knows only the four block tags, plain or with the `antml:` prefix. It
//! should give way to the anthropic-xml dialect's machine once that lands, which
//! also knows parameters (a literal closer inside a parameter value).

use super::finder::{Cursor, Gate, Hit, Patterns};

/// The tag prefix, assembled from pieces: some tooling treats the literal
/// prefixed tags as live markup (DESIGN §5, practical note).
const PREFIX: &str = concat!("ant", "ml:");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    Thinking,
    FunctionCalls,
}

/// The block tags, in the order of [`tag`]'s decoding.
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

/// Which block is open, fed byte by byte.
#[derive(Clone, Debug)]
pub(crate) struct Blocks {
    patterns: Patterns,
    cursor: Cursor,
    open: Option<Block>,
    done: Vec<Hit>,
}

impl Blocks {
    /// Outside any block.
    pub fn new() -> Self {
        Blocks {
            patterns: Patterns::new(&tags()),
            cursor: Cursor::default(),
            open: None,
            done: Vec::new(),
        }
    }
}

impl Gate for Blocks {
    fn start_bytes(&self) -> &[u8] {
        self.patterns.start_bytes()
    }

    fn step(&mut self, b: u8, at: usize) {
        self.done.clear();
        self.cursor.step(&self.patterns, b, at, &mut self.done);
        for hit in &self.done {
            let (block, closer) = tag(hit.pattern);
            self.open = match (self.open, closer) {
                // Outside, an opener opens; a stray closer is text.
                (None, false) => Some(block),
                (None, true) => None,
                // Inside, only the block's own closer (either spelling) closes it.
                (Some(open), true) if open == block => None,
                (open, _) => open,
            };
        }
    }

    fn allows(&self) -> bool {
        self.open.is_none()
    }

    fn is_idle(&self) -> bool {
        self.cursor.is_idle()
    }
}

impl Gate for Option<Blocks> {
    fn start_bytes(&self) -> &[u8] {
        self.as_ref().map_or(&[], |b| b.start_bytes())
    }
    fn step(&mut self, b: u8, at: usize) {
        if let Some(blocks) = self {
            blocks.step(b, at);
        }
    }
    fn allows(&self) -> bool {
        self.as_ref().is_none_or(|b| b.allows())
    }
    fn is_idle(&self) -> bool {
        self.as_ref().is_none_or(|b| b.is_idle())
    }
}
