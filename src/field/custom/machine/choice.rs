//! The request's `tool_choice` (spec/field.md FD-10): a family's machine reads its
//! output as `"auto"` does, drops every call for `"none"`, and for `"required"` or
//! a named function hands the answer, from the payload's start, to the payload's
//! reader (grammar/tool-choice.pest on the same engine).

use compact_str::CompactString;

use super::CustomMachine;
use crate::field::{Event, Tool, ToolChoice};

/// Where the reading of a `tool_choice` stands.
#[derive(Clone, Debug)]
pub(crate) enum Choice {
    /// The family's own reading (FD-10a).
    Auto,
    /// Every call dropped (FD-10b).
    None,
    /// Before the payload's start (FD-10c, FD-10d): the tools that type it, the
    /// named function's name, and whether the family's events are inside a
    /// reasoning item.
    Before {
        named: Option<CompactString>,
        tools: Vec<Tool>,
        reasoning: bool,
    },
    /// From the payload's start on, its reader.
    Payload {
        named: Option<CompactString>,
        reader: Box<CustomMachine>,
    },
}

impl Choice {
    pub(crate) fn new(choice: &ToolChoice, tools: &[Tool]) -> Choice {
        match choice {
            ToolChoice::Auto => Choice::Auto,
            ToolChoice::None => Choice::None,
            ToolChoice::Required => Choice::Before {
                named: None,
                tools: tools.to_vec(),
                reasoning: false,
            },
            ToolChoice::Function(name) => Choice::Before {
                named: Some(name.into()),
                tools: tools.to_vec(),
                reasoning: false,
            },
        }
    }

    pub(crate) fn is_auto(&self) -> bool {
        matches!(self, Choice::Auto)
    }
}

impl CustomMachine {
    /// `advance` under a `tool_choice` other than `"auto"`.
    pub(super) fn read_chosen(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Event>,
    ) -> usize {
        let from = out.len();
        match &mut self.choice {
            Choice::Auto => self.read(pending, base, eof, out),
            Choice::None => {
                let read = self.read(pending, base, eof, out);
                drop_calls(out, from);
                read
            }
            Choice::Payload { named, reader } => {
                let read = reader.read(pending, base, eof, out);
                if let Some(name) = named {
                    name_calls(out, from, name);
                }
                read
            }
            Choice::Before { .. } => {
                let read = self.read(pending, base, eof, out);
                // The payload starts at the first event outside reasoning (FD-10c).
                let Choice::Before { reasoning, .. } = &mut self.choice else {
                    unreachable!("matched above")
                };
                let first = out[from..].iter().position(|event| match event {
                    Event::ReasoningStart { .. } | Event::ReasoningDelta { .. } => {
                        *reasoning = true;
                        false
                    }
                    Event::ReasoningEnd { .. } => {
                        *reasoning = false;
                        false
                    }
                    _ => !*reasoning,
                });
                let Some(first) = first else {
                    return read;
                };
                let at = out[from + first].span().start;
                out.truncate(from + first);
                let Choice::Before { named, tools, .. } =
                    std::mem::replace(&mut self.choice, Choice::Auto)
                else {
                    unreachable!("matched above")
                };
                let reader = super::super::payload_machine(named.is_some(), tools, at);
                self.choice = Choice::Payload {
                    named,
                    reader: Box::new(reader),
                };
                (at - base) + self.read_chosen(&pending[at - base..], at, eof, out)
            }
        }
    }
}

/// Turns the call events of `out[from..]` into markup over the same bytes (a
/// zero-width one is dropped): the calls are dropped, their markup stays markup
/// (FD-10b).
fn drop_calls(out: &mut Vec<Event>, from: usize) {
    let mut kept = from;
    for read in from..out.len() {
        if let Event::ToolCallStart { span, .. }
        | Event::ArgumentsDelta { span, .. }
        | Event::ToolCallEnd { span, .. } = out[read]
        {
            if span.is_empty() {
                continue;
            }
            out[read] = Event::Markup { span };
        }
        out.swap(kept, read);
        kept += 1;
    }
    out.truncate(kept);
}

/// Gives the calls started in `out[from..]` the named function's name (FD-10d:
/// the payload writes none).
fn name_calls(out: &mut [Event], from: usize, named: &CompactString) {
    for event in &mut out[from..] {
        if let Event::ToolCallStart { name, .. } = event {
            name.clone_from(named);
        }
    }
}
