//! `worksheet eval`: its arguments and every answer of one case written as a table, JSON or
//! CSV (exit 0, or 2 when the input is malformed or missing). The answers are
//! `crate::engine`'s.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::Args;
use comfy_table::Cell;

use crate::cmd::check::Format;
use crate::cmd::exit::{Failure, EXIT_OK};
use crate::engine::{evaluate, Answer, Outcome, Report};
use crate::table::{glue, new_table, word_cell};
use crate::verdict::Verdict;

/// Arguments of `worksheet eval`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  worksheet eval fixtures/cases/three-boundaries.json\n  \
worksheet eval tests/data/traces/nccl_data.json.gz\n\n\
Exit codes: 0 evaluated, 2 the file is malformed or missing."
)]
pub struct EvalArgs {
    /// The case file (plain or gzipped; `-` reads standard input), or a trace (Kineto JSON
    /// / .json.gz, Nsight Systems .sqlite) or a folder of traces, imported in memory.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Evaluates `args.file` and writes every answer to `out`.
///
/// # Errors
/// [`Failure`] (exit 2) when the input is malformed or missing.
pub fn run(args: &EvalArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    let (case, _) = crate::import::input::load_input(&args.file)?;
    let report = evaluate(&case);
    write_eval(&report, args.format, out)?;
    Ok(EXIT_OK)
}

/// Renders every answer of one case.
///
/// # Errors
/// Write errors of `out`.
pub fn write_eval(report: &Report, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Json => write_json(report, out),
        Format::Csv => write_csv(report, out),
        Format::Text => write_text(report, out),
    }
}

/// The report as one JSON document, `"format": "worksheet-eval"`.
fn write_json(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut value = serde_json::to_value(report)?;
    value["format"] = "worksheet-eval".into();
    value["version"] = 1.into();
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)
}

/// One CSV row per answer.
fn write_csv(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "case", "question", "kind", "verdict", "value", "value_ns", "reason", "detail",
    ])?;
    for a in &report.answers {
        let row = csv_row(a);
        w.write_record([
            report.case.as_str(),
            &a.id,
            a.kind,
            row.verdict,
            &row.value,
            &row.value_ns,
            &row.reason,
            &row.detail,
        ])?;
    }
    w.flush()
}

/// The verdict columns of one answer's CSV row.
struct CsvVerdict {
    verdict: &'static str,
    value: String,
    value_ns: String,
    reason: String,
    detail: String,
}

/// An answer's verdict columns: the duration verdict, or for an interval set the same
/// verdict as JSON gives (known with the union as the value, or unknown when the set
/// mixes clocks).
fn csv_row(a: &Answer) -> CsvVerdict {
    let row = |verdict, value, value_ns, reason, detail| CsvVerdict {
        verdict,
        value,
        value_ns,
        reason,
        detail,
    };
    match a.outcome.verdict() {
        Some(Verdict::Known { value, notes }) => row(
            "known",
            value.to_string(),
            value.as_i64().to_string(),
            String::new(),
            notes.join("; "),
        ),
        Some(Verdict::Bounded { lo, hi, notes }) => row(
            "bounded",
            format!("[{lo}, {hi}]"),
            format!("{}..{}", lo.as_i64(), hi.as_i64()),
            String::new(),
            notes.join("; "),
        ),
        Some(Verdict::Unknown { reason, detail }) => row(
            "unknown",
            String::new(),
            String::new(),
            reason.to_string(),
            detail.clone(),
        ),
        None => match &a.outcome {
            Outcome::Intervals(set) => match (set.combined_unknown, set.single()) {
                (None, Some(an)) => row(
                    "known",
                    crate::engine::wide(an.union_ns),
                    an.union_ns.to_string(),
                    String::new(),
                    a.headline(),
                ),
                (reason, _) => row(
                    "unknown",
                    String::new(),
                    String::new(),
                    reason.map(|r| r.to_string()).unwrap_or_default(),
                    a.headline(),
                ),
            },
            _ => unreachable!("only interval answers have no duration verdict"),
        },
    }
}

/// The table for people: `case NAME`, then one row per answer.
fn write_text(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let safe = |s: &str| crate::escape::printable(s).into_owned();
    writeln!(out, "case {}", safe(&report.case))?;
    let mut table = new_table(&["question", "kind", "answer", "why / notes"]);
    for a in &report.answers {
        table.add_row(vec![
            Cell::new(safe(&a.id)),
            Cell::new(a.kind),
            word_cell(&safe(&a.headline())),
            Cell::new(safe(&why(&a.outcome))),
        ]);
    }
    // On a narrow terminal: `question (kind): answer — why`, the prose wrapped.
    let record = |c: &[String]| {
        let why = if c[3].is_empty() {
            String::new()
        } else {
            format!(" — {}", c[3].replace('\n', " "))
        };
        format!(
            "{} ({}): {}{why}",
            glue(&c[0]),
            c[1],
            crate::table::glue_items(&c[2])
        )
    };
    writeln!(out, "{}", crate::table::fitted(&table, &record))?;
    Ok(())
}

/// The "why / notes" cell: a verdict's notes or detail; for an interval set that mixes
/// clocks, the reason and each clock's union.
fn why(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Duration(Verdict::Known { notes, .. } | Verdict::Bounded { notes, .. })
        | Outcome::Difference {
            verdict: Verdict::Known { notes, .. } | Verdict::Bounded { notes, .. },
            ..
        } => notes.join("; "),
        Outcome::Duration(Verdict::Unknown { detail, .. })
        | Outcome::Difference {
            verdict: Verdict::Unknown { detail, .. },
            ..
        } => detail.clone(),
        Outcome::Intervals(set) => match set.combined_unknown {
            Some(r) => format!(
                "{}; per clock: {}",
                r.explanation(),
                set.per_clock
                    .iter()
                    .map(|g| format!(
                        "{} union {}",
                        g.clock_id,
                        crate::engine::wide(g.analysis.union_ns)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => String::new(),
        },
    }
}
