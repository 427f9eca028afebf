//! The example families of examples/families/, defined at run time from a grammar
//! and a description (spec/custom-family.md), run on the corpus of the built-in
//! family each reproduces: every case whole and under the conformance runner's
//! whole split schedule, with its checks (S2 documents, S4 promptness against the
//! built-in family's viability rule, S8 spans).

use std::path::Path;
use std::sync::Arc;

use idiolect::conformance::{check_with, document_mismatch, load, same, schedule, Case, KeyOrder};
use idiolect::field::custom::Family;
use libtest_mimic::{Arguments, Trial};

/// (example file stem, built-in dialect whose corpus it must reproduce).
const EXAMPLES: &[(&str, &str)] = &[
    ("hermes", "hermes"),
    ("qwen3-coder", "qwen3-coder"),
    ("kimi-k2", "kimi-k2"),
    ("minimax-m2", "minimax-m2"),
];

fn family(root: &Path, stem: &str) -> Result<Family, String> {
    let dir = root.join("examples").join("families");
    let read = |ext: &str| {
        let path = dir.join(format!("{stem}.{ext}"));
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    Family::new(&read("pest")?, &read("json")?).map_err(|e| e.to_string())
}

/// Without the built-in family in this build (its viability rule is then missing
/// too), the documents alone: whole and under the runner's schedule.
fn documents_only(case: &Case, open: idiolect::conformance::Opener) -> Result<(), String> {
    let mut chunkings = vec![("whole input".to_string(), vec![&case.input[..]])];
    chunkings.push(("1-byte chunks".to_string(), case.input.chunks(1).collect()));
    chunkings.extend(schedule(&case.input, &case.name));
    for (label, chunks) in chunkings {
        let mut session = open(case)?;
        let mut events = Vec::new();
        for chunk in chunks {
            session.feed(chunk, &mut events);
        }
        session.finish(&mut events);
        let got = session.document();
        if !same(&case.expected, &got, KeyOrder::Ordered) {
            return Err(document_mismatch(&label, case, &got));
        }
    }
    Ok(())
}

/// The first option of `options` that a family defined at run time does not have
/// (its options are FD-3's, CF-4; a built-in family's own options, such as hermes'
/// `reasoning_markers`, are semantics a description cannot say, CF-15).
fn beyond_custom_options(options: &serde_json::Value) -> Option<String> {
    options
        .as_object()?
        .keys()
        .find(|k| !matches!(k.as_str(), "start_in_reasoning" | "tools"))
        .cloned()
}

/// spec/custom-family.schema.json is the schema generated from the description's
/// type (`IDIOLECT_WRITE_SCHEMAS=1` rewrites it), and every example description
/// validates against it.
fn schema_trials(root: &Path) -> Vec<Trial> {
    let path = root.join("spec").join("custom-family.schema.json");
    let generated = idiolect::field::custom::description_schema();
    let mut text = serde_json::to_string_pretty(&generated).expect("a schema is plain JSON");
    text.push('\n');
    let mut trials = Vec::new();
    let (p, t) = (path.clone(), text);
    trials.push(Trial::test(
        "description-schema::matches-the-type",
        move || {
            if std::env::var_os("IDIOLECT_WRITE_SCHEMAS").is_some() {
                std::fs::write(&p, &t).map_err(|e| format!("{}: {e}", p.display()))?;
            }
            let committed =
                std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            if committed != t {
                return Err(format!(
                    "{} differs from the generated schema (IDIOLECT_WRITE_SCHEMAS=1 rewrites it)",
                    p.display()
                )
                .into());
            }
            Ok(())
        },
    ));
    let dir = root.join("examples").join("families");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    for file in files {
        let schema = generated.clone();
        let name = file
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        trials.push(Trial::test(
            format!("description-schema::{name}"),
            move || {
                let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
                let instance: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| e.to_string())?;
                let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string())?;
                let errors: Vec<String> = validator
                    .iter_errors(&instance)
                    .map(|e| e.to_string())
                    .collect();
                if errors.is_empty() {
                    Ok(())
                } else {
                    Err(errors.join("\n").into())
                }
            },
        ));
    }
    trials
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut trials = schema_trials(root);
    for &(stem, dialect) in EXAMPLES {
        let family = match family(root, stem) {
            Ok(f) => Arc::new(f),
            Err(e) => {
                trials.push(Trial::test(format!("{stem}::(family)"), move || {
                    Err(e.into())
                }));
                continue;
            }
        };
        let cases = match load(&root.join("conformance"), Some(dialect)) {
            Ok(cases) => cases,
            Err(e) => {
                trials.push(Trial::test(format!("{stem}::(corpus)"), move || {
                    Err(e.into())
                }));
                continue;
            }
        };
        if cases.is_empty() {
            trials.push(Trial::test(format!("{stem}::(corpus)"), move || {
                Err(format!("conformance/{dialect} has no cases").into())
            }));
        }
        for case in cases {
            let family = family.clone();
            match case {
                // The built-in family's `reasoning_markers` option: a family defined
                // at run time reads the markers its description names (CF-4) and
                // refuses the key, so these cases are the built-in family's alone.
                Ok(case) if case.options.get("reasoning_markers").is_some() => {}
                Ok(case) => trials.push(Trial::test(format!("{stem}::{}", case.name), move || {
                    let open =
                        |case: &Case| family.open(&case.options, false).map_err(|e| e.to_string());
                    if let Some(key) = beyond_custom_options(&case.options) {
                        // Not reproducible by a description: the family refuses the
                        // option, naming it (CF-4).
                        return match open(&case) {
                            Err(e) if e.contains(&key) => Ok(()),
                            Err(e) => Err(format!("refused without naming `{key}`: {e}").into()),
                            Ok(_) => Err(format!("option `{key}` accepted").into()),
                        };
                    }
                    if idiolect::dialect(dialect).is_some() {
                        check_with(&case, &open).map_err(Into::into)
                    } else {
                        documents_only(&case, &open).map_err(Into::into)
                    }
                })),
                Err(e) => trials.push(Trial::test(format!("{stem}::{}", e.id), move || {
                    Err(e.message.into())
                })),
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
