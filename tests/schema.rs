//! The JSON Schemas in `conformance/` (`<dialect>.*.schema.json`): they match the Rust types, and every
//! expected document and options file of the corpus validates against them.
//!
//! `IDIOLECT_WRITE_SCHEMAS=1 cargo test --test schema` rewrites the schema files from
//! the types; without it these tests never write.

use std::fs;
use std::path::{Path, PathBuf};

use idiolect::session::{self, Dialect};
use serde_json::{json, Value};

const WRITE_VAR: &str = "IDIOLECT_WRITE_SCHEMAS";

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance")
}

/// Where the schema files live: beside the dialect folders, so that no folder of the
/// corpus is anything but a dialect.
fn schema_dir() -> PathBuf {
    corpus()
}

/// The schema files of `dialect` with their contents, as generated from the types.
fn generated(dialect: &Dialect) -> [(PathBuf, String); 2] {
    let schemas = dialect.schemas();
    let file = |what: &str, schema: &Value| {
        let path = schema_dir().join(format!("{}.{what}.schema.json", dialect.name));
        let mut text = serde_json::to_string_pretty(schema).expect("a schema is plain JSON");
        text.push('\n');
        (path, text)
    };
    [
        file("options", &schemas.options),
        file("document", &schemas.document),
    ]
}

fn relative(path: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn schema_files_match_the_types() {
    let write = std::env::var_os(WRITE_VAR).is_some_and(|v| !v.is_empty() && v != "0");
    let mut problems = Vec::new();
    for dialect in session::dialects() {
        for (path, text) in generated(dialect) {
            let committed = fs::read_to_string(&path).ok();
            if committed.as_deref() == Some(text.as_str()) {
                continue;
            }
            if write {
                fs::create_dir_all(schema_dir()).expect("create conformance/");
                fs::write(&path, &text).expect("write a schema file");
                eprintln!("wrote {}", relative(&path));
            } else {
                let what = if committed.is_some() {
                    "differs from the schema generated from the Rust types"
                } else {
                    "is missing"
                };
                problems.push(format!("{} {what}", relative(&path)));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{}\nregenerate with: {WRITE_VAR}=1 cargo test --test schema",
        problems.join("\n")
    );
}

/// Whether a corpus file holds options (`options.json`, `<case>.options.json`).
fn is_options_file(name: &str) -> bool {
    name == "options.json" || name.ends_with(".options.json")
}

fn validator(schema: &Value, label: &str) -> jsonschema::Validator {
    jsonschema::validator_for(schema)
        .unwrap_or_else(|e| panic!("the {label} schema is not a valid JSON Schema: {e}"))
}

/// Every way `instance` fails `validator`, one line each (empty when it is valid).
fn failures(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("at {:?}: {e}", e.instance_path().as_str()))
        .collect()
}

#[test]
fn corpus_files_validate_against_their_schemas() {
    let mut problems = Vec::new();
    let mut checked = (0, 0);
    for dialect in session::dialects() {
        let schemas = dialect.schemas();
        let options = validator(&schemas.options, &format!("{} options", dialect.name));
        let document = validator(&schemas.document, &format!("{} document", dialect.name));
        let folder = corpus().join(dialect.name);
        let mut files: Vec<PathBuf> = fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("read {}: {e}", relative(&folder)))
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{} has no JSON files", relative(&folder));
        for path in files {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            // A refused-options case holds options (structurally valid ones, which
            // the dialect refuses for what they mean) beside the expected message.
            let refused = name.ends_with(".refused.json");
            let (validator, count) = if is_options_file(name) || refused {
                (&options, &mut checked.0)
            } else {
                (&document, &mut checked.1)
            };
            *count += 1;
            let text = fs::read_to_string(&path).expect("read a corpus file");
            let value: Value = match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => {
                    problems.push(format!("{}: not JSON: {e}", relative(&path)));
                    continue;
                }
            };
            let value = if refused {
                match value.get("options") {
                    Some(options) => options.clone(),
                    None => {
                        problems.push(format!("{}: no \"options\"", relative(&path)));
                        continue;
                    }
                }
            } else {
                value
            };
            for failure in failures(validator, &value) {
                problems.push(format!("{}: {failure}", relative(&path)));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} corpus file problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(checked.0 > 0 && checked.1 > 0, "no options or no documents");
    eprintln!(
        "validated {} options and {} document files",
        checked.0, checked.1
    );
}

/// Paths of object schemas that are closed (`additionalProperties: false`) and also
/// `$ref` another schema: the referenced keys would count as unknown there, so such a
/// schema rejects every document. (An internally tagged newtype variant does this
/// unless its type is `#[schemars(inline)]`.)
fn closed_beside_ref(schema: &Value, at: &str, found: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            if object.contains_key("$ref")
                && object.get("additionalProperties") == Some(&Value::Bool(false))
            {
                found.push(at.to_string());
            }
            for (key, value) in object {
                closed_beside_ref(value, &format!("{at}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                closed_beside_ref(value, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn no_closed_object_refers_to_another_schema() {
    for dialect in session::dialects() {
        let schemas = dialect.schemas();
        for (what, schema) in [
            ("options", &schemas.options),
            ("document", &schemas.document),
        ] {
            let mut found = Vec::new();
            closed_beside_ref(schema, "#", &mut found);
            assert!(
                found.is_empty(),
                "{} {what} schema: closed objects beside a $ref at {found:?}",
                dialect.name
            );
        }
    }
}

fn schemas_of(name: &str) -> session::Schemas {
    let dialect = session::dialect(name).expect("a known dialect");
    dialect.schemas()
}

#[test]
fn the_validator_rejects_what_the_types_cannot_produce() {
    let sections = schemas_of("sections");
    let document = validator(&sections.document, "sections document");
    let good = json!({"items": [
        {"type": "text", "text": "a"},
        {"type": "section", "name": "think", "tag": "think", "attrs": {"k": "v"},
         "content": "b", "closed": true, "span": [1, 20]},
    ]});
    assert_eq!(failures(&document, &good), Vec::<String>::new());
    let rejected = [
        // a wrong-typed field
        json!({"items": [{"type": "section", "name": "think", "tag": "think", "attrs": {},
                          "content": "b", "closed": "yes"}]}),
        // a missing field
        json!({"items": [{"type": "text"}]}),
        // an unknown item type
        json!({"items": [{"type": "paragraph", "text": "a"}]}),
        // a key the document never has
        json!({"items": [], "extra": 1}),
        // an attribute value that is not a string
        json!({"items": [{"type": "section", "name": "n", "tag": "n", "attrs": {"k": 1},
                          "content": "", "closed": false}]}),
        // a span that is not two offsets
        json!({"items": [{"type": "text", "text": "a", "span": [1]}]}),
    ];
    for doc in rejected {
        assert!(!document.is_valid(&doc), "accepted {doc}");
    }

    let options = validator(&sections.options, "sections options");
    assert!(options.is_valid(&json!({})));
    assert!(options.is_valid(&json!({"sections": [{"name": "a"}], "max_tag_bytes": 9})));
    assert!(!options.is_valid(&json!({"sectionz": []})), "unknown key");
    assert!(!options.is_valid(&json!({"max_tag_bytes": -1})), "negative");
    assert!(
        !options.is_valid(&json!({"sections": [{"aliases": []}]})),
        "no name"
    );

    let plurnk = schemas_of("plurnk");
    let document = validator(&plurnk.document, "plurnk document");
    let url = json!({"kind": "url", "raw": "a://b", "scheme": "a", "username": null,
        "password": null, "hostname": "b", "port": null, "pathname": "", "params": {},
        "fragment": null});
    let statement = |path: Value| {
        json!({"items": [{"kind": "statement", "statement": {"op": "READ", "suffix": "",
            "signal": null, "path": path, "lineMarker": null, "body": null,
            "position": {"line": 1, "column": 0}}}]})
    };
    assert_eq!(
        failures(&document, &statement(url.clone())),
        Vec::<String>::new()
    );
    let mut bad_port = url.clone();
    bad_port["port"] = json!(70000);
    assert!(!document.is_valid(&statement(bad_port)), "port above 65535");
    let mut no_kind = url;
    no_kind.as_object_mut().map(|o| o.remove("kind"));
    assert!(
        !document.is_valid(&statement(no_kind)),
        "url path without kind"
    );

    let kindaxml = schemas_of("kindaxml");
    let options = validator(&kindaxml.options, "kindaxml options");
    assert!(options.is_valid(&json!({"per_tag_recovery_strategy": {"cite": "noop"}})));
    assert!(!options.is_valid(&json!({"per_tag_recovery_strategy": {"cite": "nope"}})));
    assert!(!options.is_valid(&json!({"unknown_mode": "Strip"})));
}

/// The options schemas accept what the options deserializer accepts, and refuse
/// what it refuses, on each dialect's corpus options and on a few refusals.
#[test]
fn options_schemas_agree_with_the_deserializer() {
    let refused = [
        json!({"no_such_option": true}),
        json!({"max_tag_bytes": "64"}),
        json!({"max_tag_bytes": 1.5}),
    ];
    for dialect in session::dialects() {
        let schemas = dialect.schemas();
        let options = validator(&schemas.options, dialect.name);
        // Checks beyond deserializing (bounds, names) are not in the schema, so only
        // refusals at the deserializing stage are compared.
        for value in &refused {
            let error = dialect.open(value, false).err();
            let deserialize_error = error.is_some_and(|e| {
                e.message.contains("unknown field") || e.message.contains("invalid type")
            });
            assert_eq!(
                options.is_valid(value),
                !deserialize_error,
                "{}: schema and deserializer disagree on {value}",
                dialect.name
            );
        }
    }
}
