//! Writing `check`'s results as the cases are checked, so that a run over any number of
//! cases, or over one very large case, holds one case and its results at a time.
//!
//! Each case is loaded, evaluated, compared, written and dropped before the next is read.
//! What is kept between cases is small and said here:
//! - **CSV**: nothing; each case's rows are written at once.
//! - **JSON**: nothing but the input errors (written after the cases, as before); each case's
//!   element of the `cases` array, report included, is written at once. The document is the
//!   one `serde_json` prints for the whole report, byte for byte: elements are serialised in
//!   place by the same pretty printer.
//! - **Text**: the table's rows, as text, up to [`TABLE_ROWS`] rows (a table's columns are as
//!   wide as its widest cell, so its rows are printed together); a longer run prints one
//!   table per [`TABLE_ROWS`] rows, each with its header. The `FAIL` lines, printed after
//!   the tables as before, are kept until the end. A run of up to [`TABLE_ROWS`] rows, such
//!   as `fixtures/`, prints exactly what the whole-report writer printed.

use std::cell::RefCell;
use std::io::{self, Write};
use std::path::PathBuf;

use comfy_table::{Cell, Table};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::{case_walk, check_file, CaseCheck, CheckReport};
use crate::case::CaseError;
use crate::escape::printable;
use crate::table::{fitted, glue, new_table, word_cell};

/// The most rows one text table holds before it is printed and a new one begun.
pub const TABLE_ROWS: usize = 4096;

/// Output format of a check run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    /// Tables for people, then the failures, then the totals.
    Text,
    /// The whole report as one JSON document.
    Json,
    /// One row per comparison.
    Csv,
}

/// What a check run found, once its output is written.
#[derive(Debug, Default)]
pub struct CheckTotals {
    /// Cases whose every comparison agrees.
    pub passed: usize,
    /// Cases with at least one disagreement.
    pub failed: usize,
    /// Comparisons made.
    pub checks: usize,
    /// Files that could not be read or loaded (input errors: exit 2), in order.
    pub errors: Vec<CaseError>,
}

impl CheckTotals {
    fn count(&mut self, case: &CaseCheck) {
        if case.passed() {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        self.checks += case.checks.len();
    }

    /// Cases checked.
    pub fn cases(&self) -> usize {
        self.passed + self.failed
    }
}

/// One checked file: its results, or why it could not be loaded.
pub type Checked = Result<CaseCheck, CaseError>;

/// Checks every case file under `paths` (as [`super::check_paths`] finds them), writing
/// each case's results to `out` as soon as it is checked.
///
/// # Errors
/// Write errors of `out`. Input errors are not errors here: they are in
/// [`CheckTotals::errors`] (and in the JSON document), and every other file is checked.
pub fn check_to(
    paths: &[PathBuf],
    format: CheckFormat,
    out: &mut dyn Write,
) -> io::Result<CheckTotals> {
    let walk = case_walk(paths);
    let mut cases = walk.files.iter().map(|file| check_file(file));
    write_checks(&mut cases, walk.errors, format, out)
}

/// Writes a finished report, exactly as [`check_to`] writes the same results.
///
/// # Errors
/// Write errors of `out`.
pub fn write_report(
    report: &CheckReport,
    format: CheckFormat,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut cases = report.cases.iter().cloned().map(Ok);
    write_checks(&mut cases, report.errors.clone(), format, out).map(|_| ())
}

/// Writes the results of `cases` as they come; `errors` are input errors found before
/// (the folder walk's), to which the cases' load errors are added in order.
///
/// # Errors
/// Write errors of `out`.
pub fn write_checks(
    cases: &mut dyn Iterator<Item = Checked>,
    errors: Vec<CaseError>,
    format: CheckFormat,
    out: &mut dyn Write,
) -> io::Result<CheckTotals> {
    let mut totals = CheckTotals {
        errors,
        ..CheckTotals::default()
    };
    match format {
        CheckFormat::Json => write_json(cases, &mut totals, out)?,
        CheckFormat::Csv => write_csv(cases, &mut totals, out)?,
        CheckFormat::Text => write_text(cases, &mut totals, out)?,
    }
    Ok(totals)
}

/// The exact nanoseconds of a display value (`known 6.811 us`, `140 us`), if it is one.
fn exact_ns(text: &str) -> Option<i64> {
    let value = text.strip_prefix("known ").unwrap_or(text);
    crate::units::parse_value(value).ok().map(|n| n.as_i64())
}

fn write_csv(
    cases: &mut dyn Iterator<Item = Checked>,
    totals: &mut CheckTotals,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "case",
        "file",
        "question",
        "field",
        "expected",
        "expected_ns",
        "actual",
        "actual_ns",
        "result",
    ])?;
    let ns = |s: &str| exact_ns(s).map(|v| v.to_string()).unwrap_or_default();
    for checked in cases {
        let case = match checked {
            Ok(case) => case,
            Err(e) => {
                totals.errors.push(e);
                continue;
            }
        };
        totals.count(&case);
        for c in &case.checks {
            w.write_record([
                case.case.as_str(),
                case.file.as_str(),
                &c.question,
                &c.field,
                &c.expected,
                &ns(&c.expected),
                &c.actual,
                &ns(&c.actual),
                if c.passed { "pass" } else { "FAIL" },
            ])?;
        }
    }
    w.flush()
}

/// One case's element of the JSON `cases` array: the case as serde writes it, with the exact
/// integers beside the display strings (`known 6.811 us` → 6811).
fn case_value(case: &CaseCheck) -> serde_json::Result<serde_json::Value> {
    let mut value = serde_json::to_value(case)?;
    if let Some(checks) = value["checks"].as_array_mut() {
        for check in checks {
            for field in ["expected", "actual"] {
                let ns = check[field].as_str().and_then(exact_ns);
                check[format!("{field}_ns")] = ns.into();
            }
        }
    }
    Ok(value)
}

/// The JSON document, its keys in the order `serde_json::Value` prints them (sorted):
/// `cases` is written element by element while the cases are checked; the rest follows.
struct JsonDocument<'a> {
    cases: RefCell<&'a mut dyn Iterator<Item = Checked>>,
    totals: RefCell<&'a mut CheckTotals>,
}

/// The `cases` array, pulled from the iterator while it is serialised.
struct JsonCases<'d, 'a>(&'d JsonDocument<'a>);

impl Serialize for JsonCases<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let mut cases = self.0.cases.borrow_mut();
        for checked in &mut **cases {
            match checked {
                Ok(case) => {
                    self.0.totals.borrow_mut().count(&case);
                    let value = case_value(&case).map_err(serde::ser::Error::custom)?;
                    drop(case);
                    seq.serialize_element(&value)?;
                }
                Err(e) => self.0.totals.borrow_mut().errors.push(e),
            }
        }
        seq.end()
    }
}

/// The input errors, as `{file, path, code, message, line}` objects.
struct JsonErrors<'e>(&'e [CaseError]);

impl Serialize for JsonErrors<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for e in self.0 {
            seq.serialize_element(&serde_json::json!({
                "file": e.file, "path": e.path, "code": e.code, "message": e.message, "line": e.line,
            }))?;
        }
        seq.end()
    }
}

impl Serialize for JsonDocument<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(6))?;
        map.serialize_entry("cases", &JsonCases(self))?;
        let totals = self.totals.borrow();
        map.serialize_entry("errors", &JsonErrors(&totals.errors))?;
        map.serialize_entry("failed", &totals.failed)?;
        map.serialize_entry("format", "worksheet-check")?;
        map.serialize_entry("passed", &totals.passed)?;
        map.serialize_entry("version", &1)?;
        map.end()
    }
}

fn write_json(
    cases: &mut dyn Iterator<Item = Checked>,
    totals: &mut CheckTotals,
    out: &mut dyn Write,
) -> io::Result<()> {
    let document = JsonDocument {
        cases: RefCell::new(cases),
        totals: RefCell::new(totals),
    };
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}

/// The text table being filled, and how many rows it holds.
struct TextTables {
    table: Table,
    rows: usize,
}

impl TextTables {
    fn new() -> Self {
        TextTables {
            table: new_table(&["case", "question", "expected", "actual", "result"]),
            rows: 0,
        }
    }

    fn add(&mut self, case: &CaseCheck) {
        if case.checks.is_empty() {
            self.table.add_row(vec![
                printable(&case.case).as_ref(),
                "(no expectations)",
                "",
                "",
                "pass",
            ]);
            self.rows += 1;
        }
        for c in &case.checks {
            let question = if c.field == "verdict" {
                c.question.clone()
            } else {
                format!("{}.{}", c.question, c.field)
            };
            self.table.add_row(vec![
                Cell::new(printable(&case.case)),
                Cell::new(printable(&question)),
                Cell::new(printable(&c.expected)),
                Cell::new(printable(&c.actual)),
                word_cell(if c.passed { "pass" } else { "FAIL" }),
            ]);
            self.rows += 1;
        }
    }

    /// Prints the table if it has rows (one record per line when it does not fit the
    /// terminal: `case · question: expected → actual  pass`), and begins a new one.
    fn flush(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.rows > 0 {
            let record = |c: &[String]| {
                format!(
                    "{} · {}: {} → {}  {}",
                    glue(&c[0]),
                    glue(&c[1]),
                    glue(&c[2]),
                    glue(&c[3]),
                    c[4]
                )
            };
            writeln!(out, "{}", fitted(&self.table, &record))?;
            *self = TextTables::new();
        }
        Ok(())
    }
}

fn write_text(
    cases: &mut dyn Iterator<Item = Checked>,
    totals: &mut CheckTotals,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut tables = TextTables::new();
    let mut failures = Vec::new();
    for checked in cases {
        let case = match checked {
            Ok(case) => case,
            Err(e) => {
                totals.errors.push(e);
                continue;
            }
        };
        totals.count(&case);
        tables.add(&case);
        failures.extend(case.checks.iter().filter(|c| !c.passed).map(|c| {
            let line = format!(
                "FAIL {} ({}): question `{}` {}: expected {}, actual {}",
                case.case, case.file, c.question, c.field, c.expected, c.actual
            );
            printable(&line).into_owned()
        }));
        if tables.rows >= TABLE_ROWS {
            tables.flush(out)?;
        }
    }
    tables.flush(out)?;
    for line in &failures {
        writeln!(out, "{line}")?;
    }
    writeln!(out, "{} passed, {} failed", totals.passed, totals.failed)?;
    writeln!(
        out,
        "({} cases, {} checks, {} input errors)",
        totals.cases(),
        totals.checks,
        totals.errors.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check_paths, CheckRow};

    /// The whole-report JSON writer `check` used before it streamed, kept as the oracle.
    fn json_of_whole_report(report: &CheckReport) -> String {
        let mut value = serde_json::to_value(report).unwrap();
        value["format"] = "worksheet-check".into();
        value["version"] = 1.into();
        value["passed"] = report.passed().into();
        value["failed"] = report.failed().into();
        if let Some(cases) = value["cases"].as_array_mut() {
            for check in cases
                .iter_mut()
                .filter_map(|c| c["checks"].as_array_mut())
                .flatten()
            {
                for field in ["expected", "actual"] {
                    let ns = check[field].as_str().and_then(exact_ns);
                    check[format!("{field}_ns")] = ns.into();
                }
            }
        }
        serde_json::to_string_pretty(&value).unwrap() + "\n"
    }

    /// The whole-report text writer `check` used before it streamed: one table.
    fn text_of_whole_report(report: &CheckReport) -> String {
        let mut tables = TextTables::new();
        for case in &report.cases {
            tables.add(case);
        }
        let mut out = String::new();
        if !report.cases.is_empty() {
            out += &format!("{}\n", tables.table);
        }
        for case in report.cases.iter().filter(|c| !c.passed()) {
            for c in case.checks.iter().filter(|c| !c.passed) {
                out += &format!(
                    "FAIL {} ({}): question `{}` {}: expected {}, actual {}\n",
                    case.case, case.file, c.question, c.field, c.expected, c.actual
                );
            }
        }
        let checks: usize = report.cases.iter().map(|c| c.checks.len()).sum();
        out += &format!("{} passed, {} failed\n", report.passed(), report.failed());
        out += &format!(
            "({} cases, {checks} checks, {} input errors)\n",
            report.cases.len(),
            report.errors.len()
        );
        out
    }

    fn written(paths: &[PathBuf], format: CheckFormat) -> (String, CheckTotals) {
        let mut out = Vec::new();
        let totals = check_to(paths, format, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), totals)
    }

    /// Fixtures, the malformed cases (input errors, and cases that expect a load error),
    /// and a failing case made by changing one expectation.
    fn mixed_paths() -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string("fixtures/cases/three-boundaries.json").unwrap();
        let failing = dir.path().join("failing.json");
        std::fs::write(&failing, text.replacen("\"40 us\"", "\"41 us\"", 1)).unwrap();
        let paths = vec![
            "fixtures".into(),
            "tests/data/malformed".into(),
            failing,
            "does-not-exist.json".into(),
        ];
        (dir, paths)
    }

    #[test]
    fn streamed_json_is_the_whole_report_byte_for_byte() {
        let (_dir, paths) = mixed_paths();
        let report = check_paths(&paths).unwrap();
        assert!(report.failed() == 1 && report.passed() > 40 && report.errors.len() > 20);
        let (json, totals) = written(&paths, CheckFormat::Json);
        assert_eq!(json, json_of_whole_report(&report));
        assert_eq!(
            (totals.passed, totals.failed, totals.errors.len()),
            (report.passed(), report.failed(), report.errors.len())
        );
        let empty = CheckReport::default();
        let (json, _) = written(&[], CheckFormat::Json);
        assert_eq!(json, json_of_whole_report(&empty));
        assert!(
            json.starts_with("{\n  \"cases\": [],\n  \"errors\": [],\n"),
            "{json}"
        );
    }

    #[test]
    fn streamed_text_is_the_whole_report_text_under_one_table() {
        let (dir, paths) = mixed_paths();
        let report = check_paths(&paths).unwrap();
        let (text, totals) = written(&paths, CheckFormat::Text);
        assert_eq!(text, text_of_whole_report(&report));
        let failing = dir.path().join("failing.json").display().to_string();
        assert!(text.contains(&format!(
            "FAIL three-boundaries ({failing}): question `submission` verdict: expected known 40 us, actual known 41 us\n"
        )), "{text}");
        assert_eq!(totals.cases(), report.cases.len());
        let mut csv = Vec::new();
        write_report(&report, CheckFormat::Csv, &mut csv).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            written(&paths, CheckFormat::Csv).0
        );
    }

    /// Past [`TABLE_ROWS`] rows the text is one table per [`TABLE_ROWS`] rows.
    #[test]
    fn a_long_run_prints_one_table_per_table_rows() {
        let case = |i: usize| CaseCheck {
            case: format!("case-{i}"),
            file: format!("case-{i}.json"),
            checks: vec![CheckRow {
                question: "q".into(),
                field: "verdict".into(),
                expected: "known 1 ns".into(),
                actual: "known 1 ns".into(),
                passed: true,
            }],
            report: None,
        };
        let n = TABLE_ROWS + 10;
        let mut cases = (0..n).map(|i| Ok(case(i)));
        let mut out = Vec::new();
        let totals = write_checks(&mut cases, Vec::new(), CheckFormat::Text, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let headers = text.lines().filter(|l| l.starts_with("| case ")).count();
        assert_eq!(headers, 2);
        let rows = text.lines().filter(|l| l.starts_with("| case-")).count();
        assert_eq!(rows, n);
        assert!(text.ends_with(&format!(
            "{n} passed, 0 failed\n({n} cases, {n} checks, 0 input errors)\n"
        )));
        assert_eq!((totals.passed, totals.checks), (n, n));
    }
}
