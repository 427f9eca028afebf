//! Resumable boundary probes for structural tags.
//!
//! A probe is handed the candidate unit from its `<` each time more text has arrived
//! and looks only at the bytes it has not seen yet. [`TagProbe`] recognizes exactly
//! the `opener` / `closer` rules of grammar/anthropic-xml.pest, restricted to the tags
//! that are structure in the current mode (AX-5), so it rejects a candidate on the
//! byte that rules it out and text is emitted at once (S4). [`ValueEndProbe`] adds the
//! lookahead that decides whether a parameter closer ends a value (AX-11).

use std::borrow::Cow;

use super::entities::decode;
use super::grammar::{Name, Tag};
use super::PREFIX;
use crate::reentry::Verdict;

pub(super) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0C)
}

/// A byte that can be part of a structural tag's name (`anthropic`-prefixed or not).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b':'
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-')
}

/// How a structural tag of a mode may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `</name ws*>`.
    Closer,
    /// `<name ws*>`: no attributes, not self-closing (the top-level block openers).
    Bare,
    /// `<name attrs ws* /?>`.
    Element,
}

/// Where one attribute stands in a complete tag: its key, and its value between
/// the quotes (raw: entities not yet decoded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrBounds {
    /// The key, as byte offsets into the tag.
    pub key: (usize, usize),
    /// The value inside its quotes, as byte offsets into the tag.
    pub value: (usize, usize),
}

/// What a probe read of a complete tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probed {
    /// A tag without attributes, read whole.
    Tag(Tag),
    /// An opener of `name` with attributes, read as the probe recognized it (a
    /// property test checks this against pest's reading of the `opener` rule).
    Element {
        /// The structural name.
        name: Name,
        /// The attributes, in source order.
        attrs: Vec<AttrBounds>,
        /// `<... />`.
        self_closing: bool,
    },
}

/// The value of attribute `key` of `tag`, entity-decoded; of several, the last
/// wins (AX-3).
pub fn attr_in<'t>(tag: &'t str, attrs: &[AttrBounds], key: &str) -> Option<Cow<'t, str>> {
    attrs
        .iter()
        .rev()
        .find(|a| &tag[a.key.0..a.key.1] == key)
        .map(|a| decode(&tag[a.value.0..a.value.1]))
}

/// The structural tags of one mode.
pub type Allowed = &'static [(Shape, Name)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Just after `<`.
    Lt,
    /// Inside `P? name`, which starts at `name_start`.
    Name,
    /// After the name of a closer or a bare opener: whitespace, then `>`.
    Tail,
    /// After whitespace that follows the name or a value: a key, `/` or `>`.
    Gap,
    Key,
    /// Whitespace after a key: only `=`.
    KeyGap,
    /// After `=`: whitespace, then a quote.
    Eq,
    Quoted(u8),
    /// Right after a closing quote: whitespace, `/` or `>`.
    AfterValue,
    /// After the `/` of a self-closing opener: only `>`.
    Slash,
}

/// Probes one candidate tag among the structural tags of a mode.
#[derive(Clone, Debug)]
pub struct TagProbe {
    allowed: Allowed,
    state: State,
    closing: bool,
    shape: Shape,
    scanned: usize,
    name_start: usize,
    /// The spellings the name read so far can still become.
    spellings: Spellings,
    /// Known once the name is complete.
    name: Option<Name>,
    /// Where the name ends (the attributes, if any, follow).
    name_end: usize,
    /// The attributes read so far.
    attrs: Vec<AttrBounds>,
    self_closing: bool,
}

/// Byte `k` of `name` written bare or in the prefixed form, if it is that long.
fn spelled_byte(name: Name, prefixed: bool, k: usize) -> Option<u8> {
    let bare = name.as_str().as_bytes();
    if !prefixed {
        return bare.get(k).copied();
    }
    let prefix = PREFIX.as_bytes();
    match k.checked_sub(prefix.len()) {
        None => Some(prefix[k]),
        Some(j) => bare.get(j).copied(),
    }
}

fn spelled_len(name: Name, prefixed: bool) -> usize {
    name.as_str().len() + if prefixed { PREFIX.len() } else { 0 }
}

/// The spellings of a mode's tags, matched one byte at a time: bit `2i` stands for
/// entry `i` of the mode written bare, bit `2i + 1` for it in the prefixed form.
/// Modes have at most 16 tags.
#[derive(Clone, Copy, Debug)]
struct Spellings(u32);

impl Spellings {
    /// Every spelling of the mode's closers (or of its openers).
    fn of(allowed: Allowed, closing: bool) -> Self {
        let mut bits = 0;
        for (i, (shape, _)) in allowed.iter().enumerate().take(16) {
            if (*shape == Shape::Closer) == closing {
                bits |= 0b11 << (2 * i);
            }
        }
        Spellings(bits)
    }

    /// Keeps the spellings whose bytes from `k` on are `run`; false when none is
    /// left.
    fn advance(&mut self, allowed: Allowed, k: usize, run: &[u8]) -> bool {
        let mut bits = self.0;
        while bits != 0 {
            let bit = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (_, name) = allowed[bit / 2];
            let spelled = |j: usize| spelled_byte(name, bit % 2 == 1, k + j);
            if !run.iter().enumerate().all(|(j, &b)| spelled(j) == Some(b)) {
                self.0 &= !(1 << bit);
            }
        }
        self.0 != 0
    }

    /// The tag spelled by exactly `len` bytes, if any.
    fn whole(&self, allowed: Allowed, len: usize) -> Option<(Shape, Name)> {
        let mut bits = self.0;
        while bits != 0 {
            let bit = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (shape, name) = allowed[bit / 2];
            if spelled_len(name, bit % 2 == 1) == len {
                return Some((shape, name));
            }
        }
        None
    }
}

impl TagProbe {
    /// A probe for a candidate whose `<` is the first byte of the unit.
    pub fn new(allowed: Allowed) -> Self {
        TagProbe {
            allowed,
            state: State::Lt,
            closing: false,
            shape: Shape::Closer,
            scanned: 1,
            name_start: 1,
            spellings: Spellings(0),
            name: None,
            name_end: 0,
            attrs: Vec::new(),
            self_closing: false,
        }
    }

    /// After `Complete`, what the probe read: the tag itself when it has no
    /// attributes, else its name, attributes and self-closing slash. The recorded
    /// attributes are handed over (a second call finds none).
    pub fn read(&mut self) -> Option<Probed> {
        let name = self.name?;
        if !self.attrs.is_empty() {
            return Some(Probed::Element {
                name,
                attrs: std::mem::take(&mut self.attrs),
                self_closing: self.self_closing,
            });
        }
        Some(Probed::Tag(Tag {
            closing: self.closing,
            name,
            attrs: Vec::new(),
            self_closing: self.self_closing,
        }))
    }

    /// Looks at the bytes of `unit` not seen yet; a candidate that reaches `max` bytes
    /// without completing is rejected (AX-4).
    pub fn resume(&mut self, unit: &[u8], max: usize) -> Verdict {
        use State::*;
        while self.scanned < unit.len() {
            if self.scanned >= max {
                return Verdict::Rejected;
            }
            let i = self.scanned;
            let b = unit[i];
            self.scanned += 1;
            self.state = match self.state {
                // A `/` is viable only where some closer is structure.
                Lt if b == b'/'
                    && !self.closing
                    && i == 1
                    && self
                        .allowed
                        .iter()
                        .any(|(shape, _)| *shape == Shape::Closer) =>
                {
                    self.closing = true;
                    self.name_start = 2;
                    Lt
                }
                Lt | Name if is_name_byte(b) => {
                    if self.state == Lt {
                        self.spellings = Spellings::of(self.allowed, self.closing);
                    }
                    // The rest of the name that is here, matched at once: that decides
                    // exactly what matching it byte by byte would.
                    let limit = unit.len().min(max).max(self.scanned);
                    self.scanned = unit[self.scanned..limit]
                        .iter()
                        .position(|&c| !is_name_byte(c))
                        .map_or(limit, |n| self.scanned + n);
                    let run = &unit[i..self.scanned];
                    if !self
                        .spellings
                        .advance(self.allowed, i - self.name_start, run)
                    {
                        return Verdict::Rejected;
                    }
                    Name
                }
                Lt => return Verdict::Rejected,
                Name => {
                    self.name_end = i;
                    match self.spellings.whole(self.allowed, i - self.name_start) {
                        None => return Verdict::Rejected,
                        Some((shape, name)) => {
                            self.shape = shape;
                            self.name = Some(name);
                        }
                    }
                    match (self.shape, b) {
                        (_, b'>') => return Verdict::Complete(i + 1),
                        (Shape::Element, b'/') => {
                            self.self_closing = true;
                            Slash
                        }
                        (Shape::Element, _) if is_ws(b) => Gap,
                        (_, _) if is_ws(b) => Tail,
                        _ => return Verdict::Rejected,
                    }
                }
                Tail if is_ws(b) => Tail,
                Tail if b == b'>' => return Verdict::Complete(i + 1),
                Tail => return Verdict::Rejected,
                Gap | AfterValue if b == b'>' => return Verdict::Complete(i + 1),
                Gap | AfterValue if b == b'/' => {
                    self.self_closing = true;
                    Slash
                }
                Gap | AfterValue if is_ws(b) => Gap,
                Gap if is_key_byte(b) => {
                    self.attrs.push(AttrBounds {
                        key: (i, i),
                        value: (i, i),
                    });
                    Key
                }
                Gap | AfterValue => return Verdict::Rejected,
                Key if is_key_byte(b) => Key,
                Key if b == b'=' || is_ws(b) => {
                    if let Some(a) = self.attrs.last_mut() {
                        a.key.1 = i;
                    }
                    if b == b'=' {
                        Eq
                    } else {
                        KeyGap
                    }
                }
                KeyGap if b == b'=' => Eq,
                KeyGap if is_ws(b) => KeyGap,
                Key | KeyGap => return Verdict::Rejected,
                Eq if is_ws(b) => Eq,
                Eq if b == b'"' || b == b'\'' => {
                    if let Some(a) = self.attrs.last_mut() {
                        a.value = (i + 1, i + 1);
                    }
                    Quoted(b)
                }
                Eq => return Verdict::Rejected,
                Quoted(q) if b == q => {
                    if let Some(a) = self.attrs.last_mut() {
                        a.value.1 = i;
                    }
                    AfterValue
                }
                Quoted(_) if b == b'<' => return Verdict::Rejected,
                Quoted(q) => {
                    // Skip to the closing quote or a `<` in one step.
                    let limit = unit.len().min(max);
                    match memchr::memchr2(q, b'<', &unit[self.scanned..limit]) {
                        Some(k) => self.scanned += k,
                        None => self.scanned = limit,
                    }
                    Quoted(q)
                }
                Slash if b == b'>' => return Verdict::Complete(i + 1),
                Slash => return Verdict::Rejected,
            };
        }
        if self.scanned >= max {
            return Verdict::Rejected;
        }
        Verdict::NeedMore
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOP: Allowed = &[
        (Shape::Bare, Name::Thinking),
        (Shape::Bare, Name::FunctionCalls),
    ];
    const CALLS: Allowed = &[
        (Shape::Element, Name::Invoke),
        (Shape::Closer, Name::FunctionCalls),
    ];

    fn probe(allowed: Allowed, text: &str) -> Verdict {
        TagProbe::new(allowed).resume(text.as_bytes(), 1024)
    }

    fn probe_bytewise(allowed: Allowed, text: &str) -> Verdict {
        let mut p = TagProbe::new(allowed);
        let mut last = Verdict::NeedMore;
        for end in 1..=text.len() {
            last = p.resume(&text.as_bytes()[..end], 1024);
            if last != Verdict::NeedMore {
                return last;
            }
        }
        last
    }

    #[test]
    fn bare_and_prefixed_openers_complete() {
        assert_eq!(probe(TOP, "<thinking>x"), Verdict::Complete(10));
        let prefixed = format!("<{PREFIX}thinking >");
        assert_eq!(probe(TOP, &prefixed), Verdict::Complete(prefixed.len()));
    }

    #[test]
    fn lookalikes_are_rejected_on_the_deciding_byte() {
        assert_eq!(probe(TOP, "<thinkingcap>"), Verdict::Rejected);
        assert_eq!(probe(TOP, "<THINKING>"), Verdict::Rejected);
        assert_eq!(probe(TOP, "<thinking a=\"1\">"), Verdict::Rejected);
        assert_eq!(probe(TOP, "<thin"), Verdict::NeedMore);
        assert_eq!(probe(TOP, "<an"), Verdict::NeedMore);
        assert_eq!(probe(TOP, "</thinking>"), Verdict::Rejected);
        assert_eq!(
            probe(TOP, "</"),
            Verdict::Rejected,
            "no closer is structure at top level"
        );
    }

    #[test]
    fn invoke_openers_with_attributes_complete_in_any_chunking() {
        for text in [
            "<invoke name=\"Read\">",
            "<invoke name='a' />",
            "<invoke\n name = \"x\" id='2'>",
            "</function_calls \n>",
        ] {
            assert_eq!(probe(CALLS, text), Verdict::Complete(text.len()), "{text}");
            assert_eq!(
                probe_bytewise(CALLS, text),
                Verdict::Complete(text.len()),
                "{text}"
            );
        }
        assert_eq!(probe(CALLS, "<invoke name=\"a<\">"), Verdict::Rejected);
        assert_eq!(probe(CALLS, "<invoke name=\"a\"b=\"\">"), Verdict::Rejected);
    }

    #[test]
    fn probe_reads_attribute_free_tags_exactly_as_pest_does() {
        let prefixed = format!("<{PREFIX}thinking\n>");
        let texts = [
            "<thinking>",
            "</thinking >",
            "</function_calls>",
            "<invoke/>",
            "<result />",
            &prefixed,
        ];
        let all: Allowed = &[
            (Shape::Bare, Name::Thinking),
            (Shape::Closer, Name::Thinking),
            (Shape::Closer, Name::FunctionCalls),
            (Shape::Element, Name::Invoke),
            (Shape::Element, Name::Result),
        ];
        for text in texts {
            let mut probe = TagProbe::new(all);
            assert_eq!(
                probe.resume(text.as_bytes(), 1024),
                Verdict::Complete(text.len()),
                "{text}"
            );
            let pest = super::super::grammar::parse_tag(text).map(Probed::Tag);
            assert_eq!(probe.read(), pest, "{text}");
        }
        let mut probe = TagProbe::new(all);
        assert_eq!(
            probe.resume(b"<invoke name='x'/>", 1024),
            Verdict::Complete(18)
        );
        let read = Some(Probed::Element {
            name: Name::Invoke,
            attrs: vec![AttrBounds {
                key: (8, 12),
                value: (14, 15),
            }],
            self_closing: true,
        });
        assert_eq!(probe.read(), read);
    }

    #[test]
    fn overlong_candidates_are_rejected() {
        let long = format!("<invoke name=\"{}\">", "x".repeat(100));
        assert_eq!(
            TagProbe::new(CALLS).resume(long.as_bytes(), 64),
            Verdict::Rejected
        );
    }
}

#[cfg(test)]
mod agreement {
    use super::super::grammar::{parse_attributes, parse_tag};
    use super::*;
    use proptest::prelude::*;

    /// What the probe read, as a whole [`Tag`]: attributes entity-decoded, in source
    /// order, as pest's `parse_tag` gives them.
    fn as_tag(text: &str, read: Option<Probed>) -> Option<Tag> {
        match read? {
            Probed::Tag(tag) => Some(tag),
            Probed::Element {
                name,
                attrs,
                self_closing,
            } => Some(Tag {
                closing: false,
                name,
                attrs: attrs
                    .iter()
                    .map(|a| {
                        let key = text[a.key.0..a.key.1].to_string();
                        (key, decode(&text[a.value.0..a.value.1]).into_owned())
                    })
                    .collect(),
                self_closing,
            }),
        }
    }

    #[test]
    fn attribute_lists_read_as_pest_reads_them() {
        let lists = [
            " name=\"p1\" id='&amp;'/>",
            " name = 'a&lt;b' name=\"last\" >",
            "\n name=\"\"\tx.y:z-w='v'>",
            " tool_use_id=\"toolu_01\" />",
        ];
        for list in lists {
            let text = format!("<invoke{list}");
            let mut probe = TagProbe::new(EVERY_TAG);
            assert_eq!(
                probe.resume(text.as_bytes(), 1024),
                Verdict::Complete(text.len()),
                "{text}"
            );
            let read = as_tag(&text, probe.read());
            assert_eq!(read, parse_tag(&text), "{text}");
            let pest = parse_attributes(list).map(|(attrs, _)| attrs);
            assert_eq!(read.map(|t| t.attrs), pest, "{text}");
        }
    }

    /// Every name as an element opener and as a closer: the widest mode, which is
    /// what the `tag` rule of the grammar accepts.
    const EVERY_TAG: Allowed = &[
        (Shape::Element, Name::Thinking),
        (Shape::Element, Name::FunctionCalls),
        (Shape::Element, Name::FunctionResults),
        (Shape::Element, Name::Invoke),
        (Shape::Element, Name::Parameter),
        (Shape::Element, Name::Result),
        (Shape::Element, Name::Error),
        (Shape::Closer, Name::Thinking),
        (Shape::Closer, Name::FunctionCalls),
        (Shape::Closer, Name::FunctionResults),
        (Shape::Closer, Name::Invoke),
        (Shape::Closer, Name::Parameter),
        (Shape::Closer, Name::Result),
        (Shape::Closer, Name::Error),
    ];

    fn tag_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("<".to_string()),
            Just("</".to_string()),
            Just(PREFIX.to_string()),
            prop::sample::select(
                Name::ALL
                    .iter()
                    .map(|(_, s)| s.to_string())
                    .collect::<Vec<_>>()
            ),
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("name".to_string()),
            Just("=".to_string()),
            Just("\"".to_string()),
            Just("'".to_string()),
            Just("x&amp;".to_string()),
            Just(">".to_string()),
            Just("/".to_string()),
            // Pieces of names, so names are near misses and grow across pieces.
            Just("thin".to_string()),
            Just("king".to_string()),
            Just("invo".to_string()),
            Just("ke".to_string()),
            Just("_".to_string()),
            Just("ant".to_string()),
            Just("ml:".to_string()),
        ];
        prop::collection::vec(piece, 1..10).prop_map(|p| format!("<{}", p.concat()))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        #[test]
        fn probe_completes_exactly_the_tags_pest_accepts(text in tag_text()) {
            let mut probe = TagProbe::new(EVERY_TAG);
            let verdict = probe.resume(text.as_bytes(), 1024);
            if let Verdict::Complete(n) = verdict {
                let pest = parse_tag(&text[..n]);
                prop_assert!(pest.is_some(), "probe completed {:?}, pest refused", &text[..n]);
                let read = as_tag(&text[..n], probe.read());
                prop_assert_eq!(read, pest);
            }
            if parse_tag(&text).is_some() {
                prop_assert_eq!(verdict, Verdict::Complete(text.len()));
            }
            // Resumed one byte at a time, the probe decides the same, on the same byte.
            let mut stepwise = TagProbe::new(EVERY_TAG);
            let mut seen = Verdict::NeedMore;
            for end in 1..=text.len() {
                seen = stepwise.resume(&text.as_bytes()[..end], 1024);
                if seen != Verdict::NeedMore {
                    break;
                }
            }
            prop_assert_eq!(seen, verdict);
            if let Verdict::Complete(n) = verdict {
                let mut whole = TagProbe::new(EVERY_TAG);
                whole.resume(text.as_bytes(), 1024);
                prop_assert_eq!(as_tag(&text[..n], stepwise.read()), as_tag(&text[..n], whole.read()));
            }
        }
    }
}
