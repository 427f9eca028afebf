//! The conformance runner: every case of `conformance/<dialect>/`, whole and streamed.
//!
//! For each case it checks, under the split schedule of DESIGN §6 (every 2-part split
//! for inputs up to 4 KiB, chunk sizes 1, 2, 3, 5, 7, 13, 64, and seeded random
//! chunkings):
//! - S2: the folded document equals the expected JSON, for the whole input and for
//!   every chunking;
//! - S4: after each feed, how far the emitted events reach is the same as when the
//!   same prefix is fed one byte at a time (emission depends on the prefix only, not
//!   on its chunking), and the bytes held back never exceed the dialect's bound;
//! - S8: event spans tile the input: each starts where the previous ended, and
//!   after `finish` the last ends at the input's length.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

const SPLIT_LIMIT: usize = 4096;
const CHUNK_SIZES: [usize; 7] = [1, 2, 3, 5, 7, 13, 64];
const RANDOM_CHUNKINGS: u64 = 8;

struct Case {
    dialect: String,
    name: String,
    input: Vec<u8>,
    expected: Value,
    options: Value,
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let trials = discover(&root);
    libtest_mimic::run(&args, trials).exit();
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Shallow merge: the case's top-level keys replace the dialect's.
fn merge(base: &Value, case: Value) -> Value {
    match (base, case) {
        (Value::Object(b), Value::Object(c)) => {
            let mut merged = b.clone();
            merged.extend(c);
            Value::Object(merged)
        }
        (b, Value::Null) => b.clone(),
        (_, c) => c,
    }
}

fn discover(root: &Path) -> Vec<Trial> {
    let mut trials = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return vec![Trial::test("conformance-folder", || {
            Err("no conformance/ folder".into())
        })];
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let dialect = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let mut txts: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        txts.retain(|p| p.extension().is_some_and(|e| e == "txt"));
        txts.sort();
        if txts.is_empty() {
            continue; // schema/ and other non-case folders
        }
        let base = dir.join("options.json");
        let base_options = if base.exists() {
            read_json(&base)
        } else {
            Ok(Value::Null)
        };
        for txt in txts {
            let name = txt
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            let trial_name = format!("{dialect}::{name}");
            let case = load_case(&dialect, &name, &txt, &base_options);
            trials.push(Trial::test(trial_name, move || run_case(case?)));
        }
    }
    trials
}

fn load_case(
    dialect: &str,
    name: &str,
    txt: &Path,
    base_options: &Result<Value, String>,
) -> Result<Case, Failed> {
    let input = std::fs::read(txt).map_err(|e| format!("{}: {e}", txt.display()))?;
    let expected = read_json(&txt.with_extension("json"))?;
    let case_options = txt.with_extension("options.json");
    let case_options = if case_options.exists() {
        read_json(&case_options)?
    } else {
        Value::Null
    };
    let options = merge(base_options.as_ref().map_err(|e| e.clone())?, case_options);
    Ok(Case {
        dialect: dialect.into(),
        name: name.into(),
        input,
        expected,
        options,
    })
}

/// What one streamed run produced.
struct Run {
    document: Value,
    /// After each feed: (raw bytes delivered so far, end of the last emitted span).
    reach: Vec<(usize, usize)>,
}

fn stream(case: &Case, chunks: &[&[u8]], label: &str) -> Result<Run, String> {
    let dialect = idiolect::dialect(&case.dialect).ok_or_else(|| {
        format!(
            "no dialect named {:?} for folder conformance/{}",
            case.dialect, case.dialect
        )
    })?;
    let mut session = (dialect.open)(&case.options, false).map_err(|e| e.to_string())?;
    let mut covered = 0usize;
    let mut delivered = 0usize;
    let mut reach = Vec::with_capacity(chunks.len());
    let mut events = Vec::new();
    let check = |events: &mut Vec<Value>, covered: &mut usize| -> Result<(), String> {
        for event in events.drain(..) {
            let span = event.get("span").and_then(Value::as_array);
            let (start, end) = match span.map(|s| {
                (
                    s.first().and_then(Value::as_u64),
                    s.get(1).and_then(Value::as_u64),
                )
            }) {
                Some((Some(s), Some(e))) if s <= e => (s as usize, e as usize),
                _ => return Err(format!("{label}: event without a valid span: {event}")),
            };
            if event.get("type").and_then(Value::as_str).is_none() {
                return Err(format!("{label}: event without a type: {event}"));
            }
            if start != *covered {
                return Err(format!(
                    "{label}: S8 spans do not tile: event starts at {start}, previous ended at {covered}: {event}"
                ));
            }
            *covered = end;
        }
        Ok(())
    };
    for chunk in chunks {
        session.feed(chunk, &mut events);
        delivered += chunk.len();
        check(&mut events, &mut covered)?;
        reach.push((delivered, covered));
    }
    session.finish(&mut events);
    check(&mut events, &mut covered)?;
    let total = String::from_utf8_lossy(&case.input).len();
    if covered != total {
        return Err(format!(
            "{label}: S8 after finish the spans end at {covered}, the input has {total} bytes"
        ));
    }
    Ok(Run {
        document: session.document(),
        reach,
    })
}

fn split_at_sizes(input: &[u8], sizes: impl Iterator<Item = usize>) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let mut at = 0;
    for size in sizes {
        if at >= input.len() {
            break;
        }
        let end = (at + size.max(1)).min(input.len());
        chunks.push(&input[at..end]);
        at = end;
    }
    chunks
}

/// A small deterministic generator (xorshift64*), seeded from the case name.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn seed(name: &str, salt: u64) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325 ^ salt, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    }) | 1
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn run_case(case: Case) -> Result<(), Failed> {
    let input = &case.input[..];
    let valid_utf8 = std::str::from_utf8(input).is_ok();

    // Whole input in one feed.
    let whole = stream(&case, &[input], "whole")?;
    if whole.document != case.expected {
        return Err(format!(
            "S2 whole-input document differs from {}.json\n--- expected\n{}\n--- got\n{}",
            case.name,
            pretty(&case.expected),
            pretty(&whole.document)
        )
        .into());
    }

    // One byte at a time: the reference for how far emission reaches after each prefix.
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    let by_byte = stream(&case, &bytes, "1-byte chunks")?;
    let mut reach_at = vec![0usize; input.len() + 1];
    for &(delivered, covered) in &by_byte.reach {
        reach_at[delivered] = covered;
    }
    let dialect = idiolect::dialect(&case.dialect).ok_or("unknown dialect")?;
    let bound = (dialect.open)(&case.options, false)
        .map_err(|e| e.to_string())?
        .hold_back_bound();

    let mut schedules: Vec<(String, Vec<&[u8]>)> = Vec::new();
    if input.len() <= SPLIT_LIMIT {
        for at in 1..input.len() {
            schedules.push((format!("split at {at}"), vec![&input[..at], &input[at..]]));
        }
    }
    for size in CHUNK_SIZES {
        schedules.push((
            format!("{size}-byte chunks"),
            split_at_sizes(input, std::iter::repeat(size)),
        ));
    }
    for salt in 0..RANDOM_CHUNKINGS {
        let mut rng = Rng(seed(&case.name, salt));
        let max = 1 + (rng.next() % 40) as usize;
        let sizes = std::iter::from_fn(move || Some(1 + (rng.next() as usize % max)));
        schedules.push((
            format!("random chunking #{salt}"),
            split_at_sizes(input, sizes),
        ));
    }

    let mut runs = vec![("1-byte chunks".to_string(), by_byte)];
    for (label, chunks) in &schedules {
        runs.push((label.clone(), stream(&case, chunks, label)?));
    }
    for (label, run) in &runs {
        if run.document != case.expected {
            return Err(format!(
                "S2 {label}: folded document differs from {}.json\n--- expected\n{}\n--- got\n{}",
                case.name,
                pretty(&case.expected),
                pretty(&run.document)
            )
            .into());
        }
        for &(delivered, covered) in &run.reach {
            if covered != reach_at[delivered] {
                return Err(format!(
                    "S4 {label}: after {delivered} bytes the events reach {covered}, but fed byte by byte they reach {}",
                    reach_at[delivered]
                )
                .into());
            }
            if let (Some(bound), true) = (bound, valid_utf8) {
                if delivered - covered > bound {
                    return Err(format!(
                        "S4 {label}: after {delivered} bytes {} are held back, more than the bound {bound}",
                        delivered - covered
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}
