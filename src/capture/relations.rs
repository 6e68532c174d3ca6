//! Relations a real capture must satisfy on any GPU, stated without exact times.
//!
//! A committed capture's expectations fix its own values; these relations say what must be
//! *true of* those values for the capture to be a sound measurement of the three boundaries
//! — and they are what CI replays (`tests/captures.rs`) and what `worksheet capture` prints.
//! They read a loaded [`Case`] and its engine [`Report`], relying only on the ids that
//! [`super::build`] writes.
//!
//! | relation | what must hold |
//! |---|---|
//! | `submission-no-completion-claim` | every detailed run's submission is known, says it makes no completion claim, and is shorter than its host completion |
//! | `device-within-completion` | every detailed run: device interval ≤ host completion |
//! | `completion-covers-device` | every group: median host completion ≥ median device interval |
//! | `body-covers-spin` | every group: median kernel body ≥ the asked spin length |
//! | `device-covers-body` | every group: median device interval ≥ median body − 1 µs (two clocks) |
//! | `unknowns-stay-unknown` | the demonstrations keep their verdicts and reasons |
//! | `readings-on-quantum` | every device interval is a multiple of the event step the capture states (only when it states one) |
//!
//! Those are **laws**: a sound capture satisfies them, and `worksheet capture` exits 1 when one
//! fails. Two more rows are **observations** about the host and the driver, printed but never
//! the exit code, because a sound capture can contradict them:
//!
//! | observation | what usually holds |
//! |---|---|
//! | `submission-independent-of-spin` | per mode: the submission medians across spin lengths stay within a factor of 2 and under the shortest spin (fails whenever a spin is shorter than the submission) |
//! | `held-keeps-launch-out` | per spin: held median device interval ≤ idle median device interval |

use serde::Serialize;

use crate::case::Case;
use crate::engine::Report;
use crate::stats::{SampleSet, Summary};
use crate::units::{parse_value, Nanos};
use crate::verdict::{Reason, Verdict};

/// One relation and whether it holds.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Relation {
    /// Relation id (see the module table).
    pub id: &'static str,
    /// A law (a failure is a failed capture) or an observation (printed, never the exit code).
    pub law: bool,
    /// Whether it holds.
    pub holds: bool,
    /// What was compared.
    pub detail: String,
}

fn median_of(case: &Case, id: &str) -> Option<Nanos> {
    let s = case.series.iter().find(|s| s.id == id)?;
    let set = SampleSet::from_runs(&[], &s.measured).ok()?;
    Summary::of(&set).ok().map(|s| s.median())
}

fn value(report: &Report, id: &str) -> Option<Nanos> {
    report.answer(id)?.outcome.verdict()?.value()
}

/// The groups of a capture: `(prefix, spin, mode)`, from its series ids.
fn groups(case: &Case) -> Vec<(String, Nanos, String)> {
    let mut out: Vec<(String, Nanos, String)> = Vec::new();
    for s in &case.series {
        let Some(prefix) = s.id.strip_suffix("-device-interval") else {
            continue;
        };
        let Some(rest) = prefix.strip_prefix("spin-") else {
            continue;
        };
        let Some((spin, mode)) = rest.rsplit_once('-') else {
            continue;
        };
        if let Ok(spin) = parse_value(spin) {
            out.push((prefix.to_owned(), spin, mode.to_owned()));
        }
    }
    out
}

/// Detailed runs: question-id prefixes that have all three boundaries.
fn detailed_runs(report: &Report) -> Vec<String> {
    report
        .answers
        .iter()
        .filter_map(|a| a.id.strip_suffix("-device-interval"))
        .filter(|p| p.starts_with("spin-"))
        .filter(|p| report.answer(&format!("{p}-submission")).is_some())
        .map(str::to_owned)
        .collect()
}

fn relation(id: &'static str, failures: Vec<String>, checked: usize, what: &str) -> Relation {
    Relation {
        id,
        law: !matches!(
            id,
            "submission-independent-of-spin" | "held-keeps-launch-out"
        ),
        holds: failures.is_empty() && checked > 0,
        detail: if checked == 0 {
            format!("nothing to check: {what}")
        } else if failures.is_empty() {
            format!("{checked} checked: {what}")
        } else {
            format!(
                "{} of {checked} fail: {}",
                failures.len(),
                failures.join("; ")
            )
        },
    }
}

/// Checks every relation of the module table on a capture's case and report.
pub fn check(case: &Case, report: &Report) -> Vec<Relation> {
    let runs = detailed_runs(report);
    let groups = groups(case);
    let mut out = vec![
        submission_no_completion_claim(report, &runs),
        device_within_completion(report, &runs),
        completion_covers_device(case, &groups),
        body_covers_spin(case, &groups),
        device_covers_body(case, &groups),
        submission_independent_of_spin(case, &groups),
        held_keeps_launch_out(case, &groups),
        unknowns_stay_unknown(report),
    ];
    if let Some(r) = quantum(case) {
        out.push(r);
    }
    out
}

/// Submission makes no completion claim, and is shorter than completion, run by run.
fn submission_no_completion_claim(report: &Report, runs: &[String]) -> Relation {
    let mut bad = Vec::new();
    for p in runs {
        let sub = report.answer(&format!("{p}-submission"));
        let claim_free = matches!(
            sub.and_then(|a| a.outcome.verdict()),
            Some(Verdict::Known { notes, .. }) if notes.iter().any(|n| n.contains("makes no completion claim"))
        );
        let (s, c) = (
            value(report, &format!("{p}-submission")),
            value(report, &format!("{p}-host-completion")),
        );
        match (claim_free, s, c) {
            (true, Some(s), Some(c)) if s < c => {}
            _ => bad.push(format!("{p}: submission {s:?}, completion {c:?}")),
        }
    }
    relation(
        "submission-no-completion-claim",
        bad,
        runs.len(),
        "submission known, no completion claim, shorter than host completion",
    )
}

/// The device interval is within host completion, run by run.
fn device_within_completion(report: &Report, runs: &[String]) -> Relation {
    let mut bad = Vec::new();
    for p in runs {
        let (d, c) = (
            value(report, &format!("{p}-device-interval")),
            value(report, &format!("{p}-host-completion")),
        );
        match (d, c) {
            (Some(d), Some(c)) if d <= c => {}
            _ => bad.push(format!("{p}: device {d:?} > completion {c:?}")),
        }
    }
    relation(
        "device-within-completion",
        bad,
        runs.len(),
        "device interval <= host completion, same run",
    )
}

/// Per group, median host completion covers the median device interval.
fn completion_covers_device(case: &Case, groups: &[(String, Nanos, String)]) -> Relation {
    let med = |g: &str, b: &str| median_of(case, &format!("{g}-{b}"));
    let mut bad = Vec::new();
    for (g, _, _) in groups {
        match (med(g, "host-completion"), med(g, "device-interval")) {
            (Some(c), Some(d)) if c >= d => {}
            (c, d) => bad.push(format!("{g}: completion {c:?}, device {d:?}")),
        }
    }
    relation(
        "completion-covers-device",
        bad,
        groups.len(),
        "median host completion >= median device interval",
    )
}

/// Per group, the median `%globaltimer` body covers the spin asked.
fn body_covers_spin(case: &Case, groups: &[(String, Nanos, String)]) -> Relation {
    let med = |g: &str, b: &str| median_of(case, &format!("{g}-{b}"));
    let mut bad = Vec::new();
    for (g, spin, _) in groups {
        match med(g, "body") {
            Some(b) if b >= *spin => {}
            b => bad.push(format!("{g}: body {b:?} < spin {spin}")),
        }
    }
    relation(
        "body-covers-spin",
        bad,
        groups.len(),
        "median %globaltimer body >= the spin asked",
    )
}

/// Per group, the median device interval covers the median body, less 1 us.
fn device_covers_body(case: &Case, groups: &[(String, Nanos, String)]) -> Relation {
    let med = |g: &str, b: &str| median_of(case, &format!("{g}-{b}"));
    let mut bad = Vec::new();
    for (g, _, _) in groups {
        match (med(g, "device-interval"), med(g, "body")) {
            (Some(d), Some(b)) if d.as_i64() >= b.as_i64() - 1_000 => {}
            (d, b) => bad.push(format!("{g}: device {d:?}, body {b:?}")),
        }
    }
    relation(
        "device-covers-body",
        bad,
        groups.len(),
        "median device interval >= median body - 1 us (event clock vs %globaltimer)",
    )
}

/// Per launch mode, submission medians within 2x of each other and under the shortest spin.
fn submission_independent_of_spin(case: &Case, groups: &[(String, Nanos, String)]) -> Relation {
    let med = |g: &str, b: &str| median_of(case, &format!("{g}-{b}"));
    let mut bad = Vec::new();
    let mut modes: Vec<&str> = groups.iter().map(|g| g.2.as_str()).collect();
    modes.sort_unstable();
    modes.dedup();
    let shortest = groups.iter().map(|g| g.1).min();
    for mode in &modes {
        let meds: Vec<Nanos> = groups
            .iter()
            .filter(|g| g.2 == *mode)
            .filter_map(|g| med(&g.0, "submission"))
            .collect();
        let (Some(lo), Some(hi), Some(shortest)) = (meds.iter().min(), meds.iter().max(), shortest)
        else {
            continue;
        };
        if hi.as_i64() > 2 * lo.as_i64() || *hi >= shortest {
            bad.push(format!(
                "{mode}: submission medians {} .. {} (shortest spin {shortest})",
                lo, hi
            ));
        }
    }
    relation(
        "submission-independent-of-spin",
        bad,
        modes.len(),
        "per mode, submission medians within 2x of each other and under the shortest spin",
    )
}

/// Per spin, the held group's median device interval is no longer than the idle one's.
fn held_keeps_launch_out(case: &Case, groups: &[(String, Nanos, String)]) -> Relation {
    let med = |g: &str, b: &str| median_of(case, &format!("{g}-{b}"));
    let mut bad = Vec::new();
    let mut checked = 0;
    for (g, spin, mode) in groups {
        if mode != "held" {
            continue;
        }
        let Some(idle) = groups
            .iter()
            .find(|o| o.1 == *spin && o.2 == "idle")
            .map(|o| o.0.clone())
        else {
            continue;
        };
        checked += 1;
        match (med(g, "device-interval"), med(&idle, "device-interval")) {
            (Some(h), Some(i)) if h <= i => {}
            (h, i) => bad.push(format!("spin {spin}: held {h:?} > idle {i:?}")),
        }
    }
    relation(
        "held-keeps-launch-out",
        bad,
        checked,
        "median device interval, held <= idle",
    )
}

/// The demo cases that must stay unknown do; their controls are known.
fn unknowns_stay_unknown(report: &Report) -> Relation {
    let expected: [(&str, Option<Reason>); 6] = [
        ("demo-timing-disabled", Some(Reason::TimingDisabled)),
        ("demo-event-incomplete", Some(Reason::EventIncomplete)),
        ("demo-cross-stream", Some(Reason::CrossStream)),
        ("demo-cross-stream-joined", None),
        ("demo-wait-event", Some(Reason::WaitMissesWork)),
        ("demo-wait-device", None),
    ];
    let mut bad = Vec::new();
    let mut checked = 0;
    for (id, reason) in expected {
        let Some(v) = report.answer(id).and_then(|a| a.outcome.verdict()) else {
            continue;
        };
        checked += 1;
        let ok = match reason {
            Some(r) => v.reason() == Some(r),
            None => v.value().is_some(),
        };
        if !ok {
            bad.push(format!("{id}: {v}"));
        }
    }
    relation(
        "unknowns-stay-unknown",
        bad,
        checked,
        "timing-disabled, event-incomplete, cross-stream, wait-misses-work stay unknown; their controls known",
    )
}

/// Every device interval of the series is a multiple of the stated event step; `None` when
/// the capture states none (too few distinct readings: nothing is claimed, nothing checked).
fn quantum(case: &Case) -> Option<Relation> {
    let step = case
        .provenance
        .as_ref()?
        .get("calibration")?
        .get("event_step_ns")?
        .as_i64()
        .filter(|s| *s > 0)?;
    let mut bad = Vec::new();
    let mut checked = 0;
    for s in case
        .series
        .iter()
        .filter(|s| s.id.ends_with("-device-interval") || s.id == "calibration-consecutive-events")
    {
        for v in s.measured.iter().chain(&s.warmup) {
            checked += 1;
            if v.as_i64() % step != 0 {
                bad.push(format!("{}: {v}", s.id));
            }
        }
    }
    bad.truncate(5);
    Some(relation(
        "readings-on-quantum",
        bad,
        checked,
        &format!("every device interval is a multiple of the stated event step {step} ns"),
    ))
}

/// Whether every law holds (observations do not count).
pub fn laws_hold(list: &[Relation]) -> bool {
    list.iter().filter(|r| r.law).all(|r| r.holds)
}
