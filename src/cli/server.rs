//! The server layer on the command line (spec/servers.md): `parse --output=message`
//! prints a field family's one-shot message, `stream --deltas=server` its deltas as
//! an inference server sends them, one per chunk read.

use std::io::Read;

use idiolect::field::custom::{Family, Options};
use idiolect::field::server::{self, CallIds, ServerOptions, ServerProjection};

use super::args::ServerArgs;
use super::commands::{read_some, write_stdout};
use super::input::Source;
use super::CliError;

/// The server options the arguments choose.
pub fn options(args: &ServerArgs) -> ServerOptions {
    ServerOptions {
        ids: args
            .ids
            .as_deref()
            .and_then(CallIds::from_name)
            .unwrap_or_default(),
        names: (!args.declared_tools.is_empty()).then(|| args.declared_tools.clone()),
    }
}

/// `parse --output=message`: the whole input's message, as JSON.
pub fn message(
    family: &Family,
    options: &Options,
    rules: &ServerOptions,
    source: Source,
    compact: bool,
) -> Result<i32, CliError> {
    let input = source.read_all()?;
    let text = String::from_utf8_lossy(&input);
    let document = family
        .parse(&text, options)
        .map_err(|e| CliError::new(e.to_string()))?;
    let message = server::message(&document, rules);
    let mut json = if compact {
        serde_json::to_string(&message)
    } else {
        serde_json::to_string_pretty(&message)
    }
    .expect("a message serializes");
    json.push('\n');
    write_stdout(json.as_bytes())?;
    Ok(0)
}

/// `stream --deltas=server`: one JSON line per delta, at most one per chunk read
/// (and one at the end), flushed as it is decided.
pub fn stream(
    family: &Family,
    options: &Options,
    rules: ServerOptions,
    source: Source,
    chunk_size: usize,
) -> Result<i32, CliError> {
    let mut parser = family
        .parser(options)
        .map_err(|e| CliError::new(e.to_string()))?;
    let mut projection = ServerProjection::new(rules);
    let mut reader: Box<dyn Read> = source.open()?;
    let mut buf = vec![0u8; chunk_size];
    let line = |delta: Option<idiolect::field::Delta>| -> Result<(), CliError> {
        if let Some(delta) = delta {
            let mut json = serde_json::to_vec(&delta).map_err(|e| CliError::new(e.to_string()))?;
            json.push(b'\n');
            write_stdout(&json)?;
        }
        Ok(())
    };
    loop {
        let n = read_some(&mut reader, &mut buf, &source)?;
        if n == 0 {
            break;
        }
        for event in parser.feed(&buf[..n]) {
            projection.push(&event);
        }
        line(projection.delta())?;
    }
    for event in parser.finish() {
        projection.push(&event);
    }
    line(projection.finish())?;
    Ok(0)
}
