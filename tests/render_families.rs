//! Rendering from the description (CF-26): every field family of the table that
//! renders writes the calls, results and turn of `tests/render/` as its spec's
//! rendering rule says (HE-14, QC-17, D3-18, D31-10, MI-17, PY-16, KK-17, MM-15, GL-15, SO-21,
//! S3-16, HY-16, HY-28, K3-16, RS-10):
//! `tests/render/<family>.<what>.txt` is the text expected from
//! `tests/render/<what>.json`. A family that renders has a file for each of its
//! renderings; a rendering the family does not offer is refused.

use std::path::Path;

use idiolect::field::families::TABLE;
use libtest_mimic::{Arguments, Trial};
use serde_json::Value;

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn main() {
    let args = Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("render");
    let mut trials = Vec::new();
    for entry in TABLE {
        let Some(dialect) = idiolect::dialect(entry.name) else {
            continue;
        };
        if !dialect.renders() {
            continue;
        }
        for what in ["calls", "results", "turn", "turn-without-calls"] {
            let expected = dir.join(format!("{}.{what}.txt", entry.name));
            let input = dir.join(format!("{what}.json"));
            let name = entry.name;
            trials.push(Trial::test(format!("{name}::{what}"), move || {
                let input: Value =
                    serde_json::from_str(&read(&input)?).map_err(|e| e.to_string())?;
                let asked = what.strip_suffix("-without-calls").unwrap_or(what);
                let rendered = dialect.render(Some(asked), &input, &Value::Null);
                match (expected.exists(), rendered) {
                    (true, Ok(text)) if text == read(&expected)? => Ok(()),
                    (true, Ok(text)) => Err(format!(
                        "{name} renders {what} as\n{text}\nnot as {}",
                        expected.display()
                    )
                    .into()),
                    (true, Err(e)) => Err(format!("{name} refuses {what}: {e}").into()),
                    // No expected text: the family renders it through another
                    // file (a turn with calls) or refuses it.
                    (false, Err(_)) => Ok(()),
                    (false, Ok(_)) if what == "turn-without-calls" => Ok(()),
                    (false, Ok(text)) => Err(format!(
                        "{name} renders {what} but {} is missing:\n{text}",
                        expected.display()
                    )
                    .into()),
                }
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
