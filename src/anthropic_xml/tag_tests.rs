//! The mode entry rules of grammar/anthropic-xml.pest on the parsing machine: which
//! candidates each mode completes, and that a candidate is decided on the byte that
//! decides it (S4), in any chunking.

use super::grammar;
use super::PREFIX;
use crate::machine::{Outcome, ParsingMachine};

/// Runs the entry rule `rule` on `text` fed whole (`eof`: then the input ends).
fn run(rule: &str, text: &str, eof: bool) -> Outcome {
    let program = grammar::program();
    let mut machine = ParsingMachine::new(program);
    machine.start(program.rule(rule).expect("rule"));
    if eof {
        machine.finish(text.as_bytes())
    } else {
        machine.resume(text.as_bytes())
    }
}

/// Runs `rule` on `text` one byte at a time; the outcome and the bytes it took.
fn run_bytewise(rule: &str, text: &str) -> (Outcome, usize) {
    let program = grammar::program();
    let mut machine = ParsingMachine::new(program);
    machine.start(program.rule(rule).expect("rule"));
    for end in 0..=text.len() {
        let outcome = machine.resume(&text.as_bytes()[..end]);
        if outcome != Outcome::NeedMore {
            return (outcome, end);
        }
    }
    (Outcome::NeedMore, text.len())
}

fn matched(end: usize) -> Outcome {
    Outcome::Matched { end }
}

fn rejected(outcome: Outcome) -> bool {
    matches!(outcome, Outcome::Rejected { .. })
}

#[test]
fn top_level_completes_bare_and_prefixed_block_openers() {
    assert_eq!(run("top_tag", "<thinking>x", false), matched(10));
    let prefixed = format!("<{PREFIX}function_results >");
    assert_eq!(run("top_tag", &prefixed, false), matched(prefixed.len()));
}

#[test]
fn top_level_rejects_lookalikes_on_the_deciding_byte() {
    for (text, deciding) in [
        ("<thinkingcap>", 10),
        ("<THINKING>", 2),
        ("<thinking a=\"1\">", 11),
        ("</thinking>", 2),
        ("<invoke name=\"x\">", 2),
        ("<funck", 6),
    ] {
        let (outcome, taken) = run_bytewise("top_tag", text);
        assert!(rejected(outcome), "{text}: {outcome:?}");
        assert_eq!(taken, deciding, "{text}");
    }
    assert_eq!(run("top_tag", "<thin", false), Outcome::NeedMore);
    assert_eq!(run("top_tag", "<an", false), Outcome::NeedMore);
}

#[test]
fn call_block_completes_invoke_openers_and_its_closer_in_any_chunking() {
    for text in [
        "<invoke name=\"Read\">",
        "<invoke name='a' />",
        "<invoke\n name = \"x\" id='2'>",
        "</function_calls \n>",
    ] {
        assert_eq!(run("calls_tag", text, false), matched(text.len()), "{text}");
        assert_eq!(
            run_bytewise("calls_tag", text),
            (matched(text.len()), text.len()),
            "{text}"
        );
    }
    assert!(rejected(run("calls_tag", "<invoke name=\"a<\">", false)));
    assert!(rejected(run(
        "calls_tag",
        "<invoke name=\"a\"b=\"\">",
        false
    )));
    assert!(rejected(run("calls_tag", "</invoke>", false)));
}

#[test]
fn a_parameter_closer_ends_a_value_only_before_structure() {
    assert_eq!(
        run("value_end", "</parameter>\n</invoke>", false),
        matched(12)
    );
    assert_eq!(
        run("value_end", "</parameter><parameter name", false),
        matched(12)
    );
    let prefixed = format!("</parameter> <{PREFIX}parameter\t");
    assert_eq!(run("value_end", &prefixed, false), matched(12));
    assert_eq!(run("value_end", "</parameter> \n", true), matched(12));
    assert!(rejected(run("value_end", "</parameter> text", false)));
    assert!(rejected(run("value_end", "</parameter><parameters", false)));
    assert!(rejected(run("value_end", "</parameter></inv", true)));
    assert_eq!(
        run("value_end", "</parameter></inv", false),
        Outcome::NeedMore
    );
    assert!(rejected(run("value_end", "</parameter></invoke >", false)));
}
