//! Model names to field families (spec/custom-family.md CF-35): the library's
//! `field::families::for_model`, the descriptions' `models` key, and
//! `idiolect dialects --model`.

mod support;

use idiolect::field::custom::{Description, Family};
use idiolect::field::families;
use serde_json::{json, Value};
use support::run;

/// Models as the hubs spell them, with the family that reads each one's output
/// and the options its chat template implies: at least one for every family of
/// the table that a model writes (`reasoning` is a dialect of wrappers alone).
const MODELS: &[(&str, &str, &str)] = &[
    ("NousResearch/Hermes-3-Llama-3.1-8B", "hermes", "{}"),
    ("Qwen/Qwen2.5-7B-Instruct", "hermes", "{}"),
    ("Qwen/QwQ-32B", "hermes", r#"{"start_in_reasoning": true}"#),
    ("Qwen/Qwen3-8B", "hermes", "{}"),
    (
        "Qwen/Qwen3-235B-A22B-Thinking-2507",
        "hermes",
        r#"{"start_in_reasoning": true}"#,
    ),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "hermes", "{}"),
    (
        "Qwen/Qwen3-Next-80B-A3B-Thinking",
        "hermes",
        r#"{"start_in_reasoning": true}"#,
    ),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder", "{}"),
    (
        "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8",
        "qwen3-coder",
        "{}",
    ),
    ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3", "{}"),
    (
        "deepseek-ai/DeepSeek-R1-0528",
        "deepseek-v3",
        r#"{"start_in_reasoning": true}"#,
    ),
    ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-v3.1", "{}"),
    ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-v3.1", "{}"),
    ("deepseek-ai/DeepSeek-V3.2", "deepseek-dsml", "{}"),
    ("deepseek-ai/DeepSeek-V4-Flash", "deepseek-dsml", "{}"),
    ("ai-sage/GigaChat3.5-10B-A1.8B", "gigachat-gcml", "{}"),
    ("openai/gpt-oss-120b", "harmony", "{}"),
    (
        "mistralai/Mistral-7B-Instruct-v0.3",
        "mistral",
        r#"{"tokenizer_version": "v3"}"#,
    ),
    (
        "mistralai/Magistral-Small-2509",
        "mistral",
        r#"{"tokenizer_version": "v13"}"#,
    ),
    (
        "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
        "mistral",
        r#"{"tokenizer_version": "v11"}"#,
    ),
    ("mistralai/Mistral-Nemo-Instruct-2407", "mistral", "{}"),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama3-json", "{}"),
    (
        "meta-llama/Meta-Llama-3.1-70B-Instruct",
        "llama3-json",
        "{}",
    ),
    (
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        "pythonic",
        "{}",
    ),
    ("moonshotai/Kimi-K2-Instruct-0905", "kimi-k2", "{}"),
    (
        "moonshotai/Kimi-K2-Thinking",
        "kimi-k2",
        r#"{"start_in_reasoning": true}"#,
    ),
    ("moonshotai/Kimi-K3", "kimi-k3", "{}"),
    ("MiniMaxAI/MiniMax-M2", "minimax-m2", "{}"),
    ("zai-org/GLM-4.5-Air", "glm", "{}"),
    ("zai-org/GLM-4.7", "glm", "{}"),
    ("ByteDance-Seed/Seed-OSS-36B-Instruct", "seed-oss", "{}"),
    ("stepfun-ai/step3", "step3", "{}"),
    ("tencent/Hy3-preview", "hunyuan", "{}"),
    ("tencent/Hunyuan-A13B-Instruct", "hunyuan-a13b", "{}"),
    ("google/gemma-4-31b-it", "gemma4", "{}"),
    ("google/functiongemma-270m-it", "function-gemma", "{}"),
    ("ibm-granite/granite-3.3-8b-instruct", "granite", "{}"),
    (
        "ibm-granite/granite-20b-functioncalling",
        "granite",
        r#"{"variant": "20b-fc"}"#,
    ),
    ("CohereLabs/c4ai-command-r7b-12-2024", "cohere", "{}"),
    ("CohereLabs/command-a-reasoning-08-2025", "cohere", "{}"),
    ("ai21labs/AI21-Jamba-Mini-1.6", "jamba", "{}"),
    ("internlm/internlm2_5-7b-chat", "internlm", "{}"),
    ("nvidia/Llama-3.3-Nemotron-Super-49B-v1.5", "nemotron", "{}"),
    ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nemotron", "{}"),
    ("swiss-ai/Apertus-8B-Instruct-2509", "apertus", "{}"),
];

#[test]
fn hub_model_names_map_to_their_family_and_template_options() {
    for (model, family, options) in MODELS {
        let found = families::for_model(model).unwrap_or_else(|| panic!("{model}: not known"));
        assert_eq!(found.family, *family, "{model} (pattern {})", found.pattern);
        let options: Value = serde_json::from_str(options).expect("options JSON");
        assert_eq!(Value::Object(found.options.clone()), options, "{model}");
    }
}

#[test]
fn every_family_that_a_model_writes_is_named_by_one() {
    for name in families::names().filter(|n| *n != "reasoning") {
        assert!(
            MODELS.iter().any(|(_, family, _)| family == &name),
            "no model of the test maps to {name}"
        );
        let described = families::description(name).expect("a family of the table");
        assert!(!described.models.is_empty(), "{name} lists no models");
    }
}

#[test]
fn every_listed_pattern_wins_for_a_name_it_matches_exactly() {
    // A pattern that some more specific pattern of another family always beats
    // would be dead: the name made of the pattern with each `*` dropped must find
    // the pattern's own family.
    for name in families::names() {
        for model in &families::description(name).expect("described").models {
            let plain = model.name.replace('*', "");
            let found = families::for_model(&plain).expect("its own pattern matches");
            assert_eq!(found.family, name, "{plain} (pattern {})", found.pattern);
        }
    }
}

#[test]
fn case_the_organisation_and_surrounding_blanks_do_not_matter() {
    for model in [
        "QWEN/QWEN3-CODER-30B-A3B-INSTRUCT",
        " qwen3-coder-30b-a3b-instruct ",
        "/models/local/Qwen3-Coder-30B-A3B-Instruct",
    ] {
        assert_eq!(
            families::for_model(model).map(|f| f.family),
            Some("qwen3-coder"),
            "{model}"
        );
    }
}

#[test]
fn the_most_specific_pattern_wins() {
    let coder = families::for_model("Qwen3-Coder-30B-A3B-Instruct").expect("known");
    assert_eq!(
        (coder.family, coder.pattern),
        ("qwen3-coder", "qwen3-coder*")
    );
    let thinking = families::for_model("Qwen3-4B-Thinking-2507").expect("known");
    assert_eq!(thinking.pattern, "qwen3-*-thinking-2507*");
    let hybrid = families::for_model("Qwen3-4B").expect("known");
    assert_eq!(hybrid.pattern, "qwen3-*");
    assert!(hybrid.note.is_some(), "the hybrid template's note is given");
}

#[test]
fn an_unknown_model_is_not_guessed() {
    for model in [
        "",
        "my-own-model",
        "llama-2-7b-chat",
        "qwen",
        "gpt-4o",
        "deepseek-v2",
    ] {
        assert_eq!(families::for_model(model), None, "{model:?}");
    }
}

#[test]
fn patterns_match_whole_names_with_stars_for_any_run() {
    let model = |name: &str| -> idiolect::field::custom::Model {
        serde_json::from_value(json!({"name": name})).expect("a model")
    };
    let cases = [
        ("abc", "abc", true),
        ("abc", "abcd", false),
        ("abc*", "abc", true),
        ("abc*", "abcdef", true),
        ("*def", "abcdef", true),
        ("*def", "defx", false),
        ("a*c*e", "abcde", true),
        ("a*c*e", "ace", true),
        ("a*c*e", "abde", false),
        ("a*b*b", "ab", false),
        ("a*b*b", "abb", true),
        ("*", "", true),
    ];
    for (pattern, name, expected) in cases {
        assert_eq!(model(pattern).matches(name), expected, "{pattern} ~ {name}");
    }
    assert_eq!(model("qwen3-*-thinking-2507*").specificity(), 20);
}

#[test]
fn a_model_whose_options_the_family_refuses_is_refused_naming_the_key() {
    let entry = families::TABLE
        .iter()
        .find(|e| e.name == "mistral")
        .expect("mistral");
    let mut description: Value = serde_json::from_str(entry.description).expect("JSON");
    description["models"] =
        json!([{"name": "a"}, {"name": "b", "options": {"tokenizer_version": "v9"}}]);
    let error = Family::new(entry.grammar, &description.to_string()).expect_err("refused");
    assert_eq!(
        error.to_string(),
        "family description: key `models[1].options`: option `tokenizer_version`: unknown variant \"v9\", expected one of `auto`, `v3`, `v7`, `v11`, `v13`"
    );
    description["models"] = json!([{"name": "a", "options": {"colour": "red"}}]);
    let error = Family::new(entry.grammar, &description.to_string()).expect_err("refused");
    assert!(
        error
            .to_string()
            .starts_with("family description: key `models[0].options`: unknown field `colour`"),
        "{error}"
    );
    description["models"] = json!([{"name": "a", "version": 2}]);
    let error = Family::new(entry.grammar, &description.to_string()).expect_err("refused");
    assert!(
        error.to_string().contains("unknown field `version`"),
        "{error}"
    );
    let _: Description = serde_json::from_str(entry.description).expect("the shipped one reads");
}

#[test]
fn dialects_model_prints_the_answer_as_one_json_object() {
    let out = run(
        &["dialects", "--model", "deepseek-ai/DeepSeek-R1-0528"],
        b"",
    );
    assert!(out.status.success());
    let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(
        answer,
        json!({"model": "deepseek-ai/DeepSeek-R1-0528", "family": "deepseek-v3",
               "pattern": "deepseek-r1*", "options": {"start_in_reasoning": true}})
    );
    let out = run(&["dialects", "--model", "Qwen/Qwen3-8B"], b"");
    let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(answer["note"]
        .as_str()
        .is_some_and(|n| n.contains("enable_thinking")));
}

#[test]
fn dialects_model_says_on_stderr_when_it_does_not_know_a_model() {
    let out = run(&["dialects", "--model", "acme/widget-7b"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no field family is known for model \"acme/widget-7b\""),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
}
