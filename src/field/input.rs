//! A tool call's `input`: its arguments as a JSON value, held as validated
//! compact JSON text instead of a built tree (spec/field.md FD-9).
//!
//! A parse that only moves calls along (into a document, into chat-completion
//! deltas) never needs the tree, and building one per call was most of the cost
//! of parsing a turn full of calls. So a call's input is checked once, when the
//! call ends, by one pass over its arguments that accepts exactly what
//! `serde_json` parses into a [`Value`] and copies the text with the whitespace
//! outside strings dropped. Serializing an [`Input`] replays that text as the
//! serializer calls the [`Value`] would have made (numbers as `serde_json` reads
//! them, strings decoded), so every output is the one the tree gave, and
//! [`Input::value`] builds the tree for a caller who wants it.

use std::borrow::Cow;
use std::cell::Cell;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

/// A tool call's arguments as a JSON value (`null` when they are not JSON),
/// held as compact JSON text. See the module docs.
#[derive(Clone, Debug)]
pub struct Input(Cow<'static, str>);

impl Input {
    /// The input of a call whose arguments are not JSON: `null`.
    pub const NULL: Input = Input(Cow::Borrowed("null"));

    /// The input of `arguments`, or `None` when they are not one JSON value
    /// (RFC 8259, surrounded by optional whitespace) that `serde_json` parses: a
    /// syntax error, nesting 128 levels deep, a lone surrogate escape or a number
    /// beyond the range of a double is not.
    pub fn parse(arguments: &str) -> Option<Input> {
        Input::parse_with(arguments, &mut Scratch::default())
    }

    /// [`Input::parse`] with the working memory of an earlier call, so that a
    /// parser checking call after call allocates only the input itself.
    pub(crate) fn parse_with(arguments: &str, scratch: &mut Scratch) -> Option<Input> {
        match Compactor::new(arguments, scratch).run() {
            Compacted::Text(text) => Some(Input(Cow::Owned(text))),
            Compacted::Invalid => None,
            // A key written with escapes, a repeated key or a large object: the
            // keys are compared as serde_json compares them, by building the tree
            // (one key spelled twice keeps its first place and its last value).
            Compacted::Keys => serde_json::from_str::<Value>(arguments)
                .ok()
                .map(|v| Input(Cow::Owned(v.to_string()))),
        }
    }

    /// The input of `arguments` that a family wrote itself as compact JSON text
    /// which [`Input::parse`] gives back unchanged (the caller's guarantee: an
    /// object of distinct keys that need no escaping, holding strings it escaped,
    /// `true`, `false`, `null` and plain integers of at most 18 characters), so
    /// the check is not run again over text built to pass it. Debug builds check
    /// the guarantee.
    pub(crate) fn built(arguments: &str) -> Input {
        debug_assert_eq!(
            Input::parse(arguments).as_ref().map(Input::as_json),
            Some(arguments),
            "built arguments the check changes"
        );
        Input(Cow::Owned(arguments.to_owned()))
    }

    /// The value as compact JSON text (no whitespace outside strings; strings,
    /// numbers and key order as the arguments wrote them).
    pub fn as_json(&self) -> &str {
        &self.0
    }

    /// Whether the input is `null` (arguments that are not JSON, or `null`).
    pub fn is_null(&self) -> bool {
        self.0 == "null"
    }

    /// The value as a [`serde_json::Value`] (built on each call).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }
}

impl Default for Input {
    fn default() -> Self {
        Input::NULL
    }
}

impl From<Value> for Input {
    fn from(value: Value) -> Self {
        Input(Cow::Owned(value.to_string()))
    }
}

impl From<&Value> for Input {
    fn from(value: &Value) -> Self {
        Input(Cow::Owned(value.to_string()))
    }
}

/// Equal when the values are: the same text, or texts that parse to equal values.
impl PartialEq for Input {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || self.value() == other.value()
    }
}

impl PartialEq<Value> for Input {
    fn eq(&self, other: &Value) -> bool {
        self.value() == *other
    }
}

impl Serialize for Input {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let end = Cell::new(0);
        Node {
            text: &self.0,
            start: 0,
            end: &end,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Input {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Input::from)
    }
}

impl JsonSchema for Input {
    fn schema_name() -> Cow<'static, str> {
        Value::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        Value::schema_id()
    }

    fn inline_schema() -> bool {
        Value::inline_schema()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Value::json_schema(generator)
    }
}

/// One value of a compact, valid JSON text, from `start`; serializing it sets
/// `end` to where the value ends, so that a container finds its next member.
struct Node<'a> {
    text: &'a str,
    start: usize,
    end: &'a Cell<usize>,
}

fn malformed<E: serde::ser::Error>() -> E {
    E::custom("an input that is not compact JSON")
}

/// The string whose opening quote is at `at`, decoded, and the offset after its
/// closing quote.
fn string_at<E: serde::ser::Error>(text: &str, at: usize) -> Result<(Cow<'_, str>, usize), E> {
    let bytes = text.as_bytes();
    let mut i = at + 1;
    let mut escaped = false;
    loop {
        match bytes.get(i) {
            Some(b'"') => break,
            Some(b'\\') => {
                escaped = true;
                i += 2;
            }
            Some(_) => i += 1,
            None => return Err(malformed()),
        }
    }
    let end = i + 1;
    if escaped {
        let decoded: String = serde_json::from_str(&text[at..end]).map_err(E::custom)?;
        Ok((Cow::Owned(decoded), end))
    } else {
        Ok((Cow::Borrowed(&text[at + 1..i]), end))
    }
}

impl Serialize for Node<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let bytes = self.text.as_bytes();
        let at = self.start;
        match bytes.get(at) {
            Some(b'{') => {
                let mut map = serializer.serialize_map(None)?;
                let mut pos = at + 1;
                if bytes.get(pos) == Some(&b'}') {
                    self.end.set(pos + 1);
                    return map.end();
                }
                loop {
                    let (key, after) = string_at::<S::Error>(self.text, pos)?;
                    if bytes.get(after) != Some(&b':') {
                        return Err(malformed());
                    }
                    map.serialize_key(&*key)?;
                    map.serialize_value(&Node {
                        text: self.text,
                        start: after + 1,
                        end: self.end,
                    })?;
                    pos = self.end.get();
                    match bytes.get(pos) {
                        Some(b',') => pos += 1,
                        Some(b'}') => break,
                        _ => return Err(malformed()),
                    }
                }
                self.end.set(pos + 1);
                map.end()
            }
            Some(b'[') => {
                let mut seq = serializer.serialize_seq(None)?;
                let mut pos = at + 1;
                if bytes.get(pos) == Some(&b']') {
                    self.end.set(pos + 1);
                    return seq.end();
                }
                loop {
                    seq.serialize_element(&Node {
                        text: self.text,
                        start: pos,
                        end: self.end,
                    })?;
                    pos = self.end.get();
                    match bytes.get(pos) {
                        Some(b',') => pos += 1,
                        Some(b']') => break,
                        _ => return Err(malformed()),
                    }
                }
                self.end.set(pos + 1);
                seq.end()
            }
            Some(b'"') => {
                let (text, end) = string_at::<S::Error>(self.text, at)?;
                self.end.set(end);
                serializer.serialize_str(&text)
            }
            Some(b't') => {
                self.end.set(at + 4);
                serializer.serialize_bool(true)
            }
            Some(b'f') => {
                self.end.set(at + 5);
                serializer.serialize_bool(false)
            }
            Some(b'n') => {
                self.end.set(at + 4);
                serializer.serialize_unit()
            }
            Some(_) => {
                let len = bytes[at..]
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(bytes.len() - at);
                let lexeme = &self.text[at..at + len];
                self.end.set(at + len);
                // A plain integer below 10^19 is a u64, as serde_json reads it;
                // anything else is read by serde_json itself (a negative zero, an
                // integer beyond 64 bits and every fraction become doubles).
                if len <= 19 && lexeme.bytes().all(|b| b.is_ascii_digit()) {
                    let mut n = 0u64;
                    for b in lexeme.bytes() {
                        n = n * 10 + u64::from(b - b'0');
                    }
                    return serializer.serialize_u64(n);
                }
                let number: Number = lexeme.parse().map_err(S::Error::custom)?;
                number.serialize(serializer)
            }
            None => Err(malformed()),
        }
    }
}

/// What [`Compactor::run`] made of a text.
enum Compacted {
    /// Valid JSON, compacted.
    Text(String),
    /// Not JSON as serde_json reads it.
    Invalid,
    /// Valid so far, but an object's keys need serde_json's comparison.
    Keys,
}

/// serde_json's nesting limit for a [`Value`]: a container 128 levels deep does
/// not parse.
const MAX_DEPTH: usize = 127;

/// Up to this many keys an object's keys are compared one by one; a larger
/// object goes to serde_json.
pub(crate) const MAX_KEYS_COMPARED: usize = 32;

/// The working memory of [`Input::parse_with`], kept between calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    /// Per open container: whether it is an object, and where its keys start in
    /// `keys`.
    frames: Vec<(bool, usize)>,
    /// The raw keys of the open objects, as byte ranges of the text.
    keys: Vec<(usize, usize)>,
}

/// Bytes that end the plain run of a string: the quote, the backslash and the
/// control characters a JSON string may not hold raw.
static STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// One pass over a JSON text that validates it as serde_json does and copies it
/// without the whitespace outside strings.
struct Compactor<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    /// The compacted text so far: `src[..copied]` minus its whitespace.
    out: String,
    copied: usize,
    frames: &'a mut Vec<(bool, usize)>,
    keys: &'a mut Vec<(usize, usize)>,
}

/// Why the pass stopped.
enum Stop {
    Invalid,
    Keys,
}

impl<'a> Compactor<'a> {
    fn new(text: &'a str, scratch: &'a mut Scratch) -> Self {
        scratch.frames.clear();
        scratch.keys.clear();
        Compactor {
            src: text.as_bytes(),
            text,
            pos: 0,
            out: String::new(),
            copied: 0,
            frames: &mut scratch.frames,
            keys: &mut scratch.keys,
        }
    }

    fn run(mut self) -> Compacted {
        match self.document() {
            Ok(()) => {
                if self.copied == 0 {
                    return Compacted::Text(self.text.to_string());
                }
                self.out.push_str(&self.text[self.copied..]);
                Compacted::Text(self.out)
            }
            Err(Stop::Invalid) => Compacted::Invalid,
            Err(Stop::Keys) => Compacted::Keys,
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// Skips whitespace, leaving it out of the copy.
    #[inline]
    fn whitespace(&mut self) {
        if !matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            return;
        }
        self.skip_whitespace();
    }

    fn skip_whitespace(&mut self) {
        let start = self.pos;
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
        if self.pos > start {
            if self.out.capacity() == 0 {
                self.out.reserve(self.src.len());
            }
            self.out.push_str(&self.text[self.copied..start]);
            self.copied = self.pos;
        }
    }

    #[inline]
    fn expect(&mut self, byte: u8) -> Result<(), Stop> {
        self.whitespace();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Stop::Invalid)
        }
    }

    fn document(&mut self) -> Result<(), Stop> {
        self.value()?;
        self.whitespace();
        if self.pos == self.src.len() {
            Ok(())
        } else {
            Err(Stop::Invalid)
        }
    }

    /// One value and everything nested in it, without recursion.
    fn value(&mut self) -> Result<(), Stop> {
        loop {
            // A value starts here.
            self.whitespace();
            match self.peek() {
                Some(open @ (b'{' | b'[')) => {
                    if self.frames.len() == MAX_DEPTH {
                        return Err(Stop::Invalid);
                    }
                    self.pos += 1;
                    let object = open == b'{';
                    self.frames.push((object, self.keys.len()));
                    self.whitespace();
                    let close = if object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        self.frames.pop();
                    } else {
                        if object {
                            self.key()?;
                        }
                        continue;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return Err(Stop::Invalid),
            }
            // A value ended: close what it ends, or go on to the next member.
            loop {
                let Some(&(object, keys_start)) = self.frames.last() else {
                    return Ok(());
                };
                self.whitespace();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if object {
                            self.key()?;
                        }
                        break;
                    }
                    Some(b'}') if object => {
                        self.pos += 1;
                        self.keys.truncate(keys_start);
                        self.frames.pop();
                    }
                    Some(b']') if !object => {
                        self.pos += 1;
                        self.frames.pop();
                    }
                    _ => return Err(Stop::Invalid),
                }
            }
        }
    }

    /// A key and its colon. Keys are compared raw: one with an escape, or one
    /// object with too many keys, is left to serde_json ([`Stop::Keys`]).
    #[inline]
    fn key(&mut self) -> Result<(), Stop> {
        self.whitespace();
        if self.peek() != Some(b'"') {
            return Err(Stop::Invalid);
        }
        let start = self.pos + 1;
        let escaped = self.string()?;
        let end = self.pos - 1;
        let key = &self.src[start..end];
        let keys_start = self.frames.last().map_or(0, |f| f.1);
        let siblings = &self.keys[keys_start..];
        let src = self.src;
        if escaped
            || siblings.len() >= MAX_KEYS_COMPARED
            || siblings.iter().any(|&(s, e)| &src[s..e] == key)
        {
            // serde_json's parse then says whether the text is JSON at all.
            return Err(Stop::Keys);
        }
        self.keys.push((start, end));
        self.expect(b':')
    }

    /// A string from its opening quote; returns whether it holds an escape.
    #[inline]
    fn string(&mut self) -> Result<bool, Stop> {
        let src = self.src;
        let mut i = self.pos + 1;
        let mut escaped = false;
        loop {
            while i < src.len() && !STRING_STOP[usize::from(src[i])] {
                i += 1;
            }
            match src.get(i) {
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    self.pos = i + 1;
                    self.escape()?;
                    i = self.pos;
                }
                // A raw control character, or the end of the text.
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// An escape after its backslash, with serde_json's surrogate rules: a
    /// trailing surrogate alone, or a leading one not followed by a `\u` escape of
    /// a trailing one, does not parse.
    fn escape(&mut self) -> Result<(), Stop> {
        match self.peek() {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.pos += 1;
                Ok(())
            }
            Some(b'u') => {
                self.pos += 1;
                let n = self.hex4()?;
                if (0xDC00..=0xDFFF).contains(&n) {
                    return Err(Stop::Invalid);
                }
                if (0xD800..=0xDBFF).contains(&n) {
                    if self.src.get(self.pos..self.pos + 2) != Some(b"\\u") {
                        return Err(Stop::Invalid);
                    }
                    self.pos += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return Err(Stop::Invalid);
                    }
                }
                Ok(())
            }
            _ => Err(Stop::Invalid),
        }
    }

    fn hex4(&mut self) -> Result<u16, Stop> {
        let digits = self.src.get(self.pos..self.pos + 4).ok_or(Stop::Invalid)?;
        let mut n = 0u16;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(Stop::Invalid),
            };
            n = n * 16 + u16::from(v);
        }
        self.pos += 4;
        Ok(n)
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Stop> {
        if self.src.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(Stop::Invalid)
        }
    }

    /// A number (RFC 8259). One with a fraction, an exponent or more than 18
    /// digits is read by serde_json too, which refuses one beyond a double's range.
    fn number(&mut self) -> Result<(), Stop> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(Stop::Invalid),
        }
        let mut plain = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            plain = false;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(Stop::Invalid);
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            plain = false;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(Stop::Invalid);
            }
            self.digits();
        }
        if !plain || self.pos - start > 18 {
            let lexeme = &self.text[start..self.pos];
            if lexeme.parse::<Number>().is_err() {
                return Err(Stop::Invalid);
            }
        }
        Ok(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the tree gave: serde_json's parse, serialized compactly.
    fn by_tree(text: &str) -> Option<String> {
        serde_json::from_str::<Value>(text)
            .ok()
            .map(|v| v.to_string())
    }

    /// Our input of `text`, serialized compactly and pretty, against the tree's.
    fn check(text: &str) {
        let ours = Input::parse(text);
        assert_eq!(
            ours.is_some(),
            by_tree(text).is_some(),
            "validity of {text:?}"
        );
        if let Some(input) = ours {
            let tree: Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                serde_json::to_string(&input).unwrap(),
                tree.to_string(),
                "{text:?}"
            );
            assert_eq!(
                serde_json::to_string_pretty(&input).unwrap(),
                serde_json::to_string_pretty(&tree).unwrap(),
                "{text:?}"
            );
            assert_eq!(serde_json::to_value(&input).unwrap(), tree, "{text:?}");
            assert_eq!(input.value(), tree, "{text:?}");
        }
    }

    #[test]
    fn inputs_serialize_as_the_tree_did() {
        for text in [
            r#"{"city": "Paris", "days": 3, "metric": true}"#,
            " {\n  \"a\" : [ 1 , 2.5 , -3 , 1e5 , 1E-2 , -0 , 0 ] ,\n \"b\" : { } , \"c\" : [ ] } ",
            r#"{"big": 18446744073709551615, "bigger": 18446744073709551616, "neg": -9223372036854775808, "negbig": -9223372036854775809}"#,
            r#"{"s": "a\"b\\c\/d\u00e9\ud83d\ude00\n\t", "t": "é 😀"}"#,
            r#"{"a": 1, "b": 2, "a": 3}"#,
            r#"{"\u0061": 1, "a": 2}"#,
            r#"{"x": null, "y": false, "z": [null, true, {"k": "v"}]}"#,
            r#"[1, "two", {"three": 3}]"#,
            r#""just a string""#,
            "42",
            "  null  ",
            r#"{"n": 123456789012345678901234567890, "f": 1.7976931348623157e308, "tiny": 1e-400, "z": 0e999999999999}"#,
            r#"{"keys": {"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k0":"again"}}"#,
        ] {
            check(text);
        }
    }

    #[test]
    fn what_serde_json_refuses_is_not_an_input() {
        for text in [
            "",
            "   ",
            "{",
            r#"{"a": 1,}"#,
            "[1,]",
            r#"{"a" 1}"#,
            "{a: 1}",
            "01",
            "-",
            "1.",
            ".5",
            "+1",
            "1e",
            "1e+",
            "tru",
            "nul",
            r#"{"a": 1} x"#,
            r#"{"a": 1}{"b": 2}"#,
            "\"raw\ttab\"",
            r#""bad \x escape""#,
            r#""\u12G4""#,
            r#""\ud800""#,
            r#""\ud800x""#,
            r#""\ud800\n""#,
            r#""\ud800\ud800""#,
            r#""\udc00""#,
            "1e400",
            "-1e400",
            &format!("1{}", "0".repeat(400)),
            r#"{"a": 1e400}"#,
            r#"{"\u0061": 1, "b": 1e400}"#,
            r#"{"a": 1, "a": }"#,
        ] {
            check(text);
        }
    }

    #[test]
    fn nesting_stops_where_serde_json_stops() {
        for depth in [1, 126, 127, 128, 129, 300] {
            let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            check(&arrays);
            let objects = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
            check(&objects);
        }
    }

    #[test]
    fn compact_text_drops_only_whitespace_outside_strings() {
        let input = Input::parse("{ \"a b\" : [ 1 ,\n\"c  d\" ] }").unwrap();
        assert_eq!(input.as_json(), r#"{"a b":[1,"c  d"]}"#);
        let same = Input::parse(r#"{"k":"v"}"#).unwrap();
        assert_eq!(same.as_json(), r#"{"k":"v"}"#);
        assert!(Input::NULL.is_null());
        assert_eq!(Input::parse("1e5").unwrap(), Value::from(100000.0));
    }
}
