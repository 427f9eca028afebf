//! The re-entry layer: bytes in, chunk by chunk; decided units out.
//!
//! Every dialect is a [`Machine`] that looks at the *undecided* text and says how
//! much of it is now decided. The layer around it ([`Reentry`], wrapped by
//! [`Stream`]) owns everything that has to do with chunking:
//!
//! - it carries an incomplete UTF-8 sequence over to the next chunk, and replaces
//!   invalid sequences with U+FFFD (one per maximal invalid subpart, as WHATWG
//!   decoders do) so a machine only ever sees `&str`;
//! - it keeps only the undecided suffix of the input and releases decided bytes;
//! - when nothing is pending it hands the chunk to the machine without copying it,
//!   so a whole-document parse is a single call over the borrowed input.
//!
//! A machine must never re-scan a growing unit from its start on every chunk: it
//! keeps its own resumable probe (see [`Verdict`]) that remembers how far it has
//! looked, so the total work stays linear even at 1-byte chunks (contract S5).

/// The largest value a size option (`max_tag_bytes`, `max_statement_bytes`) takes
/// effect with: 4 GiB less one byte. A larger value is clamped to it, which changes
/// nothing but keeps every bound computed from it (a hold-back bound, a limit plus a
/// lookahead) free of overflow; no unit that large is ever held.
pub const MAX_SIZE_OPTION: usize = u32::MAX as usize;

/// What a resumable boundary probe says about the unit it has seen so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every byte so far still fits; more input is needed to decide.
    NeedMore,
    /// The unit is complete and is this many bytes long.
    Complete(usize),
    /// The bytes so far cannot be this unit.
    Rejected,
}

/// A dialect's state machine, driven by the re-entry layer.
pub trait Machine {
    /// The events this machine emits.
    type Event;

    /// Decides as much of `pending` as possible.
    ///
    /// `pending` is all undecided text, starting at absolute offset `base` of the
    /// decoded input; it is the text left undecided by the previous call followed
    /// by what arrived since. The machine pushes the events it can now emit and
    /// returns how many bytes of `pending` they decided (a char boundary). The
    /// rest is offered again, with more text appended, on the next call.
    ///
    /// When `eof` is true no more text will come: the machine applies its
    /// end-of-input rules and must decide every byte (return `pending.len()`).
    fn advance(
        &mut self,
        pending: &str,
        base: usize,
        eof: bool,
        out: &mut Vec<Self::Event>,
    ) -> usize;

    /// Empties `events` (those a [`Stream`] lent from its last feed) before the
    /// next feed. A machine whose events mostly own no heap memory may skip
    /// dropping them one by one when none does.
    #[inline]
    fn release(events: &mut Vec<Self::Event>)
    where
        Self: Sized,
    {
        events.clear();
    }
}

/// The buffer half of the re-entry layer: UTF-8 carry, pending text, offsets.
#[derive(Debug, Default)]
pub struct Reentry {
    /// Undecided text lives in `buf[start..]`.
    buf: String,
    start: usize,
    /// A valid but incomplete UTF-8 sequence that ended the last chunk.
    carry: [u8; 4],
    carry_len: usize,
    /// Absolute offset (in decoded bytes) of `buf[start]`.
    offset: usize,
    /// How many invalid sequences were replaced with U+FFFD so far.
    replaced: usize,
}

/// The first position of `needle` in `haystack`: memchr, except on the few bytes
/// of a streamed token, where a plain loop beats memchr's setup (measured at 1-
/// and 16-byte chunks, where every feed scans a short slice).
#[inline]
pub fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    if haystack.len() < 16 {
        haystack.iter().position(|&b| b == needle)
    } else {
        memchr::memchr(needle, haystack)
    }
}

/// The first position of any of `a`, `b`, `c` in `haystack`: memchr3, except on
/// the few bytes of a streamed token, as [`find_byte`].
#[inline]
pub fn find_byte3(a: u8, b: u8, c: u8, haystack: &[u8]) -> Option<usize> {
    if haystack.len() < 16 {
        haystack.iter().position(|&x| x == a || x == b || x == c)
    } else {
        memchr::memchr3(a, b, c, haystack)
    }
}

/// A dialect whose markup starts at `<` and is recognized by a resumable probe
/// (sections, anthropic-xml). [`scan_tags`] runs the loop these share: find the next
/// `<`, probe the candidate there as more text arrives, emit the text between tags
/// in the current mode, and rescan after a `<` that turned out to be text.
pub trait TagScanner {
    /// The events the dialect emits.
    type Event;

    /// Resumes the active probe on `unit`, which starts at its `<`; `None` when no
    /// probe is active. At `eof` every candidate is decided.
    fn probe_resume(&mut self, unit: &str, eof: bool) -> Option<Verdict>;

    /// Starts a probe on the candidate at a `<`.
    fn probe_start(&mut self);

    /// Drops the active probe: its candidate was rejected.
    fn probe_reject(&mut self);

    /// Ends the active probe on the complete candidate `tag` (at absolute `start`)
    /// and acts on it; false when it is not markup here, and then its `<` is text.
    fn probe_take(&mut self, tag: &str, start: usize, out: &mut Vec<Self::Event>) -> bool;

    /// Emits `text` (at absolute `start`, possibly empty) as text of the current mode.
    fn emit_text(&mut self, text: &str, start: usize, out: &mut Vec<Self::Event>);

    /// How much of `run`, the text that ends what is pending, may be emitted before
    /// more input comes: all of it unless the mode must not split something there.
    fn emittable(&self, run: &str) -> usize {
        run.len()
    }

    /// End of input, after every byte has been emitted; `end` is the input's length.
    fn end_of_input(&mut self, end: usize, out: &mut Vec<Self::Event>);
}

/// [`Machine::advance`] for a [`TagScanner`].
pub fn scan_tags<S: TagScanner>(
    scanner: &mut S,
    pending: &str,
    base: usize,
    eof: bool,
    out: &mut Vec<S::Event>,
) -> usize {
    let bytes = pending.as_bytes();
    // `run` is where the current run of mode text began; `at` the scan position.
    let mut run = 0;
    let mut at = 0;
    loop {
        match scanner.probe_resume(&pending[at..], eof) {
            None => {}
            Some(Verdict::NeedMore) => {
                scanner.emit_text(&pending[run..at], base + run, out);
                return at;
            }
            Some(Verdict::Complete(len)) => {
                // The run before the tag belongs to the mode before it.
                scanner.emit_text(&pending[run..at], base + run, out);
                run = at;
                if scanner.probe_take(&pending[at..at + len], base + at, out) {
                    at += len;
                    run = at;
                } else {
                    at += 1;
                }
            }
            Some(Verdict::Rejected) => {
                // Not a tag: the `<` is text of this mode; scan on after it.
                scanner.probe_reject();
                at += 1;
            }
        }
        match find_byte(b'<', &bytes[at..]) {
            None => {
                let end = if eof {
                    pending.len()
                } else {
                    run + scanner.emittable(&pending[run..])
                };
                scanner.emit_text(&pending[run..end], base + run, out);
                if eof {
                    scanner.end_of_input(base + pending.len(), out);
                }
                return end;
            }
            Some(k) => {
                at += k;
                scanner.probe_start();
            }
        }
    }
}

/// Chunks up to this size get the inline ASCII check before UTF-8 validation.
const SMALL_CHUNK: usize = 64;

/// Whether every byte of `bytes`, at most 16 of them, is ASCII: the first and
/// the last 4 or 8 bytes (overlapping, so every byte is among them) are read as
/// two words and their high bits tested at once, which on the few bytes of a
/// streamed token costs a fraction of a loop over them.
#[inline(always)]
fn is_ascii_short(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if let (Some(head), Some(tail)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        debug_assert!(n <= 16);
        return (u64::from_le_bytes(*head) | u64::from_le_bytes(*tail)) & 0x8080_8080_8080_8080
            == 0;
    }
    if let (Some(head), Some(tail)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        return (u32::from_le_bytes(*head) | u32::from_le_bytes(*tail)) & 0x8080_8080 == 0;
    }
    bytes.iter().all(|&b| b < 0x80)
}

/// Length of the UTF-8 sequence a lead byte starts (0 for a byte that cannot lead).
fn sequence_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    }
}

impl Reentry {
    /// An empty layer at offset 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many invalid UTF-8 sequences have been replaced with U+FFFD.
    pub fn replaced(&self) -> usize {
        self.replaced
    }

    /// Feeds one chunk of bytes and lets `machine` decide what it can.
    pub fn feed<M: Machine>(&mut self, mut bytes: &[u8], machine: &mut M, out: &mut Vec<M::Event>) {
        if self.carry_len > 0 {
            bytes = self.complete_carry(bytes);
        }
        let (valid, tail_start) = self.split_valid(bytes);
        if tail_start == bytes.len() {
            return self.feed_text(valid, machine, out);
        }
        self.buf.push_str(valid);
        self.decode_into_buf(&bytes[tail_start..]);
        self.drive(machine, false, out);
    }

    /// [`Self::feed`] for a chunk that is text already (`&str`, so valid UTF-8 and
    /// whole characters): nothing is validated again. A whole document parsed from
    /// a `&str` is fed this way.
    pub fn feed_str<M: Machine>(&mut self, text: &str, machine: &mut M, out: &mut Vec<M::Event>) {
        if self.carry_len > 0 {
            // A partial character fed as bytes before: the general path ends it.
            return self.feed(text.as_bytes(), machine, out);
        }
        self.feed_text(text, machine, out);
    }

    /// Clean text after any carried character: with nothing pending it is decided
    /// in place and only what stays undecided is copied; else it joins the pending
    /// text.
    #[inline]
    fn feed_text<M: Machine>(&mut self, text: &str, machine: &mut M, out: &mut Vec<M::Event>) {
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
            let used = machine.advance(text, self.offset, false, out);
            self.offset += used;
            if used < text.len() {
                self.buf.push_str(&text[used..]);
            }
            return;
        }
        self.buf.push_str(text);
        self.drive(machine, false, out);
    }

    /// Ends the input: a carried partial character becomes U+FFFD and the machine
    /// decides every remaining byte.
    pub fn finish<M: Machine>(&mut self, machine: &mut M, out: &mut Vec<M::Event>) {
        if self.carry_len > 0 {
            self.carry_len = 0;
            self.replaced += 1;
            self.buf.push(char::REPLACEMENT_CHARACTER);
        }
        self.drive(machine, true, out);
        debug_assert_eq!(
            self.start,
            self.buf.len(),
            "machine left bytes undecided at eof"
        );
        self.offset += self.buf.len() - self.start;
        self.buf.clear();
        self.start = 0;
    }

    fn drive<M: Machine>(&mut self, machine: &mut M, eof: bool, out: &mut Vec<M::Event>) {
        let pending = &self.buf[self.start..];
        if pending.is_empty() && !eof {
            return;
        }
        let used = machine.advance(pending, self.offset, eof, out);
        self.offset += used;
        self.start += used;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start >= 4096 && self.start * 2 >= self.buf.len() {
            // Release decided bytes; amortized O(1) per byte.
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }

    /// Completes (or rejects) the carried partial character with the first bytes of
    /// `bytes`; returns the bytes not used.
    fn complete_carry<'a>(&mut self, mut bytes: &'a [u8]) -> &'a [u8] {
        let need = sequence_len(self.carry[0]);
        while self.carry_len > 0 && !bytes.is_empty() {
            let mut candidate = self.carry;
            candidate[self.carry_len] = bytes[0];
            let len = self.carry_len + 1;
            match std::str::from_utf8(&candidate[..len]) {
                Ok(s) => {
                    self.buf.push_str(s);
                    self.carry_len = 0;
                    bytes = &bytes[1..];
                }
                Err(e) if e.error_len().is_none() && len < need => {
                    self.carry = candidate;
                    self.carry_len = len;
                    bytes = &bytes[1..];
                }
                Err(_) => {
                    // The carried bytes are a maximal invalid subpart; the new byte
                    // is decoded on its own.
                    self.carry_len = 0;
                    self.replaced += 1;
                    self.buf.push(char::REPLACEMENT_CHARACTER);
                }
            }
        }
        bytes
    }

    /// The longest clean UTF-8 prefix of `bytes`, and where it ends.
    #[inline(always)]
    fn split_valid<'a>(&self, bytes: &'a [u8]) -> (&'a str, usize) {
        // Small chunks (a streamed token or two) are nearly always ASCII: checking
        // that inline costs far less than a call to the general validator, which
        // showed as a quarter of the per-feed cost at 1-byte chunks; up to 16
        // bytes, two words are tested instead of a loop over the bytes.
        let ascii = if bytes.len() <= 16 {
            is_ascii_short(bytes)
        } else {
            bytes.len() <= SMALL_CHUNK && bytes.is_ascii()
        };
        if ascii {
            // SAFETY: every byte is ASCII, so the slice is valid UTF-8.
            return (unsafe { std::str::from_utf8_unchecked(bytes) }, bytes.len());
        }
        Self::split_valid_general(bytes)
    }

    /// [`Self::split_valid`] for bytes that are not all ASCII or not few.
    #[inline(never)]
    fn split_valid_general(bytes: &[u8]) -> (&str, usize) {
        match std::str::from_utf8(bytes) {
            Ok(s) => (s, bytes.len()),
            Err(e) => {
                let end = e.valid_up_to();
                // SAFETY-free: from_utf8 just validated this prefix.
                let s = std::str::from_utf8(&bytes[..end]).unwrap_or_default();
                (s, end)
            }
        }
    }

    /// Decodes bytes that contain an invalid or incomplete sequence into `buf`.
    fn decode_into_buf(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            self.buf.push_str(chunk.valid());
            let bad = chunk.invalid();
            if bad.is_empty() {
                continue;
            }
            let at_end = chunks.peek().is_none();
            let incomplete = at_end
                && std::str::from_utf8(bad)
                    .err()
                    .is_some_and(|e| e.error_len().is_none());
            if incomplete {
                self.carry[..bad.len()].copy_from_slice(bad);
                self.carry_len = bad.len();
            } else {
                self.replaced += 1;
                self.buf.push(char::REPLACEMENT_CHARACTER);
            }
        }
    }
}

/// A machine together with its re-entry layer: the streaming parser of a dialect.
///
/// ```
/// use idiolect::sections;
/// let mut parser = sections::Parser::with_options(&sections::Options::default()).unwrap();
/// let mut events = Vec::new();
/// for chunk in [&b"<think>pl"[..], b"an</th", b"ink>done"] {
///     events.extend(parser.feed(chunk));
/// }
/// events.extend(parser.finish());
/// let doc = sections::Document::fold(&events);
/// assert_eq!(doc.items.len(), 2);
/// ```
#[derive(Debug)]
pub struct Stream<M: Machine> {
    reentry: Reentry,
    machine: M,
    events: Vec<M::Event>,
    finished: bool,
    late_bytes: usize,
}

impl<M: Machine> Stream<M> {
    /// A stream over `machine`, at offset 0.
    pub fn new(machine: M) -> Self {
        Stream {
            reentry: Reentry::new(),
            machine,
            events: Vec::new(),
            finished: false,
            late_bytes: 0,
        }
    }

    /// Feeds a chunk (any split, even inside a UTF-8 sequence) and returns the
    /// events it decided. Bytes fed after [`Stream::finish`] start nothing and
    /// are reported by [`Stream::fed_after_finish`].
    pub fn feed(&mut self, bytes: &[u8]) -> std::vec::Drain<'_, M::Event> {
        self.feed_lent(bytes);
        self.events.drain(..)
    }

    /// [`Stream::feed`] that lends the events instead of handing them over: they
    /// stay in the stream until its next `feed`, `feed_str` or `finish` call. A
    /// consumer that only reads them (to project, serialize or copy what it keeps)
    /// moves no event out of the stream.
    #[inline]
    pub fn feed_lent(&mut self, bytes: &[u8]) -> &[M::Event] {
        M::release(&mut self.events);
        if self.finished {
            self.late_bytes += bytes.len();
        } else {
            self.reentry
                .feed(bytes, &mut self.machine, &mut self.events);
        }
        &self.events
    }

    /// [`Stream::feed`] for a chunk that is text already: nothing is validated
    /// again (the re-entry layer's `feed_str`).
    pub fn feed_str(&mut self, text: &str) -> std::vec::Drain<'_, M::Event> {
        self.events.clear();
        if self.finished {
            self.late_bytes += text.len();
        } else {
            self.reentry
                .feed_str(text, &mut self.machine, &mut self.events);
        }
        self.events.drain(..)
    }

    /// Ends the input and returns the events that end-of-input decides.
    pub fn finish(&mut self) -> std::vec::Drain<'_, M::Event> {
        self.finish_lent();
        self.events.drain(..)
    }

    /// [`Stream::finish`] that lends the events, as [`Stream::feed_lent`].
    pub fn finish_lent(&mut self) -> &[M::Event] {
        M::release(&mut self.events);
        if !self.finished {
            self.finished = true;
            self.reentry.finish(&mut self.machine, &mut self.events);
        }
        &self.events
    }

    /// How many bytes were fed after [`Stream::finish`] and therefore ignored.
    pub fn fed_after_finish(&self) -> usize {
        self.late_bytes
    }

    /// The dialect machine (its options and state).
    pub fn machine(&self) -> &M {
        &self.machine
    }

    /// How many invalid UTF-8 sequences were replaced with U+FFFD so far.
    pub fn replaced(&self) -> usize {
        self.reentry.replaced()
    }

    /// The re-entry layer (offsets, held bytes, replacement count).
    pub(crate) fn reentry(&self) -> &Reentry {
        &self.reentry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_byte_and_find_byte3_agree_with_memchr_on_short_and_long_slices() {
        let text: Vec<u8> = (0..64u8).map(|i| b'a' + i % 26).collect();
        for len in 0..text.len() {
            for needle in [b'a', b'p', b'z', b'<'] {
                let hay = &text[..len];
                assert_eq!(find_byte(needle, hay), memchr::memchr(needle, hay), "{len}");
                assert_eq!(
                    find_byte3(needle, b'q', b'<', hay),
                    memchr::memchr3(needle, b'q', b'<', hay),
                    "{len}"
                );
            }
        }
    }

    /// The word test of short chunks says what `is_ascii` says, for every length
    /// up to 16 and a non-ASCII byte at every place.
    #[test]
    fn the_short_ascii_test_agrees_with_is_ascii() {
        for len in 0..=16 {
            let clean = vec![b'a'; len];
            assert!(is_ascii_short(&clean), "{len}");
            for at in 0..len {
                for bad in [0x80u8, 0xC3, 0xFF] {
                    let mut bytes = clean.clone();
                    bytes[at] = bad;
                    assert_eq!(is_ascii_short(&bytes), bytes.is_ascii(), "{len} {at}");
                    assert!(!is_ascii_short(&bytes));
                }
            }
        }
    }

    #[test]
    fn small_chunks_with_multibyte_text_still_decode_exactly() {
        let mut layer = Reentry::new();
        let mut seen = String::new();
        struct Echo<'a>(&'a mut String);
        impl Machine for Echo<'_> {
            type Event = ();
            fn advance(&mut self, p: &str, _: usize, _: bool, _: &mut Vec<()>) -> usize {
                self.0.push_str(p);
                p.len()
            }
        }
        let input = "añb€c\u{1F600}d";
        for b in input.as_bytes().chunks(1) {
            layer.feed(b, &mut Echo(&mut seen), &mut Vec::new());
        }
        layer.finish(&mut Echo(&mut seen), &mut Vec::new());
        assert_eq!(seen, input);
        assert_eq!(layer.replaced(), 0);
    }
    /// Text fed with `feed_str` is seen exactly as fed with `feed`: alone, after
    /// bytes that ended inside a character, and with bytes held back undecided.
    #[test]
    fn text_fed_as_str_is_decided_as_the_same_bytes() {
        // Decides everything up to its last character until the input ends.
        struct Holding(String);
        impl Machine for Holding {
            type Event = ();
            fn advance(&mut self, p: &str, _: usize, eof: bool, _: &mut Vec<()>) -> usize {
                let keep = if eof {
                    0
                } else {
                    p.chars().next_back().map_or(0, char::len_utf8)
                };
                self.0.push_str(&p[..p.len() - keep]);
                p.len() - keep
            }
        }
        let input = "añb€c\u{1F600}d";
        for split in 0..=input.len() {
            let mut layer = Reentry::new();
            let mut machine = Holding(String::new());
            let (head, tail) = input.as_bytes().split_at(split);
            layer.feed(head, &mut machine, &mut Vec::new());
            match std::str::from_utf8(tail) {
                // The bytes before ended on a character boundary.
                Ok(tail) => {
                    for piece in tail.split_inclusive(|_| true) {
                        layer.feed_str(piece, &mut machine, &mut Vec::new());
                    }
                }
                // They ended inside a character: the rest is not text on its own.
                Err(_) => layer.feed(tail, &mut machine, &mut Vec::new()),
            }
            layer.finish(&mut machine, &mut Vec::new());
            assert_eq!(machine.0, input, "split at {split}");
            assert_eq!(layer.replaced(), 0, "split at {split}");
        }
        // Text after a cut character: the character is replaced, as with `feed`.
        let mut seen = Vec::new();
        for as_str in [false, true] {
            let mut layer = Reentry::new();
            let mut machine = Holding(String::new());
            layer.feed(b"a\xC3", &mut machine, &mut Vec::new());
            if as_str {
                layer.feed_str("b", &mut machine, &mut Vec::new());
            } else {
                layer.feed(b"b", &mut machine, &mut Vec::new());
            }
            layer.finish(&mut machine, &mut Vec::new());
            seen.push((machine.0, layer.replaced()));
        }
        assert_eq!(seen[0], ("a\u{FFFD}b".to_string(), 1));
        assert_eq!(seen[1], seen[0]);
    }
}
