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

/// The registry as the machine uses it: every spelling lowercased and sorted, so
/// that the spellings a name-so-far can still become form one contiguous range.
#[derive(Clone, Debug)]
pub(crate) struct Registry {
    /// Canonical names, by section index (inline strings: cheap to clone per event).
    pub names: Vec<compact_str::CompactString>,
    /// Every spelling (lowercased, sorted) with the index of its section.
    all: Vec<(Vec<u8>, usize)>,
    /// The spellings of each section (lowercased, sorted).
    by_section: Vec<Vec<(Vec<u8>, usize)>>,
}

/// The spellings still viable for a name read so far: a range of a sorted list.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NameMatch {
    lo: usize,
    hi: usize,
    len: usize,
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
        let mut all: Vec<(Vec<u8>, usize)> = Vec::new();
        let mut by_section = Vec::new();
        for (index, spec) in options.sections.iter().enumerate() {
            names.push(spec.name.as_str().into());
            let mut own = Vec::new();
            for spelling in std::iter::once(&spec.name).chain(&spec.aliases) {
                if !valid_name(spelling) {
                    return Err(OptionsProblem::BadName(spelling.clone()));
                }
                let lower = spelling.to_ascii_lowercase().into_bytes();
                if all.iter().any(|(s, _)| *s == lower) {
                    return Err(OptionsProblem::Duplicate(spelling.clone()));
                }
                all.push((lower.clone(), index));
                own.push((lower, index));
            }
            own.sort();
            by_section.push(own);
        }
        all.sort();
        Ok(Registry {
            names,
            all,
            by_section,
        })
    }

    fn list(&self, only: Option<usize>) -> &[(Vec<u8>, usize)] {
        match only {
            Some(section) => self.by_section.get(section).map_or(&[], |v| v.as_slice()),
            None => &self.all,
        }
    }

    /// Starts matching a name against all spellings, or those of section `only`.
    pub fn start(&self, only: Option<usize>) -> NameMatch {
        NameMatch {
            lo: 0,
            hi: self.list(only).len(),
            len: 0,
        }
    }

    /// Extends the name by `byte`; false when no spelling starts with it any more.
    pub fn narrow(&self, m: &mut NameMatch, byte: u8, only: Option<usize>) -> bool {
        let list = &self.list(only)[m.lo..m.hi];
        let b = byte.to_ascii_lowercase();
        let i = m.len;
        // Sorted and sharing the first `i` bytes: shorter spellings come first, then
        // the rest ordered by their byte at `i`.
        let lo = list.partition_point(|(s, _)| s.len() <= i || s[i] < b);
        let hi = list.partition_point(|(s, _)| s.len() <= i || s[i] <= b);
        m.hi = m.lo + hi;
        m.lo += lo;
        m.len += 1;
        m.lo < m.hi
    }

    /// The section the name read so far spells exactly, if any.
    pub fn matched(&self, m: &NameMatch, only: Option<usize>) -> Option<usize> {
        let list = self.list(only);
        list.get(m.lo)
            .filter(|(s, _)| m.lo < m.hi && s.len() == m.len)
            .map(|(_, i)| *i)
    }

    /// The section `name` (any case) spells, if any.
    #[cfg(test)]
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        let mut m = self.start(None);
        for &b in name {
            if !self.narrow(&mut m, b, None) {
                return None;
            }
        }
        self.matched(&m, None)
    }
}
