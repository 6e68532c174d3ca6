//! `worksheet check INPUT... --expect CASE`: inputs that state no expectations (a raw trace,
//! a folder of traces, a case imported without `--expect`) checked against the expectations
//! another case states, question by question id.
//!
//! The usual CASE is what `worksheet import TRACE -o CASE --expect` wrote from a trace that
//! was right: checking a later trace of the same program against it says which answers
//! moved. Each input is read as every command reads one
//! ([`crate::import::input::load_input`]: imported in memory). A question CASE expects that
//! the input does not ask is a failed check (`question`: `asked` / `not asked`), never
//! skipped; a question the input asks that CASE does not expect is not checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{check_case, CaseCheck, CheckRow};
use crate::case::{load_case_file, Expect};
use crate::error::InputError;

/// Checks each of `inputs` against the expectations of the case file `expect`.
///
/// # Errors
/// [`InputError`] (exit 2) when `expect` cannot be loaded or states no expectation, or an
/// input cannot be read.
pub fn check_against(inputs: &[PathBuf], expect: &Path) -> Result<Vec<CaseCheck>, InputError> {
    let expected = load_case_file(expect)?;
    let wanted: BTreeMap<&str, &Expect> = expected
        .questions
        .iter()
        .filter_map(|q| q.expect.as_ref().map(|e| (q.id.as_str(), e)))
        .collect();
    if wanted.is_empty() {
        return Err(InputError::new(
            "questions",
            "missing-field",
            "--expect: this case states no expectation (`worksheet import TRACE -o CASE --expect` writes one per question)",
        )
        .in_file(expect.display().to_string()));
    }
    let mut out = Vec::new();
    for input in inputs {
        let (mut case, _) = crate::import::input::load_input(input)?;
        for q in &mut case.questions {
            q.expect = wanted.get(q.id.as_str()).map(|e| (*e).clone());
        }
        let mut check = check_case(&case, input.display().to_string());
        let asked: std::collections::BTreeSet<&str> =
            case.questions.iter().map(|q| q.id.as_str()).collect();
        check.checks.extend(
            wanted
                .keys()
                .filter(|id| !asked.contains(*id))
                .map(|id| CheckRow {
                    question: (*id).to_owned(),
                    field: "question".into(),
                    expected: "asked".into(),
                    actual: "not asked".into(),
                    passed: false,
                }),
        );
        out.push(check);
    }
    Ok(out)
}
