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

    /// A folder for a whole input of `input_len` bytes whose document nobody
    /// reads before it is finished ([`parse_whole`], and callers that take its
    /// settled parts out as they settle): [`DialectMachine::folder`], unless the
    /// dialect folds such a document more cheaply (kindaxml's hollow fold).
    fn whole_folder(options: &Self::Options, spans: bool, input_len: usize) -> Self::Folder {
        Self::folder(options, spans, input_len)
    }

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
    let mut folder = M::whole_folder(options, false, input.len());
    fold_whole_str(Stream::<M>::with_options(options)?, input, &mut folder);
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

/// [`fold_whole`] for input that is text already: it is fed in pieces that end
/// on character boundaries ([`str_pieces`]), with [`Stream::feed_str`], so it is
/// not validated as UTF-8 again (the same events: S2, and the same bytes).
pub fn fold_whole_str<M: Machine, F: Fold<M::Event>>(
    mut stream: Stream<M>,
    input: &str,
    fold: &mut F,
) {
    for piece in str_pieces(input, WHOLE_PARSE_PIECE) {
        for event in stream.feed_str(piece) {
            fold.push(&event);
        }
    }
    for event in stream.finish() {
        fold.push(&event);
    }
}

/// `input` cut into pieces of `size` bytes, each extended to the next character
/// boundary (a piece is never empty, and at most `size + 3` bytes long).
pub fn str_pieces(input: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = input;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (piece, after) = split_str_piece(rest, size);
        rest = after;
        Some(piece)
    })
}

/// The first piece of a non-empty `input`, `size` bytes (at least 1) extended to
/// the next character boundary, and the rest: one step of [`str_pieces`], for
/// pieces whose size changes as they go.
pub fn split_str_piece(input: &str, size: usize) -> (&str, &str) {
    let mut end = input.len().min(size.max(1));
    while !input.is_char_boundary(end) {
        end += 1;
    }
    input.split_at(end)
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
    /// Whether that array comes after other keys (whose values are strings,
    /// numbers or `null`): then settled elements cannot be written before the keys
    /// ahead of them are final, and are held as JSON (far smaller than the typed
    /// values) until the document is written.
    const SETTLED_HELD: bool = false;
    /// Hands the elements of the leading array that no later event can change to
    /// `out`, in order, and drops them from the document, so a whole parse
    /// written as it is folded holds only what is still open ([`SettledArray`]
    /// writes them as JSON; the Python package converts them while the parse goes
    /// on). Only called when [`Fold::SETTLED_KEY`] names the array.
    fn write_settled<S: Settle>(&mut self, _out: &mut S) {}
    /// Frees what of the document the fold can rebuild when it is written, for a
    /// whole parse written as it is folded (kindaxml: the text of segments no
    /// later event can change, which the output text holds too). [`Fold::document`]
    /// may be incomplete afterwards; [`Fold::write_document`] is not. Default:
    /// nothing.
    fn release_settled(&mut self) {}
    /// Writes the document (what [`Fold::write_settled`] left of it) as JSON in
    /// `layout`: by default [`Fold::document`] serialized.
    fn write_document(&self, out: &mut dyn io::Write, layout: Layout) -> io::Result<()> {
        write_json_dyn(out, self.document(), layout)
    }
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

/// Writes `value` as JSON in `layout` to a writer behind a trait object, through a
/// buffer the serializer writes into directly: serde writes a document in many
/// small pieces, and a call through `dyn Write` per piece cost the session path a
/// tenth of its time (kindaxml, callgrind). Everything is written before it
/// returns; `out` is not flushed.
pub fn write_json_dyn<T: Serialize + ?Sized>(
    out: &mut dyn io::Write,
    value: &T,
    layout: Layout,
) -> io::Result<()> {
    let mut chunked = Chunked {
        buf: Vec::with_capacity(CHUNK),
        out,
    };
    write_json(&mut chunked, value, layout)?;
    chunked.drain()
}

/// The buffer size of [`write_json_dyn`].
const CHUNK: usize = 64 * 1024;

/// A buffer in front of a `dyn Write` whose `write_all` inlines into the
/// serializer: a copy while the chunk has room, one call per full chunk.
struct Chunked<'a> {
    buf: Vec<u8>,
    out: &'a mut dyn io::Write,
}

impl Chunked<'_> {
    #[cold]
    fn drain(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

impl io::Write for Chunked<'_> {
    #[inline]
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    #[inline]
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        if self.buf.len() + data.len() > CHUNK {
            self.drain()?;
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain()?;
        self.out.flush()
    }
}

/// Takes the settled elements of a document's leading array from
/// [`Fold::write_settled`], one by one, in document order, as owned typed values.
pub trait Settle {
    /// Takes one element that no later event can change.
    fn element<T: Serialize + Send + 'static>(&mut self, value: T);
}

impl Settle for SettledArray {
    fn element<T: Serialize + Send + 'static>(&mut self, value: T) {
        SettledArray::element(self, &value);
    }
}

/// The leading array of a document, written element by element as elements
/// settle ([`Fold::write_settled`]); [`SettledArray::finish`] then writes the rest
/// of the document after them. The bytes are exactly those of serializing the
/// whole document at once, in either [`Layout`].
#[derive(Debug)]
pub struct SettledArray {
    key: &'static str,
    layout: Layout,
    /// Elements are kept until [`SettledArray::finish`] (see [`Fold::SETTLED_HELD`]).
    held: bool,
    written: usize,
    buf: Vec<u8>,
    /// One pretty element before it is indented into `buf`.
    scratch: Vec<u8>,
    error: Option<io::Error>,
}

impl SettledArray {
    /// An array under `key`, the first key of the document, in `layout`.
    pub fn new(key: &'static str, layout: Layout) -> Self {
        Self::with_held(key, layout, false)
    }

    /// An array under `key`, after other keys of the document: its elements are
    /// held until [`SettledArray::finish`].
    pub fn held(key: &'static str, layout: Layout) -> Self {
        Self::with_held(key, layout, true)
    }

    fn with_held(key: &'static str, layout: Layout, held: bool) -> Self {
        SettledArray {
            key,
            layout,
            held,
            written: 0,
            buf: Vec::new(),
            scratch: Vec::new(),
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
            if !self.held {
                let head = self.head();
                self.buf.extend_from_slice(head.as_bytes());
            }
        } else {
            self.buf.push(b',');
        }
        self.written += 1;
        let result = match self.layout {
            Layout::Compact => serde_json::to_writer(&mut self.buf, value),
            Layout::Pretty => {
                // Serialized at the top level, then indented two levels in one pass:
                // JSON strings escape their newlines, so every raw newline is layout.
                // (An indenting writer would pay a call per token serde writes.)
                self.scratch.clear();
                let result = serde_json::to_writer_pretty(&mut self.scratch, value);
                self.buf.extend_from_slice(b"\n    ");
                let mut rest = &self.scratch[..];
                while let Some(at) = memchr::memchr(b'\n', rest) {
                    self.buf.extend_from_slice(&rest[..=at]);
                    self.buf.extend_from_slice(b"    ");
                    rest = &rest[at + 1..];
                }
                self.buf.extend_from_slice(rest);
                result
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
        if !self.held {
            out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes the rest of the document: `rest` is the document once its settled
    /// elements were taken out, serialized in this layout.
    pub fn finish<W: io::Write + ?Sized>(mut self, rest: &[u8], out: &mut W) -> io::Result<()> {
        self.drain_to(out)?;
        if self.written == 0 {
            return out.write_all(rest);
        }
        let tail = if self.held {
            // The keys ahead hold strings, numbers or null, in which a quote is
            // escaped: the first `"key":[` is the array's own.
            let key = match self.layout {
                Layout::Compact => format!("\"{}\":[", self.key),
                Layout::Pretty => format!("\"{}\": [", self.key),
            };
            let Some(at) = memchr::memmem::find(rest, key.as_bytes()) else {
                return Err(io::Error::other(format!(
                    "the document has no {:?} array",
                    self.key
                )));
            };
            let (head, tail) = rest.split_at(at + key.len());
            out.write_all(head)?;
            out.write_all(&self.buf)?;
            tail
        } else {
            let head = self.head();
            let Some(tail) = rest.strip_prefix(head.as_bytes()) else {
                return Err(io::Error::other(format!(
                    "the document does not start with its {:?} array",
                    self.key
                )));
            };
            tail
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

    #[test]
    fn str_pieces_tile_the_text_at_character_boundaries() {
        let text = "aé€😀b\n".repeat(5);
        for size in 0..12 {
            let pieces: Vec<&str> = str_pieces(&text, size).collect();
            assert_eq!(pieces.concat(), text, "size {size}");
            for piece in &pieces {
                assert!(!piece.is_empty(), "size {size}");
                assert!(piece.len() <= size.max(1) + 3, "size {size}: {piece:?}");
            }
        }
        assert_eq!(str_pieces("", 4).count(), 0);
    }

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

    #[derive(Serialize)]
    struct Later {
        head: Option<String>,
        items: Vec<serde_json::Value>,
    }

    #[test]
    fn held_elements_go_after_the_keys_ahead_of_their_array() {
        let items = vec![
            serde_json::json!({"a": "x\"items\":[", "b": [1]}),
            serde_json::json!(2),
        ];
        for layout in [Layout::Compact, Layout::Pretty] {
            for settle in 0..=items.len() {
                let head = Some("\"items\":[ \"items\": [".to_string());
                let mut expected = Vec::new();
                let whole = Later {
                    head: head.clone(),
                    items: items.clone(),
                };
                write_json(&mut expected, &whole, layout).unwrap();
                let mut array = SettledArray::held("items", layout);
                let mut got = Vec::new();
                for item in &items[..settle] {
                    array.element(item);
                    array.drain_to(&mut got).unwrap();
                }
                assert!(got.is_empty(), "held elements wait for the document");
                let rest = Later {
                    head,
                    items: items[settle..].to_vec(),
                };
                let mut rest_json = Vec::new();
                write_json(&mut rest_json, &rest, layout).unwrap();
                array.finish(&rest_json, &mut got).unwrap();
                assert_eq!(got, expected, "{layout:?} settle {settle}");
            }
        }
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
