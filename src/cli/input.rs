//! Reading inputs and option files, with one-line error messages.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::args::OptionArgs;
use super::CliError;

/// Where the input comes from.
pub enum Source {
    Stdin,
    File(PathBuf),
}

impl Source {
    pub fn from_arg(file: Option<PathBuf>) -> Source {
        match file {
            Some(p) if p.as_os_str() != "-" => Source::File(p),
            _ => Source::Stdin,
        }
    }

    /// Opens the input for reading.
    pub fn open(&self) -> Result<Box<dyn Read>, CliError> {
        match self {
            Source::Stdin => Ok(Box::new(std::io::stdin())),
            Source::File(path) => {
                if path.is_dir() {
                    return Err(CliError::new(format!(
                        "cannot read {}: it is a directory",
                        path.display()
                    )));
                }
                let file = std::fs::File::open(path).map_err(|e| read_error(path, &e))?;
                Ok(Box::new(file))
            }
        }
    }

    /// Reads the whole input.
    pub fn read_all(&self) -> Result<Vec<u8>, CliError> {
        let mut bytes = Vec::new();
        self.open()?
            .read_to_end(&mut bytes)
            .map_err(|e| self.error(&e))?;
        Ok(bytes)
    }

    pub fn error(&self, e: &std::io::Error) -> CliError {
        match self {
            Source::Stdin => CliError::new(format!("cannot read stdin: {}", plain(e))),
            Source::File(path) => read_error(path, e),
        }
    }
}

/// An io::Error's message without the "(os error N)" tail.
pub fn plain(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn read_error(path: &Path, e: &std::io::Error) -> CliError {
    CliError::new(format!("cannot read {}: {}", path.display(), plain(e)))
}

/// The dialect's options: the `--options` file, then the flags on top.
pub fn build_options(dialect: &str, args: &OptionArgs) -> Result<Value, CliError> {
    let mut options = match &args.options {
        None => Map::new(),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| read_error(path, &e))?;
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(map)) => map,
                Ok(Value::Null) => Map::new(),
                Ok(_) => {
                    return Err(CliError::new(format!(
                        "options file {}: expected a JSON object",
                        path.display()
                    )))
                }
                Err(e) => {
                    return Err(CliError::new(format!(
                        "options file {}: invalid JSON at line {} column {}: {}",
                        path.display(),
                        e.line(),
                        e.column(),
                        json_error_text(&e)
                    )))
                }
            }
        }
    };
    let flag_misuse = |flag: &str, owner: &str| {
        CliError::new(format!(
            "{flag} applies to the {owner} dialect, not {dialect}"
        ))
    };
    if !args.sections.is_empty() {
        if dialect != "sections" {
            return Err(flag_misuse("--section", "sections"));
        }
        let specs: Vec<Value> = args.sections.iter().map(|s| section_spec(s)).collect();
        options.insert("sections".into(), Value::Array(specs));
    }
    if let Some(format) = &args.format {
        if dialect != "transcript" {
            return Err(flag_misuse("--format", "transcript"));
        }
        options.insert("format".into(), json!(format));
    }
    if !args.stops.is_empty() {
        if dialect != "transcript" {
            return Err(flag_misuse("--stop", "transcript"));
        }
        options.insert("mode".into(), json!("scan"));
        options.insert("stop".into(), json!(args.stops));
    }
    Ok(Value::Object(options))
}

/// `NAME` or `NAME=ALIAS,ALIAS` as a section spec object.
fn section_spec(arg: &str) -> Value {
    let (name, aliases) = match arg.split_once('=') {
        Some((name, aliases)) => (
            name,
            aliases
                .split(',')
                .filter(|a| !a.is_empty())
                .collect::<Vec<_>>(),
        ),
        None => (arg, Vec::new()),
    };
    json!({ "name": name, "aliases": aliases })
}

/// serde_json's message without its own " at line L column C" tail.
fn json_error_text(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
