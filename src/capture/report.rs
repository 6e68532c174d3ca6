//! What a capture prints and writes besides its case file: the per-run CSV and the tables.
//! Pure functions returning text.

use serde::Serialize;

use super::record::{Boundary, CaptureRecord, Mode};
use crate::engine::Report;
use crate::stats::{Outcome, Phase, SampleSet, Summary};
use crate::table::new_table;
use crate::units::Nanos;

/// The per-run CSV: one row per run, every boundary in ns, and the raw host readings.
///
/// # Errors
/// Never in practice (writing to memory); kept for the CSV writer's signature.
pub fn runs_csv(rec: &CaptureRecord) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "group",
        "spin_ns",
        "mode",
        "run",
        "phase",
        "failure",
        "submission_ns",
        "device_interval_ns",
        "host_completion_ns",
        "body_ns",
        "device_answer",
        "host_t0_ns",
        "host_t1_ns",
        "host_t2_ns",
        "host_t3_ns",
        "globaltimer_first",
        "globaltimer_last",
    ])?;
    let opt = |v: Option<Nanos>| v.map(|v| v.as_i64().to_string()).unwrap_or_default();
    for g in &rec.groups {
        for r in &g.runs {
            w.write_record([
                g.id(),
                g.spin.as_i64().to_string(),
                g.mode.code().to_owned(),
                r.index.to_string(),
                if r.warmup { "warmup" } else { "measured" }.to_owned(),
                r.failure.clone().unwrap_or_default(),
                r.host.submission().as_i64().to_string(),
                opt(r.device_interval()),
                r.host.completion().as_i64().to_string(),
                opt(r.body_length()),
                r.device.to_string(),
                r.host.t0.as_i64().to_string(),
                r.host.t1.as_i64().to_string(),
                r.host.t2.as_i64().to_string(),
                r.host.t3.as_i64().to_string(),
                r.body.map(|b| b.0.to_string()).unwrap_or_default(),
                r.body.map(|b| b.1.to_string()).unwrap_or_default(),
            ])?;
        }
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Median / P90 / max of one boundary in one group.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryRow {
    /// Spin length asked.
    pub spin: Nanos,
    /// Idle or held.
    pub mode: Mode,
    /// Boundary id (`submission`, `device-interval`, `host-completion`, `body`).
    pub boundary: &'static str,
    /// What it is, on which clock, in this mode ([`Boundary::label`]).
    pub label: &'static str,
    /// The statistics of the measured runs, or `None` when none succeeded.
    pub summary: Option<Summary>,
}

/// Every group's summaries, boundary by boundary.
pub fn summary_rows(rec: &CaptureRecord) -> Vec<SummaryRow> {
    let mut rows = Vec::new();
    for g in &rec.groups {
        for boundary in Boundary::ALL {
            let mut set = SampleSet::new();
            for r in &g.runs {
                let Some(v) = boundary.value(r) else { continue };
                let phase = if r.warmup {
                    Phase::Warmup
                } else {
                    Phase::Measured
                };
                let outcome = if r.failure.is_some() {
                    Outcome::Failed
                } else {
                    Outcome::Completed
                };
                // A negative value cannot arise from ordered readings; skip it if it does.
                let _ = set.record(v, phase, outcome);
            }
            rows.push(SummaryRow {
                spin: g.spin,
                mode: g.mode,
                boundary: boundary.suffix(),
                label: boundary.label(g.mode),
                summary: Summary::of(&set).ok(),
            });
        }
    }
    rows
}

/// The summary table: median / P90 / max per spin length, mode and boundary.
pub fn summary_table(rec: &CaptureRecord) -> String {
    let mut t = new_table(&[
        "spin", "mode", "boundary", "runs", "failed", "median", "P90", "max",
    ]);
    for row in summary_rows(rec) {
        let (n, failed, med, p90, max) = match &row.summary {
            Some(s) => (
                s.count().to_string(),
                s.failures().to_string(),
                s.median().to_string(),
                s.p90().to_string(),
                s.max().to_string(),
            ),
            None => ("0".into(), "-".into(), "-".into(), "-".into(), "-".into()),
        };
        t.add_row(vec![
            row.spin.to_string(),
            row.mode.describe().to_owned(),
            row.label.to_owned(),
            n,
            failed,
            med,
            p90,
            max,
        ]);
    }
    t.to_string()
}

/// One paragraph: the event clock's step and the floor of two consecutive events.
pub fn calibration_text(rec: &CaptureRecord) -> String {
    let step = rec.event_step_evidence().describe("elapsed reading");
    let gt = format!(
        "%globaltimer: {}",
        rec.globaltimer_step_evidence().describe("body reading")
    );
    let floor = SampleSet::from_runs(&[], &rec.calibration.consecutive)
        .ok()
        .and_then(|s| Summary::of(&s).ok());
    let floor = match floor {
        Some(s) => format!(
            "two consecutive events on an idle stream ({} pairs): min {}, median {}, P90 {}, max {}",
            s.count(),
            s.min(),
            s.median(),
            s.p90(),
            s.max()
        ),
        None => "no consecutive-event pairs".to_owned(),
    };
    format!("event quantum: {step}; {gt}.\nevent floor: {floor}.")
}

/// The demonstrations: what the driver said and the engine's verdict on the capture.
pub fn demos_table(rec: &CaptureRecord, report: &Report) -> String {
    let d = &rec.demos;
    let rows: [(&str, &str, String); 6] = [
        (
            "demo-timing-disabled",
            "events created without timing",
            format!("elapsed: {}", d.timing_disabled.elapsed),
        ),
        (
            "demo-event-incomplete",
            "end event read while pending",
            format!(
                "query: {}; elapsed: {} (returned in {})",
                d.event_incomplete.query, d.event_incomplete.elapsed, d.event_incomplete.call
            ),
        ),
        (
            "demo-cross-stream",
            "event pair across two streams, no dependency",
            format!("elapsed: {}", d.cross_stream.elapsed),
        ),
        (
            "demo-cross-stream-joined",
            "the same pair, stream B waits on A",
            format!("elapsed: {}", d.cross_stream_joined.elapsed),
        ),
        (
            "demo-wait-event",
            "wait on A's event, claiming B's work too",
            format!(
                "B's end after the wait: {}",
                d.wait_event.b_query_after_wait
            ),
        ),
        (
            "demo-wait-device",
            "device-wide synchronize",
            format!(
                "B's end after the wait: {}",
                d.wait_device.b_query_after_wait
            ),
        ),
    ];
    let mut t = new_table(&["demonstration", "what", "the driver said", "worksheet"]);
    for (id, what, said) in rows {
        let verdict = report
            .answer(id)
            .map(|a| a.headline())
            .unwrap_or_else(|| "(not asked)".into());
        t.add_row(vec![id.to_owned(), what.to_owned(), said, verdict]);
    }
    t.to_string()
}
