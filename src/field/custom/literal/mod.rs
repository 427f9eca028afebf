//! Argument values written as literals of a programming syntax, turned into compact
//! JSON text: Python's (`python`, CF-27) and Gemma's (`gemma`, CF-38).
//!
//! The grammar has already matched the value; this reads the matched text once, left
//! to right. The syntaxes share their brackets: lists `[…]` and objects `{…}` of
//! comma-separated items (a trailing comma allowed), an object's items `key: value`.
//! This module walks the brackets; each syntax ([`Syntax`]) reads its own strings,
//! scalars and keys. Nesting deeper than [`MAX_DEPTH`] has no JSON form.

pub(crate) mod gemma;
pub(crate) mod python;

use crate::field::typing::Shape;

/// The deepest nesting of lists and objects a value may have.
pub const MAX_DEPTH: usize = 128;

/// What one literal syntax reads by itself: the values that are no list and no
/// object, and an object's keys.
trait Syntax {
    /// Whether the value at the reader's position is a leaf even though it starts
    /// with a bracket (a string quote that begins with one).
    fn leaf_first(&self, _reader: &Reader<'_>) -> bool {
        false
    }

    /// The value at the reader's position (past whitespace), which is no list and
    /// no object, written to `out` as JSON; `shape` types it when it is bare at the
    /// top of an argument.
    fn leaf(&self, reader: &mut Reader<'_>, out: &mut String, shape: Option<&Shape>) -> Option<()>;

    /// An object's key at the reader's position (past whitespace), written to `out`
    /// as a JSON string.
    fn key(&self, reader: &mut Reader<'_>, out: &mut String) -> Option<()>;
}

/// A position in a literal's text.
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    /// Whether the next byte after whitespace is `b`, taking it if so.
    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        let found = self.peek() == Some(b);
        self.at += usize::from(found);
        found
    }

    /// The characters up to the first position where `stop` holds (or the end).
    fn run(&mut self, stop: impl Fn(&Self) -> bool) -> &'a str {
        let start = self.at;
        while self.at < self.text.len() && !stop(self) {
            self.at += self.rest().chars().next().map_or(1, char::len_utf8);
        }
        &self.text[start..self.at]
    }
}

/// The compact JSON text of the literal `text` in `syntax`, a leaf at its top typed
/// by `shape`; `None` when it has no JSON form.
fn to_json(syntax: &impl Syntax, text: &str, shape: Option<&Shape>) -> Option<String> {
    let mut reader = Reader { text, at: 0 };
    let mut out = String::with_capacity(text.len());
    value(syntax, &mut reader, &mut out, 0, shape)?;
    reader.ws();
    (reader.at == text.len()).then_some(out)
}

fn value(
    syntax: &impl Syntax,
    reader: &mut Reader<'_>,
    out: &mut String,
    depth: usize,
    shape: Option<&Shape>,
) -> Option<()> {
    reader.ws();
    match reader.peek()? {
        b'[' | b'{' if !syntax.leaf_first(reader) => items(syntax, reader, out, depth + 1),
        _ => syntax.leaf(reader, out, shape),
    }
}

/// A list or an object, the reader at its opening bracket.
fn items(
    syntax: &impl Syntax,
    reader: &mut Reader<'_>,
    out: &mut String,
    depth: usize,
) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    let object = reader.peek() == Some(b'{');
    let close = if object { b'}' } else { b']' };
    reader.at += 1;
    out.push(if object { '{' } else { '[' });
    let mut first = true;
    loop {
        if reader.eat(close) {
            break;
        }
        if !first {
            out.push(',');
        }
        if object {
            reader.ws();
            syntax.key(reader, out)?;
            if !reader.eat(b':') {
                return None;
            }
            out.push(':');
        }
        value(syntax, reader, out, depth, None)?;
        first = false;
        // An item is followed by `,` or the closer (the grammar has checked this for
        // a call's arguments; field typing reads unchecked text, FD-6).
        if reader.eat(b',') {
            continue;
        }
        if reader.eat(close) {
            break;
        }
        return None;
    }
    out.push(char::from(close));
    Some(())
}
