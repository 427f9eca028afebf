//! `idiolect batch`: many documents, one dialect, every core.
//!
//! Records are read in blocks (at most [`BLOCK_RECORDS`] records or about
//! [`BLOCK_BYTES`] bytes), so only a bounded number are in flight; a block is
//! parsed in parallel while the next one is read, and its output lines are written
//! in input order. A bad record gets its own error line and never stops the batch.

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde_json::{Map, Value};

use super::commands::stdout_error;
use super::input::{plain, Source};
use super::CliError;
use idiolect::fold::Layout;
use idiolect::session::Dialect;

/// Most records in flight per block. Blocks are small because the pipeline's ends
/// run alone: reading the first block and writing the last one overlap no parsing
/// (with blocks of 4096 records, 10,000 records made three blocks, and two threads
/// ran at 1.5 times one thread; see the README's user-path table for the figures).
const BLOCK_RECORDS: usize = 256;
/// A block is cut once its records hold this many bytes.
const BLOCK_BYTES: usize = 1 << 20;

/// What to run.
pub struct Plan {
    pub dialect: &'static Dialect,
    pub options: Value,
    pub spans: bool,
    pub inputs: Vec<PathBuf>,
    pub files: bool,
    pub field: String,
    pub id_field: String,
    pub threads: Option<u64>,
}

/// Where a record came from.
enum Origin {
    /// Line `line` (1-based) of a JSON Lines input; `file` when several were given.
    Line { file: Option<String>, line: usize },
    /// A whole file.
    File(PathBuf),
}

/// One record: its origin and its bytes (a JSON line; empty for a file, which is
/// read by the worker that parses it).
struct Record {
    origin: Origin,
    bytes: Vec<u8>,
}

/// How a record ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Clean,
    /// Parsed, but the document has errors (the exit code says so).
    Unclean,
    /// No document: the record's error line was written instead.
    Failed,
}

/// Runs the batch; returns the exit code (0 all clean, 1 when a record failed or
/// a document has errors).
pub fn run(plan: Plan) -> Result<i32, CliError> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = plan.threads {
        builder = builder.num_threads(n as usize);
    }
    let pool = builder
        .build()
        .map_err(|e| CliError::new(format!("cannot start the worker threads: {e}")))?;
    let mut reader = Reader::new(&plan)?;
    let progress = Progress::new();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
    let mut failed = false;
    let mut block = reader.block()?;
    let mut done: Vec<(Vec<u8>, Outcome, usize)> = Vec::new();
    // Each round parses one block while another worker writes the previous
    // block's lines and reads the next block, so only parsing runs in parallel and
    // nothing else waits for it.
    loop {
        let (outputs, (written, next)) = pool.install(|| {
            rayon::join(
                || {
                    block
                        .par_iter()
                        .map(|record| parse_record(&plan, record))
                        .collect::<Vec<_>>()
                },
                || {
                    let written = done.iter().try_for_each(|(line, _, _)| out.write_all(line));
                    let next = if block.is_empty() {
                        Ok(Vec::new())
                    } else {
                        reader.block()
                    };
                    (written, next)
                },
            )
        });
        written.map_err(stdout_error)?;
        if block.is_empty() {
            break;
        }
        let mut bytes = 0;
        for (_, outcome, size) in &outputs {
            failed |= *outcome != Outcome::Clean;
            bytes += size;
        }
        progress.advance(block.len(), bytes);
        done = outputs;
        block = next?;
    }
    out.flush().map_err(stdout_error)?;
    progress.done();
    Ok(if failed { 1 } else { 0 })
}

/// Reads records in blocks, input after input.
struct Reader {
    inputs: Vec<Source>,
    files: bool,
    /// Whether output lines name their file (several JSON Lines inputs).
    name_files: bool,
    at: usize,
    current: Option<(Box<dyn BufRead + Send>, usize)>,
}

impl Reader {
    fn new(plan: &Plan) -> Result<Self, CliError> {
        let mut inputs: Vec<Source> = plan
            .inputs
            .iter()
            .map(|p| Source::from_arg(Some(p.clone())))
            .collect();
        if inputs.is_empty() {
            if plan.files {
                return Err(CliError::new("--files needs at least one file"));
            }
            inputs.push(Source::Stdin);
        }
        if plan.files && inputs.iter().any(|s| matches!(s, Source::Stdin)) {
            return Err(CliError::new("--files takes file names, not stdin"));
        }
        Ok(Reader {
            name_files: inputs.len() > 1,
            inputs,
            files: plan.files,
            at: 0,
            current: None,
        })
    }

    /// The next block of records; empty at the end of the last input.
    fn block(&mut self) -> Result<Vec<Record>, CliError> {
        let mut block = Vec::new();
        let mut bytes = 0;
        while block.len() < BLOCK_RECORDS && bytes < BLOCK_BYTES {
            match self.next()? {
                Some(record) => {
                    bytes += record.bytes.len();
                    block.push(record);
                }
                None => break,
            }
        }
        Ok(block)
    }

    fn next(&mut self) -> Result<Option<Record>, CliError> {
        loop {
            if self.at >= self.inputs.len() {
                return Ok(None);
            }
            if self.files {
                let Source::File(path) = &self.inputs[self.at] else {
                    return Ok(None);
                };
                self.at += 1;
                return Ok(Some(Record {
                    origin: Origin::File(path.clone()),
                    bytes: Vec::new(),
                }));
            }
            let source = &self.inputs[self.at];
            if self.current.is_none() {
                let reader: Box<dyn BufRead + Send> = match source {
                    Source::Stdin => Box::new(BufReader::with_capacity(1 << 20, std::io::stdin())),
                    Source::File(path) => {
                        if path.is_dir() {
                            return Err(source.error(&std::io::Error::other("it is a directory")));
                        }
                        let file = File::open(path).map_err(|e| source.error(&e))?;
                        Box::new(BufReader::with_capacity(1 << 20, file))
                    }
                };
                self.current = Some((reader, 0));
            }
            let Some((reader, line)) = self.current.as_mut() else {
                continue;
            };
            let mut bytes = Vec::new();
            let n = reader
                .read_until(b'\n', &mut bytes)
                .map_err(|e| source.error(&e))?;
            if n == 0 {
                self.current = None;
                self.at += 1;
                continue;
            }
            *line += 1;
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let file = match source {
                Source::File(path) if self.name_files => Some(path.display().to_string()),
                _ => None,
            };
            return Ok(Some(Record {
                origin: Origin::Line { file, line: *line },
                bytes,
            }));
        }
    }
}

/// Parses one record into its output line; also says how many input bytes it had.
fn parse_record(plan: &Plan, record: &Record) -> (Vec<u8>, Outcome, usize) {
    let mut out = Vec::with_capacity(record.bytes.len() + 64);
    out.push(b'{');
    let file_bytes;
    let (text, id) = match &record.origin {
        Origin::File(path) => {
            write_pair(&mut out, "file", &path.display().to_string());
            match std::fs::read(path) {
                Ok(bytes) => {
                    file_bytes = bytes;
                    (Ok(&file_bytes[..]), None)
                }
                Err(e) => (
                    Err(format!("cannot read {}: {}", path.display(), plain(&e))),
                    None,
                ),
            }
        }
        Origin::Line { file, line } => {
            if let Some(file) = file {
                write_pair(&mut out, "file", file);
                out.push(b',');
            }
            write_pair(&mut out, "line", line);
            match text_of(&record.bytes, &plan.field, &plan.id_field) {
                Ok((text, id)) => {
                    file_bytes = text.into_bytes();
                    (Ok(&file_bytes[..]), id)
                }
                Err((message, id)) => (Err(message), id),
            }
        }
    };
    if let Some(id) = id {
        out.push(b',');
        write_pair(&mut out, "id", &id);
    }
    let size = text.as_ref().map_or(0, |t| t.len());
    let outcome = match text {
        Err(message) => {
            out.push(b',');
            write_pair(&mut out, "error", &message);
            Outcome::Failed
        }
        Ok(text) => parse_text(plan, text, &mut out),
    };
    out.extend_from_slice(b"}\n");
    let size = record.bytes.len().max(size);
    (out, outcome, size)
}

/// Writes `"key":value` (a value that always serializes: strings, numbers, JSON).
fn write_pair<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, key: &str, value: &T) {
    let _ = serde_json::to_writer(&mut *out, key);
    out.push(b':');
    let _ = serde_json::to_writer(&mut *out, value);
}

/// The record's text and id, or why it has no text (with the id when known).
fn text_of(
    line: &[u8],
    field: &str,
    id_field: &str,
) -> Result<(String, Option<Value>), (String, Option<Value>)> {
    if let Err(e) = std::str::from_utf8(line) {
        return Err((format!("invalid UTF-8 at byte {}", e.valid_up_to()), None));
    }
    let mut record: Map<String, Value> = match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            return Err((
                format!("the record is {}, not a JSON object", kind(&other)),
                None,
            ))
        }
        Err(e) => {
            let message = e.to_string();
            let message = match message.rfind(" at line ") {
                Some(i) => &message[..i],
                None => &message,
            };
            return Err((
                format!("invalid JSON at column {}: {message}", e.column()),
                None,
            ));
        }
    };
    let id = record.remove(id_field);
    match record.remove(field) {
        Some(Value::String(text)) => Ok((text, id)),
        Some(other) => Err((
            format!("field {field:?} is {}, not a string", kind(&other)),
            id,
        )),
        None => Err((format!("no field {field:?}"), id)),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses `text` and appends `,"document":…` (and `"replaced":N` when invalid UTF-8
/// was replaced).
fn parse_text(plan: &Plan, text: &[u8], out: &mut Vec<u8>) -> Outcome {
    let mut session = match plan.dialect.open(&plan.options, plan.spans) {
        Ok(session) => session,
        Err(e) => {
            // Checked before the batch began; kept as a record error all the same.
            out.push(b',');
            write_pair(out, "error", &e.to_string());
            return Outcome::Failed;
        }
    };
    out.extend_from_slice(b",\"document\":");
    // Writing to memory cannot fail.
    let _ = session
        .feed_document(text, Layout::Compact, out)
        .and_then(|_| session.finish_document(Layout::Compact, out));
    let replaced = session.replaced_sequences();
    if replaced > 0 {
        out.push(b',');
        write_pair(out, "replaced", &replaced);
    }
    if session.is_clean() {
        Outcome::Clean
    } else {
        Outcome::Unclean
    }
}

/// The progress bar: records and MB/s on stderr, only when stderr is a terminal.
struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    records: std::cell::Cell<u64>,
    bytes: std::cell::Cell<u64>,
}

impl Progress {
    fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("{spinner} {pos} records {msg} {elapsed}")
            {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            started: Instant::now(),
            records: Default::default(),
            bytes: Default::default(),
        }
    }

    fn advance(&self, records: usize, bytes: usize) {
        self.records.set(self.records.get() + records as u64);
        self.bytes.set(self.bytes.get() + bytes as u64);
        if let Some(bar) = &self.bar {
            let seconds = self.started.elapsed().as_secs_f64().max(1e-9);
            bar.set_position(self.records.get());
            bar.set_message(format!(
                "{:.1} MB/s",
                self.bytes.get() as f64 / seconds / 1e6
            ));
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
