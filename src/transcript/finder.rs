//! Finds the earliest occurrence of any of several literal patterns in text that
//! arrives piece by piece.
//!
//! Turn headers, end tokens and stop sequences are all literal strings, known only
//! at run time (they come from the options), so they are matched here rather than
//! by a grammar. The finder keeps every partial match alive across chunks, so each
//! byte is looked at once (S5), and it knows the earliest offset at which a match
//! could still begin: everything before that offset is safe to emit (S4).

/// A set of literal patterns (non-empty byte strings).
#[derive(Clone, Debug)]
pub(crate) struct Patterns {
    list: Vec<Box<[u8]>>,
    /// Bytes that begin some pattern.
    starts: [bool; 256],
    /// The same bytes, listed (for memchr when there are few).
    start_bytes: Vec<u8>,
    longest: usize,
}

impl Patterns {
    /// The patterns in `list`; empty strings never match and are kept only so that
    /// indices stay those of the list.
    pub fn new<S: AsRef<str>>(list: &[S]) -> Self {
        let mut starts = [false; 256];
        let mut start_bytes = Vec::new();
        let mut longest = 0;
        let list: Vec<Box<[u8]>> = list.iter().map(|p| p.as_ref().as_bytes().into()).collect();
        for p in &list {
            if let Some(&b) = p.first() {
                if !starts[b as usize] {
                    starts[b as usize] = true;
                    start_bytes.push(b);
                }
            }
            longest = longest.max(p.len());
        }
        Patterns {
            list,
            starts,
            start_bytes,
            longest,
        }
    }

    /// The longest pattern's length in bytes.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// Bytes that begin some pattern.
    pub fn start_bytes(&self) -> &[u8] {
        &self.start_bytes
    }

    /// The match that starts at `bytes[i..]`, which holds at least the longest
    /// pattern's length: the shortest pattern there, the first listed of equals.
    fn match_at(&self, bytes: &[u8], i: usize) -> Option<(usize, usize)> {
        let rest = &bytes[i..];
        let mut found: Option<(usize, usize)> = None;
        for (index, pattern) in self.list.iter().enumerate() {
            if !pattern.is_empty()
                && rest.starts_with(pattern)
                && found.is_none_or(|(_, len)| pattern.len() < len)
            {
                found = Some((index, pattern.len()));
            }
        }
        found
    }
}

/// A partial or complete match: where it starts (absolute offset) and which pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hit {
    pub start: usize,
    pub pattern: usize,
}

/// The partial matches alive after the bytes stepped so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cursor {
    /// In order of start, then pattern index.
    live: Vec<Hit>,
}

impl Cursor {
    /// Steps over byte `b` at absolute offset `at`, pushing onto `done` every match
    /// it completes (in order of start, then pattern index).
    pub fn step(&mut self, patterns: &Patterns, b: u8, at: usize, done: &mut Vec<Hit>) {
        self.live.retain(|hit| {
            let pattern = &patterns.list[hit.pattern];
            let k = at - hit.start;
            if pattern[k] != b {
                return false;
            }
            if k + 1 == pattern.len() {
                done.push(*hit);
                return false;
            }
            true
        });
        if patterns.starts[b as usize] {
            for (index, pattern) in patterns.list.iter().enumerate() {
                if pattern.first() == Some(&b) {
                    let hit = Hit {
                        start: at,
                        pattern: index,
                    };
                    if pattern.len() == 1 {
                        done.push(hit);
                    } else {
                        self.live.push(hit);
                    }
                }
            }
        }
    }

    /// Whether no partial match is alive.
    pub fn is_idle(&self) -> bool {
        self.live.is_empty()
    }

    /// Where the earliest live partial match starts.
    pub fn earliest(&self) -> Option<usize> {
        self.live.first().map(|hit| hit.start)
    }

    /// Forgets every partial match.
    pub fn clear(&mut self) {
        self.live.clear();
    }
}

/// Decides which completed matches count: the structure-aware scanner's block
/// tracker. [`Open`] lets every match count.
pub(crate) trait Gate {
    /// Whether every match counts ([`Open`]): then a candidate whose bytes are
    /// all there is decided at once, without stepping through it.
    const OPEN: bool = false;
    /// Whether a match whose last byte is at absolute offset `at` counts. Asked
    /// with `at` never decreasing.
    fn allows_after(&mut self, at: usize) -> bool;
}

/// The gate that lets every match count.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Open;

impl Gate for Open {
    const OPEN: bool = true;
    fn allows_after(&mut self, _: usize) -> bool {
        true
    }
}

/// What [`Finder::find`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The earliest match (TR-71): `[start, end)` in absolute offsets.
    Match {
        start: usize,
        end: usize,
        pattern: usize,
    },
    /// No match is decided; no match can begin before `safe` (absolute).
    Pending { safe: usize },
}

/// Finds the earliest match of a set of patterns: by start, then shortest, then
/// first listed. Resumable: bytes are scanned once, however the text is chunked.
#[derive(Clone, Debug)]
pub(crate) struct Finder {
    patterns: Patterns,
    cursor: Cursor,
    /// The best complete match so far, not yet decided because an earlier partial
    /// match is still alive.
    best: Option<Hit>,
    /// Absolute offset of the first byte not yet stepped.
    scanned: usize,
    done: Vec<Hit>,
}

impl Finder {
    /// A finder for `patterns` that starts scanning at absolute offset `from`.
    pub fn new(patterns: Patterns, from: usize) -> Self {
        Finder {
            patterns,
            cursor: Cursor::default(),
            best: None,
            scanned: from,
            done: Vec::new(),
        }
    }

    /// The patterns searched for.
    pub fn patterns(&self) -> &Patterns {
        &self.patterns
    }

    /// Forgets all partial matches; the next scan starts at absolute offset `from`.
    pub fn reset(&mut self, from: usize) {
        self.cursor.clear();
        self.best = None;
        self.scanned = from;
    }

    /// Offset (relative to `bytes`) of the next byte at or after `i` worth stepping.
    fn next_interesting(&self, bytes: &[u8], i: usize) -> Option<usize> {
        let hay = &bytes[i..];
        let k = match *self.patterns.start_bytes() {
            [] => None,
            [a] => memchr::memchr(a, hay),
            [a, b] => memchr::memchr2(a, b, hay),
            [a, b, c] => memchr::memchr3(a, b, c, hay),
            _ => hay.iter().position(|&c| self.patterns.starts[c as usize]),
        };
        k.map(|k| i + k)
    }

    /// Scans the bytes of `pending` (which starts at absolute offset `base`) not
    /// scanned yet. At `eof` a pending partial match can no longer complete.
    pub fn find<G: Gate>(&mut self, pending: &str, base: usize, eof: bool, gate: &mut G) -> Found {
        let bytes = pending.as_bytes();
        let end = base + bytes.len();
        let mut i = self.scanned.saturating_sub(base);
        while i < bytes.len() {
            if self.cursor.is_idle() && self.best.is_none() {
                match self.next_interesting(bytes, i) {
                    Some(next) => i = next,
                    None => break,
                }
                // Nothing is alive and every match counts: when the longest
                // pattern's bytes are all there, the match starting here (the
                // shortest, the first listed of equals) is the earliest there can
                // be, and with none, nothing starting here can complete.
                if G::OPEN && bytes.len() - i >= self.patterns.longest {
                    match self.patterns.match_at(bytes, i) {
                        Some((pattern, len)) => {
                            self.scanned = base + i + len;
                            return Found::Match {
                                start: base + i,
                                end: base + i + len,
                                pattern,
                            };
                        }
                        None => {
                            i += 1;
                            continue;
                        }
                    }
                }
            }
            let (b, at) = (bytes[i], base + i);
            self.done.clear();
            self.cursor.step(&self.patterns, b, at, &mut self.done);
            if !self.done.is_empty() && gate.allows_after(at) {
                for hit in &self.done {
                    // Only a strictly earlier start beats the best: at the same start
                    // the first to complete is the shortest, and listed first.
                    if self.best.is_none_or(|best| hit.start < best.start) {
                        self.best = Some(*hit);
                    }
                }
            }
            i += 1;
            if let Some(best) = self.best {
                if self.cursor.earliest().is_none_or(|s| s >= best.start) {
                    self.scanned = base + i;
                    return self.decide(best);
                }
            }
        }
        self.scanned = self.scanned.max(end);
        if eof {
            self.cursor.clear();
            if let Some(best) = self.best {
                return self.decide(best);
            }
            return Found::Pending { safe: end };
        }
        let safe = [self.cursor.earliest(), self.best.map(|b| b.start)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(end);
        Found::Pending { safe }
    }

    fn decide(&mut self, best: Hit) -> Found {
        self.best = None;
        self.cursor.clear();
        let end = best.start + self.patterns.list[best.pattern].len();
        Found::Match {
            start: best.start,
            end,
            pattern: best.pattern,
        }
    }
}

/// The earliest match of `patterns` in a whole `text`, if any (TR-71).
pub(crate) fn first_match(patterns: &Patterns, text: &str) -> Option<(usize, usize)> {
    let mut finder = Finder::new(patterns.clone(), 0);
    match finder.find(text, 0, true, &mut Open) {
        Found::Match { start, pattern, .. } => Some((start, pattern)),
        Found::Pending { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(patterns: &[&str], text: &str, chunk: usize) -> Option<(usize, usize)> {
        let mut finder = Finder::new(Patterns::new(patterns), 0);
        let mut fed = 0;
        while fed < text.len() {
            fed = (fed + chunk).min(text.len());
            if let Found::Match { start, pattern, .. } =
                finder.find(&text[..fed], 0, false, &mut Open)
            {
                return Some((start, pattern));
            }
        }
        match finder.find(text, 0, true, &mut Open) {
            Found::Match { start, pattern, .. } => Some((start, pattern)),
            Found::Pending { .. } => None,
        }
    }

    /// A gate that lets every match count but is not [`Open`]: the finder
    /// steps through every candidate.
    struct Stepping;

    impl Gate for Stepping {
        fn allows_after(&mut self, _: usize) -> bool {
            true
        }
    }

    /// Every match of `text` in turn, fed in chunks of `chunk` bytes, each
    /// search going on after the last match.
    fn all<G: Gate>(patterns: &[String], text: &str, chunk: usize, gate: &mut G) -> Vec<Found> {
        let mut finder = Finder::new(Patterns::new(patterns), 0);
        let (mut from, mut fed, mut out) = (0, 0, Vec::new());
        loop {
            let eof = fed == text.len();
            let found = finder.find(&text[from..fed], from, eof, gate);
            out.push(found);
            match found {
                Found::Match { end, .. } => {
                    from = end;
                    finder.reset(end);
                }
                Found::Pending { .. } if eof => return out,
                Found::Pending { safe } => {
                    from = safe.max(from);
                    fed = (fed + chunk).min(text.len());
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_open_gate_decides_as_stepping_does(
            patterns in proptest::collection::vec("[ab<|]{0,4}", 1..4),
            text in "[ab<|x]{0,40}",
            chunk in 1usize..9,
        ) {
            proptest::prop_assert_eq!(
                all(&patterns, &text, chunk, &mut Open),
                all(&patterns, &text, chunk, &mut Stepping)
            );
        }
    }

    #[test]
    fn earlier_start_wins_over_earlier_completion() {
        for chunk in 1..6 {
            assert_eq!(run(&["bc", "abcd"], "xabcd", chunk), Some((1, 1)));
            assert_eq!(run(&["bc", "abcd"], "xabce", chunk), Some((2, 0)));
        }
    }

    #[test]
    fn self_overlapping_pattern_is_found_after_a_false_start() {
        assert_eq!(run(&["aab"], "aaab", 1), Some((1, 0)));
    }

    #[test]
    fn safe_offset_stops_before_a_viable_prefix() {
        let mut finder = Finder::new(Patterns::new(&["\nUser:"]), 0);
        assert_eq!(
            finder.find("hello\nUs", 0, false, &mut Open),
            Found::Pending { safe: 5 }
        );
    }
}
