//! What a lab run shows, as pure functions returning text: the table for people, the raw
//! CSV log, the JSON report, Markdown, and the case file that `worksheet check` replays.
//!
//! Nothing here reads a clock or a file; the same [`LabRun`] always gives the same bytes,
//! which is what makes the snapshot tests possible.

use std::fmt::Write as _;

use comfy_table::{presets::ASCII_MARKDOWN, CellAlignment, Table};
use serde_json::json;

use super::executor::{caution_advice, Analysis, LabRun, Measure, RunRecord, RunStatus, Share};
use crate::case::raw::{
    RawCase, RawClock, RawEvent, RawEventState, RawExpectDuration, RawExpectIntervals, RawHostWait,
    RawOp, RawPhase, RawQuestion, RawSeries, RawSpanExpect, RawStream, RawTime,
};
use crate::interval::{analyze as analyze_intervals, Interval};
use crate::stats::{steady_state, Phase, SampleSet, SteadyStatePolicy};
use crate::units::Nanos;
use crate::verdict::Verdict;

/// The case-file id of the lab's host clock.
pub const CLOCK_ID: &str = "host";
/// The stream that models the thread pool.
pub const POOL_STREAM: &str = "pool";
/// The device the pool stream belongs to.
pub const POOL_DEVICE: &str = "executor";

fn t(value: Nanos) -> RawTime {
    RawTime::from(value)
}

fn expect_of(verdict: &Verdict) -> RawExpectDuration {
    match verdict {
        Verdict::Known { value, .. } => RawExpectDuration {
            verdict: "known".into(),
            value: Some(t(*value)),
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
            lo: Some(t(*lo)),
            hi: Some(t(*hi)),
        },
        Verdict::Unknown { reason, .. } => RawExpectDuration {
            verdict: "unknown".into(),
            value: None,
            reason: Some(reason.code().into()),
            attribution: None,
            lo: None,
            hi: None,
        },
    }
}

fn known(value: Nanos) -> RawExpectDuration {
    expect_of(&Verdict::known(value))
}

/// The case file of a lab run (see the module docs of [`crate::lab`] for the modelling).
///
/// Per run `N` the program is, in order:
///
/// ```text
/// timer-start submit-N  @ t0      timer-start complete-N @ t0
/// launch job-N                    (stream `pool`, phase [w0, w1))
/// record done-N                   (the job's result handle; no timestamp of its own)
/// timer-stop submit-N   @ t1      timer-start wait-N @ t2
/// host-wait wait-for-N on done-N, returned @ t3
/// timer-stop wait-N     @ t3      timer-stop complete-N @ t3
/// ```
///
/// Questions, each with the value this run measured as its expectation: `submission-N`
/// (known, no completion claim), `completion-N` (known: the stop follows a wait on the
/// job's own result), `jobs` (intervals of every job's work) and `steady-total`,
/// `steady-submission`, `steady-wait` over the series of the runs (whatever the stats
/// module concluded: known, `single-warmup` or `drift`).
pub fn case_file(lab: &LabRun, name: &str, command: &str) -> RawCase {
    let mut case = RawCase::new(name);
    case.description = Some(description(lab));
    case.provenance = Some(provenance(lab, command));
    case.clocks.push(RawClock {
        id: CLOCK_ID.into(),
        domain: lab.clock.domain.clone(),
        instance: Some(lab.clock.instance.clone()),
    });
    case.streams.push(RawStream {
        id: POOL_STREAM.into(),
        clock: CLOCK_ID.into(),
        device: POOL_DEVICE.into(),
        kind: None,
    });
    for r in &lab.runs {
        add_run(&mut case, r);
    }
    add_jobs_question(&mut case, lab);
    add_series(&mut case, lab);
    case
}

/// The case's description: what was run, how, and how the pool is modelled.
fn description(lab: &LabRun) -> String {
    format!(
        "Executor lab: {} measured runs + {} warm-ups of {} ({} passes, about {} each), \
         submitted one at a time to a pool of {} worker thread(s) and waited for; every \
         timestamp is on host clock `{}`. The pool is modelled as stream `{POOL_STREAM}` of \
         device `{POOL_DEVICE}` on the host clock: each job is a launched phase, its result \
         handle an event recorded after it, and the caller's blocking receive a host wait on \
         that event.",
        lab.config.runs,
        lab.config.warmup,
        lab.work,
        lab.calibration.passes,
        lab.calibration.estimate,
        lab.config.threads,
        lab.clock,
    )
}

/// The case's provenance: the tool, the command, the clock, the machine and the work.
fn provenance(lab: &LabRun, command: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut prov = serde_json::Map::new();
    prov.insert("tool".into(), json!("worksheet lab executor"));
    prov.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
    prov.insert("command".into(), json!(command));
    prov.insert("clock_source".into(), json!(lab.clock_info.source));
    if let Some(res) = lab.clock_info.resolution {
        prov.insert("clock_resolution".into(), json!(res.to_string()));
    }
    prov.insert("threads".into(), json!(lab.config.threads));
    if let Some(m) = &lab.machine {
        prov.insert("cpus".into(), json!(m.cpus));
        if let Some(l) = &m.load_average {
            prov.insert("load_average_at_start".into(), json!(l));
        }
        if let Some(l) = &m.load_average_end {
            prov.insert("load_average_at_end".into(), json!(l));
        }
    }
    prov.insert("work".into(), json!(lab.work));
    prov.insert("passes".into(), json!(lab.calibration.passes));
    prov.insert("passes_pinned".into(), json!(lab.calibration.pinned));
    prov.insert(
        "predicted_work".into(),
        json!(lab.calibration.estimate.to_string()),
    );
    let analysis = super::executor::analyze(lab);
    if !analysis.cautions.is_empty() {
        prov.insert("caution".into(), json!(analysis.cautions));
        prov.insert(
            "caution_advice".into(),
            json!(caution_advice(lab.calibration.passes)),
        );
    }
    prov.insert("reference_digest".into(), json!(lab.reference.to_string()));
    prov.insert("os".into(), json!(std::env::consts::OS));
    prov.insert("arch".into(), json!(std::env::consts::ARCH));
    prov
}

/// One run (a job): its result event, its phase, its program and its two questions.
fn add_run(case: &mut RawCase, r: &RunRecord) {
    let clock = || CLOCK_ID.to_owned();
    let n = &r.label;
    let s = &r.stamps;
    let label = match (r.phase, r.status) {
        (Phase::Warmup, RunStatus::Ok) => format!("warm-up {n}"),
        (Phase::Measured, RunStatus::Ok) => format!("run {n}"),
        (Phase::Warmup, status) => format!("warm-up {n} (FAILED: {})", status.code()),
        (Phase::Measured, status) => format!("run {n} (FAILED: {})", status.code()),
    };
    case.events.push(RawEvent {
        id: format!("done-{n}"),
        stream: POOL_STREAM.into(),
        timing: false,
        state: RawEventState::Completed,
        at: None,
    });
    case.phases.push(RawPhase {
        id: format!("job-{n}").into(),
        label: Some(label.into()),
        stream: Some(POOL_STREAM.into()),
        clock: None,
        start: t(s.work_start),
        end: t(s.work_end),
    });
    let start = |timer: &str, at: Nanos| RawOp::TimerStart {
        timer: format!("{timer}-{n}"),
        clock: clock(),
        at: t(at),
    };
    let stop = |timer: &str, at: Nanos| RawOp::TimerStop {
        timer: format!("{timer}-{n}"),
        clock: clock(),
        at: t(at),
    };
    case.program.extend([
        start("submit", s.submit_start),
        start("complete", s.submit_start),
        RawOp::Launch {
            phase: format!("job-{n}").into(),
        },
        RawOp::Record {
            event: format!("done-{n}"),
        },
        stop("submit", s.submit_return),
        start("wait", s.wait_start),
        RawOp::HostWait(Box::new(RawHostWait {
            id: format!("wait-for-{n}"),
            event: Some(format!("done-{n}")),
            stream: None,
            device: None,
            clock: Some(clock()),
            at: Some(t(s.result_ready)),
            implicit: None,
            copy: None,
        })),
        stop("wait", s.result_ready),
        stop("complete", s.result_ready),
    ]);
    case.questions.push(RawQuestion::Submission {
        id: format!("submission-{n}"),
        timer: format!("submit-{n}"),
        expect: Some(known(Measure::Submission.of(s))),
    });
    case.questions.push(RawQuestion::HostCompletion {
        id: format!("completion-{n}"),
        timer: format!("complete-{n}"),
        work: Some(vec![format!("job-{n}").into()]),
        expect: Some(known(Measure::Total.of(s))),
    });
}

/// The `jobs` question: the interval algebra of the jobs, as the lab computes it.
fn add_jobs_question(case: &mut RawCase, lab: &LabRun) {
    // The interval algebra of the jobs, as the lab computes it.
    let jobs: Vec<Interval> = lab
        .runs
        .iter()
        .filter_map(|r| Interval::new(r.stamps.work_start, r.stamps.work_end).ok())
        .collect();
    let a = analyze_intervals(&jobs);
    let wide = |v: i128| t(Nanos::new(i64::try_from(v).unwrap_or(i64::MAX)));
    case.questions.push(RawQuestion::Intervals {
        id: "jobs".into(),
        phases: None,
        expect: Some(RawExpectIntervals {
            verdict: None,
            reason: None,
            count: Some(a.count as u64),
            sum: Some(wide(a.sum_ns)),
            union: Some(wide(a.union_ns)),
            span: a.span_ns().map(|s| RawSpanExpect::Value(wide(s))),
            gaps: None,
            overlap: Some(wide(a.overlap_ns())),
            overlap_regions: None,
            max_depth: Some(a.max_depth),
        }),
    });
}

/// The total, submission and wait series of the runs, each with its steady-state question.
fn add_series(case: &mut RawCase, lab: &LabRun) {
    for (measure, label) in [
        (
            Measure::Total,
            "caller total (submit start → result ready) per run",
        ),
        (
            Measure::Submission,
            "submission (submit start → submit return) per run",
        ),
        (
            Measure::Wait,
            "wait for result (wait start → result ready) per run",
        ),
    ] {
        let id = measure.id();
        let pick = |keep: &dyn Fn(&RunRecord) -> bool| -> Vec<RawTime> {
            lab.runs
                .iter()
                .filter(|r| keep(r))
                .map(|r| t(measure.of(&r.stamps).max(Nanos::ZERO)))
                .collect()
        };
        case.series.push(RawSeries {
            id: id.into(),
            label: Some(label.into()),
            warmup: pick(&|r| r.phase == Phase::Warmup && !r.failed()),
            measured: pick(&|r| r.phase == Phase::Measured && !r.failed()),
            failed: pick(&|r| r.failed()),
        });
        case.questions.push(RawQuestion::SteadyState {
            id: format!("steady-{id}"),
            series: id.into(),
            min_warmup: None,
            tolerance_percent: None,
            expect: Some(expect_of(&steady_of(lab, measure))),
        });
    }
}

/// The lab's own steady-state verdict for `measure`, by the default policy (2 warm-ups, 5 %).
fn steady_of(lab: &LabRun, measure: Measure) -> Verdict {
    let mut set = SampleSet::new();
    for r in &lab.runs {
        let outcome = if r.failed() {
            crate::stats::Outcome::Failed
        } else {
            crate::stats::Outcome::Completed
        };
        set.record(measure.of(&r.stamps).max(Nanos::ZERO), r.phase, outcome)
            .expect("non-negative");
    }
    steady_state(&set, &SteadyStatePolicy::default())
}

fn verdict_line(v: &Verdict) -> String {
    match v {
        Verdict::Known { value, notes } if notes.is_empty() => format!("known {value}"),
        Verdict::Known { value, notes } => format!("known {value} ({})", notes.join("; ")),
        Verdict::Bounded { notes, .. } if notes.is_empty() => v.to_string(),
        Verdict::Bounded { notes, .. } => format!("{v} ({})", notes.join("; ")),
        Verdict::Unknown { reason, detail } => format!("unknown ({reason}): {detail}"),
    }
}

fn share_line(a: &Analysis) -> String {
    match a.share_median {
        Some(share) => format!(
            "median {share} of a job's work ran after its submission returned \
             (rounded to 0.1 %; exact {}/{} ns; nearest-rank median over {} runs)",
            share.after_ns, share.work_ns, a.share_runs
        ),
        None => "no measured run with work to compare".to_owned(),
    }
}

/// The statistics table, with aligned numbers.
fn stats_table(a: &Analysis) -> Table {
    let mut table = Table::new();
    crate::table::fit(&mut table);
    table.load_preset(ASCII_MARKDOWN).set_header(vec![
        "interval",
        "from → to (one host clock)",
        "n",
        "median",
        "P90",
        "max",
        "MAD",
        "outliers",
    ]);
    for m in &a.measures {
        let name = if m.measure == Measure::DigestCheck {
            format!("{} (not in total)", m.measure.name())
        } else {
            m.measure.name().to_owned()
        };
        let row = match m.summary {
            Some(s) => vec![
                name,
                m.measure.boundaries().to_owned(),
                s.count().to_string(),
                s.median().to_string(),
                s.p90().to_string(),
                s.max().to_string(),
                s.mad().to_string(),
                m.outliers.to_string(),
            ],
            None => vec![
                name,
                m.measure.boundaries().to_owned(),
                "0".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ],
        };
        table.add_row(row);
    }
    for col in 2..8 {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// The report for people: what ran, on which clock, the statistics table and the verdicts.
pub fn table(lab: &LabRun, a: &Analysis) -> String {
    let mut out = String::new();
    let c = &lab.config;
    let cal = &lab.calibration;
    let _ = writeln!(
        out,
        "executor lab: {} measured run(s) + {} warm-up(s), one job at a time, on a pool of {} worker thread(s)",
        c.runs, c.warmup, c.threads
    );
    let res = lab
        .clock_info
        .resolution
        .map(|r| format!(", resolution {r}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "clock        {} ({}{res}); every reading below is on this one clock",
        lab.clock, lab.clock_info.source
    );
    for note in &lab.clock_info.notes {
        let _ = writeln!(out, "             note: {note}");
    }
    if let Some(m) = &lab.machine {
        let _ = writeln!(
            out,
            "machine      {} CPU(s){}",
            m.cpus,
            m.load_average
                .as_ref()
                .map(|l| format!(", load average {l} (1, 5, 15 min) at the start"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "work         {}, {} pass(es) per job",
        lab.work, cal.passes
    );
    let _ = writeln!(out, "calibration  {}", calibration_line(lab));
    let _ = writeln!(
        out,
        "reference    digest {}, computed once on the caller thread in {}",
        lab.reference, lab.reference_time
    );
    let failed: Vec<&RunRecord> = a.failed.iter().map(|&i| &lab.runs[i]).collect();
    let _ = writeln!(
        out,
        "digests      {} of {} run(s) match the reference; {} failed run(s), kept in the raw log",
        a.digests_ok,
        lab.runs.len(),
        failed.len()
    );
    for r in &failed {
        let _ = writeln!(
            out,
            "             FAILED run {} ({}): digest {}{}",
            r.label,
            r.status.code(),
            r.digest,
            match r.stamps.order_violations().as_slice() {
                [] => String::new(),
                v => format!("; readings out of order: {}", v.join(", ")),
            }
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", stats_table(a));
    let _ = writeln!(
        out,
        "n counts measured runs whose digest matched; warm-ups and failed runs stay in the raw log,\n\
         outside the statistics. Median and P90 are nearest-rank (observed values); MAD is unscaled;\n\
         outliers lie outside Tukey's inner fences and are kept."
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "after return {}", share_line(a));
    let _ = writeln!(
        out,
        "steady state caller total: {}",
        verdict_line(&a.steady_total)
    );
    let _ = writeln!(
        out,
        "verdicts     submission: known, makes no completion claim (the job was only queued);\n\
         \x20            completion: known, the caller blocked on this job's own result before the stop"
    );
    for c in &a.cautions {
        let _ = writeln!(out, "caution      [{}] {}", c.code, c.message);
    }
    if !a.cautions.is_empty() {
        let _ = writeln!(
            out,
            "             these durations may not be the work asked for: {}",
            caution_advice(cal.passes)
        );
    }
    out
}

/// The calibration in one line: what the prediction rests on, the passes and the predicted
/// work per job, and how to pin that work.
pub fn calibration_line(lab: &LabRun) -> String {
    let cal = &lab.calibration;
    if cal.pinned {
        format!(
            "{} passes pinned by --passes; median of {} trial(s) of them {} → predicted {} per job",
            cal.passes, cal.median_of, cal.basis_median, cal.estimate
        )
    } else {
        format!(
            "{} pass(es): median of {} trials {} ({} trials in all) → {} passes, predicted {} per job \
             for the {} target (pin this work with --passes {})",
            cal.basis_passes,
            cal.median_of,
            cal.basis_median,
            cal.trials.len(),
            cal.passes,
            cal.estimate,
            cal.target,
            cal.passes
        )
    }
}

/// The same report as Markdown.
pub fn markdown(lab: &LabRun, a: &Analysis, command: &str) -> String {
    let mut out = String::new();
    let c = &lab.config;
    let _ = writeln!(out, "# Executor lab\n");
    let _ = writeln!(out, "```text\n{command}\n```\n");
    let _ = writeln!(
        out,
        "{} measured run(s) + {} warm-up(s), one job at a time, on a pool of {} worker thread(s). \
         Every reading is on host clock `{}` ({}).\n",
        c.runs, c.warmup, c.threads, lab.clock, lab.clock_info.source
    );
    if let Some(m) = &lab.machine {
        let _ = writeln!(
            out,
            "- machine: {} CPU(s){}",
            m.cpus,
            m.load_average
                .as_ref()
                .map(|l| format!(", load average {l} (1, 5, 15 min) at the start"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "- work: {}, {} passes per job",
        lab.work, lab.calibration.passes
    );
    let _ = writeln!(out, "- calibration: {}", calibration_line(lab));
    for c in &a.cautions {
        let _ = writeln!(out, "- **caution** `{}`: {}", c.code, c.message);
    }
    if !a.cautions.is_empty() {
        let _ = writeln!(
            out,
            "- these durations may not be the work asked for: {}",
            caution_advice(lab.calibration.passes)
        );
    }
    let _ = writeln!(
        out,
        "- reference digest `{}`; {} of {} runs match; {} failed (kept)",
        lab.reference,
        a.digests_ok,
        lab.runs.len(),
        a.failed.len()
    );
    let _ = writeln!(out, "- after submission returned: {}", share_line(a));
    let _ = writeln!(
        out,
        "- steady state of the caller total: {}\n",
        verdict_line(&a.steady_total)
    );
    let _ = writeln!(out, "{}\n", stats_table(a));
    let _ = writeln!(
        out,
        "Nearest-rank median and P90 over measured runs with a matching digest; \
         warm-ups and failed runs are kept in the raw log and left out."
    );
    out
}

/// The CSV header of the raw log.
pub const CSV_HEADER: [&str; 22] = [
    "run",
    "phase",
    "status",
    "worker",
    "clock",
    "submit_start_ns",
    "submit_return_ns",
    "wait_start_ns",
    "result_ready_ns",
    "digest_checked_ns",
    "work_start_ns",
    "work_end_ns",
    "submission_ns",
    "wait_ns",
    "total_ns",
    "work_ns",
    "pickup_ns",
    "handoff_ns",
    "digest_check_ns",
    "work_after_return_ns",
    "digest",
    "digest_ok",
];

/// The raw log: one row per run (warm-ups marked), every reading in integer nanoseconds on
/// the lab's clock, and the intervals derived from them.
pub fn csv(lab: &LabRun) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_HEADER).expect("in-memory write");
    for r in &lab.runs {
        let s = &r.stamps;
        let ns = |v: Nanos| v.as_i64().to_string();
        let mut row = vec![
            r.label.clone(),
            match r.phase {
                Phase::Warmup => "warmup".into(),
                Phase::Measured => "measured".into(),
            },
            r.status.code().into(),
            r.worker.to_string(),
            lab.clock.to_string(),
            ns(s.submit_start),
            ns(s.submit_return),
            ns(s.wait_start),
            ns(s.result_ready),
            ns(s.digest_checked),
            ns(s.work_start),
            ns(s.work_end),
        ];
        for m in Measure::ALL {
            row.push(ns(m.of(s)));
        }
        row.push(
            Share::of(s)
                .map(|sh| sh.after_ns.to_string())
                .unwrap_or_default(),
        );
        row.push(r.digest.to_string());
        row.push((r.digest == lab.reference).to_string());
        w.write_record(&row).expect("in-memory write");
    }
    w.into_inner().expect("in-memory flush")
}

/// The full report as JSON: configuration, clock, calibration, every run and the statistics.
pub fn json(lab: &LabRun, a: &Analysis, command: &str) -> String {
    let intervals: Vec<_> = a
        .measures
        .iter()
        .map(|m| {
            json!({
                "id": m.measure.id(),
                "name": m.measure.name(),
                "boundaries": m.measure.boundaries(),
                "summary": m.summary,
                "outliers": m.outliers,
            })
        })
        .collect();
    let runs: Vec<_> = lab
        .runs
        .iter()
        .map(|r| {
            let mut v = json!({
                "run": r.label,
                "phase": r.phase,
                "status": r.status,
                "worker": r.worker,
                "digest": r.digest,
                "digest_ok": r.digest == lab.reference,
            });
            let s = &r.stamps;
            for (k, val) in [
                ("submit_start_ns", s.submit_start),
                ("submit_return_ns", s.submit_return),
                ("wait_start_ns", s.wait_start),
                ("result_ready_ns", s.result_ready),
                ("digest_checked_ns", s.digest_checked),
                ("work_start_ns", s.work_start),
                ("work_end_ns", s.work_end),
            ] {
                v[k] = val.as_i64().into();
            }
            v
        })
        .collect();
    let share = a.share_median.map(|s| {
        json!({
            "display": s.to_string(),
            "rounding": "half up to 0.1 %",
            "after_ns": s.after_ns,
            "work_ns": s.work_ns,
            "runs": a.share_runs,
        })
    });
    let value = json!({
        "format": "worksheet-lab-executor",
        "version": 1,
        "lab": "executor",
        "command": command,
        "config": {
            "runs": lab.config.runs,
            "warmup": lab.config.warmup,
            "threads": lab.config.threads,
            "target": lab.config.target,
            "passes": lab.config.passes,
        },
        "clock": {
            "domain": lab.clock.domain,
            "instance": lab.clock.instance,
            "source": lab.clock_info.source,
            "resolution": lab.clock_info.resolution,
            "notes": lab.clock_info.notes,
        },
        "machine": lab.machine,
        "work": lab.work,
        "calibration": lab.calibration,
        "reference": {"digest": lab.reference, "time": lab.reference_time},
        "digests": {"ok": a.digests_ok, "runs": lab.runs.len()},
        "failed_runs": a.failed.iter().map(|&i| &lab.runs[i].label).collect::<Vec<_>>(),
        "statistics": {
            "method": "nearest-rank quantiles over measured runs with a matching digest; MAD unscaled; outliers by Tukey's inner fences, kept",
            "intervals": intervals,
        },
        "caution": a.cautions,
        "caution_advice": (!a.cautions.is_empty()).then(|| caution_advice(lab.calibration.passes)),
        "share_after_submission_return": share,
        "steady_state_total": a.steady_total,
        "runs": runs,
    });
    let mut text = serde_json::to_string_pretty(&value).expect("JSON values serialize");
    text.push('\n');
    text
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::lab::clock::{FakeClock, RunScript};
    use crate::lab::executor::{analyze, calibrate_for, run_lab, LabConfig};
    use crate::lab::work::{Digest, ScriptedWork};

    /// 4 measured runs + 2 warm-ups, scripted: the first warm-up is slow, measured run 3
    /// returns a wrong digest, run 4's worker picks the job up late.
    pub(crate) fn fake_lab() -> LabRun {
        let clock = FakeClock::new(
            Nanos::new(7_000_000_000),
            Nanos::new(60_000_000),
            RunScript::micros([18, 19, 30, 50_030, 50_052, 50_053]),
        )
        .with_run(0, RunScript::micros([95, 96, 400, 52_400, 52_470, 52_472]))
        .with_run(5, RunScript::micros([21, 22, 180, 50_180, 50_201, 50_202]))
        .with_calibration(
            [2, 4, 8, 16]
                .iter()
                .map(|&ms| Nanos::new(ms * 1_000_000))
                .collect(),
        )
        .with_reference(Nanos::new(50_011_000));
        let work = ScriptedWork {
            digest: Digest(0x5eed_cafe_f00d_0001),
            wrong: vec![4],
        };
        let config = LabConfig {
            runs: 4,
            warmup: 2,
            target: Nanos::new(50_000_000),
            threads: 1,
            passes: None,
        };
        let cal = calibrate_for(&clock, &work, &config);
        run_lab(Arc::new(clock), Arc::new(work), &config, cal, &mut |_| {}).unwrap()
    }

    #[test]
    fn table_snapshot() {
        let lab = fake_lab();
        insta::assert_snapshot!(table(&lab, &analyze(&lab)));
    }

    #[test]
    fn csv_snapshot() {
        let lab = fake_lab();
        insta::assert_snapshot!(String::from_utf8(csv(&lab)).unwrap());
    }

    #[test]
    fn json_snapshot() {
        let lab = fake_lab();
        insta::assert_snapshot!(json(&lab, &analyze(&lab), "worksheet lab executor (fake)"));
    }

    #[test]
    fn markdown_snapshot() {
        let lab = fake_lab();
        insta::assert_snapshot!(markdown(
            &lab,
            &analyze(&lab),
            "worksheet lab executor (fake)"
        ));
    }

    #[test]
    fn case_file_replays_with_every_expectation_met() {
        let lab = fake_lab();
        let raw = case_file(&lab, "executor-fake", "worksheet lab executor (fake)");
        let text = raw.to_json_pretty();
        let case = crate::case::load_case_str(&text, "executor-fake.json").unwrap();
        let report = crate::engine::evaluate(&case);
        assert_eq!(
            report.answer("submission-1").unwrap().headline(),
            "known 18 us"
        );
        assert_eq!(
            report.answer("completion-1").unwrap().headline(),
            "known 50.052 ms"
        );
        // Too few measured runs (3 good ones) to compare thirds: no steady-state claim.
        assert_eq!(
            report.answer("steady-total").unwrap().headline(),
            "unknown (single-warmup)"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("executor-fake.json");
        std::fs::write(&path, &text).unwrap();
        let check = crate::check::check_file(&path).unwrap();
        assert!(check.passed(), "{:#?}", check.checks);
        // 6 runs × (submission, completion) + 6 interval fields + 3 steady-state claims
        assert_eq!(check.checks.len(), 12 + 6 + 3);
    }

    #[test]
    fn case_file_snapshot() {
        let lab = fake_lab();
        insta::assert_snapshot!(
            case_file(&lab, "executor-fake", "worksheet lab executor (fake)").to_json_pretty()
        );
    }

    /// A pinned lab of 8 measured runs whose work lasts `work_us` (the fake clock).
    fn pinned_lab(passes: u64, work_us: i64, origin_s: i64) -> LabRun {
        let clock = FakeClock::new(
            Nanos::new(origin_s * 1_000_000_000),
            Nanos::new(60_000_000),
            RunScript::micros([18, 19, 30, 30 + work_us, 52 + work_us, 53 + work_us]),
        )
        .with_calibration(vec![Nanos::new(work_us * 1_000)]);
        let config = LabConfig {
            runs: 8,
            warmup: 2,
            target: Nanos::new(50_000_000),
            threads: 1,
            passes: Some(passes),
        };
        let work = ScriptedWork {
            digest: Digest(0x5eed_cafe_f00d_0001),
            wrong: vec![],
        };
        let cal = calibrate_for(&clock, &work, &config);
        run_lab(Arc::new(clock), Arc::new(work), &config, cal, &mut |_| {}).unwrap()
    }

    fn write_json(dir: &std::path::Path, name: &str, lab: &LabRun) -> std::path::PathBuf {
        let path = dir.join(name);
        let command = format!("worksheet lab executor --passes {}", lab.calibration.passes);
        std::fs::write(&path, json(lab, &analyze(lab), &command)).unwrap();
        path
    }

    #[test]
    fn two_pinned_runs_compare_and_different_passes_do_not() {
        use crate::compare::{compare_files, Options, RowVerdict};
        let dir = tempfile::tempdir().unwrap();
        // Same passes, two "days" (origins), the second machine 20 % faster at the work.
        let a = write_json(dir.path(), "a.json", &pinned_lab(24, 50_000, 7));
        let b = write_json(dir.path(), "b.json", &pinned_lab(24, 40_000, 9));
        let c = compare_files(&a, &b, Options::default()).unwrap();
        let work = c.rows.iter().find(|r| r.name == "work").unwrap();
        assert_eq!(work.verdict, RowVerdict::Faster, "{:#?}", c.rows);
        assert_eq!(work.change_ppm, Some(-200_000));
        assert!(c.rows.iter().all(|r| r.verdict != RowVerdict::Unknown));

        // Different passes: one row, incomparable, with the reason and the flag to use.
        let d = write_json(dir.path(), "d.json", &pinned_lab(30, 50_000, 7));
        let c = compare_files(&a, &d, Options::default()).unwrap();
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.rows[0].verdict, RowVerdict::Unknown);
        assert!(
            c.rows[0].why.starts_with("passes: `24` vs `30`"),
            "{}",
            c.rows[0].why
        );
        assert!(c.rows[0]
            .why
            .contains("run both with the same `--passes N`"));
    }

    #[test]
    fn a_pinned_run_says_so_and_its_caution_reaches_table_json_and_case() {
        // Pinned at 24 passes, predicted 50 ms by its trials, but the jobs took 20 ms.
        let mut lab = pinned_lab(24, 50_000, 7);
        for r in &mut lab.runs {
            r.stamps.work_end = Nanos::new(r.stamps.work_start.as_i64() + 20_000_000);
        }
        let a = analyze(&lab);
        let text = table(&lab, &a);
        assert!(text.contains(
            "calibration  24 passes pinned by --passes; median of 3 trial(s) of them 50 ms → predicted 50 ms per job"
        ), "{text}");
        assert!(text.contains(
            "caution      [work-off-prediction] the median work per job was 20 ms, calibration predicted 50 ms for 24 passes (0.40× the prediction)"
        ), "{text}");
        assert!(text.contains("pin the work with `--passes 24`"));
        let v: serde_json::Value = serde_json::from_str(&json(&lab, &a, "x")).unwrap();
        assert_eq!(v["caution"][0]["code"], "work-off-prediction");
        assert_eq!(v["calibration"]["pinned"], true);
        let case = case_file(&lab, "x", "x");
        let prov = case.provenance.unwrap();
        assert_eq!(prov["caution"][0]["code"], "work-off-prediction");
        assert_eq!(prov["passes_pinned"], true);
    }
}
