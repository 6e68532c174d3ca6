//! `form fill`'s prompts driven by fuzzed standard input: `form::fill::fill` over a byte
//! slice (any `BufRead`). The input cut at its first NUL byte is a starting form (JSON when
//! it starts with `{`, else CSV) and the answers; without a NUL, the whole input is the
//! answers to a blank form whose question the first byte picks (or none).
//! Beyond "no panic": the session ends (libFuzzer's `-timeout` catches a loop: every prompt
//! must consume input or finish); it never accepts more answers than lines given; every
//! saved form validates, and is written as JSON and as CSV that read back to the same form
//! (an answer is never saved where the readers cannot read it); `Complete` means no field
//! is left to ask, `Interrupted` means the input was used up, `Refused` names a field and a
//! known code.
#![no_main]
use std::io::BufRead;

use libfuzzer_sys::fuzz_target;
use worksheet::form::fill::{fill, next_field, FillEnd, Session};
use worksheet::form::format::{blank, load_form_str, FileFormat};
use worksheet::form::{QuestionKind, RawForm};

fuzz_target!(|data: &[u8]| {
    let (start, answers) = match worksheet_fuzz::split_two(data) {
        (text, Some(answers)) => {
            let Ok(text) = std::str::from_utf8(text) else {
                return;
            };
            let format = if text.trim_start().starts_with('{') {
                FileFormat::Json
            } else {
                FileFormat::Csv
            };
            let Ok(form) = load_form_str(text, format, "fuzz") else {
                return;
            };
            (form.into_raw(), answers)
        }
        (answers, None) => {
            let pick = answers.first().copied().unwrap_or(0) as usize % 5;
            (
                blank(QuestionKind::ALL.get(pick).copied(), Some("fuzz")),
                answers,
            )
        }
    };
    let lines = answers.split(|&b| b == b'\n').count();
    let mut saved = 0usize;
    let mut save = |f: &RawForm| {
        saved += 1;
        worksheet::form::validate(f.clone(), "fuzz").expect("a saved form validates");
        worksheet_fuzz::form_round_trip(f);
        Ok::<(), std::io::Error>(())
    };
    let mut input: &[u8] = answers;
    let mut session = Session::default();
    session.echo = true;
    let mut out = Vec::new();
    let result = fill(start, "fuzz.json", session, &mut input, &mut out, &mut save);
    let Ok(outcome) = result else {
        return; // refused input may end the session with an error; what was saved is checked
    };
    assert_eq!(outcome.accepted, saved, "accepted answers and saves differ");
    assert!(
        outcome.accepted <= lines,
        "{} answers from {lines} lines",
        outcome.accepted
    );
    match outcome.end {
        FillEnd::Complete => assert!(next_field(&outcome.form).is_none()),
        FillEnd::Interrupted => assert!(input.fill_buf().unwrap().is_empty(), "input left"),
        // A refused answer ends a session with nobody to answer again: its field is one
        // the form asks, and it names a known error code.
        FillEnd::Refused { field, code, .. } => {
            assert!(!field.is_empty());
            assert!(["too-large", "bad-syntax", "bad-value"].contains(&code), "{code}");
        }
    }
});
