//! `idiolect conformance`: run the corpus in-process or against a port.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::Value;

use super::input::plain;
use super::CliError;
use idiolect::conformance::{self, Case, KeyOrder};

/// How long a port may take on one run of one case.
const PORT_TIMEOUT: Duration = Duration::from_secs(20);
/// Chunk sizes sent to a port with `--chunks` (plus `PORT_RANDOM` seeded chunkings).
const PORT_CHUNK_SIZES: [usize; 5] = [1, 2, 3, 7, 64];
const PORT_RANDOM: u64 = 3;

/// What to run.
pub struct Plan {
    pub root: PathBuf,
    pub dialect: Option<String>,
    pub port: Option<String>,
    pub chunks: bool,
    /// Compare object keys in order (ports compare unordered unless they ask).
    pub ordered: bool,
    pub skip: Option<PathBuf>,
    /// Worker threads (default: one per core).
    pub threads: Option<u64>,
}

/// Cases checked at once before their lines are printed, in corpus order: each
/// block's cases run in parallel, and the output still follows the corpus as it
/// goes (a port run of the whole corpus takes minutes).
const BLOCK: usize = 64;

fn read_skip_list(path: &Path) -> Result<BTreeSet<String>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError(format!("cannot read {}: {}", path.display(), plain(&e))))?;
    Ok(text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect())
}

/// Runs the plan, prints a line per case and the totals; returns the exit code.
pub fn run(plan: Plan) -> Result<i32, CliError> {
    let cases = conformance::load(&plan.root, plan.dialect.as_deref()).map_err(CliError)?;
    if let Some(d) = &plan.dialect {
        if idiolect::dialect(d).is_none() && plan.port.is_none() {
            return Err(CliError(format!("unknown dialect {d:?}")));
        }
    }
    let skip = match &plan.skip {
        Some(path) => read_skip_list(path)?,
        None => BTreeSet::new(),
    };
    let options_dir =
        std::env::temp_dir().join(format!("idiolect-conformance-{}", std::process::id()));
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = plan.threads {
        pool = pool.num_threads(n as usize);
    }
    let pool = pool
        .build()
        .map_err(|e| CliError(format!("cannot start the worker threads: {e}")))?;
    let order = if plan.ordered {
        KeyOrder::Ordered
    } else {
        KeyOrder::Unordered
    };
    let check = |case: &Result<Case, conformance::LoadError>| match case {
        Err(e) => (e.id.clone(), Err(e.message.clone())),
        Ok(case) => {
            let result = match &plan.port {
                None => conformance::check(case),
                Some(cmd) => check_port(cmd, case, plan.chunks, order, &options_dir),
            };
            (case.id(), result)
        }
    };
    // Refused-options cases have no input to send a port: in-process runs only.
    let refused = match plan.port {
        Some(_) => Vec::new(),
        None => conformance::load_refused(&plan.root, plan.dialect.as_deref()).map_err(CliError)?,
    };
    let results = cases
        .chunks(BLOCK)
        .flat_map(|block| pool.install(|| block.par_iter().map(check).collect::<Vec<_>>()))
        .chain(refused.into_iter().map(|case| match case {
            Err(e) => (e.id, Err(e.message)),
            Ok(case) => (case.id(), conformance::check_refused(&case)),
        }));
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    let mut out = std::io::stdout().lock();
    if let Ok(version) = std::fs::read_to_string(plan.root.join("VERSION")) {
        let _ = writeln!(out, "# corpus version {}", version.trim());
    }
    for (id, result) in results {
        let line = match (skip.contains(&id), result) {
            (true, Ok(())) => {
                skipped += 1;
                format!("stale {id}: listed in the skip list but passes\n")
            }
            (true, Err(_)) => {
                skipped += 1;
                format!("skip {id}\n")
            }
            (false, Ok(())) => {
                passed += 1;
                format!("ok {id}\n")
            }
            (false, Err(why)) => {
                failed += 1;
                let indented = why
                    .lines()
                    .map(|l| format!("    {l}\n"))
                    .collect::<String>();
                format!("FAIL {id}\n{indented}")
            }
        };
        if out.write_all(line.as_bytes()).is_err() {
            std::process::exit(if failed > 0 { 1 } else { 0 });
        }
    }
    let _ = std::fs::remove_dir_all(&options_dir);
    let total = if skipped > 0 {
        format!("{passed} passed, {failed} failed, {skipped} skipped\n")
    } else {
        format!("{passed} passed, {failed} failed\n")
    };
    let _ = out.write_all(total.as_bytes());
    let _ = out.flush();
    Ok(if failed > 0 { 1 } else { 0 })
}

/// Runs a case through the port: whole, and with `chunks` under the port schedule.
fn check_port(
    cmd: &str,
    case: &Case,
    chunks: bool,
    order: KeyOrder,
    options_dir: &Path,
) -> Result<(), String> {
    std::fs::create_dir_all(options_dir)
        .map_err(|e| format!("cannot create {}: {e}", options_dir.display()))?;
    let options_path = options_dir.join(format!("{}--{}.json", case.dialect, case.name));
    let options = if case.options.is_null() {
        Value::Object(Default::default())
    } else {
        case.options.clone()
    };
    std::fs::write(&options_path, options.to_string())
        .map_err(|e| format!("cannot write options: {e}"))?;

    let whole = run_port(cmd, case, &options_path, None, &case.input)?;
    if !conformance::same(&case.expected, &whole, order) {
        return Err(conformance::document_mismatch(
            "whole input (port)",
            case,
            &whole,
        ));
    }
    if chunks {
        let input = &case.input[..];
        let mut schedule: Vec<(String, Vec<&[u8]>)> = PORT_CHUNK_SIZES
            .iter()
            .map(|&s| {
                (
                    format!("{s}-byte chunks"),
                    conformance::split_by_sizes(input, std::iter::repeat(s)),
                )
            })
            .collect();
        for salt in 0..PORT_RANDOM {
            schedule.push((
                format!("random chunking #{salt}"),
                conformance::random_chunking(input, &case.name, salt),
            ));
        }
        for (label, pieces) in schedule {
            let payload = Value::Array(
                pieces
                    .iter()
                    .map(|c| Value::Array(c.iter().map(|&b| Value::from(b)).collect()))
                    .collect(),
            );
            let got = run_port(
                cmd,
                case,
                &options_path,
                Some(&label),
                payload.to_string().as_bytes(),
            )?;
            if !conformance::same(&case.expected, &got, order) {
                return Err(conformance::document_mismatch(
                    &format!("{label} (port)"),
                    case,
                    &got,
                ));
            }
        }
    }
    Ok(())
}

/// Runs the port once and parses its stdout as the document.
fn run_port(
    cmd: &str,
    case: &Case,
    options: &Path,
    chunked: Option<&str>,
    stdin: &[u8],
) -> Result<Value, String> {
    let label = chunked.unwrap_or("whole input");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .env("IDIOLECT_DIALECT", &case.dialect)
        .env("IDIOLECT_OPTIONS", options)
        .env(
            "IDIOLECT_CHUNKED",
            if chunked.is_some() { "1" } else { "0" },
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{label}: cannot start the port: {e}"))?;
    let mut input = child.stdin.take().ok_or("no stdin")?;
    let payload = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&payload);
    });
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let mut stderr = child.stderr.take().ok_or("no stderr")?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > PORT_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{label}: the port did not finish within {}s",
                    PORT_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("{label}: waiting for the port: {e}")),
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if !matches!(status.code(), Some(0) | Some(1)) {
        return Err(format!(
            "{label}: the port exited with {status}: {}",
            String::from_utf8_lossy(&err).lines().last().unwrap_or("")
        ));
    }
    serde_json::from_slice(&out)
        .map_err(|e| format!("{label}: the port printed no JSON document ({e})"))
}
