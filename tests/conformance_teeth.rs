//! The conformance checks can fail: deliberately broken variants of every dialect's
//! session are run through the same in-process check as the corpus, and each must be
//! caught.
//!
//! - *lazy*: holds every event until `finish` (a parser that decides nothing while
//!   streaming). Its documents are right and its spans tile, so only the promptness
//!   check (S4: the held-back suffix must be viable markup) can catch it.
//! - *one byte too many*: after each feed, keeps back the last character of the last
//!   text it emitted, and emits it before the next feed's events. Also caught by S4
//!   alone.
//! - *swapped keys*: the expected document of a case with several attributes or typed
//!   input keys, with two keys swapped, must fail the ordered comparison.

use idiolect::conformance::{self, Case};
use idiolect::session::Session;
use serde_json::Value;

/// Holds every event until `finish`.
struct Lazy {
    inner: Box<dyn Session>,
    held: Vec<Value>,
}

impl Session for Lazy {
    fn feed(&mut self, bytes: &[u8], _events: &mut Vec<Value>) {
        self.inner.feed(bytes, &mut self.held);
    }
    fn finish(&mut self, events: &mut Vec<Value>) {
        events.append(&mut self.held);
        self.inner.finish(events);
    }
    fn document(&self) -> Value {
        self.inner.document()
    }
    fn hold_back_bound(&self) -> Option<usize> {
        self.inner.hold_back_bound()
    }
    fn is_clean(&self) -> bool {
        self.inner.is_clean()
    }
    fn stop_folding(&mut self) {
        self.inner.stop_folding()
    }
}

/// Keeps back the last character of the last text event of each feed.
struct OneMore {
    inner: Box<dyn Session>,
    pending: Option<Value>,
}

/// Splits `event` into everything but its text's last character and that character,
/// when it is a text-carrying event whose span covers exactly its text.
fn split_last_char(event: &Value) -> Option<(Value, Value)> {
    let text = event.get("text")?.as_str()?;
    let span = event.get("span")?.as_array()?;
    let (start, end) = (span.first()?.as_u64()?, span.get(1)?.as_u64()?);
    let last = text.chars().next_back()?;
    if end - start != text.len() as u64 || text.len() == last.len_utf8() {
        return None;
    }
    let cut = end - last.len_utf8() as u64;
    let mut head = event.clone();
    head["text"] = Value::from(&text[..text.len() - last.len_utf8()]);
    head["span"] = Value::from(vec![start, cut]);
    let mut tail = event.clone();
    tail["text"] = Value::from(last.to_string());
    tail["span"] = Value::from(vec![cut, end]);
    Some((head, tail))
}

impl Session for OneMore {
    fn feed(&mut self, bytes: &[u8], events: &mut Vec<Value>) {
        let first = events.len();
        events.extend(self.pending.take());
        self.inner.feed(bytes, events);
        if events.len() > first {
            if let Some((head, tail)) = events.last().and_then(split_last_char) {
                *events.last_mut().expect("not empty") = head;
                self.pending = Some(tail);
            }
        }
    }
    fn finish(&mut self, events: &mut Vec<Value>) {
        events.extend(self.pending.take());
        self.inner.finish(events);
    }
    fn document(&self) -> Value {
        self.inner.document()
    }
    fn hold_back_bound(&self) -> Option<usize> {
        self.inner.hold_back_bound()
    }
    fn is_clean(&self) -> bool {
        self.inner.is_clean()
    }
    fn stop_folding(&mut self) {
        self.inner.stop_folding()
    }
}

fn corpus() -> Vec<Case> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    conformance::load(&root, None)
        .expect("the corpus loads")
        .into_iter()
        .map(|c| c.expect("every case loads"))
        .collect()
}

/// For each dialect: how many of its cases the variant passes, how many fail the
/// promptness check, how many of those by the viability rule, and every failure
/// that is not a promptness failure.
fn run_variant(open: conformance::Opener) -> Vec<(String, usize, usize, usize, Vec<String>)> {
    let cases = corpus();
    idiolect::dialects()
        .iter()
        .map(|d| {
            let (mut passed, mut caught, mut viability, mut other) = (0, 0, 0, Vec::new());
            for case in cases.iter().filter(|c| c.dialect == d.name) {
                match conformance::check_with(case, open) {
                    Ok(()) => passed += 1,
                    Err(e) if e.starts_with("S4 ") => {
                        caught += 1;
                        viability += usize::from(e.contains("is held back, but"));
                    }
                    Err(e) => other.push(format!("{}: {e}", case.id())),
                }
            }
            (d.name.to_string(), passed, caught, viability, other)
        })
        .collect()
}

fn assert_caught_in_every_dialect(variant: &str, open: conformance::Opener) {
    for (dialect, passed, caught, viability, other) in run_variant(open) {
        assert!(
            other.is_empty(),
            "{variant} {dialect}: failures other than promptness: {other:#?}"
        );
        assert!(
            viability > 0,
            "{variant} {dialect}: the viability rule caught no case ({caught} caught otherwise, {passed} passed)"
        );
        eprintln!(
            "{variant} {dialect}: caught in {caught} cases ({viability} by the viability rule), passed {passed}"
        );
    }
}

#[test]
fn a_lazy_parser_that_holds_everything_until_finish_fails_promptness_in_every_dialect() {
    assert_caught_in_every_dialect("lazy", &|case| {
        Ok(Box::new(Lazy {
            inner: conformance::open_dialect(case)?,
            held: Vec::new(),
        }))
    });
}

#[test]
fn a_parser_that_holds_one_byte_too_many_fails_promptness_in_every_dialect() {
    assert_caught_in_every_dialect("one more", &|case| {
        Ok(Box::new(OneMore {
            inner: conformance::open_dialect(case)?,
            pending: None,
        }))
    });
}

/// Swaps the first two keys of the first object with at least two keys inside an
/// `attrs`, `input` or `params` member; returns whether it found one.
fn swap_first_ordered_pair(value: &mut Value) -> bool {
    match value {
        Value::Object(map) => {
            for key in ["attrs", "input", "params"] {
                if let Some(Value::Object(inner)) = map.get_mut(key) {
                    if inner.len() >= 2 {
                        let mut entries: Vec<(String, Value)> =
                            std::mem::take(inner).into_iter().collect();
                        entries.swap(0, 1);
                        inner.extend(entries);
                        return true;
                    }
                }
            }
            map.values_mut().any(swap_first_ordered_pair)
        }
        Value::Array(items) => items.iter_mut().any(swap_first_ordered_pair),
        _ => false,
    }
}

#[test]
fn swapping_two_attributes_in_an_expected_document_makes_its_case_fail() {
    let mut swapped = 0;
    for mut case in corpus() {
        if !swap_first_ordered_pair(&mut case.expected) {
            continue;
        }
        let outcome = conformance::check(&case);
        assert!(
            outcome
                .as_ref()
                .is_err_and(|e| e.starts_with("S2 whole input")),
            "{}: with two keys swapped the case gave {outcome:?}",
            case.id()
        );
        swapped += 1;
    }
    assert!(swapped >= 10, "only {swapped} cases have two ordered keys");
}

#[test]
fn a_registered_dialect_without_cases_is_reported() {
    let without_plurnk: Vec<_> = conformance::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance"),
        None,
    )
    .expect("the corpus loads")
    .into_iter()
    .filter(|c| c.as_ref().map_or(true, |c| c.dialect != "plurnk"))
    .collect();
    assert_eq!(
        conformance::dialects_without_cases(&without_plurnk),
        ["plurnk"]
    );
    let all = conformance::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance"),
        None,
    )
    .expect("the corpus loads");
    assert!(conformance::dialects_without_cases(&all).is_empty());
}
