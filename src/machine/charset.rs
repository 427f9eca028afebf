//! Sets of bytes and classes of characters: what the compiler folds single-character
//! expressions into, and how a class of Unicode scalar values becomes byte-level tests
//! over UTF-8.

/// A set of bytes: a 256-bit bitmap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByteSet([u64; 4]);

impl ByteSet {
    /// The empty set.
    pub const EMPTY: ByteSet = ByteSet([0; 4]);

    /// Whether `b` is in the set.
    #[inline(always)]
    pub fn contains(&self, b: u8) -> bool {
        (self.0[(b >> 6) as usize] >> (b & 63)) & 1 == 1
    }

    /// Adds `b`.
    pub fn insert(&mut self, b: u8) {
        self.0[(b >> 6) as usize] |= 1 << (b & 63);
    }

    /// Adds every byte from `lo` to `hi`, inclusive.
    pub fn insert_range(&mut self, lo: u8, hi: u8) {
        for b in lo..=hi {
            self.insert(b);
        }
    }

    /// The union of two sets.
    pub fn union(&self, other: &ByteSet) -> ByteSet {
        let mut out = *self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        out
    }

    /// Whether no byte is in the set.
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// The bytes in the set, in order.
    pub fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&b| self.contains(b))
    }

    /// Every byte not in the set.
    pub fn complement(&self) -> ByteSet {
        ByteSet(self.0.map(|w| !w))
    }

    /// How many bytes are in the set.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// A set of bytes as the machine tests it: one flag per byte, so a test is one load
/// (a bitmap needs a shift and a mask more, on every byte of a span).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteTable([bool; 256]);

impl ByteTable {
    /// Whether `b` is in the set.
    #[inline(always)]
    pub fn contains(&self, b: u8) -> bool {
        self.0[b as usize]
    }
}

impl From<&ByteSet> for ByteTable {
    fn from(set: &ByteSet) -> Self {
        ByteTable(std::array::from_fn(|b| set.contains(b as u8)))
    }
}

const MAX_CHAR: u32 = 0x10FFFF;
const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

/// A class of Unicode scalar values as sorted, disjoint, non-adjacent inclusive
/// ranges (surrogates are never members).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Class(Vec<(u32, u32)>);

impl Class {
    /// The class of the characters from `lo` to `hi` (empty when `lo > hi`).
    pub fn range(lo: char, hi: char) -> Class {
        let mut class = Class::default();
        if lo <= hi {
            class.add(lo as u32, hi as u32);
        }
        class
    }

    /// Every character.
    pub fn full() -> Class {
        Class::range('\0', char::MAX)
    }

    fn add(&mut self, lo: u32, hi: u32) {
        // Keep surrogates out so that "all of the non-ASCII characters" has one form.
        if lo <= SURROGATES.1 && hi >= SURROGATES.0 {
            if lo < SURROGATES.0 {
                self.add(lo, SURROGATES.0 - 1);
            }
            if hi > SURROGATES.1 {
                self.add(SURROGATES.1 + 1, hi);
            }
            return;
        }
        self.0.push((lo, hi));
        self.normalize();
    }

    fn normalize(&mut self) {
        self.0.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(self.0.len());
        for &(lo, hi) in &self.0 {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        self.0 = merged;
    }

    /// The union of two classes.
    pub fn union(&self, other: &Class) -> Class {
        let mut out = Class(self.0.iter().chain(&other.0).copied().collect());
        out.normalize();
        out
    }

    /// Every character not in the class.
    pub fn complement(&self) -> Class {
        let mut out = Class::default();
        let mut next = 0u32;
        for &(lo, hi) in &self.0 {
            if lo > next {
                out.add(next, lo - 1);
            }
            next = hi + 1;
        }
        if next <= MAX_CHAR {
            out.add(next, MAX_CHAR);
        }
        out
    }

    /// The characters of `self` that are not in `other`.
    pub fn minus(&self, other: &Class) -> Class {
        self.complement().union(other).complement()
    }

    /// Whether the class has no member.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The ASCII members, as a byte set.
    pub fn ascii(&self) -> ByteSet {
        let mut set = ByteSet::EMPTY;
        for &(lo, hi) in &self.0 {
            if lo <= 0x7F {
                set.insert_range(lo as u8, hi.min(0x7F) as u8);
            }
        }
        set
    }

    /// The non-ASCII members.
    fn non_ascii(&self) -> Class {
        self.minus(&Class::range('\0', '\x7F'))
    }

    /// How the class relates to the non-ASCII characters: none of them, all of them,
    /// or some.
    pub fn non_ascii_extent(&self) -> Extent {
        let rest = self.non_ascii();
        if rest.is_empty() {
            Extent::None
        } else if rest == Class::range('\u{80}', char::MAX) {
            Extent::All
        } else {
            Extent::Some
        }
    }

    /// The bytes a member's UTF-8 encoding can start with.
    pub fn lead_bytes(&self) -> ByteSet {
        let mut set = self.ascii();
        for seq in self.non_ascii().utf8_sequences() {
            set.insert_range(seq[0].0, seq[0].1);
        }
        set
    }

    /// The UTF-8 encodings of the members as sequences of byte ranges: a string is
    /// the encoding of a member exactly when, for one sequence, each of its bytes is
    /// in the range at its place. The sequences are disjoint.
    pub fn utf8_sequences(&self) -> Vec<Vec<(u8, u8)>> {
        let mut out = Vec::new();
        for &(lo, hi) in &self.0 {
            split_utf8(lo, hi, &mut out);
        }
        out
    }
}

/// How much of the non-ASCII range a class covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// No non-ASCII character.
    None,
    /// Every non-ASCII character.
    All,
    /// Some but not all.
    Some,
}

fn encode(c: u32, buf: &mut [u8; 4]) -> usize {
    char::from_u32(c).map_or(0, |c| c.encode_utf8(buf).len())
}

/// Splits `[lo, hi]` (no surrogates) into ranges whose encodings are products of byte
/// ranges: first by encoded length, then until every continuation position spans
/// either one value of the higher bytes or all of them.
fn split_utf8(lo: u32, hi: u32, out: &mut Vec<Vec<(u8, u8)>>) {
    let mut work = vec![(lo, hi)];
    'work: while let Some((s, e)) = work.pop() {
        for max in [0x7F, 0x7FF, 0xFFFF] {
            if s <= max && max < e {
                work.push((s, max));
                work.push((max + 1, e));
                continue 'work;
            }
        }
        let (mut a, mut b) = ([0u8; 4], [0u8; 4]);
        let n = encode(s, &mut a);
        if n == 0 || encode(e, &mut b) != n {
            continue;
        }
        for i in 1..n {
            let m = (1u32 << (6 * i)) - 1;
            if s & !m != e & !m {
                if s & m != 0 {
                    work.push((s, s | m));
                    work.push(((s | m) + 1, e));
                    continue 'work;
                }
                if e & m != m {
                    work.push((s, (e & !m) - 1));
                    work.push((e & !m, e));
                    continue 'work;
                }
            }
        }
        out.push((0..n).map(|k| (a[k], b[k])).collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `c`'s encoding is matched by one of `seqs`.
    fn matched(seqs: &[Vec<(u8, u8)>], c: char) -> bool {
        let mut buf = [0; 4];
        let bytes = c.encode_utf8(&mut buf).as_bytes();
        seqs.iter().any(|seq| {
            seq.len() == bytes.len()
                && seq
                    .iter()
                    .zip(bytes)
                    .all(|(&(lo, hi), &b)| lo <= b && b <= hi)
        })
    }

    #[test]
    fn utf8_sequences_match_exactly_the_members() {
        let edges = [
            '\0',
            '\x7F',
            '\u{80}',
            '\u{7FF}',
            '\u{800}',
            '\u{FFF}',
            '\u{1000}',
            '\u{D7FF}',
            '\u{E000}',
            '\u{FFFF}',
            '\u{10000}',
            '\u{3FFFF}',
            '\u{40000}',
            '\u{10FFFF}',
            'é',
            'α',
            'ω',
            '€',
            '😀',
        ];
        for &lo in &edges {
            for &hi in &edges {
                let class = Class::range(lo, hi);
                let seqs = class.utf8_sequences();
                for probe in edges.iter().chain(&['a', '\u{7FE}', '\u{801}', '\u{FFFE}']) {
                    let inside = lo <= *probe && *probe <= hi;
                    assert_eq!(matched(&seqs, *probe), inside, "{lo:?}..{hi:?} {probe:?}");
                }
            }
        }
    }

    #[test]
    fn complements_and_extents() {
        let quote = Class::range('"', '"');
        let rest = quote.complement();
        assert_eq!(rest.non_ascii_extent(), Extent::All);
        assert!(!rest.ascii().contains(b'"') && rest.ascii().contains(b'a'));
        assert_eq!(quote.non_ascii_extent(), Extent::None);
        assert_eq!(Class::range('α', 'ω').non_ascii_extent(), Extent::Some);
        assert!(!rest.minus(&Class::range('a', 'z')).ascii().contains(b'q'));
        assert!(Class::range('b', 'a').is_empty());
    }
}
