//! The sections state machine: text outside sections, verbatim content inside.

use compact_str::CompactString;
use indexmap::IndexMap;
use pest::Parser as _;
use serde::Serialize;

use super::grammar::{Rule, SectionsGrammar};
use super::options::{Options, OptionsProblem, Registry};
use super::probe::{CloserProbe, OpenerProbe};
use crate::reentry::{Machine, Verdict};
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
        /// Attributes in source order, keys lowercased, values raw (SEC-5). Boxed to
        /// keep every event small: events are moved on every feed.
        attrs: Box<IndexMap<String, String>>,
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
}

impl SectionMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Result<Self, OptionsProblem> {
        Ok(SectionMachine {
            registry: Registry::new(options)?,
            max_tag_bytes: options.max_tag_bytes,
            open: None,
            probe: None,
        })
    }

    /// The most bytes held back undecided: one tag candidate, plus a carried
    /// partial UTF-8 character.
    pub fn hold_back_bound(&self) -> usize {
        self.max_tag_bytes + 3
    }

    fn emit_run(&self, text: &str, start: usize, out: &mut Vec<Event>) {
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

    /// Resumes the active probe on `unit`; `None` when no probe is active.
    fn resume_probe(&mut self, unit: &str, eof: bool) -> Option<Verdict> {
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

    /// Acts on a complete tag that `probe` delimited; returns false if pest
    /// refused it (then its `<` is text).
    fn take_tag(&mut self, tag: &str, start: usize, probe: Probe, out: &mut Vec<Event>) -> bool {
        let span = Span::new(start, start + tag.len());
        match (self.open, probe) {
            (None, Probe::Opener(probe)) => {
                let Some(section) = probe.section() else {
                    return false;
                };
                // A bare `<name>` or `<name/>` has nothing for pest to extract.
                let parsed = if probe.has_attributes() {
                    parse_opener(tag)
                } else {
                    let end =
                        tag[1..].find(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '-');
                    let spelling = &tag[1..1 + end.unwrap_or(tag.len() - 1)];
                    Some((spelling.into(), IndexMap::new(), tag.ends_with("/>")))
                };
                let Some((spelling, attrs, self_closing)) = parsed else {
                    return false;
                };
                let name = self.registry.names[section].clone();
                if self_closing {
                    out.push(Event::SectionStart {
                        name: name.clone(),
                        tag: spelling,
                        attrs: Box::new(attrs),
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
                        attrs: Box::new(attrs),
                        self_closing,
                        span,
                    });
                    self.open = Some(section);
                }
                true
            }
            (Some(section), Probe::Closer(_)) => {
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
}

/// Parses a complete opener with pest: (spelling, attributes, self-closing).
fn parse_opener(tag: &str) -> Option<(CompactString, IndexMap<String, String>, bool)> {
    let opener = SectionsGrammar::parse(Rule::opener, tag).ok()?.next()?;
    let mut spelling = CompactString::default();
    let mut attrs = IndexMap::new();
    let mut self_closing = false;
    for pair in opener.into_inner() {
        match pair.as_rule() {
            Rule::tag_name => spelling = pair.as_str().into(),
            Rule::self_close => self_closing = true,
            Rule::attribute => {
                let mut parts = pair.into_inner();
                let key = parts
                    .next()
                    .map(|k| k.as_str().to_ascii_lowercase())
                    .unwrap_or_default();
                let value = match parts.next() {
                    None => String::new(),
                    Some(v) => match v.as_rule() {
                        Rule::dq_value | Rule::sq_value => v
                            .into_inner()
                            .next()
                            .map(|i| i.as_str().to_string())
                            .unwrap_or_default(),
                        _ => v.as_str().to_string(),
                    },
                };
                // Last duplicate wins, at the position of the first (SEC-5).
                attrs.insert(key, value);
            }
            _ => {}
        }
    }
    Some((spelling, attrs, self_closing))
}

impl Machine for SectionMachine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        let bytes = pending.as_bytes();
        // `run` is where the current text/content run began; `at` the scan position.
        let mut run = 0;
        let mut at = 0;
        loop {
            if self.probe.is_some() {
                match self.resume_probe(&pending[at..], eof) {
                    Some(Verdict::NeedMore) => {
                        self.emit_run(&pending[run..at], base + run, out);
                        return at;
                    }
                    Some(Verdict::Complete(len)) => {
                        // The run before the tag belongs to the mode before it.
                        self.emit_run(&pending[run..at], base + run, out);
                        run = at;
                        let taken = match self.probe.take() {
                            Some(probe) => {
                                self.take_tag(&pending[at..at + len], base + at, probe, out)
                            }
                            None => false,
                        };
                        if taken {
                            at += len;
                            run = at;
                        } else {
                            at += 1;
                        }
                    }
                    _ => {
                        // Rejected: the `<` is text or content; keep scanning after it.
                        self.probe = None;
                        at += 1;
                    }
                }
            }
            match memchr::memchr(b'<', &bytes[at..]) {
                None => {
                    self.emit_run(&pending[run..], base + run, out);
                    if eof {
                        if let Some(section) = self.open.take() {
                            let end = base + pending.len();
                            let name = self.registry.names[section].clone();
                            out.push(Event::SectionEnd {
                                name,
                                closed: false,
                                span: Span::empty(end),
                            });
                        }
                    }
                    return pending.len();
                }
                Some(k) => {
                    at += k;
                    self.probe = Some(match self.open {
                        None => Probe::Opener(OpenerProbe::new()),
                        Some(_) => Probe::Closer(CloserProbe::new()),
                    });
                }
            }
        }
    }
}
