//! The conformance corpus: loading cases and checking them under the split schedule.
//!
//! Used by the test runner (`tests/conformance.rs`) and by `idiolect conformance`.
//! The format is described in `conformance/README.md`. For each case the in-process
//! check runs the input whole, at every 2-part split (inputs up to 4 KiB), at chunk
//! sizes 1, 2, 3, 5, 7, 13 and 64, and in seeded random chunkings, and verifies:
//! - S2: the folded document equals the expected JSON for every chunking;
//! - S4: after each feed the emitted events reach exactly as far as when the same
//!   prefix is fed one byte at a time, held-back bytes stay within the bound, and
//!   the held-back suffix is viable markup by the dialect's rule ([`viability`]);
//! - S8: event spans tile the input, ending at its length after `finish`.
//!
//! Documents are compared with [`compare::same`]: objects in key order, numbers by
//! value.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::fold::Layout;
use crate::session::Session;

pub mod compare;
pub mod viability;

pub use compare::{same, KeyOrder};

/// Inputs up to this size are also checked at every 2-part split.
pub const SPLIT_LIMIT: usize = 4096;
/// Fixed chunk sizes of the schedule.
pub const CHUNK_SIZES: [usize; 7] = [1, 2, 3, 5, 7, 13, 64];
/// Seeded random chunkings per case.
pub const RANDOM_CHUNKINGS: u64 = 8;

/// One case of the corpus.
#[derive(Clone, Debug)]
pub struct Case {
    /// The dialect (the folder name).
    pub dialect: String,
    /// The case name (the file stem).
    pub name: String,
    /// The exact input bytes.
    pub input: Vec<u8>,
    /// The expected document.
    pub expected: Value,
    /// The merged options (`null` when there are none).
    pub options: Value,
    /// The dialect's viability rule, from the corpus the case comes from (S4).
    pub viability: Arc<viability::Rule>,
}

impl Case {
    /// `dialect::name`, as the runners print it.
    pub fn id(&self) -> String {
        format!("{}::{}", self.dialect, self.name)
    }
}

/// A case that could not be loaded: its id and why.
#[derive(Clone, Debug)]
pub struct LoadError {
    /// `dialect::name` of the case.
    pub id: String,
    /// What was wrong with its files.
    pub message: String,
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Shallow merge: the case's top-level keys replace the dialect's.
pub fn merge_options(base: &Value, case: Value) -> Value {
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

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    paths
}

/// The dialect folders under `root` (their names and paths, sorted), or only the
/// folder of dialect `only`.
fn dialect_folders(root: &Path, only: Option<&str>) -> Result<Vec<(String, PathBuf)>, String> {
    if !root.is_dir() {
        return Err(format!("no conformance folder at {}", root.display()));
    }
    Ok(sorted_entries(root)
        .into_iter()
        .filter(|p| p.is_dir())
        .map(|dir| {
            let name = dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            (name, dir)
        })
        .filter(|(name, _)| only.is_none_or(|d| d == name))
        .collect())
}

/// Loads every case under `root` (the `conformance/` folder), optionally only one
/// dialect's. Each folder is a dialect; files beside them (the README, `VERSION`,
/// the JSON Schemas, the viability rules) are not cases.
pub fn load(root: &Path, only: Option<&str>) -> Result<Vec<Result<Case, LoadError>>, String> {
    let mut cases = Vec::new();
    for (dialect, dir) in dialect_folders(root, only)? {
        let txts: Vec<PathBuf> = sorted_entries(&dir)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        let rule = Arc::new(viability::Rule::new(root, &dialect));
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
            let id = format!("{dialect}::{name}");
            let case = (|| {
                let input = std::fs::read(&txt).map_err(|e| format!("{}: {e}", txt.display()))?;
                let expected = read_json(&txt.with_extension("json"))?;
                let own = txt.with_extension("options.json");
                let own = if own.exists() {
                    read_json(&own)?
                } else {
                    Value::Null
                };
                let options = merge_options(base_options.as_ref().map_err(Clone::clone)?, own);
                Ok(Case {
                    dialect: dialect.clone(),
                    name: name.clone(),
                    input,
                    expected,
                    options,
                    viability: Arc::clone(&rule),
                })
            })();
            cases.push(case.map_err(|message| LoadError { id, message }));
        }
    }
    if let Some(d) = only {
        if cases.is_empty() {
            return Err(format!(
                "no cases for dialect {d:?} under {}",
                root.display()
            ));
        }
    }
    Ok(cases)
}

/// A case whose options the dialect must refuse:
/// `conformance/<dialect>/<case>.refused.json`, an object `{"options", "error"}`.
/// The options are merged over the dialect's `options.json` as a case's are; the
/// session must not open, and its error's one-line message is `error`.
#[derive(Clone, Debug)]
pub struct RefusedCase {
    /// The dialect (the folder name).
    pub dialect: String,
    /// The case name (the file name without `.refused.json`).
    pub name: String,
    /// The merged options.
    pub options: Value,
    /// The expected message: [`crate::session::OptionsError`]'s `message`.
    pub error: String,
}

impl RefusedCase {
    /// `dialect::name (refused)`, as the runners print it.
    pub fn id(&self) -> String {
        format!("{}::{} (refused)", self.dialect, self.name)
    }
}

/// Loads every refused-options case under `root` (one folder per dialect), or only
/// those of dialect `only`; a file that cannot be read gives a [`LoadError`].
pub fn load_refused(
    root: &Path,
    only: Option<&str>,
) -> Result<Vec<Result<RefusedCase, LoadError>>, String> {
    const SUFFIX: &str = ".refused.json";
    let mut cases = Vec::new();
    for (dialect, dir) in dialect_folders(root, only)? {
        let base = dir.join("options.json");
        for path in sorted_entries(&dir) {
            let file = path.file_name().unwrap_or_default().to_string_lossy();
            let Some(name) = file.strip_suffix(SUFFIX).map(str::to_string) else {
                continue;
            };
            let id = format!("{dialect}::{name} (refused)");
            let case = (|| {
                let mut spec = read_json(&path)?;
                let error = match spec.get("error") {
                    Some(Value::String(e)) => e.clone(),
                    _ => return Err(format!("{}: \"error\" must be a string", path.display())),
                };
                let own = spec
                    .get_mut("options")
                    .map(Value::take)
                    .ok_or_else(|| format!("{}: \"options\" is missing", path.display()))?;
                let base_options = if base.exists() {
                    read_json(&base)?
                } else {
                    Value::Null
                };
                Ok(RefusedCase {
                    dialect: dialect.clone(),
                    name,
                    options: merge_options(&base_options, own),
                    error,
                })
            })();
            cases.push(case.map_err(|message| LoadError { id, message }));
        }
    }
    Ok(cases)
}

/// Checks a refused-options case: the dialect's session must not open with its
/// options, and the refusal's message must be the expected one.
pub fn check_refused(case: &RefusedCase) -> Result<(), String> {
    let found = crate::dialect(&case.dialect).ok_or_else(|| {
        format!(
            "no dialect named {:?} (folder conformance/{})",
            case.dialect, case.dialect
        )
    })?;
    match found.open(&case.options, false) {
        Ok(_) => Err(format!(
            "{}: the options were accepted; expected the refusal {:?}",
            case.id(),
            case.error
        )),
        Err(e) if e.message == case.error => Ok(()),
        Err(e) => Err(format!(
            "{}: refused with {:?}; expected {:?}",
            case.id(),
            e.message,
            case.error
        )),
    }
}

/// A small deterministic generator (xorshift64*), so schedules are reproducible.
struct Rng(u64);

impl Rng {
    fn new(name: &str, salt: u64) -> Self {
        let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325 ^ salt, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
        Rng(seed | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Splits `input` into chunks of the given sizes (the last may be shorter).
pub fn split_by_sizes(input: &[u8], sizes: impl Iterator<Item = usize>) -> Vec<&[u8]> {
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

/// The `salt`-th seeded random chunking of a case's input.
pub fn random_chunking<'a>(input: &'a [u8], name: &str, salt: u64) -> Vec<&'a [u8]> {
    let mut rng = Rng::new(name, salt);
    let max = 1 + (rng.next() % 40) as usize;
    split_by_sizes(
        input,
        std::iter::from_fn(move || Some(1 + (rng.next() as usize % max))),
    )
}

/// The full in-process schedule (without the whole run and the 1-byte reference).
pub fn schedule<'a>(input: &'a [u8], name: &str) -> Vec<(String, Vec<&'a [u8]>)> {
    let mut out = Vec::new();
    if input.len() <= SPLIT_LIMIT {
        for at in 1..input.len() {
            out.push((format!("split at {at}"), vec![&input[..at], &input[at..]]));
        }
    }
    for size in CHUNK_SIZES.into_iter().filter(|&s| s > 1) {
        out.push((
            format!("{size}-byte chunks"),
            split_by_sizes(input, std::iter::repeat(size)),
        ));
    }
    for salt in 0..RANDOM_CHUNKINGS {
        out.push((
            format!("random chunking #{salt}"),
            random_chunking(input, name, salt),
        ));
    }
    out
}

/// What one streamed run produced.
#[derive(Clone, Debug)]
pub struct Run {
    /// The document folded from the events.
    pub document: Value,
    /// After each feed: (raw bytes delivered so far, end of the last emitted span).
    pub reach: Vec<(usize, usize)>,
}

fn span_of(event: &Value) -> Option<(usize, usize)> {
    let span = event.get("span")?.as_array()?;
    let (start, end) = (
        span.first()?.as_u64()? as usize,
        span.get(1)?.as_u64()? as usize,
    );
    (start <= end).then_some((start, end))
}

/// Opens the session a run feeds: the dialect's own, or (in the tests that prove the
/// checks can fail) a deliberately broken variant of it.
pub type Opener<'a> = &'a dyn Fn(&Case) -> Result<Box<dyn Session>, String>;

/// Opens the case's dialect by name with the case's options.
pub fn open_dialect(case: &Case) -> Result<Box<dyn Session>, String> {
    let found = crate::dialect(&case.dialect).ok_or_else(|| {
        format!(
            "no dialect named {:?} (folder conformance/{})",
            case.dialect, case.dialect
        )
    })?;
    found.open(&case.options, false).map_err(|e| e.to_string())
}

/// Feeds `chunks` to a session of `dialect`, checking S8 (spans tile the input) on
/// every event; returns the folded document and how far emission reached per chunk.
pub fn run_chunked(
    dialect: &str,
    options: &Value,
    chunks: &[&[u8]],
    label: &str,
) -> Result<Run, String> {
    let found = crate::dialect(dialect)
        .ok_or_else(|| format!("no dialect named {dialect:?} (folder conformance/{dialect})"))?;
    let session = found.open(options, false).map_err(|e| e.to_string())?;
    run_session(session, chunks, label)
}

fn run_session(
    mut session: Box<dyn Session>,
    chunks: &[&[u8]],
    label: &str,
) -> Result<Run, String> {
    let (mut covered, mut delivered) = (0usize, 0usize);
    let mut reach = Vec::with_capacity(chunks.len());
    let mut events = Vec::new();
    let check = |events: &mut Vec<Value>, covered: &mut usize| -> Result<(), String> {
        for event in events.drain(..) {
            let Some((start, end)) = span_of(&event) else {
                return Err(format!("{label}: event without a valid span: {event}"));
            };
            if event.get("type").and_then(Value::as_str).is_none() {
                return Err(format!("{label}: event without a type: {event}"));
            }
            if start != *covered {
                return Err(format!(
                    "{label}: S8 spans do not tile: event starts at {start}, the previous ended at {covered}: {event}"
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
    let total = String::from_utf8_lossy(&chunks.concat()).len();
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

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A mismatch report between the expected and the produced document.
pub fn document_mismatch(label: &str, case: &Case, got: &Value) -> String {
    format!(
        "S2 {label}: the document differs from {}.json\n--- expected\n{}\n--- got\n{}",
        case.name,
        pretty(&case.expected),
        pretty(got)
    )
}

/// A session that stops folding (as `idiolect stream` does) and the whole-document
/// path (as `idiolect parse` uses it) must report the same cleanliness, and the same
/// document, as one that folds every event it emits.
fn check_clean_without_document(case: &Case, open: Opener) -> Result<(), String> {
    let mut verdicts = Vec::new();
    for path in ["events folded", "events not folded", "whole-document path"] {
        let mut session = open(case)?;
        let mut events = Vec::new();
        match path {
            "events not folded" => {
                session.stop_folding();
                session.feed(&case.input, &mut events);
            }
            "whole-document path" => {
                let mut written = Vec::new();
                session
                    .feed_document(&case.input, Layout::Compact, &mut written)
                    .and_then(|()| session.finish_document(Layout::Compact, &mut written))
                    .map_err(|e| format!("{path}: {e}"))?;
                let document: Value = serde_json::from_slice(&written)
                    .map_err(|e| format!("{path}: the written document is not JSON: {e}"))?;
                if !same(&case.expected, &document, KeyOrder::Ordered) {
                    return Err(document_mismatch(path, case, &document));
                }
            }
            _ => session.feed(&case.input, &mut events),
        }
        if path != "whole-document path" {
            session.finish(&mut events);
        }
        verdicts.push((path, session.is_clean()));
    }
    if let Some((path, clean)) = verdicts.iter().find(|(_, c)| *c != verdicts[0].1) {
        return Err(format!(
            "is_clean is {} with the events folded but {clean} on the {path}",
            verdicts[0].1
        ));
    }
    Ok(())
}

/// Runs one case in-process under the whole schedule; `Err` says what failed.
pub fn check(case: &Case) -> Result<(), String> {
    check_with(case, &open_dialect)
}

/// [`check`] with the sessions opened by `open`.
pub fn check_with(case: &Case, open: Opener) -> Result<(), String> {
    let input = &case.input[..];
    let stream = |chunks: &[&[u8]], label: &str| run_session(open(case)?, chunks, label);
    let whole = stream(&[input], "whole input")?;
    if !same(&case.expected, &whole.document, KeyOrder::Ordered) {
        return Err(document_mismatch("whole input", case, &whole.document));
    }
    check_clean_without_document(case, open)?;
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    let by_byte = stream(&bytes, "1-byte chunks")?;
    let mut reach_at = vec![0usize; input.len() + 1];
    for &(delivered, covered) in &by_byte.reach {
        reach_at[delivered] = covered;
    }
    let bound = open(case)?.hold_back_bound();
    // The hold-back bound and the viability rule read decoded bytes; check them only
    // where raw and decoded offsets coincide.
    let valid = std::str::from_utf8(input).is_ok();
    let bound = bound.filter(|_| valid);

    let mut runs = vec![("1-byte chunks".to_string(), by_byte)];
    for (label, chunks) in schedule(input, &case.name) {
        let run = stream(&chunks, &label)?;
        runs.push((label, run));
    }
    for (label, run) in &runs {
        if !same(&case.expected, &run.document, KeyOrder::Ordered) {
            return Err(document_mismatch(label, case, &run.document));
        }
        for &(delivered, covered) in &run.reach {
            if covered != reach_at[delivered] {
                return Err(format!(
                    "S4 {label}: after {delivered} bytes the events reach {covered}, but fed byte by byte they reach {}",
                    reach_at[delivered]
                ));
            }
            if let Some(bound) = bound {
                if delivered - covered > bound {
                    return Err(format!(
                        "S4 {label}: after {delivered} bytes {} are held back, more than the bound {bound}",
                        delivered - covered
                    ));
                }
            }
            if valid {
                case.viability
                    .check(&case.options, &input[..covered], &input[covered..delivered])
                    .map_err(|why| format!("S4 {label}: after {delivered} bytes {why}"))?;
            }
        }
    }
    Ok(())
}

/// The registered dialects that have no case among `cases`: the runner fails for
/// each, so a dialect cannot be added without its corpus.
pub fn dialects_without_cases(cases: &[Result<Case, LoadError>]) -> Vec<&'static str> {
    crate::dialects()
        .iter()
        .map(|d| d.name)
        .filter(|name| {
            !cases.iter().any(|c| match c {
                Ok(case) => case.dialect == *name,
                Err(e) => e.id.starts_with(&format!("{name}::")),
            })
        })
        .collect()
}
