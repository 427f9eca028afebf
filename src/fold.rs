//! What every dialect implements, beside the re-entry layer: its configured
//! machine ([`DialectMachine`]), the fold of its events into a document ([`Fold`]),
//! and the whole-document parse built from the two ([`parse_whole`]).
//!
//! This layer knows no dialect and no registry: the dialects implement it, and the
//! by-name registry ([`crate::session`]) drives them through it, so neither imports
//! the other's user.

use std::io;

use serde::Serialize;

use crate::reentry::{Machine, Stream};
use crate::span::Span;

/// A dialect's state machine together with how it is configured and folded: the
/// one generic path behind every dialect's `Parser::with_options` and `parse`.
pub trait DialectMachine: Machine + Sized {
    /// The dialect's name, as the registry and its errors spell it.
    const NAME: &'static str;
    /// The options it is built from.
    type Options: Default;
    /// Why options cannot be used.
    type Problem: std::error::Error;
    /// The folder of its events into its document.
    type Folder: Fold<Self::Event>;

    /// A machine for `options`, or why they cannot be used (never silently
    /// replaced by defaults).
    fn with_options(options: &Self::Options) -> Result<Self, Self::Problem>;

    /// A folder for a document parsed with `options`; with `spans`, items carry
    /// their input spans (where the document has any). `input_len` is the input's
    /// size when known in advance (0 otherwise), for reserving room.
    fn folder(options: &Self::Options, spans: bool, input_len: usize) -> Self::Folder;

    /// The most bytes this machine may hold back undecided, or `None` when a unit
    /// is held whole until it completes (documented per dialect).
    fn hold_back_bound(&self) -> Option<usize>;
}

impl<M: DialectMachine> Stream<M> {
    /// A streaming parser for `options`, or why they cannot be used.
    pub fn with_options(options: &M::Options) -> Result<Self, M::Problem> {
        Ok(Stream::new(M::with_options(options)?))
    }
}

/// The document a [`DialectMachine`] folds into.
pub type DocumentOf<M> = <<M as DialectMachine>::Folder as Fold<<M as Machine>::Event>>::Document;

/// Parses a whole input with machine `M`: the streaming machinery, fed once.
pub fn parse_whole<M: DialectMachine>(
    input: &str,
    options: &M::Options,
) -> Result<DocumentOf<M>, M::Problem> {
    let mut folder = M::folder(options, false, input.len());
    fold_whole(
        Stream::<M>::with_options(options)?,
        input.as_bytes(),
        &mut folder,
    );
    Ok(folder.into_document())
}

/// Piece size for whole-document parses: the input is fed in pieces this large so
/// that the events of one piece are folded (and freed) before the next is parsed.
/// Any split gives the same document (S2), so this changes nothing but memory.
pub const WHOLE_PARSE_PIECE: usize = 64 * 1024;

/// Parses a whole input with `stream`, folding every event into `fold`.
pub fn fold_whole<M: Machine, F: Fold<M::Event>>(
    mut stream: Stream<M>,
    input: &[u8],
    fold: &mut F,
) {
    for piece in input.chunks(WHOLE_PARSE_PIECE) {
        for event in stream.feed(piece) {
            fold.push(&event);
        }
    }
    for event in stream.finish() {
        fold.push(&event);
    }
}

/// Folds a dialect's events into its document, one event at a time.
pub trait Fold<E> {
    /// The folded document.
    type Document: Serialize;
    /// Folds one more event in.
    fn push(&mut self, event: &E);
    /// The document so far.
    fn document(&self) -> &Self::Document;
    /// The finished document.
    fn into_document(self) -> Self::Document
    where
        Self: Sized;
    /// Whether the document is free of errors.
    fn is_clean(&self) -> bool {
        true
    }
    /// Whether this event alone makes the document unclean (an error item, a
    /// diagnostic). Lets a consumer that does not fold still know
    /// [`Fold::is_clean`]; it must agree with it.
    fn marks_unclean(_event: &E) -> bool
    where
        Self: Sized,
    {
        false
    }
    /// The key of the document's leading array (`items`, `blocks`) when its
    /// elements settle in order: once a later element exists, no event changes an
    /// earlier one. `None` (the default) for other shapes.
    const SETTLED_KEY: Option<&'static str> = None;
    /// Writes the elements of the leading array that no later event can change,
    /// and drops them from the document, so a whole parse written as it is folded
    /// holds only what is still open. Only called when [`Fold::SETTLED_KEY`] names
    /// the array.
    fn write_settled(&mut self, _out: &mut SettledArray) {}
}

/// Events that say which input bytes they cover (contract S8).
pub trait Spanned {
    /// The bytes this event covers.
    fn span(&self) -> Span;
}

/// How a document or event is laid out as JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// One line, no spaces (`serde_json::to_writer`).
    #[default]
    Compact,
    /// Indented by two spaces (`serde_json::to_writer_pretty`).
    Pretty,
}

/// Writes `value` as JSON in `layout`.
pub fn write_json<W: io::Write, T: Serialize + ?Sized>(
    out: W,
    value: &T,
    layout: Layout,
) -> io::Result<()> {
    match layout {
        Layout::Compact => serde_json::to_writer(out, value),
        Layout::Pretty => serde_json::to_writer_pretty(out, value),
    }
    .map_err(io::Error::from)
}

/// The leading array of a document, written element by element as elements
/// settle ([`Fold::write_settled`]); [`SettledArray::finish`] then writes the rest
/// of the document after them. The bytes are exactly those of serializing the
/// whole document at once, in either [`Layout`].
#[derive(Debug)]
pub struct SettledArray {
    key: &'static str,
    layout: Layout,
    written: usize,
    buf: Vec<u8>,
    error: Option<io::Error>,
}

/// An `io::Write` that indents every line after the first (JSON strings escape
/// their newlines, so every raw newline is layout).
struct Indented<'a> {
    out: &'a mut Vec<u8>,
    indent: &'static [u8],
}

impl io::Write for Indented<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut rest = bytes;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            self.out.extend_from_slice(&rest[..=at]);
            self.out.extend_from_slice(self.indent);
            rest = &rest[at + 1..];
        }
        self.out.extend_from_slice(rest);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SettledArray {
    /// An array under `key`, the first key of the document, in `layout`.
    pub fn new(key: &'static str, layout: Layout) -> Self {
        SettledArray {
            key,
            layout,
            written: 0,
            buf: Vec::new(),
            error: None,
        }
    }

    fn head(&self) -> String {
        match self.layout {
            Layout::Compact => format!("{{\"{}\":[", self.key),
            Layout::Pretty => format!("{{\n  \"{}\": [", self.key),
        }
    }

    /// Appends one settled element.
    pub fn element<T: Serialize>(&mut self, value: &T) {
        if self.written == 0 {
            let head = self.head();
            self.buf.extend_from_slice(head.as_bytes());
        } else {
            self.buf.push(b',');
        }
        self.written += 1;
        let result = match self.layout {
            Layout::Compact => serde_json::to_writer(&mut self.buf, value),
            Layout::Pretty => {
                self.buf.extend_from_slice(b"\n    ");
                let indented = Indented {
                    out: &mut self.buf,
                    indent: b"    ",
                };
                serde_json::to_writer_pretty(indented, value)
            }
        };
        if let Err(e) = result {
            self.error.get_or_insert(e.into());
        }
    }

    /// Whether an element was written.
    pub fn started(&self) -> bool {
        self.written > 0
    }

    /// Moves the bytes written so far to `out`.
    pub fn drain_to<W: io::Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Writes the rest of the document: `rest` is the document once its settled
    /// elements were taken out, serialized in this layout.
    pub fn finish<W: io::Write + ?Sized>(mut self, rest: &[u8], out: &mut W) -> io::Result<()> {
        self.drain_to(out)?;
        if self.written == 0 {
            return out.write_all(rest);
        }
        let head = self.head();
        let Some(tail) = rest.strip_prefix(head.as_bytes()) else {
            return Err(io::Error::other(format!(
                "the document does not start with its {:?} array",
                self.key
            )));
        };
        if tail.first() == Some(&b']') {
            // Nothing left open: close the array after the settled elements.
            if self.layout == Layout::Pretty {
                out.write_all(b"\n  ")?;
            }
        } else {
            out.write_all(b",")?;
        }
        out.write_all(tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Doc {
        items: Vec<serde_json::Value>,
        tail: Option<u8>,
    }

    fn whole_and_settled(items: Vec<serde_json::Value>, settle: usize, layout: Layout) {
        let whole = Doc {
            items: items.clone(),
            tail: Some(7),
        };
        let mut expected = Vec::new();
        write_json(&mut expected, &whole, layout).unwrap();
        let mut array = SettledArray::new("items", layout);
        for item in &items[..settle] {
            array.element(item);
        }
        let rest = Doc {
            items: items[settle..].to_vec(),
            tail: Some(7),
        };
        let mut rest_json = Vec::new();
        write_json(&mut rest_json, &rest, layout).unwrap();
        let mut got = Vec::new();
        array.finish(&rest_json, &mut got).unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(expected).unwrap()
        );
    }

    #[test]
    fn settled_elements_give_the_bytes_of_the_whole_document() {
        let items: Vec<serde_json::Value> = vec![
            serde_json::json!({"type": "text", "text": "a\nb", "n": [1, {"x": {}}]}),
            serde_json::json!({"type": "section", "attrs": {}, "list": []}),
            serde_json::json!("plain"),
        ];
        for layout in [Layout::Compact, Layout::Pretty] {
            for n in 0..=items.len() {
                for settle in 0..=n {
                    whole_and_settled(items[..n].to_vec(), settle, layout);
                }
            }
        }
    }
}
