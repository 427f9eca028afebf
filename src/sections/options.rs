//! Options of the sections dialect: the registry of section names and the tag bound.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default for [`Options::max_tag_bytes`]: 64 KiB.
pub const DEFAULT_MAX_TAG_BYTES: usize = 64 * 1024;

/// One recognized section: its canonical name and the other spellings that mean it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    /// The canonical name, reported as `name` in events and items.
    pub name: String,
    /// Other spellings that open and close the same section.
    #[serde(default)]
    pub aliases: Vec<String>,
}

impl SectionSpec {
    /// A section called `name` with the given aliases.
    pub fn new(name: &str, aliases: &[&str]) -> Self {
        SectionSpec {
            name: name.to_string(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
        }
    }
}

/// Options of the sections dialect, as given in JSON (`{"sections": [...], "max_tag_bytes": N}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// The recognized sections. The default registry is `think`, `write-file`
    /// (aliases `create-file`, `dyad-write`), `summary` and `run-bash`.
    pub sections: Vec<SectionSpec>,
    /// The longest an opening or closing tag may be, `<` to `>` inclusive, in bytes.
    /// A longer candidate is text (SEC-8). It also bounds what is held back.
    pub max_tag_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sections: vec![
                SectionSpec::new("think", &[]),
                SectionSpec::new("write-file", &["create-file", "dyad-write"]),
                SectionSpec::new("summary", &[]),
                SectionSpec::new("run-bash", &[]),
            ],
            max_tag_bytes: DEFAULT_MAX_TAG_BYTES,
        }
    }
}

/// Why a set of options cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionsProblem {
    /// A name or alias is empty or has a character outside `[A-Za-z0-9_-]`.
    BadName(String),
    /// The same spelling (ASCII case-insensitively) is registered twice.
    Duplicate(String),
    /// `max_tag_bytes` is below the 3 bytes of the shortest tag `<a>`.
    TagBoundTooSmall(usize),
}

impl std::fmt::Display for OptionsProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionsProblem::BadName(n) => {
                write!(
                    f,
                    "section name {n:?} must be one or more of A-Z a-z 0-9 _ -"
                )
            }
            OptionsProblem::Duplicate(n) => write!(f, "section name {n:?} is registered twice"),
            OptionsProblem::TagBoundTooSmall(n) => {
                write!(f, "max_tag_bytes is {n}; it must be at least 3")
            }
        }
    }
}

impl std::error::Error for OptionsProblem {}

/// The registry as the machine uses it: every spelling, lowercased, in a trie, so
/// that a name is matched one byte (or one run of bytes) at a time and a name that
/// no spelling starts with is ruled out on the byte that rules it out.
#[derive(Clone, Debug)]
pub(crate) struct Registry {
    /// Canonical names, by section index (inline strings: cheap to clone per event).
    pub names: Vec<compact_str::CompactString>,
    /// Every spelling, with the index of its section at its end.
    all: Trie,
    /// The spellings of each section (closers match only the open section's).
    by_section: Vec<Trie>,
}

/// Spellings as a trie over lowercased name bytes; node 0 is the root. Transitions
/// are a dense table (one row of [`SYMBOLS`] entries per node), so a step is one
/// load.
#[derive(Clone, Debug)]
struct Trie {
    /// `next[node * SYMBOLS + symbol]`: the node after that byte; 0 for none (the
    /// root is never a target).
    next: Vec<u32>,
    /// The section a spelling ending at each node names.
    section: Vec<Option<usize>>,
}

/// Bytes a lowercased name can hold: `a-z`, `0-9`, `_`, `-`.
const SYMBOLS: usize = 38;

/// No symbol: the byte cannot be part of a name.
const NOT_NAME: u8 = u8::MAX;

/// The symbol of every byte: `a-z` (either case), `0-9`, `_`, `-`; [`NOT_NAME`] for
/// any other byte. One table lookup both tests a byte and finds its transition.
static SYMBOL: [u8; 256] = {
    let mut table = [NOT_NAME; 256];
    let mut b = 0;
    while b < 256 {
        let c = (b as u8).to_ascii_lowercase();
        table[b] = match c {
            b'a'..=b'z' => c - b'a',
            b'0'..=b'9' => 26 + (c - b'0'),
            b'_' => 36,
            b'-' => 37,
            _ => NOT_NAME,
        };
        b += 1;
    }
    table
};

/// The symbol of a name byte (either case); `None` for any other byte.
fn symbol(b: u8) -> Option<usize> {
    match SYMBOL[b as usize] {
        NOT_NAME => None,
        sym => Some(sym as usize),
    }
}

impl Trie {
    fn new() -> Self {
        Trie {
            next: vec![0; SYMBOLS],
            section: vec![None],
        }
    }

    /// Adds a spelling of valid name bytes; false if it is already there (in any case).
    fn insert(&mut self, spelling: &[u8], section: usize) -> bool {
        let mut node = 0;
        for &b in spelling {
            let Some(sym) = symbol(b) else {
                return false;
            };
            node = match self.step(node, b) {
                Some(next) => next,
                None => {
                    let next = self.section.len() as u32;
                    self.section.push(None);
                    self.next.extend([0; SYMBOLS]);
                    self.next[node as usize * SYMBOLS + sym] = next;
                    next
                }
            };
        }
        self.section[node as usize].replace(section).is_none()
    }

    /// The node after byte `b` (either case), if a spelling continues with it.
    fn step(&self, node: u32, b: u8) -> Option<u32> {
        let sym = symbol(b)?;
        match self.next[node as usize * SYMBOLS + sym] {
            0 => None,
            next => Some(next),
        }
    }
}

/// Where a name read so far stands in the trie of the spellings it may become
/// (the default is the empty name).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NameMatch {
    node: u32,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Registry {
    pub fn new(options: &Options) -> Result<Self, OptionsProblem> {
        if options.max_tag_bytes < 3 {
            return Err(OptionsProblem::TagBoundTooSmall(options.max_tag_bytes));
        }
        let mut names = Vec::new();
        let mut all = Trie::new();
        let mut by_section = Vec::new();
        for (index, spec) in options.sections.iter().enumerate() {
            names.push(spec.name.as_str().into());
            let mut own = Trie::new();
            for spelling in std::iter::once(&spec.name).chain(&spec.aliases) {
                if !valid_name(spelling) {
                    return Err(OptionsProblem::BadName(spelling.clone()));
                }
                let lower = spelling.to_ascii_lowercase().into_bytes();
                if !all.insert(&lower, index) {
                    return Err(OptionsProblem::Duplicate(spelling.clone()));
                }
                own.insert(&lower, index);
            }
            by_section.push(own);
        }
        Ok(Registry {
            names,
            all,
            by_section,
        })
    }

    fn trie(&self, only: Option<usize>) -> Option<&Trie> {
        match only {
            Some(section) => self.by_section.get(section),
            None => Some(&self.all),
        }
    }

    /// Extends the name by the name bytes `bytes` starts with (any case), up to the
    /// first other byte or the end. Returns how many bytes that is, or `None` as
    /// soon as a byte leaves no spelling that the name could still become: reading a
    /// run at once decides exactly what reading it byte by byte would.
    pub fn scan_name(&self, m: &mut NameMatch, bytes: &[u8], only: Option<usize>) -> Option<usize> {
        let trie = self.trie(only)?;
        for (k, &b) in bytes.iter().enumerate() {
            let sym = SYMBOL[b as usize];
            if sym == NOT_NAME {
                return Some(k);
            }
            match trie.next[m.node as usize * SYMBOLS + sym as usize] {
                0 => return None,
                next => m.node = next,
            }
        }
        Some(bytes.len())
    }

    /// The section the name read so far spells exactly, if any.
    pub fn matched(&self, m: &NameMatch, only: Option<usize>) -> Option<usize> {
        self.trie(only)?.section[m.node as usize]
    }

    /// The section `name` (any case) spells, if any.
    #[cfg(test)]
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        let mut m = NameMatch::default();
        match self.scan_name(&mut m, name, None) {
            Some(n) if n == name.len() => self.matched(&m, None),
            _ => None,
        }
    }
}
