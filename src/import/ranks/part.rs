//! One rank of a multi-rank import, **summarised as its file finishes**: the rank's case is
//! imported, its ids prefixed `r<rank>.`, validated and evaluated on its own, and what the
//! summary prints per rank (the interval rows, the compute ∩ communication overlap, the
//! HTA-comparable breakdown, the completion answers, the case's counts and JSON size) is kept;
//! the rank's case, its validated form and the engine's answers are dropped. What the
//! cross-rank part needs stays too: the rank's collectives, its clocks and provenance.
//!
//! A rank's ids share nothing with another rank's (every id is prefixed), so the engine's
//! answer to a rank's question is the same on the rank's case as on the merged case; tests
//! compare both. Memory is then bounded by the traces in flight (one per core), not by the
//! number of ranks. Only when the merged case itself is asked for (`-o`, `worksheet export`)
//! is each rank's prefixed case kept ([`RankOptions::keep_cases`]), and memory grows with the
//! output.
//!
//! ```text
//! file ─import─▶ rank case ─prefix r<k>.─▶ validate ─▶ evaluate ─▶ RankRows ┐  (case dropped)
//!      └─recorded model─▶ rank_facts: collectives, rank ─────────────────────┤  (model dropped)
//!                       └▶ audit (with RankOptions::audits) ─────────────────┴▶ RankPart
//! ```
//!
//! With [`RankOptions::audits`] (`worksheet audit DIR`, `worksheet export DIR`) the rank's
//! audit is made from the model while the pass holds it, so no file is read twice (issue 23,
//! "one pass"); the audit is kept, the model is not, so memory stays bounded by the ranks in
//! flight.

use std::path::{Path, PathBuf};

use super::read::{rank_facts, rank_facts_recorded, RankFacts};
use super::size::{self, SectionSizes};
use crate::audit::{Audit, AuditOptions, Breakdown};
use crate::case::raw::{RawCase, RawClock};
use crate::case::Case;
use crate::case::{validate, CaseError};
use crate::engine::evaluate;
use crate::import::summary::{embed_expectations, phase_intervals, rows_of, Rows};
use crate::import::{import_path_with, read_audit_trace, ImportError, ImportOptions, Imported};
use crate::interval::analyze_numbers;

/// What a multi-rank import keeps of each rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RankOptions {
    /// Write the engine's answers into the rank's questions as expectations (`--expect`): the
    /// JSON size counts them, and a kept case carries them.
    pub expect: bool,
    /// Keep each rank's prefixed case, to build the merged case (`-o`, `worksheet export`):
    /// memory then grows with the ranks.
    pub keep_cases: bool,
    /// Show a progress bar of the files read on standard error (only when it is a terminal).
    pub progress: bool,
    /// Audit each rank from the model its import's pass recorded ([`RankPart::audit`]), for
    /// `worksheet audit DIR` and `worksheet export DIR`: the file is not read again. The
    /// audit is kept, not the model (small beside it); off for `import DIR`.
    pub audits: bool,
}

/// What the summary prints of one rank, from the engine's answers on the rank's case.
#[derive(Clone, Debug)]
pub struct RankRows {
    /// The rows (ids prefixed `r<rank>.`).
    pub rows: Rows,
    /// Phases of the validated case.
    pub phases: usize,
    /// Program ops of the validated case.
    pub program_ops: usize,
    /// Questions of the validated case.
    pub questions: usize,
    /// Its sections' JSON sizes inside the merged case.
    pub json: SectionSizes,
    /// The audit's exposed-time breakdown per device (ids prefixed), from the rank's classes
    /// of work.
    pub breakdown: Vec<Breakdown>,
}

/// One rank, summarised.
#[derive(Clone, Debug)]
pub struct RankPart {
    /// The rank its ids are prefixed with.
    pub rank: u32,
    /// What the second pass found: rank, collectives, kernels without a group.
    pub facts: RankFacts,
    /// The single-trace import's format line.
    pub format: String,
    /// The rank's clocks, prefixed (the cross-rank case declares them).
    pub clocks: Vec<RawClock>,
    /// The trace's provenance (the merged case lists it per rank).
    pub provenance: Option<serde_json::Map<String, serde_json::Value>>,
    /// The rank's rows, or why its case did not validate (an importer bug).
    pub rows: Result<RankRows, CaseError>,
    /// The prefixed case (with expectations when asked), only with
    /// [`RankOptions::keep_cases`].
    pub case: Option<RawCase>,
    /// The rank's audit (`worksheet audit FILE`'s), or why its model could not be read, only
    /// with [`RankOptions::audits`].
    pub audit: Option<Result<Audit, ImportError>>,
}

/// Keys whose values are ids or references to ids in a case (prefixed per rank).
const REF_KEYS: [&str; 15] = [
    "id",
    "clock",
    "stream",
    "event",
    "phase",
    "timer",
    "device",
    "copy",
    "from",
    "to",
    "minuend",
    "subtrahend",
    "series",
    "a",
    "b",
];

/// The sections of a rank's case that the merged case keeps (prefixed).
const SECTIONS: [&str; 8] = [
    "clocks",
    "streams",
    "events",
    "phases",
    "marks",
    "program",
    "series",
    "questions",
];

/// A question id `kind:rest` becomes `kind:<prefix>rest` (so `device:r1.gpu1`, and the
/// summary's `device:` / `completion:` rows keep working); any other id gets `<prefix>` first.
fn prefixed_question(id: &str, prefix: &str) -> String {
    match id.split_once(':') {
        Some((kind, rest)) => format!("{kind}:{prefix}{rest}"),
        None => format!("{prefix}{id}"),
    }
}

/// Prefixes every id and reference in `value` (one section of a case) with `prefix`;
/// `questions` says the section holds questions (their ids: [`prefixed_question`]).
pub(super) fn prefix_ids(value: &mut serde_json::Value, prefix: &str, questions: bool) {
    use serde_json::Value;
    match value {
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| prefix_ids(v, prefix, questions)),
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match v {
                    Value::String(s)
                        if questions && ["id", "minuend", "subtrahend"].contains(&k.as_str()) =>
                    {
                        *s = prefixed_question(s, prefix);
                    }
                    Value::String(s) if REF_KEYS.contains(&k.as_str()) => {
                        *s = format!("{prefix}{s}");
                    }
                    Value::Array(items)
                        if (k == "work" || k == "phases") && items.iter().all(Value::is_string) =>
                    {
                        for item in items {
                            if let Value::String(s) = item {
                                *s = format!("{prefix}{s}");
                            }
                        }
                    }
                    Value::Object(_) | Value::Array(_) if k != "expect" => {
                        prefix_ids(v, prefix, questions);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The rank's case reduced to the sections the merged case keeps, every id prefixed with
/// `prefix` (the case is consumed: its JSON value replaces it while ids are rewritten).
fn prefixed(case: RawCase, prefix: &str) -> Result<RawCase, ImportError> {
    let internal = |e: serde_json::Error| ImportError::new("$", "bad-value", e.to_string());
    let mut value = serde_json::to_value(case).map_err(internal)?;
    let map = value.as_object_mut().expect("a case is an object");
    for section in SECTIONS {
        if let Some(v) = map.get_mut(section) {
            prefix_ids(v, prefix, section == "questions");
        }
    }
    let rank: RawCase = serde_json::from_value(value).map_err(internal)?;
    let mut out = RawCase::new("ranks");
    out.clocks = rank.clocks;
    out.streams = rank.streams;
    out.events = rank.events;
    out.phases = rank.phases;
    out.marks = rank.marks;
    out.program = rank.program;
    out.series = rank.series;
    out.questions = rank.questions;
    Ok(out)
}

/// The exposed-time breakdown of each device of `rows` (`worksheet audit`'s,
/// [`crate::audit::breakdown`]) from the case's `compute:` / `communication:` / `memory:`
/// questions: exclusive compute `|C|`, exposed communication `|C ∪ K| − |C|`, exposed memory
/// `|C ∪ K ∪ M| − |C ∪ K|`, idle `span − |C ∪ K ∪ M|`, the span that of `C ∪ K ∪ M`.
fn breakdowns(case: &Case, rows: &Rows) -> Vec<Breakdown> {
    let mut out = Vec::new();
    for h in &rows.hta {
        let d = &h.device;
        let mut all = phase_intervals(case, &format!("compute:{d}"));
        let compute = analyze_numbers(&all).union_ns;
        all.extend(phase_intervals(case, &format!("communication:{d}")));
        let with_comm = analyze_numbers(&all).union_ns;
        all.extend(phase_intervals(case, &format!("memory:{d}")));
        let a = analyze_numbers(&all);
        let Some(span) = a.span_ns() else { continue };
        out.push(Breakdown {
            device: d.clone(),
            span_ns: span,
            exclusive_compute_ns: compute,
            exposed_communication_ns: with_comm - compute,
            exposed_memory_ns: a.union_ns - with_comm,
            idle_ns: span - a.union_ns,
        });
    }
    out
}

/// Validates and evaluates the prefixed rank case and keeps its rows; the case is dropped
/// unless `how.keep_cases`.
fn summarise(raw: RawCase, how: RankOptions) -> (Result<RankRows, CaseError>, Option<RawCase>) {
    // Without expectations the text is final now: count it before validation takes the case.
    let counted = (!how.expect).then(|| size::of_rank(&raw));
    let mut kept = (how.expect || how.keep_cases).then(|| raw.clone());
    let case = match validate(raw, "ranks") {
        Ok(c) => c,
        Err(e) => return (Err(e), None),
    };
    let report = evaluate(&case);
    if let (true, Some(k)) = (how.expect, kept.as_mut()) {
        embed_expectations(k, &report);
    }
    let json = counted.unwrap_or_else(|| kept.as_ref().map(size::of_rank).unwrap_or_default());
    let rows = rows_of(&case, &report);
    let breakdown = breakdowns(&case, &rows);
    let rows = RankRows {
        rows,
        breakdown,
        phases: case.phases.len(),
        program_ops: case.program.len(),
        questions: case.questions.len(),
        json,
    };
    (Ok(rows), kept.filter(|_| how.keep_cases))
}

/// Imports one rank's file and summarises it ([`RankPart`]). Its rank is `forced`, else the
/// trace's `distributedInfo.rank`, else `position`.
///
/// # Errors
/// The file's import error; `unsupported-format` for an Nsight Systems export.
pub fn read_rank(
    path: &Path,
    position: u32,
    forced: Option<u32>,
    options: &ImportOptions,
    how: RankOptions,
) -> Result<RankPart, ImportError> {
    // One pass: the rank's case and its recorded model (collectives, steps) together.
    let (imported, recorded) = import_path_with(path, options, true)?;
    if imported.format.starts_with("nsys") {
        return Err(ImportError::new(
            "$",
            "unsupported-format",
            "a multi-rank import reads PyTorch profiler (Kineto) traces, whose kernels name their process group and collective; import an Nsight Systems export on its own",
        )
        .in_file(path.display().to_string()));
    }
    let file = path.display().to_string();
    let audit_of = |trace: &crate::trace::model::Trace| {
        crate::audit::audit(trace, &file, &AuditOptions::default())
    };
    let (facts, audit) = match recorded {
        // The model is dropped here: only what the rank keeps of it (its collectives, and
        // with `how.audits` its audit) outlives this pass.
        Some(Ok(trace)) => (
            rank_facts_recorded(&trace, &imported.case),
            how.audits.then(|| Ok(audit_of(&trace))),
        ),
        // The audit's model could not be made (a host range only it reads overflows): the
        // collectives, and the audit, are read from the file again, as `audit FILE` reads it.
        _ => (
            rank_facts(path, &imported.case)?,
            how.audits
                .then(|| read_audit_trace(path, options).map(|trace| audit_of(&trace))),
        ),
    };
    let rank = forced.or(facts.rank).unwrap_or(position);
    let Imported {
        mut case, format, ..
    } = imported;
    let provenance = case.provenance.take();
    let case =
        prefixed(case, &format!("r{rank}.")).map_err(|e| e.in_file(path.display().to_string()))?;
    let clocks = case.clocks.clone();
    let (rows, case) = summarise(case, how);
    Ok(RankPart {
        rank,
        facts,
        format,
        clocks,
        provenance,
        rows,
        case,
        audit,
    })
}

/// Reads the files `which` (indices into `files`) in parallel on every core (rayon), each
/// with [`read_rank`] (`forced` gives its rank); results in the order of `which`. With
/// `how.progress`, a bar on a terminal's standard error counts the files done.
pub fn read_ranks(
    files: &[PathBuf],
    which: &[(usize, Option<u32>)],
    options: &ImportOptions,
    how: RankOptions,
) -> Vec<Result<RankPart, ImportError>> {
    use rayon::prelude::*;
    let bar = progress_bar(which.len(), how.progress);
    let parts = which
        .par_iter()
        .map(|&(i, forced)| {
            let position = u32::try_from(i).unwrap_or(u32::MAX);
            let part = read_rank(&files[i], position, forced, options, how);
            bar.inc(1);
            part
        })
        .collect();
    bar.finish_and_clear();
    parts
}

/// A bar counting `total` files on standard error, hidden unless `shown` and standard error
/// is a terminal.
fn progress_bar(total: usize, shown: bool) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    use std::io::IsTerminal;
    if !shown || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("importing {bar:40} {pos}/{len} traces, {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_references_are_prefixed_but_not_words() {
        let mut v = serde_json::json!([
            {"op": "launch", "phase": "k#1"},
            {"op": "host-wait", "id": "w", "device": "gpu0", "clock": "kineto", "at": "5 us"},
            {"kind": "intervals", "id": "stream:s", "phases": ["k#1", "k#2"], "expect": {"verdict": "known", "value": "1 us"}}
        ]);
        prefix_ids(&mut v, "r1.", true);
        assert_eq!(v[0]["phase"], "r1.k#1");
        assert_eq!(v[0]["op"], "launch");
        assert_eq!(v[1]["device"], "r1.gpu0");
        assert_eq!(v[1]["at"], "5 us");
        assert_eq!(v[2]["phases"][1], "r1.k#2");
        assert_eq!(v[2]["id"], "stream:r1.s");
        assert_eq!(v[2]["kind"], "intervals");
        assert_eq!(v[2]["expect"]["verdict"], "known");
    }

    /// The per-rank path hands back the rank's rows and collectives, never its case, unless
    /// the case is asked for: a multi-rank import that kept every rank's phases would grow
    /// with the ranks.
    #[test]
    fn a_summarised_rank_keeps_its_rows_not_its_case() {
        let path = Path::new("tests/data/ranks/rank1.json.gz");
        let part = read_rank(
            path,
            5,
            None,
            &ImportOptions::default(),
            RankOptions::default(),
        )
        .expect("the rank imports");
        assert_eq!(part.rank, 1, "distributedInfo.rank wins over the position");
        assert!(part.case.is_none(), "the rank's case is dropped");
        let rows = part.rows.as_ref().expect("the rank's case validates");
        assert!(rows.phases > 100, "{} phases", rows.phases);
        assert!(rows.rows.sets.iter().all(|r| r.question.contains("r1.")));
        assert_eq!(part.clocks.len(), 1);
        assert_eq!(part.clocks[0].id, "r1.kineto");
        assert_eq!(part.facts.collectives.len(), 8);
        let kept = read_rank(
            path,
            5,
            Some(5),
            &ImportOptions::default(),
            RankOptions {
                expect: false,
                keep_cases: true,
                progress: false,
                audits: false,
            },
        )
        .expect("imports");
        let case = kept.case.expect("kept when asked");
        assert_eq!(case.phases.len(), rows.phases);
        assert!(case.phases.iter().all(|p| p.id.starts_with("r5.")));
    }
}
