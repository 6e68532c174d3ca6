//! `worksheet check`: replay case files and compare every stated expectation with the
//! engine's answer. The test harness calls the same [`check_file`], so the two cannot drift.
//!
//! The command itself runs through [`check_to`], which writes each case's
//! results as soon as it is checked and drops the case before reading the next; a case file
//! is itself streamed ([`crate::case::load_for_check`]). [`check_paths`] keeps every result
//! in memory, for callers that want the whole report.

pub mod expect;
mod write;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::case::{load_for_check, CaseError, Expect, ExpectIntervals, ExpectVerdict, Loaded};
use crate::engine::{evaluate, wide, Outcome, Report};
use crate::interval::{Interval, SetAnalysis};
use crate::verdict::{Reason, Verdict};

pub use write::{
    check_to, write_checks, write_report, CheckFormat, CheckTotals, Checked, TABLE_ROWS,
};

/// One comparison of an expected value with the actual one.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CheckRow {
    /// Question id (or `load` for an expected load error).
    pub question: String,
    /// Which part of the answer (`verdict`, `union`, `gaps`, ...).
    pub field: String,
    /// What the case expects.
    pub expected: String,
    /// What the engine says.
    pub actual: String,
    /// Whether they agree exactly.
    pub passed: bool,
}

/// The result of checking one case file.
#[derive(Clone, Debug, Serialize)]
pub struct CaseCheck {
    /// Case name.
    pub case: String,
    /// The file, as found.
    pub file: String,
    /// Every comparison made.
    pub checks: Vec<CheckRow>,
    /// All answers the case implies (absent for a file expected not to load).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
}

impl CaseCheck {
    /// A case passes when every comparison agrees.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// The result of checking many files.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CheckReport {
    /// Checked cases, in path order.
    pub cases: Vec<CaseCheck>,
    /// Files that could not be read or loaded (input errors: exit 2).
    #[serde(serialize_with = "serialize_errors")]
    pub errors: Vec<CaseError>,
}

fn serialize_errors<S: serde::Serializer>(errors: &[CaseError], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(errors.len()))?;
    for e in errors {
        seq.serialize_element(&serde_json::json!({
            "file": e.file, "path": e.path, "code": e.code, "message": e.message, "line": e.line,
        }))?;
    }
    seq.end()
}

impl CheckReport {
    /// Number of cases whose every check agrees.
    pub fn passed(&self) -> usize {
        self.cases.iter().filter(|c| c.passed()).count()
    }

    /// Number of cases with at least one disagreement.
    pub fn failed(&self) -> usize {
        self.cases.len() - self.passed()
    }
}

/// Every `.json` and `.json.gz` file under `paths` (files are taken as given, folders
/// recursively, through [`crate::input::walk`]: no folder is entered twice), in sorted order.
///
/// # Errors
/// The first of the walk's errors: `io` when a path does not exist or a folder cannot be
/// read, `symlink-loop` for a link back into the walk. [`check_paths`] reports them all.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CaseError> {
    let walk = case_walk(paths);
    match walk.errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(walk.files),
    }
}

/// What `check` reads in a folder (the words of the error for a folder without one).
pub(crate) const CASE_FILES: &str = "a case file (`*.json` or `*.json.gz`)";

/// The case files under `paths` ([`crate::input::walk`]), where a folder given that holds
/// none is an error (`bad-value`): `check EMPTYDIR` is not a pass of "0 cases".
pub(crate) fn case_walk(paths: &[PathBuf]) -> crate::input::Walk {
    let mut walk = crate::input::walk(paths, &is_case_file_name);
    for dir in std::mem::take(&mut walk.empty) {
        walk.errors
            .push(crate::input::no_wanted_file(&dir, CASE_FILES));
    }
    walk
}

/// Whether a file found in a folder is read as a case: `*.json` or `*.json.gz`.
fn is_case_file_name(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy())
        .is_some_and(|n| n.ends_with(".json") || n.ends_with(".json.gz"))
}

/// Checks every case file under `paths`.
///
/// # Errors
/// None today (kept for callers): paths that do not exist, folders that cannot be listed,
/// links that loop and files that fail to load are all collected in
/// [`CheckReport::errors`], and every other file is still checked.
pub fn check_paths(paths: &[PathBuf]) -> Result<CheckReport, CaseError> {
    let mut report = CheckReport::default();
    let walk = case_walk(paths);
    report.errors.extend(walk.errors);
    for file in walk.files {
        match check_file(&file) {
            Ok(case) => report.cases.push(case),
            Err(e) => report.errors.push(e),
        }
    }
    Ok(report)
}

/// Loads one case file, evaluates it and compares every expectation.
///
/// # Errors
/// [`CaseError`] when the file cannot be loaded and does not declare that it expects to fail.
pub fn check_file(path: &Path) -> Result<CaseCheck, CaseError> {
    let file = path.display().to_string();
    let loaded = load_for_check(path).map_err(|e| trace_needs_expectations(path, e))?;
    match loaded {
        Loaded::ExpectsError {
            name,
            expected,
            actual,
        } => {
            let expected_text = match &expected.path {
                Some(p) => format!("error {} at {p}", expected.code),
                None => format!("error {}", expected.code),
            };
            let (actual_text, passed) = match &actual {
                None => ("loads without error".to_owned(), false),
                Some(e) => (
                    format!("error {} at {}", e.code, e.path),
                    e.code == expected.code && expected.path.as_ref().is_none_or(|p| *p == e.path),
                ),
            };
            Ok(CaseCheck {
                case: name,
                file,
                checks: vec![CheckRow {
                    question: "load".into(),
                    field: "error".into(),
                    expected: expected_text,
                    actual: actual_text,
                    passed,
                }],
                report: None,
            })
        }
        Loaded::Case(case) => Ok(check_case(&case, file)),
    }
}

/// A trace given to `check` without `--expect`: it states no expected values, so say what
/// `check` needs for one (the expectations of a case, `--expect CASE`) in place of the case
/// reader's error. Any other error is returned as it is. Only called after a file failed to
/// load, so the second look costs nothing on the good path.
fn trace_needs_expectations(path: &Path, e: CaseError) -> CaseError {
    let (format, field) = if crate::import::input::is_sqlite(path) {
        ("an Nsight Systems export", "$")
    } else if e.code == "wrong-kind"
        && crate::case::read_case_text(path)
            .is_ok_and(|t| crate::kind::peek(&t) == crate::kind::FileKind::Trace)
    {
        ("a Kineto trace", "format")
    } else {
        return e;
    };
    let file = path.display();
    CaseError::new(
        field,
        "wrong-kind",
        format!(
            "this is {format}, which states no expected values, so there is nothing to check it \
             against: give the expectations with `worksheet check {file} --expect CASE` \
             (`worksheet import {file} -o CASE --expect` writes a CASE to start from), or print \
             its answers with `worksheet eval {file}`"
        ),
    )
    .in_file(file.to_string())
}

/// Evaluates `case` and compares every expectation its questions state.
pub fn check_case(case: &crate::case::Case, file: String) -> CaseCheck {
    let report = evaluate(case);
    let mut checks = Vec::new();
    for (q, answer) in case.questions.iter().zip(&report.answers) {
        if let Some(expect) = &q.expect {
            compare(&q.id, expect, &answer.outcome, &mut checks);
        }
    }
    CaseCheck {
        case: case.name.clone(),
        file,
        checks,
        report: Some(report),
    }
}

fn verdict_text(v: &ExpectVerdict) -> String {
    match v {
        ExpectVerdict::Known(value) => format!("known {value}"),
        ExpectVerdict::Bounded(lo, hi) => format!("bounded [{lo}, {hi}]"),
        ExpectVerdict::Unknown(reason) => format!("unknown ({reason})"),
    }
}

fn row(question: &str, field: &str, expected: String, actual: String) -> CheckRow {
    let passed = expected == actual;
    CheckRow {
        question: question.into(),
        field: field.into(),
        expected,
        actual,
        passed,
    }
}

fn compare(question: &str, expect: &Expect, outcome: &Outcome, rows: &mut Vec<CheckRow>) {
    match (expect, outcome) {
        (
            Expect::Duration {
                verdict,
                attribution,
            },
            _,
        ) => {
            let actual = outcome
                .verdict()
                .map_or_else(|| "an interval-set answer".to_owned(), Verdict::to_string);
            rows.push(row(question, "verdict", verdict_text(verdict), actual));
            if let Some(expected) = attribution {
                let actual = match outcome {
                    Outcome::Difference { attribution, .. } => format!("unknown ({attribution})"),
                    _ => "none".to_owned(),
                };
                rows.push(row(
                    question,
                    "attribution",
                    format!("unknown ({expected})"),
                    actual,
                ));
            }
        }
        (Expect::Intervals(expected), Outcome::Intervals(actual)) => {
            match (expected.unknown, actual.combined_unknown, actual.single()) {
                (Some(reason), got, _) => rows.push(row(
                    question,
                    "verdict",
                    format!("unknown ({reason})"),
                    got.map_or_else(|| "known".to_owned(), |g| format!("unknown ({g})")),
                )),
                (None, Some(got), _) => rows.push(row(
                    question,
                    "verdict",
                    "known".into(),
                    format!("unknown ({got})"),
                )),
                (None, None, Some(analysis)) => compare_sets(question, expected, &analysis, rows),
                // `single()` is `Some` whenever the set does not mix clocks.
                (None, None, None) => rows.push(row(
                    question,
                    "verdict",
                    "known".into(),
                    "no single clock".into(),
                )),
            }
        }
        (Expect::Intervals(_), other) => rows.push(row(
            question,
            "verdict",
            "interval-set results".into(),
            other.headline(),
        )),
    }
}

fn intervals_text(list: &[Interval]) -> String {
    let parts: Vec<String> = list
        .iter()
        .map(|i| format!("[{}, {})", i.start(), i.end()))
        .collect();
    format!("[{}]", parts.join(", "))
}

fn compare_sets(question: &str, e: &ExpectIntervals, a: &SetAnalysis, rows: &mut Vec<CheckRow>) {
    if let Some(count) = e.count {
        rows.push(row(
            question,
            "count",
            count.to_string(),
            a.count.to_string(),
        ));
    }
    if let Some(sum) = e.sum {
        rows.push(row(question, "sum", sum.to_string(), wide(a.sum_ns)));
    }
    if let Some(union) = e.union {
        rows.push(row(question, "union", union.to_string(), wide(a.union_ns)));
    }
    if let Some(span) = &e.span {
        let actual = match a.span_ns() {
            Some(s) if i64::try_from(s).is_ok() => format!("known {}", wide(s)),
            Some(_) => format!("unknown ({})", Reason::Overflow),
            None => format!("unknown ({})", Reason::EmptySet),
        };
        rows.push(row(question, "span", verdict_text(span), actual));
    }
    if let Some(gaps) = &e.gaps {
        rows.push(row(
            question,
            "gaps",
            intervals_text(gaps),
            intervals_text(&a.gaps),
        ));
    }
    if let Some(overlap) = e.overlap {
        rows.push(row(
            question,
            "overlap",
            overlap.to_string(),
            wide(a.overlap_ns()),
        ));
    }
    if let Some(regions) = &e.overlap_regions {
        let text = |list: &mut dyn Iterator<Item = (Interval, u32)>| {
            let parts: Vec<String> = list
                .map(|(s, d)| format!("[{}, {}) depth {d}", s.start(), s.end()))
                .collect();
            format!("[{}]", parts.join(", "))
        };
        rows.push(row(
            question,
            "overlap_regions",
            text(&mut regions.iter().map(|r| (r.span, r.max_depth))),
            text(&mut a.overlap_regions.iter().map(|r| (r.span, r.max_depth))),
        ));
    }
    if let Some(depth) = e.max_depth {
        rows.push(row(
            question,
            "max_depth",
            depth.to_string(),
            a.max_depth.to_string(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_yield_json_and_json_gz_files() {
        let found = discover(&[PathBuf::from("tests/data/gzip")]).unwrap();
        let names: Vec<String> = found
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "bomb.json.gz",
                "three-boundaries.json.gz",
                "truncated.json.gz"
            ]
        );
        assert!(!is_case_file_name(Path::new("x.gz")));
        assert!(!is_case_file_name(Path::new("x.json.bak")));
    }

    #[test]
    fn a_gzipped_case_is_checked_like_its_plain_text() {
        let gz = check_file(Path::new("tests/data/gzip/three-boundaries.json.gz")).unwrap();
        let plain = check_file(Path::new("fixtures/cases/three-boundaries.json")).unwrap();
        assert!(gz.passed() && !gz.checks.is_empty());
        assert_eq!(gz.checks, plain.checks);
    }
}
