//! What an audit says: findings with stable codes, severities, numbers and evidence.
//!
//! A finding's `code` is public interface, like a reason code: added, never renamed. Its
//! `message` is one line with the numbers; its `evidence` lists the events involved (ids and
//! times), capped at [`EVIDENCE_CAP`] with a count of the rest; `fix` says how to fix the
//! profile or the program. `docs/findings.md` has a drawn timeline for each code.

use std::fmt;

use serde::Serialize;

use crate::interval_set::IntervalSet;
use crate::units::Nanos;

/// How many evidence items a finding lists before it counts the rest.
pub const EVIDENCE_CAP: usize = 5;

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Worth knowing; the numbers stand.
    Info,
    /// A claim read off this trace is likely to be wrong without care.
    Warning,
    /// The trace contradicts itself or is damaged: some numbers cannot be trusted.
    Error,
}

impl Severity {
    /// `info`, `warning`, `error`.
    pub const fn word(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// Every finding code, in the order of the catalogue (`docs/findings.md`).
pub const CODES: [&str; 15] = [
    "sync-in-loop",
    "cold-steps",
    "profiler-sync",
    "dependency-unrecorded",
    "host-range-measures-submission",
    "launch-queue-delay",
    "kernel-before-launch",
    "same-stream-overlap",
    "zero-timestamp",
    "negative-duration",
    "outside-window",
    "gpu-without-launch",
    "no-steps",
    "no-gpu-work",
    "straggler",
];

/// The evidence of a finding: the first items, and how many more there are.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// The first [`EVIDENCE_CAP`] items, one line each (ids and times).
    pub items: Vec<String>,
    /// How many items were left out.
    pub more: usize,
}

impl Evidence {
    /// Evidence from all items, keeping the first [`EVIDENCE_CAP`].
    pub fn capped(all: impl IntoIterator<Item = String>) -> Evidence {
        let mut items = Vec::new();
        let mut more = 0;
        for item in all {
            if items.len() < EVIDENCE_CAP {
                items.push(item);
            } else {
                more += 1;
            }
        }
        Evidence { items, more }
    }
}

/// A time a finding states, as the engine computed it: an exact integer beside its display
/// string, the clock it is on, and how it was computed. The sets behind it are kept for
/// `worksheet audit --explain CODE`, which prints them so a reader can check the figure by
/// hand.
///
/// Invariants: `value_ns` is the measure of `sets`' last entry (the result) when `sets` is
/// not empty; it never exceeds the span of `clock` in the trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Figure {
    /// What it is, as a JSON-style name: `idle_ns`, `excess_ns`, `median_host_ns`.
    pub name: &'static str,
    /// The clock (and device) it is measured on: `gpu0`, `host`.
    pub clock: String,
    /// The value, exact integer ns.
    pub value_ns: i64,
    /// The value as printed in the message (`2.030 ms`).
    pub display: String,
    /// How it was computed, in set notation (`|W ∩ (span(gpu0) − busy(gpu0))|`).
    pub definition: String,
    /// The named sets behind the figure, the result last (for `--explain`).
    #[serde(skip)]
    pub sets: Vec<(String, IntervalSet)>,
}

impl Figure {
    /// A figure whose value is the measure of the last of `sets`.
    pub fn of_sets(
        name: &'static str,
        clock: impl Into<String>,
        definition: impl Into<String>,
        sets: Vec<(String, IntervalSet)>,
    ) -> Figure {
        let value = sets.last().map_or(0, |(_, s)| s.measure_ns());
        let value_ns = i64::try_from(value).unwrap_or(i64::MAX);
        Figure {
            name,
            clock: clock.into(),
            value_ns,
            display: Nanos::new(value_ns).to_string(),
            definition: definition.into(),
            sets,
        }
    }

    /// A figure read directly off the trace (a step's duration, a median of durations).
    pub fn value(
        name: &'static str,
        clock: impl Into<String>,
        value_ns: i64,
        definition: impl Into<String>,
    ) -> Figure {
        Figure {
            name,
            clock: clock.into(),
            value_ns,
            display: Nanos::new(value_ns).to_string(),
            definition: definition.into(),
            sets: Vec::new(),
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable kebab-case code (one of [`CODES`]).
    pub code: &'static str,
    /// How serious.
    pub severity: Severity,
    /// One line, with the numbers.
    pub message: String,
    /// How many instances (syncs, ranges, activities, ...).
    pub count: u64,
    /// The events involved.
    pub evidence: Evidence,
    /// How to fix the profile or the program.
    pub fix: String,
    /// The times the message states, computed by the interval algebra (empty for findings
    /// that state counts only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
}
