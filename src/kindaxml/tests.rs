//! Unit tests of the kindaxml dialect that the corpus cannot express.

use super::*;

#[test]
fn bad_options_are_errors() {
    let bad_name = Options { recognized_tags: vec!["1x".into()], ..Options::default() };
    assert_eq!(Parser::with_options(&bad_name).err(), Some(OptionsProblem::BadName("1x".into())));
    let twice = Options {
        recognized_tags: vec!["cite".into(), "CITE".into()],
        case_sensitive_tags: false,
        ..Options::default()
    };
    assert!(matches!(Parser::with_options(&twice), Err(OptionsProblem::Duplicate(_))));
    let mut stray = Options::default();
    stray.per_tag_recovery_strategy.insert("nope".into(), Strategy::Noop);
    assert!(matches!(Parser::with_options(&stray), Err(OptionsProblem::StrategyForUnknownTag(_))));
    let tiny = Options { max_tag_bytes: 2, ..Options::default() };
    assert!(matches!(Parser::with_options(&tiny), Err(OptionsProblem::TagBoundTooSmall(2))));
}

#[test]
fn unknown_option_keys_are_rejected() {
    let err = (DIALECT.open)(&serde_json::json!({"recognised_tags": []}), false).err();
    assert!(err.is_some());
}
