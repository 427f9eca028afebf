//! The kindaxml state machine: output text out at once, annotations when decided.

use compact_str::CompactString;

use super::attrs::{self, AttrValue, Attrs};
use super::candidate::{Candidate, UnitKind};
use super::event::{Event, MarkupKind, Recovery};
use super::options::{
    CdataUnclosed, Config, Options, OptionsProblem, SelfClosingTarget, Strategy, StrayEndTagPolicy,
    UnknownMode,
};
use super::reach::{Forward, ForwardTracker, LineTracker};
use crate::reentry::{Machine, Verdict};
use crate::span::Span;

/// A recognized tag whose annotation is not decided yet.
#[derive(Clone, Debug)]
struct Open {
    tag: usize,
    attrs: Attrs,
    pos: usize,
    /// False for a self-closing target: no end tag closes it.
    closable: bool,
    strategy: Strategy,
    /// What `retro_line` would annotate, fixed when the tag was read.
    retro: Option<(usize, usize)>,
    forward: Option<ForwardTracker>,
}

/// The kindaxml state machine (driven by [`crate::reentry::Stream`]).
#[derive(Clone, Debug)]
pub struct KindaxmlMachine {
    config: Config,
    /// Runs the grammar on the candidate tag at the start of the pending text.
    candidate: Candidate,
    /// Whether a candidate is being read.
    probing: bool,
    in_cdata: bool,
    /// Length of the output text so far.
    out_len: usize,
    line: LineTracker,
    open: Option<Open>,
    /// Working space for a tag's attributes while it is taken apart.
    scratch: Vec<(CompactString, AttrValue)>,
}

fn forward_of(strategy: Strategy) -> Option<Forward> {
    match strategy {
        Strategy::ForwardUntilTag => Some(Forward::UntilTag),
        Strategy::ForwardUntilNewline => Some(Forward::UntilNewline),
        Strategy::ForwardNextToken => Some(Forward::NextToken),
        Strategy::RetroLine | Strategy::Noop => None,
    }
}

impl KindaxmlMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Result<Self, OptionsProblem> {
        let config = Config::new(options)?;
        Ok(KindaxmlMachine {
            candidate: Candidate::new(),
            probing: false,
            in_cdata: false,
            out_len: 0,
            line: LineTracker::new(config.retro_reach),
            open: None,
            scratch: Vec::new(),
            config,
        })
    }

    /// The most bytes held back undecided: one tag region, plus a carried partial
    /// UTF-8 character (KX-24).
    pub fn hold_back_bound(&self) -> usize {
        self.config.max_tag_bytes + 3
    }

    /// Emits output text that stands at input offset `start`.
    fn emit_text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        let pos = self.out_len;
        let trim = self.config.trim;
        self.out_len += text.len();
        self.line.feed(text, pos, trim);
        let end = start + text.len();
        out.push(Event::Text {
            text: CompactString::from(text),
            pos,
            span: Span::new(start, end),
        });
        let decided = match self.open.as_mut() {
            Some(Open {
                forward: Some(forward),
                closable,
                ..
            }) => {
                forward.feed(text, pos, trim);
                !*closable && forward.is_done()
            }
            _ => false,
        };
        if decided {
            // A self-closing target no end tag can change: decide it now (KX-24).
            self.decide_unclosed(Span::empty(end), out);
        }
    }

    fn emit_markup(&self, kind: MarkupKind, span: Span, out: &mut Vec<Event>) {
        out.push(Event::Markup {
            kind,
            pos: self.out_len,
            span,
        });
    }

    fn annotate(
        &self,
        open: Open,
        range: Option<(usize, usize)>,
        why: Recovery,
        span: Span,
    ) -> Event {
        let tag = self.config.tags[open.tag].0.clone();
        let recovery = self.config.metadata.then_some(why);
        match range {
            Some((start, end)) if start < end => Event::Annotation {
                tag,
                attrs: open.attrs,
                start,
                end,
                recovery,
                span,
            },
            _ => Event::Marker {
                pos: open.pos,
                tag,
                attrs: open.attrs,
                recovery,
                span,
            },
        }
    }

    /// Closes the open tag as unclosed, here (KX-13 cases 2 and 3). Under `noop`
    /// an unclosed tag annotates nothing at all (KX-16).
    fn decide_unclosed(&mut self, span: Span, out: &mut Vec<Event>) {
        let Some(open) = self.open.take() else { return };
        let forward = open.forward.and_then(|f| f.span());
        let (range, why) = if !open.closable {
            (forward, Recovery::SelfClosing)
        } else {
            match open.strategy {
                Strategy::RetroLine => (open.retro, Recovery::RetroLine),
                Strategy::ForwardUntilTag => (forward, Recovery::ForwardUntilTag),
                Strategy::ForwardUntilNewline => (forward, Recovery::ForwardUntilNewline),
                Strategy::ForwardNextToken => (forward, Recovery::ForwardNextToken),
                Strategy::Noop => return,
            }
        };
        out.push(self.annotate(open, range, why, span));
    }

    /// A tag was read (KX-16): `forward_until_tag` stops at it.
    fn tag_read(&mut self) {
        if let Some(Open {
            forward: Some(forward),
            ..
        }) = self.open.as_mut()
        {
            forward.tag_read();
        }
    }

    /// Acts on the complete candidate `unit` (at absolute `start`); returns false if
    /// it turns out to be text after all.
    fn take_unit(&mut self, unit: &str, start: usize, out: &mut Vec<Event>) -> bool {
        let span = Span::new(start, start + unit.len());
        match self.candidate.kind() {
            UnitKind::CdataOpen => {
                self.emit_markup(MarkupKind::CdataStart, span, out);
                self.in_cdata = true;
                true
            }
            UnitKind::End => {
                let Some(index) = self.candidate.recognized() else {
                    return self.take_unknown(unit, span, false, out);
                };
                self.tag_read();
                let closes = self
                    .open
                    .as_ref()
                    .is_some_and(|o| o.closable && o.tag == index);
                if closes {
                    if let Some(open) = self.open.take() {
                        let range = Some((open.pos, self.out_len));
                        out.push(self.annotate(open, range, Recovery::Explicit, span));
                    }
                    self.line.anchor_here();
                } else if self.config.stray == StrayEndTagPolicy::Drop {
                    self.emit_markup(MarkupKind::StrayEndTag, span, out);
                } else {
                    self.emit_text(unit, start, out);
                }
                true
            }
            UnitKind::Start => {
                let Some(index) = self.candidate.recognized() else {
                    return self.take_unknown(unit, span, true, out);
                };
                let (captures, from) = self.candidate.rest_captures();
                let parsed = attrs::read_start(
                    &unit[from..],
                    captures,
                    self.config.duplicates,
                    &mut self.scratch,
                );
                self.decide_unclosed(Span::empty(start), out);
                let retro = self.line.retro_span();
                self.line.anchor_here();
                let strategy = self.config.tags[index].1;
                let (closable, forward) = match (parsed.self_closing, self.config.self_closing) {
                    (false, _) => (true, forward_of(strategy)),
                    (true, SelfClosingTarget::Marker) => {
                        let tag = self.config.tags[index].0.clone();
                        let recovery = self.config.metadata.then_some(Recovery::SelfClosing);
                        let attrs = parsed.attrs;
                        out.push(Event::Marker {
                            pos: self.out_len,
                            tag,
                            attrs,
                            recovery,
                            span,
                        });
                        return true;
                    }
                    (true, SelfClosingTarget::NextToken) => (false, Some(Forward::NextToken)),
                    (true, SelfClosingTarget::UntilNewline) => (false, Some(Forward::UntilNewline)),
                };
                out.push(Event::Open {
                    tag: self.config.tags[index].0.clone(),
                    attrs: parsed.attrs.clone(),
                    pos: self.out_len,
                    span,
                });
                self.open = Some(Open {
                    tag: index,
                    attrs: parsed.attrs,
                    pos: self.out_len,
                    closable,
                    strategy,
                    retro,
                    forward: forward.map(ForwardTracker::new),
                });
                true
            }
        }
    }

    /// An unknown tag under `strip` or `passthrough` (KX-14, KX-15).
    fn take_unknown(&mut self, unit: &str, span: Span, starts: bool, out: &mut Vec<Event>) -> bool {
        match self.config.unknown_mode {
            UnknownMode::TreatAsText => return false,
            _ if starts && self.config.autoclose_on_any_tag => {
                self.decide_unclosed(Span::empty(span.start), out);
            }
            _ => self.tag_read(),
        }
        if self.config.unknown_mode == UnknownMode::Strip {
            self.emit_markup(MarkupKind::UnknownTag, span, out);
        } else {
            self.emit_text(unit, span.start, out);
        }
        true
    }

    /// Inside a literal block: where it ends in `rest`, as (text length, markup length),
    /// or `None` if it does not end in `rest`.
    fn cdata_end(&self, rest: &str) -> Option<(usize, usize)> {
        let bytes = rest.as_bytes();
        let line_end = match self.config.cdata_unclosed {
            CdataUnclosed::ToLineEnd => memchr::memchr(b'\n', bytes),
            CdataUnclosed::ToEnd => None,
        };
        let hay = &bytes[..line_end.unwrap_or(bytes.len())];
        match memchr::memmem::find(hay, b"]]>") {
            Some(k) => Some((k, 3)),
            None => line_end.map(|nl| (nl, 0)),
        }
    }
}

impl Machine for KindaxmlMachine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        let bytes = pending.as_bytes();
        // `run` is where the text not yet emitted begins; `at` the scan position.
        let mut run = 0;
        let mut at = 0;
        loop {
            if self.in_cdata {
                match self.cdata_end(&pending[at..]) {
                    Some((text, markup)) => {
                        self.emit_text(&pending[run..at + text], base + run, out);
                        at += text;
                        if markup > 0 {
                            self.emit_markup(
                                MarkupKind::CdataEnd,
                                Span::new(base + at, base + at + markup),
                                out,
                            );
                        }
                        at += markup;
                        run = at;
                        self.in_cdata = false;
                        continue;
                    }
                    None if eof => {
                        self.in_cdata = false;
                        at = pending.len();
                    }
                    None => {
                        // A trailing `]` or `]]` may begin the closing `]]>`.
                        let brackets = bytes[at..]
                            .iter()
                            .rev()
                            .take(2)
                            .take_while(|&&b| b == b']')
                            .count();
                        let keep = pending.len() - brackets;
                        self.emit_text(&pending[run..keep], base + run, out);
                        return keep;
                    }
                }
            }
            if self.probing {
                match self.candidate.resume(&bytes[at..], &self.config, eof) {
                    Verdict::NeedMore => {
                        self.emit_text(&pending[run..at], base + run, out);
                        return at;
                    }
                    Verdict::Complete(len) => {
                        self.probing = false;
                        self.emit_text(&pending[run..at], base + run, out);
                        run = at;
                        if self.take_unit(&pending[at..at + len], base + at, out) {
                            at += len;
                            run = at;
                        } else {
                            at += 1;
                        }
                    }
                    Verdict::Rejected => {
                        // The `<` is text; scanning goes on right after it.
                        self.probing = false;
                        at += 1;
                    }
                }
                continue;
            }
            let next = if self.config.escapes {
                memchr::memchr2(b'<', b'\\', &bytes[at..])
            } else {
                crate::reentry::find_byte(b'<', &bytes[at..])
            };
            let Some(k) = next else {
                self.emit_text(&pending[run..], base + run, out);
                if eof {
                    let end = base + pending.len();
                    self.decide_unclosed(Span::empty(end), out);
                }
                return pending.len();
            };
            at += k;
            if bytes[at] == b'<' {
                self.candidate.start(&self.config);
                self.probing = true;
                continue;
            }
            match bytes.get(at + 1) {
                Some(b'<' | b'>') => {
                    self.emit_text(&pending[run..at], base + run, out);
                    self.emit_markup(MarkupKind::Escape, Span::new(base + at, base + at + 1), out);
                    run = at + 1;
                    at += 2;
                }
                Some(_) => at += 1,
                None if eof => at += 1,
                None => {
                    // The backslash may escape the next byte.
                    self.emit_text(&pending[run..at], base + run, out);
                    return at;
                }
            }
        }
    }
}
