//! The conformance runner: every case of `conformance/<dialect>/`, whole and under
//! the split schedule, checked for S2, S4 and S8 (see `idiolect::conformance`), and
//! every refused-options case (`<case>.refused.json`), and the field families'
//! viability rules (`<family>.viability.json`: one per family of the table, each
//! valid by `viability.schema.json` and compiling).

use std::path::Path;

use idiolect::conformance::viability;
use libtest_mimic::{Arguments, Trial};

const WRITE_VAR: &str = "IDIOLECT_WRITE_SCHEMAS";

/// The trials of the viability rules as data: every field family of the table has
/// its file, the committed schema is the one generated from the file's type
/// (`IDIOLECT_WRITE_SCHEMAS=1` rewrites it), and every file validates against it
/// and compiles.
fn viability_trials(root: &Path) -> Vec<Trial> {
    let mut trials = Vec::new();
    let r = root.to_path_buf();
    trials.push(Trial::test("viability::every-field-family-has-its-rule", move || {
        let missing = viability::families_without_rule(&r);
        if missing.is_empty() {
            return Ok(());
        }
        Err(format!(
            "no viability rule file for the field families {missing:?} (conformance/<family>.viability.json)"
        )
        .into())
    }));
    let path = root.join("viability.schema.json");
    let schema = viability::data::schema();
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema is plain JSON");
    text.push('\n');
    trials.push(Trial::test(
        "viability::schema-matches-the-type",
        move || {
            if std::env::var_os(WRITE_VAR).is_some() {
                std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            let committed =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if committed != text {
                return Err(format!(
                    "{} differs from the generated schema ({WRITE_VAR}=1 rewrites it)",
                    path.display()
                )
                .into());
            }
            Ok(())
        },
    ));
    for name in idiolect::field::families::names() {
        let (file, schema) = (viability::rule_file(root, name), schema.clone());
        trials.push(Trial::test(format!("viability::{name}"), move || {
            let text =
                std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string())?;
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect();
            if !errors.is_empty() {
                return Err(format!("{}: {}", file.display(), errors.join("; ")).into());
            }
            viability::data::DataRule::new(name, &text)
                .map(drop)
                .map_err(|e| format!("{}: {e}", file.display()).into())
        }));
    }
    trials
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let trials = match idiolect::conformance::load(&root, None) {
        Err(e) => vec![Trial::test("corpus", move || Err(e.into()))],
        Ok(cases) => {
            let missing = idiolect::conformance::dialects_without_cases(&cases);
            let mut trials: Vec<Trial> = cases
                .into_iter()
                .map(|case| match case {
                    Ok(case) => Trial::test(case.id(), move || {
                        idiolect::conformance::check(&case).map_err(Into::into)
                    }),
                    Err(e) => Trial::test(e.id, move || Err(e.message.into())),
                })
                .collect();
            match idiolect::conformance::load_refused(&root, None) {
                Err(e) => trials.push(Trial::test("corpus (refused)", move || Err(e.into()))),
                Ok(refused) => trials.extend(refused.into_iter().map(|case| match case {
                    Ok(case) => Trial::test(case.id(), move || {
                        idiolect::conformance::check_refused(&case).map_err(Into::into)
                    }),
                    Err(e) => Trial::test(e.id, move || Err(e.message.into())),
                })),
            }
            trials.extend(viability_trials(&root));
            for name in missing {
                trials.push(Trial::test(format!("{name}::(corpus)"), move || {
                    Err(format!("the registered dialect {name} has no conformance cases").into())
                }));
            }
            trials
        }
    };
    libtest_mimic::run(&args, trials).exit();
}
