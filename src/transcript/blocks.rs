//! Which anthropic-xml `thinking` or `function_calls` block is open, for the
//! structure-aware stop scanner (TR-74), read by the anthropic-xml dialect's own
//! machine.
//!
//! The machine is fed the continuation as it arrives; its events say where each
//! block opens (the opener's last byte) and closes (the closer's last byte). It
//! decides text a little late (a viable tag prefix is held back), so the state is
//! known only up to the end of its last event (`known_until`); the scanner asks
//! about a byte only once it is known.

use std::collections::VecDeque;

use super::finder::Gate;
use crate::anthropic_xml::{self, AnthropicXmlMachine, Event};
use crate::reentry::Stream;

/// Block state over the continuation, fed as it arrives.
#[derive(Debug)]
pub(crate) struct Blocks {
    stream: Stream<AnthropicXmlMachine>,
    /// The machine's hold-back bound: how far it may lag behind what was fed.
    lag: usize,
    /// Absolute offset of the next byte to feed.
    fed: usize,
    /// The state is known after every byte before this offset.
    known: usize,
    /// State changes not yet asked about: (offset of the byte after which it
    /// holds, whether a block is open from then on).
    changes: VecDeque<(usize, bool)>,
    /// Whether a block is open after the last byte asked about.
    asked_open: bool,
}

impl Blocks {
    /// Outside any block, at offset 0; `None` if the machine refuses its default
    /// options (it does not).
    pub fn new() -> Option<Self> {
        let machine = AnthropicXmlMachine::new(&anthropic_xml::Options::default()).ok()?;
        let lag = machine.hold_back_bound();
        Some(Blocks {
            stream: Stream::new(machine),
            lag,
            fed: 0,
            known: 0,
            changes: VecDeque::new(),
            asked_open: false,
        })
    }

    /// Feeds `text`, which starts at absolute offset `base`; bytes fed before are
    /// skipped, so the caller may offer its whole pending text each time. At `eof`
    /// the machine applies its end-of-input rules and everything is known.
    pub fn feed(&mut self, text: &str, base: usize, eof: bool) {
        let from = self.fed.saturating_sub(base).min(text.len());
        let Blocks {
            stream,
            changes,
            known,
            ..
        } = self;
        // The events are read where they are (no list is collected per feed).
        let mut note = |event: Event| {
            let span = event.span();
            let change = match event {
                Event::ThinkingStart { .. } | Event::ToolCallsStart { .. } => Some(true),
                Event::ThinkingEnd { closed: true, .. }
                | Event::ToolCallsEnd { closed: true, .. } => Some(false),
                _ => None,
            };
            if let (Some(open), false) = (change, span.is_empty()) {
                changes.push_back((span.end - 1, open));
            }
            *known = (*known).max(span.end);
        };
        stream.feed(&text.as_bytes()[from..]).for_each(&mut note);
        if eof {
            stream.finish().for_each(&mut note);
        }
        self.fed = self.fed.max(base + text.len());
        if eof {
            self.known = self.fed;
        }
    }

    /// The state is known after every byte before this absolute offset.
    pub fn known_until(&self) -> usize {
        self.known
    }

    /// The most bytes the state may lag behind what was fed.
    pub fn lag_bound(&self) -> usize {
        self.lag
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
