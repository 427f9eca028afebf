//! The sections state machine: text outside sections, verbatim content inside.

use compact_str::CompactString;
use serde::Serialize;

use super::attrs::Attrs;
use super::options::{Options, OptionsProblem, Registry};
use super::probe::{AttrBounds, CloserProbe, OpenerProbe};
use crate::reentry::{scan_tags, Machine, TagScanner, Verdict};
use crate::span::Span;

/// An event of the sections dialect. Serialized with a `"type"` in snake_case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Text outside any section (SEC-2), emitted as soon as it cannot be markup.
    Text {
        /// The text (stored inline when short: no allocation per small event).
        text: CompactString,
        /// Where it stands in the input.
        span: Span,
    },
    /// A section opened: emitted at the opener's `>` (SEC-10).
    SectionStart {
        /// Canonical name.
        name: CompactString,
        /// The spelling used in the opener, as written.
        tag: CompactString,
        /// Attributes in source order, keys lowercased, values raw (SEC-5).
        attrs: Attrs,
        /// Whether the opener was `<name .../>`; a `section_end` follows at once.
        self_closing: bool,
        /// The opener.
        span: Span,
    },
    /// Content of the open section, verbatim (SEC-9).
    Content {
        /// The content bytes (stored inline when short).
        text: CompactString,
        /// Where they stand in the input.
        span: Span,
    },
    /// The open section ended: at its closer's `>`, right after a self-closing
    /// opener, or at end of input with `closed: false` (SEC-12).
    SectionEnd {
        /// Canonical name.
        name: CompactString,
        /// False when end of input came first.
        closed: bool,
        /// The closer (zero-width for self-closing and unclosed sections).
        span: Span,
    },
}

impl Event {
    /// The input bytes this event covers.
    pub fn span(&self) -> Span {
        match self {
            Event::Text { span, .. }
            | Event::SectionStart { span, .. }
            | Event::Content { span, .. }
            | Event::SectionEnd { span, .. } => *span,
        }
    }
}

/// What the machine is probing, if anything; the unit always starts at `pending[0]`.
#[derive(Clone, Debug)]
enum Probe {
    Opener(OpenerProbe),
    Closer(CloserProbe),
}

/// The sections state machine (driven by [`crate::reentry::Stream`]).
#[derive(Clone, Debug)]
pub struct SectionMachine {
    registry: Registry,
    max_tag_bytes: usize,
    /// The open section, if any.
    open: Option<usize>,
    probe: Option<Probe>,
    /// Where an opener's attributes are gathered (reused from tag to tag).
    scratch: Vec<(CompactString, CompactString)>,
}

impl SectionMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Result<Self, OptionsProblem> {
        Ok(SectionMachine {
            registry: Registry::new(options)?,
            max_tag_bytes: options.max_tag_bytes.min(crate::reentry::MAX_SIZE_OPTION),
            open: None,
            probe: None,
            scratch: Vec::new(),
        })
    }

    /// The most bytes held back undecided: one tag candidate, plus a carried
    /// partial UTF-8 character.
    pub fn hold_back_bound(&self) -> usize {
        self.max_tag_bytes + 3
    }
}

/// The attributes of a complete opener from the bounds its probe recorded (SEC-5),
/// built in `scratch`.
pub(super) fn attributes(
    scratch: &mut Vec<(CompactString, CompactString)>,
    tag: &str,
    bounds: &[AttrBounds],
) -> Attrs {
    Attrs::from_pairs_in(
        scratch,
        bounds.iter().map(|a| {
            let value = a.value.map_or("", |(from, to)| &tag[from..to]);
            (&tag[a.key.0..a.key.1], value)
        }),
    )
}

impl TagScanner for SectionMachine {
    type Event = Event;

    fn emit_text(&mut self, text: &str, start: usize, out: &mut Vec<Event>) {
        if text.is_empty() {
            return;
        }
        let span = Span::new(start, start + text.len());
        let text = CompactString::from(text);
        out.push(match self.open {
            None => Event::Text { text, span },
            Some(_) => Event::Content { text, span },
        });
    }

    fn probe_resume(&mut self, unit: &str, eof: bool) -> Option<Verdict> {
        let bytes = unit.as_bytes();
        let verdict = match self.probe.as_mut()? {
            Probe::Opener(p) => p.resume(bytes, &self.registry, self.max_tag_bytes),
            Probe::Closer(p) => {
                let section = self.open.unwrap_or(0);
                p.resume(bytes, &self.registry, section, self.max_tag_bytes)
            }
        };
        Some(match verdict {
            Verdict::NeedMore if eof => Verdict::Rejected,
            v => v,
        })
    }

    fn probe_start(&mut self) {
        self.probe = Some(match self.open {
            None => Probe::Opener(OpenerProbe::new()),
            Some(_) => Probe::Closer(CloserProbe::new()),
        });
    }

    fn probe_reject(&mut self) {
        self.probe = None;
    }

    fn probe_take(&mut self, tag: &str, start: usize, out: &mut Vec<Event>) -> bool {
        let span = Span::new(start, start + tag.len());
        match (self.open, self.probe.take()) {
            (None, Some(Probe::Opener(probe))) => {
                let Some(section) = probe.section() else {
                    return false;
                };
                // The probe recorded the opener's parts as it recognized it (a property
                // test checks they are what pest extracts from the `opener` rule).
                let spelling = CompactString::from(&tag[1..probe.name_end()]);
                let attrs = attributes(&mut self.scratch, tag, probe.attrs());
                let self_closing = probe.self_closing();
                let name = self.registry.names[section].clone();
                if self_closing {
                    out.push(Event::SectionStart {
                        name: name.clone(),
                        tag: spelling,
                        attrs,
                        self_closing,
                        span,
                    });
                    out.push(Event::SectionEnd {
                        name,
                        closed: true,
                        span: Span::empty(span.end),
                    });
                } else {
                    out.push(Event::SectionStart {
                        name,
                        tag: spelling,
                        attrs,
                        self_closing,
                        span,
                    });
                    self.open = Some(section);
                }
                true
            }
            (Some(section), Some(Probe::Closer(_))) => {
                // The closer probe is an exact recognizer of the `closer` rule (a test
                // checks they agree), and a closer carries nothing to extract.
                let name = self.registry.names[section].clone();
                out.push(Event::SectionEnd {
                    name,
                    closed: true,
                    span,
                });
                self.open = None;
                true
            }
            _ => false,
        }
    }

    fn end_of_input(&mut self, end: usize, out: &mut Vec<Event>) {
        if let Some(section) = self.open.take() {
            let name = self.registry.names[section].clone();
            out.push(Event::SectionEnd {
                name,
                closed: false,
                span: Span::empty(end),
            });
        }
    }
}

impl Machine for SectionMachine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        scan_tags(self, pending, base, eof, out)
    }
}
