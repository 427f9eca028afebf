//! A viability rule written as data: `conformance/<dialect>.viability.json`, the
//! form every field family's rule takes (conformance/README.md, "Viability rules as
//! data"), so that a port checks promptness with the same rules.
//!
//! A rule lists *units*, each a regular expression `held` (and optionally an
//! expression `before` that the bytes emitted before the held suffix must match
//! whole), and the reasoning wrappers' spellings the option `reasoning_markers`
//! chooses among. A held-back suffix is viable when it is a prefix of a word of the
//! `held` expression of a unit whose `before` matches, or of an accepted spelling's
//! expression. Each expression is compiled to a lazy DFA (anchored at its start,
//! every match kept; its states are built as the corpus reaches them, since some
//! bounded repetitions would make a whole DFA large); the suffix is a prefix of a
//! word exactly when running the DFA over it never reaches the dead state.

use std::sync::Mutex;

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use serde::Deserialize;
use serde_json::Value;

/// A field family's viability rule (S4) as data: the units its spec lets a parser
/// hold back, as regular expressions (conformance/README.md, "Viability rules as
/// data"). The held-back suffix is viable when it is a prefix of a word of a unit's
/// `held` whose `before` matches, or of an accepted reasoning spelling's expression.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// The family (the dialect name; the file is `<family>.viability.json`).
    pub family: String,
    /// The spec rule the units are written from (`HE-13`, ...).
    pub rule: String,
    /// The units that may be held back.
    pub units: Vec<UnitFile>,
    /// The reasoning wrappers the option `reasoning_markers` chooses among, for a
    /// family that has the option.
    #[serde(default)]
    pub reasoning_markers: Option<SpellingsFile>,
}

/// One unit that may be held back.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitFile {
    /// What the unit is, in the spec's words.
    pub note: String,
    /// An expression the held-back suffix must be a prefix of a word of.
    pub held: String,
    /// An expression the bytes emitted before the suffix must match, whole (absent:
    /// any bytes); with `before_from_last`, only those from the start of the last
    /// occurrence of one of its strings.
    #[serde(default)]
    pub before: Option<String>,
    /// Strings that cut what `before` reads: the bytes from the start of the last
    /// occurrence of any of them (all the bytes when none occurs).
    #[serde(default)]
    pub before_from_last: Vec<String>,
}

/// The reasoning wrappers' spellings a family accepts by its `reasoning_markers`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpellingsFile {
    /// The spellings accepted when the option is absent.
    pub default: Vec<String>,
    /// Each spelling's name (as the option writes it) and its expression: the held
    /// suffix is viable when it is a prefix of one of its words.
    pub spellings: indexmap::IndexMap<String, String>,
}

/// A compiled unit.
#[derive(Debug)]
struct Unit {
    held: Dfa,
    before: Option<Dfa>,
    before_from_last: Vec<String>,
}

impl Unit {
    /// Whether the emitted bytes `before` are as this unit needs them.
    fn before_matches(&self, before: &[u8]) -> bool {
        let Some(dfa) = &self.before else {
            return true;
        };
        let from = self
            .before_from_last
            .iter()
            .filter_map(|cut| memchr::memmem::rfind(before, cut.as_bytes()))
            .max()
            .unwrap_or(0);
        dfa.matches_whole(&before[from..])
    }
}

/// A compiled rule file.
#[derive(Debug)]
pub struct DataRule {
    units: Vec<Unit>,
    default: Vec<String>,
    spellings: Vec<(String, Dfa)>,
}

/// An expression's lazy DFA and its cache (the runner checks cases on several
/// threads).
#[derive(Debug)]
struct Dfa {
    dfa: DFA,
    cache: Mutex<Cache>,
}

fn compile(pattern: &str, what: &str) -> Result<Dfa, String> {
    let dfa = DFA::builder()
        .configure(
            DFA::config()
                .match_kind(MatchKind::All)
                // minimax-m2's openers (16 bounded attributes) need about 8 MiB.
                .cache_capacity(32 << 20),
        )
        .build(pattern)
        .map_err(|e| format!("{what}: {pattern:?} does not compile: {e}"))?;
    let cache = Mutex::new(dfa.create_cache());
    Ok(Dfa { dfa, cache })
}

/// The answers of a lazy DFA that never gives up (no minimum cache clear count).
const NEVER_GIVES_UP: &str = "a lazy DFA without a minimum cache clear count never gives up";

impl Dfa {
    /// Runs the DFA over `bytes` from its anchored start: whether `bytes` is a
    /// prefix of a word (`whole`: a word) of the expression.
    fn run(&self, bytes: &[u8], whole: bool) -> bool {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let cache = &mut *cache;
        let dfa = &self.dfa;
        let mut state = dfa
            .start_state(cache, &start::Config::new().anchored(Anchored::Yes))
            .expect(NEVER_GIVES_UP);
        for &b in bytes {
            state = dfa.next_state(cache, state, b).expect(NEVER_GIVES_UP);
            if state.is_dead() {
                return false;
            }
        }
        // A match is reported one byte late, so a state that is not dead may hold
        // only the match that ended before the last byte: a word ends right here, or
        // (for a prefix) some byte still leads on.
        let ends_here = dfa
            .next_eoi_state(cache, state)
            .expect(NEVER_GIVES_UP)
            .is_match();
        ends_here
            || !whole
                && dfa
                    .byte_classes()
                    .representatives(..)
                    .filter_map(|unit| unit.as_u8())
                    .any(|b| {
                        !dfa.next_state(cache, state, b)
                            .expect(NEVER_GIVES_UP)
                            .is_dead()
                    })
    }

    /// Whether `bytes` is a prefix of a word of the expression.
    fn prefix_viable(&self, bytes: &[u8]) -> bool {
        self.run(bytes, false)
    }

    /// Whether `bytes` is, whole, a word of the expression.
    fn matches_whole(&self, bytes: &[u8]) -> bool {
        self.run(bytes, true)
    }
}

impl DataRule {
    /// Reads and compiles a rule file's text; `name` is the dialect the file is for.
    pub fn new(name: &str, text: &str) -> Result<DataRule, String> {
        let file: RuleFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if file.family != name {
            return Err(format!(
                "the file says it is the rule of {:?}, not of {name:?}",
                file.family
            ));
        }
        let units = file
            .units
            .iter()
            .map(|u| {
                Ok(Unit {
                    held: compile(&u.held, &u.note)?,
                    before: u
                        .before
                        .as_deref()
                        .map(|b| compile(b, &u.note))
                        .transpose()?,
                    before_from_last: u.before_from_last.clone(),
                })
            })
            .collect::<Result<_, String>>()?;
        let (default, spellings) = match file.reasoning_markers {
            None => (Vec::new(), Vec::new()),
            Some(s) => {
                if let Some(unknown) = s.default.iter().find(|d| !s.spellings.contains_key(*d)) {
                    return Err(format!("the default spelling {unknown:?} is not spelled"));
                }
                let spellings = s
                    .spellings
                    .iter()
                    .map(|(name, p)| Ok((name.clone(), compile(p, name)?)))
                    .collect::<Result<_, String>>()?;
                (s.default, spellings)
            }
        };
        Ok(DataRule {
            units,
            default,
            spellings,
        })
    }

    /// Whether `held` (whole characters) may be held back after `before`, with the
    /// case's `options` choosing the reasoning spellings.
    pub fn viable(&self, options: &Value, before: &[u8], held: &[u8]) -> bool {
        let accepted = |name: &str| match options.get("reasoning_markers") {
            Some(Value::Array(list)) => list.iter().any(|v| v == name),
            _ => self.default.iter().any(|d| d == name),
        };
        self.spellings
            .iter()
            .any(|(name, dfa)| accepted(name) && dfa.prefix_viable(held))
            || self
                .units
                .iter()
                .filter(|u| u.before.is_none())
                .any(|u| u.held.prefix_viable(held))
            || self.units.iter().any(|u| {
                u.before.is_some() && u.held.prefix_viable(held) && u.before_matches(before)
            })
    }
}

/// The JSON Schema of a rule file (`conformance/viability.schema.json`).
pub fn schema() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<RuleFile>()
        .to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(units: &str) -> DataRule {
        let text = format!(
            r#"{{"family":"x","rule":"X-1","units":{units},
               "reasoning_markers":{{"default":["think"],
               "spellings":{{"think":"<think|</think","bracket":"\\[THINK|\\[/THINK"}}}}}}"#
        );
        DataRule::new("x", &text).unwrap()
    }

    #[test]
    fn a_prefix_of_a_word_is_viable_and_more_is_not() {
        let r = rule(r#"[{"note":"a tag","held":"<tag>[ \\t]*\\{[\\s\\S]*"}]"#);
        let ok = |held: &str| r.viable(&Value::Null, b"", held.as_bytes());
        assert!(ok("<ta"));
        assert!(ok("<tag>  {\"a\": 1"));
        assert!(!ok("<tag>x"));
        assert!(!ok("x<tag>"));
    }

    #[test]
    fn the_option_chooses_the_spellings() {
        let r = rule("[]");
        assert!(r.viable(&Value::Null, b"", b"</thi"));
        assert!(!r.viable(&Value::Null, b"", b"<think>"));
        assert!(!r.viable(&Value::Null, b"", b"[THI"));
        let bracket = serde_json::json!({"reasoning_markers": ["bracket"]});
        assert!(r.viable(&bracket, b"", b"[THI"));
        assert!(!r.viable(&bracket, b"", b"</thi"));
    }

    #[test]
    fn a_unit_with_before_needs_the_bytes_before_to_match_whole() {
        let r = rule(
            r#"[{"note":"at the start","held":"[ ]*\\{","before":""},
                        {"note":"in a list","held":"[\\s\\S]*","before":"[\\s\\S]*\\[[a-z]+\\("}]"#,
        );
        assert!(r.viable(&Value::Null, b"", b"  {"));
        assert!(!r.viable(&Value::Null, b"x", b"  {"));
        assert!(r.viable(&Value::Null, b"text [f(", b"anything"));
        assert!(!r.viable(&Value::Null, b"text [f(x", b"anything"));
    }

    #[test]
    fn before_from_last_reads_from_the_last_cut() {
        let r = rule(
            r#"[{"note":"in an array group","held":"[\\s\\S]*",
                 "before":"\\[TOOL_CALLS\\] *\\[[\\s\\S]*","before_from_last":["[TOOL_CALLS]"]}]"#,
        );
        let ok = |before: &str| r.viable(&Value::Null, before.as_bytes(), b"x");
        assert!(ok("a [TOOL_CALLS] [{\"name\""));
        assert!(ok("[TOOL_CALLS]f[ARGS]{} [TOOL_CALLS] ["));
        assert!(!ok("[TOOL_CALLS] [{}] [TOOL_CALLS]f"));
        assert!(!ok("no group ["));
    }

    #[test]
    fn a_file_for_another_family_or_with_a_bad_expression_is_refused() {
        assert!(DataRule::new("y", r#"{"family":"x","rule":"X-1","units":[]}"#).is_err());
        let bad = r#"{"family":"x","rule":"X-1","units":[{"note":"n","held":"(a"}]}"#;
        assert!(DataRule::new("x", bad)
            .unwrap_err()
            .contains("does not compile"));
    }
}
