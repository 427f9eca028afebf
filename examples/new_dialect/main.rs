//! The smallest tag-shaped dialect: a grammar (`notes.pest`) and a state machine, and
//! nothing else. Prose may hold `<note>` or `<note to="NAME">` blocks closed by
//! `</note>`; any other `<` is prose. Events come out as soon as they are decided, at
//! any chunking, through the crate's re-entry layer ([`idiolect::Stream`]).
//!
//! The rules (the spec of this dialect, numbered as a real one would be):
//! - N-1 Outside a note, `open` is the only markup; inside, `close` is.
//! - N-2 A `<` that cannot start the mode's markup is text, decided at once.
//! - N-3 A note still open at the end of input ends there, unclosed.
//!
//! Run it: `cargo run --example new_dialect -- 'Hi <note to="ann">ship it</note>!'`.

use std::sync::OnceLock;

use idiolect::machine::{compile_capturing, Outcome, ParsingMachine, Program, RuleId};
use idiolect::{Machine, Stream};

/// What the dialect emits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Prose outside notes.
    Text(String),
    /// A note opened, for whom if it says.
    NoteStart { to: Option<String> },
    /// Text inside a note.
    NoteText(String),
    /// The note ended; `closed` is false at the end of input (N-3).
    NoteEnd { closed: bool },
}

/// The grammar, compiled once for the machine, and its entry rules.
struct Grammar {
    program: Program,
    open: RuleId,
    close: RuleId,
    to: RuleId,
}

fn grammar() -> &'static Grammar {
    static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
    GRAMMAR.get_or_init(|| {
        let program =
            compile_capturing(include_str!("notes.pest"), &["to"]).expect("notes.pest compiles");
        let rule = |name| program.rule(name).expect("a rule of notes.pest");
        let (open, close, to) = (rule("open"), rule("close"), rule("to"));
        Grammar {
            program,
            open,
            close,
            to,
        }
    })
}

/// The state machine: which entry rule runs (the mode) and the candidate in flight.
pub struct Notes {
    machine: ParsingMachine<'static>,
    in_note: bool,
    /// A candidate tag starts at `pending[0]` and needs more bytes.
    probing: bool,
}

impl Notes {
    /// A machine before any input.
    pub fn new() -> Self {
        Notes {
            machine: ParsingMachine::new(&grammar().program),
            in_note: false,
            probing: false,
        }
    }

    fn text(&self, text: &str, out: &mut Vec<Event>) {
        if !text.is_empty() {
            let text = text.to_owned();
            out.push(if self.in_note {
                Event::NoteText(text)
            } else {
                Event::Text(text)
            });
        }
    }
}

impl Default for Notes {
    fn default() -> Self {
        Self::new()
    }
}

impl Machine for Notes {
    type Event = Event;

    fn advance(&mut self, pending: &str, _base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        let bytes = pending.as_bytes();
        let mut at = 0; // bytes of `pending` decided so far
        loop {
            if !self.probing {
                // Prose up to the next candidate byte is decided (N-2).
                let lt = memchr::memchr(b'<', &bytes[at..]).map_or(bytes.len(), |i| at + i);
                self.text(&pending[at..lt], out);
                at = lt;
                if at == bytes.len() {
                    if eof && self.in_note {
                        out.push(Event::NoteEnd { closed: false }); // N-3
                    }
                    return at;
                }
                let g = grammar();
                self.machine
                    .start(if self.in_note { g.close } else { g.open });
                self.probing = true;
            }
            // The machine keeps its state: each call continues where the last stopped.
            let unit = &bytes[at..];
            let outcome = if eof {
                self.machine.finish(unit)
            } else {
                self.machine.resume(unit)
            };
            self.probing = false;
            match outcome {
                Outcome::NeedMore => {
                    self.probing = true;
                    return at; // hold the candidate: it can still be markup
                }
                Outcome::Matched { end } => {
                    if self.in_note {
                        out.push(Event::NoteEnd { closed: true });
                    } else {
                        let to = self
                            .machine
                            .captures()
                            .iter()
                            .find(|c| c.rule == grammar().to);
                        let to = to.map(|c| pending[at + c.start..at + c.end].to_owned());
                        out.push(Event::NoteStart { to });
                    }
                    self.in_note = !self.in_note;
                    at += end;
                }
                Outcome::Rejected { .. } | Outcome::TooDeep { .. } => {
                    self.text("<", out); // N-2: the `<` is text; scanning goes on after it
                    at += 1;
                }
            }
        }
    }
}

/// Parses `chunks` as they arrive and returns the events with adjacent texts joined.
pub fn events<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Event> {
    let mut stream = Stream::new(Notes::new());
    let mut all = Vec::new();
    for chunk in chunks {
        all.extend(stream.feed(chunk));
    }
    all.extend(stream.finish());
    let mut joined: Vec<Event> = Vec::new();
    for event in all {
        match (joined.last_mut(), event) {
            (Some(Event::Text(a)), Event::Text(b))
            | (Some(Event::NoteText(a)), Event::NoteText(b)) => a.push_str(&b),
            (_, event) => joined.push(event),
        }
    }
    joined
}

fn main() {
    let input = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Before <note to=\"ann\">ship <b>it</b></note> after <notes".to_owned());
    for event in events([input.as_bytes()]) {
        println!("{event:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(input: &str) -> Vec<Event> {
        events([input.as_bytes()])
    }

    #[test]
    fn notes_prose_and_stray_markup() {
        use Event::*;
        assert_eq!(
            whole("a <note to=\"ann\">x < y <b></note> <note>z"),
            vec![
                Text("a ".into()),
                NoteStart {
                    to: Some("ann".into())
                },
                NoteText("x < y <b>".into()),
                NoteEnd { closed: true },
                Text(" ".into()),
                NoteStart { to: None },
                NoteText("z".into()),
                NoteEnd { closed: false },
            ]
        );
        assert_eq!(whole("<note to=\"\">"), vec![Text("<note to=\"\">".into())]);
        assert_eq!(whole("x <note"), vec![Text("x <note".into())]);
    }

    #[test]
    fn every_chunking_gives_the_whole_parse() {
        let input = "é <note to=\"b-1\">ü </not </note><note> <<note>";
        let expected = whole(input);
        let bytes = input.as_bytes();
        for size in 1..=bytes.len() {
            assert_eq!(events(bytes.chunks(size)), expected, "chunks of {size}");
        }
        for cut in 0..=bytes.len() {
            assert_eq!(
                events([&bytes[..cut], &bytes[cut..]]),
                expected,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_candidate_is_held_only_while_it_can_still_be_markup() {
        let mut stream = Stream::new(Notes::new());
        let first: Vec<Event> = stream.feed(b"hi <no").collect();
        assert_eq!(first, vec![Event::Text("hi ".into())]);
        let second: Vec<Event> = stream.feed(b"pe").collect();
        assert_eq!(
            second,
            vec![Event::Text("<".into()), Event::Text("nope".into())]
        );
    }
}
