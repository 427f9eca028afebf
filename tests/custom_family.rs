//! The families of the table that are a grammar and a description
//! (`grammar/<name>.pest` + `grammar/<name>.family.json`), built from their files at
//! run time as a user's family is (`Family::new`, spec/custom-family.md), run on
//! their whole corpus: every case whole and under the conformance runner's whole
//! split schedule, with its checks (S2 documents, S4 promptness against the
//! family's viability rule, S8 spans). And every description validates against
//! the description's JSON Schema.

use std::path::Path;
use std::sync::Arc;

use idiolect::conformance::{check_with, load, Case};
use idiolect::field::custom::Family;
use libtest_mimic::{Arguments, Trial};

fn family(root: &Path, grammar: &str, description: &str) -> Result<Family, String> {
    let read = |file: &str| {
        let path = root.join(file);
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    Family::new(&read(grammar)?, &read(description)?).map_err(|e| e.to_string())
}

/// The first option of `options` that `family` does not have (its options are
/// FD-3's, CF-4, `reasoning_markers` with CF-19's key, and its own, CF-22).
fn beyond_custom_options(family: &Family, options: &serde_json::Value) -> Option<String> {
    options
        .as_object()?
        .keys()
        .find(|k| match k.as_str() {
            "start_in_reasoning" | "tools" | "tool_choice" => false,
            "reasoning_markers" => !family.has_reasoning_markers(),
            other => !family.has_option(other),
        })
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
    let dir = root.join("grammar");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.to_string_lossy().ends_with(".family.json"));
    files.sort();
    for file in files {
        let schema = generated.clone();
        let name = file
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .trim_end_matches(".family")
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
    let engine = idiolect::field::families::TABLE
        .iter()
        .map(|e| (e.name, e.grammar_file));
    for (dialect, grammar_file) in engine {
        let stem = dialect;
        let grammar = format!("grammar/{grammar_file}.pest");
        let description = format!("grammar/{stem}.family.json");
        let family = match family(root, &grammar, &description) {
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
                Ok(case) => trials.push(Trial::test(format!("{stem}::{}", case.name), move || {
                    let open =
                        |case: &Case| family.open(&case.options, false).map_err(|e| e.to_string());
                    if let Some(key) = beyond_custom_options(&family, &case.options) {
                        // Not reproducible by a description: the family refuses the
                        // option, naming it (CF-4).
                        return match open(&case) {
                            Err(e) if e.contains(&key) => Ok(()),
                            Err(e) => Err(format!("refused without naming `{key}`: {e}").into()),
                            Ok(_) => Err(format!("option `{key}` accepted").into()),
                        };
                    }
                    check_with(&case, &open).map_err(Into::into)
                })),
                Err(e) => trials.push(Trial::test(format!("{stem}::{}", e.id), move || {
                    Err(e.message.into())
                })),
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
