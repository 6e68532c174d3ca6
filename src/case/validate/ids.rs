//! What every section of validation shares: the id tables ([`IdTable`], [`Declared`]) and
//! the exact values (a [`time`], an [`interval`]) with their located errors. A leaf: it
//! names no other section.

use std::collections::HashMap;

use crate::case::raw::RawTime;
use crate::case::{CaseError, ClockDef, EventDef, MarkDef, PhaseDef, StreamDef};
use crate::interval::Interval;
use crate::units::{parse_value, Nanos};

/// A validation result: the first [`CaseError`] found.
pub(super) type Result<T> = std::result::Result<T, CaseError>;

/// Ids of one kind, checked for emptiness and uniqueness as they are added.
pub(super) struct IdTable<'a> {
    kind: &'static str,
    list: &'static str,
    index: HashMap<&'a str, usize>,
}

impl<'a> IdTable<'a> {
    /// An empty table of ids of `kind` (as a message names one), declared in `list`.
    pub(super) fn new(kind: &'static str, list: &'static str) -> Self {
        IdTable {
            kind,
            list,
            index: HashMap::new(),
        }
    }

    /// Adds `id` at `position`; `path` names it in the error when it is empty or taken.
    pub(super) fn add(&mut self, id: &'a str, position: usize, path: String) -> Result<()> {
        if id.trim().is_empty() {
            return Err(CaseError::new(
                path,
                "empty-id",
                format!("a {} needs a non-empty id", self.kind),
            ));
        }
        if let Some(first) = self.index.insert(id, position) {
            return Err(CaseError::new(
                path,
                "duplicate-id",
                format!(
                    "{} id `{id}` is already used by {}[{first}]",
                    self.kind, self.list
                ),
            ));
        }
        Ok(())
    }

    /// The position of `id`; `path` (made only on failure: a case has many references)
    /// names the referring field in the error.
    pub(super) fn resolve(&self, id: &str, path: impl FnOnce() -> String) -> Result<usize> {
        self.index.get(id).copied().ok_or_else(|| {
            let path = path();
            let mut known: Vec<&&str> = self.index.keys().collect();
            known.sort();
            let known: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            CaseError::new(
                path,
                "unknown-reference",
                format!(
                    "no {} has id `{id}` (declared in `{}`: {})",
                    self.kind,
                    self.list,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            )
        })
    }
}

/// The declarations validated before the program: each id table with its definitions, in
/// the order the sections run (clocks, streams, events, phases, marks).
pub(super) struct Declared<'a> {
    /// Clock ids.
    pub clock_ids: IdTable<'a>,
    /// Validated clocks.
    pub clocks: Vec<ClockDef>,
    /// Stream ids.
    pub stream_ids: IdTable<'a>,
    /// Validated streams.
    pub streams: Vec<StreamDef>,
    /// Event ids.
    pub event_ids: IdTable<'a>,
    /// Validated events.
    pub events: Vec<EventDef>,
    /// Phase ids.
    pub phase_ids: IdTable<'a>,
    /// Validated phases.
    pub phases: Vec<PhaseDef>,
    /// Mark ids.
    pub mark_ids: IdTable<'a>,
    /// Validated marks.
    pub marks: Vec<MarkDef>,
}

/// Parses a raw time value; `path` (made only on failure) names it in the error.
pub(super) fn time(value: &RawTime, path: impl FnOnce() -> String) -> Result<Nanos> {
    match value {
        RawTime::Text(text) => {
            parse_value(text).map_err(|e| CaseError::new(path(), e.code(), e.to_string()))
        }
        RawTime::Exact(value) => Ok(*value),
        RawTime::Number(n) => {
            let n = number_text(n);
            Err(CaseError::new(
                path(),
                "missing-unit",
                format!(
                    "`{n}` has no unit: write it as a string with its unit, such as \"{n} us\""
                ),
            ))
        }
    }
}

/// A JSON number as the person wrote it, as near as serde_json keeps it: a whole number
/// past `u64` is held as a float, whose `Display` (`1.8446744073709552e19`) is not what was
/// written, so a whole float is written out in digits (`18446744073709551616`).
fn number_text(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() && f.is_finite() && f.fract() == 0.0 && f.abs() >= 1e15 => {
            format!("{f:.0}")
        }
        _ => n.to_string(),
    }
}

/// `[start, end)`, or `reversed-interval` at `end_path`.
pub(super) fn interval(start: Nanos, end: Nanos, end_path: &str) -> Result<Interval> {
    Interval::new(start, end).map_err(|e| {
        CaseError::new(
            end_path,
            "reversed-interval",
            format!("{e}; an interval is [start, end) with end ≥ start"),
        )
    })
}
