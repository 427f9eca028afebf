//! The lookahead that decides whether a parameter closer ends a value (AX-11).
//!
//! Inside a value the only structural tag is the parameter closer, and it ends the
//! value only when, after optional whitespace, a parameter opener, an invoke closer,
//! a block closer or the end of input follows. [`ValueEndProbe`] reads the closer with
//! a [`TagProbe`] and then the lookahead, resuming where it stopped, within the tag
//! bound.

use std::sync::LazyLock;

use super::grammar::Name;
use super::probe::{is_ws, Allowed, Probed, Shape, TagProbe};
use super::PREFIX;
use crate::reentry::Verdict;

/// What may follow a parameter closer that ends a value (AX-11), after whitespace.
/// The `bool` says whether a whitespace byte must follow the text.
static FOLLOWERS: LazyLock<[(String, bool); 6]> = LazyLock::new(|| {
    [
        ("<parameter".to_string(), true),
        (format!("<{PREFIX}parameter"), true),
        ("</invoke>".to_string(), false),
        (format!("</{PREFIX}invoke>"), false),
        ("</function_calls>".to_string(), false),
        (format!("</{PREFIX}function_calls>"), false),
    ]
});

/// The lookahead after a complete closer of `len` bytes (AX-11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Lookahead {
    len: usize,
    /// Once a `<` came after the whitespace: where it is, and the followers the
    /// bytes from it can still become.
    follower: Option<(usize, Followers)>,
}

/// A set of [`FOLLOWERS`] entries (bit `j` for entry `j`), matched one byte at a
/// time so each byte of the lookahead is looked at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Followers(u8);

impl Followers {
    const ALL: Followers = Followers((1 << 6) - 1);

    /// Takes byte `b` at offset `k` from the `<`: `Some(true)` when the bytes so far
    /// are a follower, `Some(false)` when they may still become one, `None` when
    /// they cannot.
    fn step(&mut self, k: usize, b: u8) -> Option<bool> {
        let mut bits = self.0;
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (text, needs_ws) = &FOLLOWERS[j];
            let text = text.as_bytes();
            let keep = match text.get(k) {
                Some(&t) => t == b,
                // One byte past the text: only whitespace completes it.
                None => *needs_ws && k == text.len() && is_ws(b),
            };
            if !keep {
                self.0 &= !(1 << j);
            } else if k + 1 == text.len() && !needs_ws || k == text.len() {
                return Some(true);
            }
        }
        (self.0 != 0).then_some(false)
    }
}

/// Probes a parameter closer inside a value and the lookahead after it (AX-11).
///
/// `Complete(n)` means the first `n` bytes are a closer that ends the value (the bytes
/// after it are not consumed); `Rejected` means the `<` is value text.
#[derive(Clone, Debug)]
pub struct ValueEndProbe {
    closer: TagProbe,
    look: Option<Lookahead>,
    scanned: usize,
}

/// The only structural tag inside a value.
const VALUE_TAGS: Allowed = &[(Shape::Closer, Name::Parameter)];

impl ValueEndProbe {
    /// A probe for a candidate whose `<` is the first byte of the unit.
    pub fn new() -> Self {
        ValueEndProbe {
            closer: TagProbe::new(VALUE_TAGS),
            look: None,
            scanned: 0,
        }
    }

    /// Looks at the bytes of `unit` not seen yet. Undecided after `max` bytes, a
    /// complete closer ends the value.
    pub fn resume(&mut self, unit: &[u8], max: usize) -> Verdict {
        let mut look = match self.look {
            Some(look) => look,
            None => match self.closer.resume(unit, max) {
                Verdict::Complete(len) => {
                    self.scanned = len;
                    Lookahead {
                        len,
                        follower: None,
                    }
                }
                other => return other,
            },
        };
        let verdict = loop {
            if self.scanned >= max {
                break Verdict::Complete(look.len);
            }
            let Some(&b) = unit.get(self.scanned) else {
                break Verdict::NeedMore;
            };
            let i = self.scanned;
            self.scanned += 1;
            match look.follower {
                None if is_ws(b) => {}
                None if b == b'<' => look.follower = Some((i, Followers::ALL)),
                None => break Verdict::Rejected,
                Some((from, ref mut viable)) => match viable.step(i - from, b) {
                    Some(true) => break Verdict::Complete(look.len),
                    Some(false) => {}
                    None => break Verdict::Rejected,
                },
            }
        };
        self.look = Some(look);
        verdict
    }

    /// After `Complete`, the closer as the probe read it.
    pub fn read(&mut self) -> Option<Probed> {
        self.closer.read()
    }

    /// End of input: a complete closer followed only by whitespace ends the value.
    pub fn at_end(&self) -> Verdict {
        match self.look {
            Some(Lookahead {
                len,
                follower: None,
            }) => Verdict::Complete(len),
            _ => Verdict::Rejected,
        }
    }
}

impl Default for ValueEndProbe {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a candidate follower `typed` (from its `<`) says, read naively from
    /// AX-11: `Some(true)` it is one, `Some(false)` it may still become one, `None`
    /// it cannot.
    fn naive_follower(typed: &[u8]) -> Option<bool> {
        let mut viable = false;
        for (text, needs_ws) in FOLLOWERS.iter() {
            let text = text.as_bytes();
            if text.starts_with(typed) {
                if typed.len() == text.len() && !needs_ws {
                    return Some(true);
                }
                viable = true;
            } else if *needs_ws
                && typed.len() == text.len() + 1
                && typed.starts_with(text)
                && is_ws(typed[text.len()])
            {
                return Some(true);
            }
        }
        viable.then_some(false)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        #[test]
        fn followers_matched_byte_by_byte_agree_with_the_naive_reading(
            parts in prop::collection::vec(prop::sample::select(&[
                "<", "/", "parameter", "param", "invoke", "inv", "function_calls", "function",
                PREFIX, "ant", " ", "\n", ">", "x", "s",
            ][..]), 1..6)
        ) {
            let typed = format!("<{}", parts.concat());
            let typed = typed.as_bytes();
            let mut viable = Followers::ALL;
            for k in 1..typed.len() {
                let got = viable.step(k, typed[k]);
                prop_assert_eq!(got, naive_follower(&typed[..=k]), "at {} of {:?}", k, String::from_utf8_lossy(typed));
                if got != Some(false) {
                    break;
                }
            }
        }
    }

    fn value_end(text: &str, eof: bool) -> Verdict {
        let mut p = ValueEndProbe::new();
        match p.resume(text.as_bytes(), 1024) {
            Verdict::NeedMore if eof => p.at_end(),
            v => v,
        }
    }

    #[test]
    fn parameter_closer_ends_a_value_only_before_structure() {
        assert_eq!(
            value_end("</parameter>\n</invoke>", false),
            Verdict::Complete(12)
        );
        assert_eq!(
            value_end("</parameter><parameter name", false),
            Verdict::Complete(12)
        );
        assert_eq!(value_end("</parameter> \n", true), Verdict::Complete(12));
        assert_eq!(value_end("</parameter> text", false), Verdict::Rejected);
        assert_eq!(
            value_end("</parameter><parameters", false),
            Verdict::Rejected
        );
        assert_eq!(value_end("</parameter></inv", true), Verdict::Rejected);
        assert_eq!(value_end("</parameter></inv", false), Verdict::NeedMore);
    }
}
