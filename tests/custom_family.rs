//! The example families of examples/families/, defined at run time from a grammar
//! and a description (spec/custom-family.md), run on the corpus of the built-in
//! family each reproduces: every case whole and under the conformance runner's
//! whole split schedule, with its checks (S2 documents, S4 promptness against the
//! built-in family's viability rule, S8 spans).
//!
//! And the families that are nothing but a grammar and a description in grammar/
//! (`grammar/<family>.pest` + `grammar/<family>.family.json`; seed-oss, spec/seed-oss.md),
//! run on their own corpus the same way. Until the registry knows such a family its
//! cases live in tests/corpus-pending/<family>/ (the conformance runner walks every
//! folder of conformance/ and fails on a dialect it does not know); they are checked
//! without a viability rule (S2, S8, and S4's emission reach), and with the
//! runner's full checks once the family is registered and its folder moved to
//! conformance/.

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

/// The families defined only by `grammar/<family>.pest` and
/// `grammar/<family>.family.json`, each run on its own corpus.
const GRAMMAR_FAMILIES: &[&str] = &["seed-oss"];

/// Where a corpus waits until its family is registered (see the module's comment).
const PENDING_CORPUS: &str = "tests/corpus-pending";

fn family(root: &Path, stem: &str) -> Result<Family, String> {
    let dir = root.join("examples").join("families");
    family_from(
        &dir.join(format!("{stem}.pest")),
        &dir.join(format!("{stem}.json")),
    )
}

/// A family from `grammar/<name>.pest` and `grammar/<name>.family.json`.
fn grammar_family(root: &Path, name: &str) -> Result<Family, String> {
    let dir = root.join("grammar");
    family_from(
        &dir.join(format!("{name}.pest")),
        &dir.join(format!("{name}.family.json")),
    )
}

fn family_from(grammar: &Path, description: &Path) -> Result<Family, String> {
    let read =
        |path: &Path| std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()));
    Family::new(&read(grammar)?, &read(description)?).map_err(|e| e.to_string())
}

/// The folder that holds `conformance/<dialect>/`: conformance/ once the dialect's
/// cases are there, the pending corpus before.
fn corpus_root(root: &Path, dialect: &str) -> std::path::PathBuf {
    let conformance = root.join("conformance");
    if conformance.join(dialect).is_dir() {
        conformance
    } else {
        root.join(PENDING_CORPUS)
    }
}

fn span_of(event: &serde_json::Value) -> Option<(usize, usize)> {
    let span = event.get("span")?.as_array()?;
    Some((
        usize::try_from(span.first()?.as_u64()?).ok()?,
        usize::try_from(span.get(1)?.as_u64()?).ok()?,
    ))
}

/// Without the family in the registry (its viability rule is then missing too):
/// whole, in 1-byte chunks and under the runner's schedule, the document (S2), the
/// spans tiling the input (S8), and after each chunk the events reaching exactly as
/// far as when the same prefix is fed one byte at a time (S4's emission reach).
fn documents_only(case: &Case, open: idiolect::conformance::Opener) -> Result<(), String> {
    let mut chunkings = vec![("1-byte chunks".to_string(), case.input.chunks(1).collect())];
    chunkings.push(("whole input".to_string(), vec![&case.input[..]]));
    chunkings.extend(schedule(&case.input, &case.name));
    let total = String::from_utf8_lossy(&case.input).len();
    let mut reach_at = vec![0usize; case.input.len() + 1];
    for (run, (label, chunks)) in chunkings.into_iter().enumerate() {
        let mut session = open(case)?;
        let (mut delivered, mut covered) = (0usize, 0usize);
        let tile = |events: &mut Vec<serde_json::Value>, covered: &mut usize| {
            for event in events.drain(..) {
                match span_of(&event) {
                    Some((start, end)) if start == *covered && start <= end => *covered = end,
                    _ => {
                        return Err(format!(
                            "S8 {label}: spans do not tile at {covered}: {event}"
                        ))
                    }
                }
            }
            Ok(())
        };
        let mut events = Vec::new();
        for chunk in chunks {
            session.feed(chunk, &mut events);
            tile(&mut events, &mut covered)?;
            delivered += chunk.len();
            if run == 0 {
                reach_at[delivered] = covered;
            } else if covered != reach_at[delivered] {
                return Err(format!(
                    "S4 {label}: after {delivered} bytes the events reach {covered}, but fed byte by byte they reach {}",
                    reach_at[delivered]
                ));
            }
        }
        session.finish(&mut events);
        tile(&mut events, &mut covered)?;
        if covered != total {
            return Err(format!(
                "S8 {label}: after finish the spans end at {covered}, the input has {total} bytes"
            ));
        }
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
/// and every grammar family's description validates against it.
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
    files.extend(
        GRAMMAR_FAMILIES
            .iter()
            .map(|name| root.join("grammar").join(format!("{name}.family.json"))),
    );
    for file in files {
        let schema = generated.clone();
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .trim_end_matches(".json")
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

/// The trials of one family's corpus: every case of `<corpus>/<dialect>/`, whole and
/// under the runner's schedule, named `<label>::<case>`. `own_corpus`: the corpus is
/// the family's own, so a case with an option beyond FD-3's pins its refusal; on a
/// built-in family's corpus the cases of its `reasoning_markers` option are its own
/// and are left out.
fn corpus_trials(
    label: &'static str,
    family: Result<Family, String>,
    corpus: &Path,
    dialect: &'static str,
    own_corpus: bool,
) -> Vec<Trial> {
    let family = match family {
        Ok(f) => Arc::new(f),
        Err(e) => {
            return vec![Trial::test(format!("{label}::(family)"), move || {
                Err(e.into())
            })]
        }
    };
    let cases = match load(corpus, Some(dialect)) {
        Ok(cases) => cases,
        Err(e) => {
            return vec![Trial::test(format!("{label}::(corpus)"), move || {
                Err(e.into())
            })]
        }
    };
    let mut trials = Vec::new();
    if cases.is_empty() {
        trials.push(Trial::test(format!("{label}::(corpus)"), move || {
            Err(format!("{dialect} has no cases").into())
        }));
    }
    for case in cases {
        let family = family.clone();
        match case {
            // The built-in family's `reasoning_markers` option: a family defined
            // at run time reads the markers its description names (CF-4) and
            // refuses the key, so these cases are the built-in family's alone.
            Ok(case) if !own_corpus && case.options.get("reasoning_markers").is_some() => {}
            Ok(case) => trials.push(Trial::test(format!("{label}::{}", case.name), move || {
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
            Err(e) => trials.push(Trial::test(format!("{label}::{}", e.id), move || {
                Err(e.message.into())
            })),
        }
    }
    trials
}

/// seed-oss has no `reasoning_markers` option (SO-15): the key is refused, and the
/// one-line message names it.
fn seed_oss_refuses_reasoning_markers(root: &Path) -> Trial {
    let family = grammar_family(root, "seed-oss");
    Trial::test("seed-oss::(reasoning_markers is refused)", move || {
        let family = family?;
        let options = serde_json::json!({"reasoning_markers": ["think"]});
        match family.open(&options, false) {
            Err(e)
                if e.to_string().contains("reasoning_markers") && !e.to_string().contains('\n') =>
            {
                Ok(())
            }
            Err(e) => Err(format!("refused without naming the key on one line: {e}").into()),
            Ok(_) => Err("`reasoning_markers` accepted".into()),
        }
    })
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut trials = schema_trials(root);
    for &(stem, dialect) in EXAMPLES {
        let corpus = root.join("conformance");
        trials.extend(corpus_trials(
            stem,
            family(root, stem),
            &corpus,
            dialect,
            false,
        ));
    }
    for &name in GRAMMAR_FAMILIES {
        let corpus = corpus_root(root, name);
        trials.extend(corpus_trials(
            name,
            grammar_family(root, name),
            &corpus,
            name,
            true,
        ));
    }
    trials.push(seed_oss_refuses_reasoning_markers(root));
    libtest_mimic::run(&args, trials).exit();
}
