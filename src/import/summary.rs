//! The summary `worksheet import` prints: the engine's answers on the imported case.
//!
//! Nothing here computes a number the engine does not: the case is validated and
//! evaluated exactly as `worksheet eval` would, and each row is one answer. The only
//! arithmetic of its own is the compute ∩ communication overlap, from exact unions:
//!
//! ```text
//! compute        [=====)   [=========)
//! communication      [=======)    [==)
//!                    |-|   |-|    |--|      |A ∩ B| = |A| + |B| − |A ∪ B|
//! ```

use comfy_table::{presets::ASCII_MARKDOWN, Table};
use serde::Serialize;

use super::Imported;
use crate::case::raw::{RawCase, RawExpectDuration, RawExpectIntervals, RawQuestion, RawTime};
use crate::case::{validate, Ask, Case, CaseError};
use crate::engine::{evaluate, wide, Outcome, Report};
use crate::interval::{analyze_numbers, Interval, SetAnalysis};
use crate::units::Nanos;
use crate::verdict::Verdict;

/// One interval-set row: a stream, a device, or a class of work on a device.
#[derive(Clone, Debug, Serialize)]
pub struct SetRow {
    /// The question id (`stream:gpu0-s7`, `device:gpu0`, `compute:gpu0`, ...).
    pub question: String,
    /// Number of phases.
    pub count: usize,
    /// Covered union (busy time), exact text.
    pub busy: String,
    /// Σ lengths, exact text.
    pub sum: String,
    /// Number of gaps.
    pub gaps: usize,
    /// Σ gap lengths, exact text.
    pub gap_total: String,
    /// Largest number of phases active at once.
    pub max_depth: u32,
    /// First start to last end, exact text (`unknown (empty-set)` for no phases).
    pub span: String,
    /// The same amounts in integer ns.
    pub ns: SetNs,
}

/// A set row's amounts in integer ns.
#[derive(Clone, Debug, Serialize)]
pub struct SetNs {
    /// Busy (union).
    pub busy: i128,
    /// Sum.
    pub sum: i128,
    /// Gap total.
    pub gap_total: i128,
    /// Span (absent for an empty set).
    pub span: Option<i128>,
}

/// Compute ∩ communication on one device.
#[derive(Clone, Debug, Serialize)]
pub struct OverlapRow {
    /// The device.
    pub device: String,
    /// |compute| (union), ns.
    pub compute_ns: i128,
    /// |communication| (union), ns.
    pub communication_ns: i128,
    /// |compute ∪ communication|, ns.
    pub union_ns: i128,
    /// |compute ∩ communication| = |A| + |B| − |A ∪ B|, ns.
    pub overlap_ns: i128,
    /// Overlap as a share of communication time, `12.34 %`.
    pub of_communication: String,
}

/// HTA's temporal breakdown, recomputed exactly: no ns rounding, nothing dropped.
#[derive(Clone, Debug, Serialize)]
pub struct HtaRow {
    /// The device (HTA: the rank).
    pub device: String,
    /// `kernel_time`: first start to last end of all GPU work, ns.
    pub kernel_time_ns: i128,
    /// `idle_time`: kernel_time − union, ns.
    pub idle_ns: i128,
    /// `compute_time`: union of compute kernels, ns.
    pub compute_ns: i128,
    /// `non_compute_time`: union − compute, ns.
    pub non_compute_ns: i128,
}

/// A completion answer.
#[derive(Clone, Debug, Serialize)]
pub struct CompletionRow {
    /// Question id.
    pub question: String,
    /// `known 1.2 s` / `unknown (wait-misses-work)`.
    pub answer: String,
    /// The notes or the reason's detail.
    pub why: String,
}

/// Everything `import` prints, and the case it writes.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Case name.
    pub case: String,
    /// The trace format read (in JSON `trace_format`: `format` names the report's own format).
    #[serde(rename = "trace_format")]
    pub format: String,
    /// The clocks: `id (domain, instance)`, `; `-separated when the trace has several.
    pub clock: String,
    /// Interval-set rows: streams, then per device the pooled and per-class rows.
    pub sets: Vec<SetRow>,
    /// Compute ∩ communication per device.
    pub overlaps: Vec<OverlapRow>,
    /// HTA-comparable temporal breakdown per device.
    pub hta: Vec<HtaRow>,
    /// Completion answers.
    pub completion: Vec<CompletionRow>,
    /// Facts about the trace.
    pub facts: Vec<(String, String)>,
    /// Assumptions and caveats.
    pub notes: Vec<String>,
    /// Size of the case: phases, program ops, questions, JSON bytes.
    pub size: CaseSize,
    /// Where the case was written and how many bytes (absent: not written).
    pub written: Option<(String, u64)>,
    /// The case's pretty JSON text (with expectations when asked), the bytes `-o` writes:
    /// kept by [`summarize`]; empty from [`summarize_writing`] (`import -o` streams the case).
    #[serde(skip)]
    pub case_json: String,
    /// The audit of the same trace (`worksheet audit`): its findings print under the summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<crate::audit::Audit>,
}

/// How big the imported case is.
#[derive(Clone, Debug, Serialize)]
pub struct CaseSize {
    /// Phases (GPU work and annotations).
    pub phases: usize,
    /// Host-program ops.
    pub program_ops: usize,
    /// Questions.
    pub questions: usize,
    /// Bytes of the pretty JSON text.
    pub json_bytes: usize,
}

/// Validates and evaluates the imported case and builds the summary; with `expect`, the
/// answers are written into the case as its expectations. Keeps the case's JSON text in
/// [`Summary::case_json`]; [`summarize_owned`] does the same without copying the case.
///
/// # Errors
/// [`CaseError`] when the imported case does not validate (an importer bug).
pub fn summarize(imported: &Imported, expect: bool) -> Result<Summary, CaseError> {
    summarize_owned(imported.clone(), expect, true)
}

/// [`summarize`], taking the import: the case is validated by value (not copied unless
/// `expect` needs it after validation), and its JSON text is made only when `keep_json`
/// asks for it; otherwise only its size is counted, without building the text.
///
/// # Errors
/// [`CaseError`] when the imported case does not validate (an importer bug).
pub fn summarize_owned(
    imported: Imported,
    expect: bool,
    keep_json: bool,
) -> Result<Summary, CaseError> {
    let (mut summary, json) = summarize_writing(imported, expect, |raw| {
        let (json, bytes) = json_of(raw, keep_json);
        (bytes, json)
    })?;
    summary.case_json = json;
    Ok(summary)
}

/// [`summarize_owned`], handing the case as `-o` writes it (with expectations when asked) to
/// `write` once, before it is validated and dropped: `write` streams it where it goes and
/// returns its size in bytes of JSON text (`CaseSize::json_bytes`) and what it made (`T`,
/// returned beside the summary). [`Summary::case_json`] stays empty.
///
/// # Errors
/// [`CaseError`] when the imported case does not validate (an importer bug).
pub fn summarize_writing<T>(
    imported: Imported,
    expect: bool,
    write: impl FnOnce(&RawCase) -> (usize, T),
) -> Result<(Summary, T), CaseError> {
    let Imported {
        case: raw,
        format,
        facts,
        notes,
        ..
    } = imported;
    let name = raw.name.clone().unwrap_or_default();
    let (case, report, (json_bytes, written)) = if expect {
        // The answers go into the case file, so the raw case outlives validation.
        let case = validate(raw.clone(), &name)?;
        let report = evaluate(&case);
        let mut raw = raw;
        embed_expectations(&mut raw, &report);
        let written = write(&raw);
        (case, report, written)
    } else {
        let written = write(&raw);
        let case = validate(raw, &name)?;
        let report = evaluate(&case);
        (case, report, written)
    };
    let Rows {
        sets,
        overlaps,
        hta,
        completion,
    } = rows_of(&case, &report);
    let clock = clock_line(&case);
    let summary = Summary {
        case: name,
        format,
        clock,
        sets,
        overlaps,
        hta,
        completion,
        facts,
        notes,
        size: CaseSize {
            phases: case.phases.len(),
            program_ops: case.program.len(),
            questions: case.questions.len(),
            json_bytes,
        },
        written: None,
        case_json: String::new(),
        audit: None,
    };
    Ok((summary, written))
}

/// The summary's clock line: one clock per traced process, all listed (two processes are
/// two clocks), `; `-separated.
pub(crate) fn clock_line(case: &Case) -> String {
    case.clocks
        .iter()
        .map(|c| format!("`{}` ({})", c.id, c.clock))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The rows of a summary: what the engine answered on one validated case.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    /// Interval-set rows, in question order.
    pub sets: Vec<SetRow>,
    /// Compute ∩ communication per device.
    pub overlaps: Vec<OverlapRow>,
    /// HTA-comparable temporal breakdown per device.
    pub hta: Vec<HtaRow>,
    /// Completion answers.
    pub completion: Vec<CompletionRow>,
}

/// The summary's rows from `case` and the engine's `report` on it. A multi-rank import
/// builds them per rank ([`super::ranks`]), so they depend on nothing but one case.
pub fn rows_of(case: &Case, report: &Report) -> Rows {
    let mut sets = Vec::new();
    let mut completion = Vec::new();
    for answer in &report.answers {
        match &answer.outcome {
            Outcome::Intervals(set) => {
                if let Some(a) = set.single() {
                    sets.push(set_row(&answer.id, &a));
                }
            }
            Outcome::Duration(v) if answer.id.starts_with("completion:") => {
                completion.push(CompletionRow {
                    question: answer.id.clone(),
                    answer: v.to_string(),
                    why: match v {
                        Verdict::Known { notes, .. } | Verdict::Bounded { notes, .. } => {
                            notes.join("; ")
                        }
                        Verdict::Unknown { detail, .. } => detail.clone(),
                    },
                });
            }
            _ => {}
        }
    }
    let devices: Vec<String> = sets
        .iter()
        .filter_map(|r| r.question.strip_prefix("device:").map(str::to_owned))
        .collect();
    let row_ns = |id: &str| sets.iter().find(|r| r.question == id).map(|r| r.ns.clone());
    let mut overlaps = Vec::new();
    let mut hta = Vec::new();
    for d in &devices {
        let compute = row_ns(&format!("compute:{d}"));
        let communication = row_ns(&format!("communication:{d}"));
        if let (Some(a), Some(b)) = (&compute, &communication) {
            let mut both = phase_intervals(case, &format!("compute:{d}"));
            both.extend(phase_intervals(case, &format!("communication:{d}")));
            let union_ns = analyze_numbers(&both).union_ns;
            let overlap_ns = a.busy + b.busy - union_ns;
            overlaps.push(OverlapRow {
                device: d.clone(),
                compute_ns: a.busy,
                communication_ns: b.busy,
                union_ns,
                overlap_ns,
                of_communication: share(
                    overlap_ns,
                    b.busy,
                    [a.busy, b.busy, union_ns].iter().all(|&v| fits(v)),
                ),
            });
        }
        if let Some(all) = row_ns(&format!("device:{d}")) {
            let compute_ns = compute.as_ref().map_or(0, |c| c.busy);
            let span = all.span.unwrap_or(0);
            hta.push(HtaRow {
                device: d.clone(),
                kernel_time_ns: span,
                idle_ns: span - all.busy,
                compute_ns,
                non_compute_ns: all.busy - compute_ns,
            });
        }
    }
    Rows {
        sets,
        overlaps,
        hta,
        completion,
    }
}

/// The case's pretty JSON text as `-o` writes it, and its length in bytes; without `keep`,
/// only the length (counted while serialising into nothing) and an empty text.
pub(crate) fn json_of(raw: &RawCase, keep: bool) -> (String, usize) {
    if keep {
        let text = raw.to_json_pretty();
        let bytes = text.len();
        return (text, bytes);
    }
    /// A writer that only counts.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer_pretty(&mut count, raw).expect("a raw case always serializes");
    // `to_json_pretty` ends the text with a newline.
    (String::new(), count.0 + 1)
}

/// The intervals of the phases of question `id`.
pub(crate) fn phase_intervals(case: &Case, id: &str) -> Vec<Interval> {
    match case.question(id).map(|q| &q.ask) {
        Some(Ask::Intervals { phases }) => {
            phases.iter().map(|&p| case.phases[p].interval).collect()
        }
        _ => Vec::new(),
    }
}

fn set_row(question: &str, a: &SetAnalysis) -> SetRow {
    let span = a.span_ns();
    SetRow {
        question: question.to_owned(),
        count: a.count,
        busy: wide(a.union_ns),
        sum: wide(a.sum_ns),
        gaps: a.gaps.len(),
        gap_total: wide(a.gap_total_ns()),
        max_depth: a.max_depth,
        span: span.map_or_else(|| "unknown (empty-set)".to_owned(), wide),
        ns: SetNs {
            busy: a.union_ns,
            sum: a.sum_ns,
            gap_total: a.gap_total_ns(),
            span,
        },
    }
}

/// Whether a total is known: the engine answers `unknown (overflow)` for a duration that
/// does not fit in `i64` nanoseconds, and so does every line of the summary.
fn fits(ns: i128) -> bool {
    i64::try_from(ns).is_ok()
}

/// A total derived from others (`idle = span − busy`): its exact value only when every
/// operand is known, else `unknown (overflow)`, the verdict of the operand it depends on.
fn derived(value: i128, operands_known: bool) -> String {
    if operands_known {
        wide(value)
    } else {
        format!("unknown ({})", crate::verdict::Reason::Overflow)
    }
}

/// A share `num / den` ([`percent`]) when every total it is computed from is known, else
/// `unknown (overflow)`: a percentage of an unknown span is not 100 % (review D10).
fn share(num: i128, den: i128, operands_known: bool) -> String {
    if operands_known {
        percent(num, den)
    } else {
        format!("unknown ({})", crate::verdict::Reason::Overflow)
    }
}

/// The cells of an HTA row in the text table: device, kernel time, idle, compute,
/// non-compute, and the three shares. A value is printed only when every total it depends
/// on is known (fits in `i64` ns, as the engine's answers do).
fn hta_cells(h: &HtaRow) -> [String; 8] {
    let busy = h.kernel_time_ns - h.idle_ns;
    let (span_ok, busy_ok, compute_ok) = (fits(h.kernel_time_ns), fits(busy), fits(h.compute_ns));
    let idle_ok = span_ok && busy_ok;
    let non_compute_ok = busy_ok && compute_ok;
    [
        h.device.clone(),
        wide(h.kernel_time_ns),
        derived(h.idle_ns, idle_ok),
        wide(h.compute_ns),
        derived(h.non_compute_ns, non_compute_ok),
        share(h.idle_ns, h.kernel_time_ns, idle_ok && span_ok),
        share(h.compute_ns, h.kernel_time_ns, compute_ok && span_ok),
        share(
            h.non_compute_ns,
            h.kernel_time_ns,
            non_compute_ok && span_ok,
        ),
    ]
}

/// The cells of a compute ∩ communication row: device, compute, communication, their
/// union, the overlap (known when the three unions are) and its share of communication.
fn overlap_cells(o: &OverlapRow) -> [String; 6] {
    let operands_ok = [o.compute_ns, o.communication_ns, o.union_ns]
        .iter()
        .all(|&v| fits(v));
    [
        o.device.clone(),
        wide(o.compute_ns),
        wide(o.communication_ns),
        wide(o.union_ns),
        derived(o.overlap_ns, operands_ok),
        o.of_communication.clone(),
    ]
}

/// `num / den` as a percentage with two decimals, rounded half up; `—` for `den == 0`.
fn percent(num: i128, den: i128) -> String {
    if den <= 0 {
        return "—".to_owned();
    }
    let basis = (num * 20_000 + den) / (2 * den);
    format!("{}.{:02} %", basis / 100, basis % 100)
}

fn nanos(v: i128) -> Option<RawTime> {
    i64::try_from(v).ok().map(|v| RawTime::from(Nanos::new(v)))
}

/// Writes the answers of `report` into the case's questions as expectations (interval
/// sets: count, sum, union, span, overlap, max depth; gaps and overlap regions are left
/// out, since a trace has thousands).
pub(crate) fn embed_expectations(case: &mut RawCase, report: &Report) {
    for (q, answer) in case.questions.iter_mut().zip(&report.answers) {
        match (q, &answer.outcome) {
            (RawQuestion::Intervals { expect, .. }, Outcome::Intervals(set)) => {
                if let Some(a) = set.single() {
                    *expect = Some(RawExpectIntervals {
                        verdict: None,
                        reason: None,
                        count: Some(a.count as u64),
                        sum: nanos(a.sum_ns),
                        union: nanos(a.union_ns),
                        span: a
                            .span_ns()
                            .and_then(nanos)
                            .map(crate::case::raw::RawSpanExpect::Value),
                        gaps: None,
                        overlap: nanos(a.overlap_ns()),
                        overlap_regions: None,
                        max_depth: Some(a.max_depth),
                    });
                }
            }
            (
                RawQuestion::HostCompletion { expect, .. }
                | RawQuestion::Submission { expect, .. }
                | RawQuestion::DeviceInterval { expect, .. }
                | RawQuestion::Elapsed { expect, .. }
                | RawQuestion::ClockOffset { expect, .. }
                | RawQuestion::SteadyState { expect, .. },
                Outcome::Duration(v),
            ) => {
                *expect = Some(match v {
                    Verdict::Known { value, .. } => RawExpectDuration {
                        verdict: "known".into(),
                        value: Some(RawTime::from(*value)),
                        reason: None,
                        attribution: None,
                        lo: None,
                        hi: None,
                    },
                    Verdict::Bounded { lo, hi, .. } => RawExpectDuration {
                        verdict: "bounded".into(),
                        value: None,
                        reason: None,
                        attribution: None,
                        lo: Some(RawTime::from(*lo)),
                        hi: Some(RawTime::from(*hi)),
                    },
                    Verdict::Unknown { reason, .. } => RawExpectDuration {
                        verdict: "unknown".into(),
                        value: None,
                        reason: Some(reason.code().to_owned()),
                        attribution: None,
                        lo: None,
                        hi: None,
                    },
                });
            }
            _ => {}
        }
    }
}

/// Longest "why" text in the completion table (the JSON summary and `eval` keep it whole).
const WHY_CHARS: usize = 200;

/// `text` cut to `max` characters, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(header.to_vec());
    t
}

/// `t` as text: the table, or one record per line where it does not fit the terminal.
fn show(t: &Table) -> String {
    crate::table::fitted_records(t)
}

/// A line of prose, wrapped at the terminal's width (unchanged when piped).
fn prose(text: &str) -> String {
    crate::table::wrap_prose(text, "  ")
}

impl Summary {
    /// The summary as text: tables for people, with the audit's top
    /// [`crate::audit::render::DEFAULT_TOP`] kernels.
    pub fn to_text(&self) -> String {
        self.to_text_top(crate::audit::render::DEFAULT_TOP)
    }

    /// [`Self::to_text`] with the audit's `top` kernels (`worksheet import --top N`).
    pub fn to_text_top(&self, top: usize) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "{}\n",
            prose(&format!("case {} — {}", self.case, self.format))
        ));
        s.push_str(&format!("{}\n\n", prose(&format!("clock {}", self.clock))));
        self.sets_text(&mut s);
        self.overlaps_text(&mut s);
        self.hta_text(&mut s);
        self.completion_text(&mut s);
        self.facts_and_notes_text(&mut s);
        self.size_text(&mut s);
        self.audit_text(&mut s, top);
        // Names (kernels, calls, streams) come from the trace: escape terminal controls.
        crate::escape::printable(&s).into_owned()
    }

    /// The interval sets, one row per question.
    fn sets_text(&self, out: &mut String) {
        let mut t = table(&[
            "question",
            "count",
            "busy (union)",
            "sum",
            "gaps",
            "gap total",
            "max depth",
            "span",
        ]);
        for r in &self.sets {
            t.add_row(vec![
                r.question.clone(),
                r.count.to_string(),
                r.busy.clone(),
                r.sum.clone(),
                r.gaps.to_string(),
                r.gap_total.clone(),
                r.max_depth.to_string(),
                r.span.clone(),
            ]);
        }
        out.push_str(&format!("{}\n", show(&t)));
    }

    /// Compute ∩ communication per device, when the trace has both.
    fn overlaps_text(&self, out: &mut String) {
        if !self.overlaps.is_empty() {
            out.push_str(&format!(
                "\n{}\n",
                prose("compute ∩ communication, exact: |A ∩ B| = |A| + |B| − |A ∪ B| (unions)")
            ));
            let mut t = table(&[
                "device",
                "compute",
                "communication",
                "compute ∪ comm",
                "overlap",
                "of comm",
            ]);
            for o in &self.overlaps {
                t.add_row(overlap_cells(o).to_vec());
            }
            out.push_str(&format!("{}\n", show(&t)));
        }
    }

    /// The HTA-comparable temporal breakdown per device.
    fn hta_text(&self, out: &mut String) {
        if !self.hta.is_empty() {
            let title = if self.format.starts_with("nsys") {
                // HTA reads Kineto traces only: the breakdown uses its definitions, but no HTA
                // number exists to compare with.
                "Temporal breakdown by HTA's definitions (exact ns; HTA itself reads PyTorch profiler traces, not Nsight Systems exports)"
            } else {
                "HTA-comparable temporal breakdown (exact ns; HTA rounds to µs, drops the last ProfilerStep and uncorrelated events, counts cuda_sync as busy)"
            };
            out.push_str(&format!("\n{}\n", prose(title)));
            let mut t = table(&[
                "device",
                "kernel time (span)",
                "idle",
                "compute",
                "non-compute",
                "idle %",
                "compute %",
                "non-compute %",
            ]);
            for h in &self.hta {
                t.add_row(hta_cells(h).to_vec());
            }
            out.push_str(&format!("{}\n", show(&t)));
        }
    }

    /// The completion questions: do the host waits cover the work?
    fn completion_text(&self, out: &mut String) {
        if !self.completion.is_empty() {
            out.push_str(&format!(
                "\n{}\n",
                prose("completion: do the trace's host waits cover the work it launched?")
            ));
            let mut t = table(&["question", "answer", "why / notes (eval prints them whole)"]);
            for c in &self.completion {
                t.add_row(vec![
                    c.question.clone(),
                    c.answer.clone(),
                    cut(&c.why, WHY_CHARS),
                ]);
            }
            out.push_str(&format!("{}\n", show(&t)));
        }
    }

    /// What the trace held, and the notes.
    fn facts_and_notes_text(&self, out: &mut String) {
        if !self.facts.is_empty() {
            out.push('\n');
            let mut t = table(&["trace", "count / detail"]);
            for (k, v) in &self.facts {
                t.add_row(vec![k.clone(), v.clone()]);
            }
            out.push_str(&format!("{}\n", show(&t)));
        }
        if !self.notes.is_empty() {
            out.push_str("\nnotes:\n");
            for n in &self.notes {
                out.push_str(&format!("{}\n", prose(&format!("- {n}"))));
            }
        }
    }

    /// The case's size, and where it was written.
    fn size_text(&self, out: &mut String) {
        let written = match &self.written {
            Some((path, bytes)) => format!("written to {path} ({bytes} bytes)"),
            None => "not written (pass -o FILE)".to_owned(),
        };
        out.push_str(&format!(
            "\n{}\n",
            prose(&format!(
                "case: {} phases, {} program ops, {} questions, {} bytes of JSON; {written}",
                self.size.phases, self.size.program_ops, self.size.questions, self.size.json_bytes
            ))
        ));
    }

    /// The audit's findings and its `top` kernels, when it ran.
    fn audit_text(&self, out: &mut String, top: usize) {
        if let Some(audit) = &self.audit {
            out.push_str(&format!("\n{}\n", prose("audit (`worksheet audit` prints the step table and the breakdown too; docs/findings.md explains each code)")));
            // Each line wrapped at the terminal's width, its continuation indented two past
            // the line's own indent.
            for line in crate::audit::render::findings_text(&audit.findings).lines() {
                let lead = &line[..line.len() - line.trim_start().len()];
                out.push_str(&format!(
                    "{}\n",
                    crate::table::wrap_prose(line, &format!("{lead}  "))
                ));
            }
            let kernels = crate::audit::render::kernels_text(audit, top);
            if !kernels.is_empty() {
                out.push('\n');
                out.push_str(&kernels);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_half_up_with_two_decimals() {
        assert_eq!(percent(1, 3), "33.33 %");
        assert_eq!(percent(2, 3), "66.67 %");
        assert_eq!(percent(1, 8), "12.50 %");
        assert_eq!(percent(0, 5), "0.00 %");
        assert_eq!(percent(5, 5), "100.00 %");
        assert_eq!(percent(1, 0), "—");
    }

    const UNKNOWN: &str = "unknown (overflow)";

    #[test]
    fn an_unknown_span_gives_no_share_and_no_idle() {
        // review D10: a kernel over i64::MIN..i64::MAX printed `0 ns` idle and compute 100 %
        let span = i128::from(i64::MAX) - i128::from(i64::MIN);
        let h = HtaRow {
            device: "gpu0".into(),
            kernel_time_ns: span,
            idle_ns: 0,
            compute_ns: span,
            non_compute_ns: 0,
        };
        assert_eq!(
            hta_cells(&h),
            ["gpu0", UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN]
                .map(String::from)
        );
        let h = HtaRow {
            device: "gpu0".into(),
            kernel_time_ns: 1000,
            idle_ns: 250,
            compute_ns: 500,
            non_compute_ns: 250,
        };
        assert_eq!(
            hta_cells(&h),
            ["gpu0", "1 us", "250 ns", "500 ns", "250 ns", "25.00 %", "50.00 %", "25.00 %"]
                .map(String::from)
        );
    }

    use proptest::prelude::*;

    /// Totals around the edge of `i64`: known, or past it (the engine's `overflow`).
    fn total() -> impl Strategy<Value = i128> {
        prop_oneof![
            0i128..1_000_000,
            (0i128..1_000_000).prop_map(|d| i128::from(i64::MAX) - d),
            (1i128..1_000_000).prop_map(|d| i128::from(i64::MAX) + d),
            (0i128..1_000_000).prop_map(|d| 2 * i128::from(i64::MAX) - d),
        ]
    }

    proptest! {
        /// Every cell of a summary row is a number only when every total it is computed
        /// from is one; otherwise it reads `unknown (overflow)`, as the engine's verdicts do.
        #[test]
        fn summary_cells_agree_with_the_verdicts_of_their_operands(
            span in total(), busy_frac in 0u32..=100, compute_frac in 0u32..=100,
            comm in total(),
        ) {
            let busy = span * i128::from(busy_frac) / 100;
            let compute = busy * i128::from(compute_frac) / 100;
            let h = HtaRow {
                device: "d".into(),
                kernel_time_ns: span,
                idle_ns: span - busy,
                compute_ns: compute,
                non_compute_ns: busy - compute,
            };
            let cells = hta_cells(&h);
            let known = |v: i128| i64::try_from(v).is_ok();
            // operands of each cell, in the column order
            let operands: [Vec<i128>; 7] = [
                vec![span],
                vec![span, busy],
                vec![compute],
                vec![busy, compute],
                vec![span, busy],
                vec![span, compute],
                vec![span, busy, compute],
            ];
            for (cell, ops) in cells[1..].iter().zip(&operands) {
                let all_known = ops.iter().all(|&v| known(v));
                prop_assert_eq!(cell == UNKNOWN, !all_known, "{} from {:?}", cell, ops);
            }
            let union = compute + comm;
            let o = OverlapRow {
                device: "d".into(),
                compute_ns: compute,
                communication_ns: comm,
                union_ns: union,
                overlap_ns: compute + comm - union,
                of_communication: share(compute + comm - union, comm, [compute, comm, union].iter().all(|&v| known(v))),
            };
            let cells = overlap_cells(&o);
            let all_known = [compute, comm, union].iter().all(|&v| known(v));
            prop_assert_eq!(cells[4] == UNKNOWN, !all_known);
            prop_assert_eq!(cells[5] == UNKNOWN, !all_known);
        }
    }
}
