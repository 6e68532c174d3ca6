//! The audit's findings on the Perfetto file, at their exact times: a `findings` thread in
//! the process of the clock a finding is about, holding
//!
//! - for each figure a finding states (`sync-in-loop`'s `idle_ns`, …), the pieces of the set
//!   whose measure the figure is, as slices named `code: figure value`: their lengths add up
//!   to the figure exactly;
//! - for each evidence item that names a time (`cudaEventSynchronize at t+29.601167 ms, …`),
//!   an instant event named by the finding's code at the item's first time, with the
//!   message and the item in `args`.
//!
//! Every finding, placed or not (one that states counts only, such as `no-steps`, has no
//! time), is listed whole in the file's `otherData.findings`. A finding is placed on the
//! rank's clock (several ranks), on the case's only clock, or on the clock of the device a
//! figure names; a single case with several clocks and no device to go by leaves it unplaced.

use serde_json::{json, Value};

use crate::audit::{Audit, Finding};
use crate::case::Case;
use crate::export::tables::Input;
use crate::units::parse_value;

/// What a finding puts on its clock's `findings` thread.
pub(super) enum Mark {
    /// A piece `[start, end)` of a figure's set (trace ns).
    Piece {
        /// The slice's name.
        name: String,
        /// Start and end, in the trace's ns.
        span: (i64, i64),
        /// The slice's `args`.
        args: Value,
    },
    /// An evidence item's time (trace ns).
    Instant {
        /// The event's name (the finding's code).
        name: String,
        /// When, in the trace's ns.
        at: i64,
        /// The event's `args`.
        args: Value,
    },
}

impl Mark {
    /// The earliest time the mark shows (for the process's origin).
    pub(super) fn earliest(&self) -> i64 {
        match self {
            Mark::Piece { span, .. } => span.0,
            Mark::Instant { at, .. } => *at,
        }
    }
}

/// The first `t+<value> <unit>` of an evidence item, in ns since the audit's origin.
fn first_time(item: &str) -> Option<i64> {
    let (_, rest) = item.split_once("t+")?;
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let unit: String = rest[number.len()..]
        .strip_prefix(' ')?
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect();
    parse_value(&format!("{number} {unit}"))
        .ok()
        .map(|n| n.as_i64())
}

/// The clock of the audit of `rank` (several ranks), else the case's only clock, else the
/// clock of `device`'s streams.
fn clock_of(case: &Case, input: &Input, rank: Option<i64>, device: Option<&str>) -> Option<String> {
    if let (Some(multi), Some(r)) = (&input.multi, rank) {
        return multi
            .ranks
            .iter()
            .find(|x| i64::from(x.rank) == r)
            .map(|x| x.clock.clone());
    }
    if case.clocks.len() == 1 {
        return Some(case.clocks[0].id.clone());
    }
    let device = device?;
    case.streams
        .iter()
        .find(|s| s.device == device)
        .map(|s| case.clocks[s.clock].id.clone())
}

/// The marks of one finding, each with its clock.
fn finding_marks(
    case: &Case,
    input: &Input,
    rank: Option<i64>,
    audit: &Audit,
    f: &Finding,
    marks: &mut Vec<(String, Mark)>,
) {
    for fig in &f.figures {
        let Some((_, set)) = fig.sets.last() else {
            continue;
        };
        let Some(clock) = clock_of(case, input, rank, Some(&fig.clock)) else {
            continue;
        };
        let name = format!("{}: {} {}", f.code, fig.name, fig.display);
        for piece in set.pieces() {
            let span = (piece.start().as_i64(), piece.end().as_i64());
            let args = json!({"code": f.code, "severity": f.severity.word(), "figure": fig.name,
                              "value_ns": fig.value_ns, "on": fig.clock, "definition": fig.definition,
                              "start_ns": span.0, "end_ns": span.1});
            marks.push((
                clock.clone(),
                Mark::Piece {
                    name: name.clone(),
                    span,
                    args,
                },
            ));
        }
    }
    let Some(clock) = clock_of(case, input, rank, None) else {
        return;
    };
    for item in &f.evidence.items {
        let Some(at) = first_time(item).and_then(|t| audit.origin_ns.checked_add(t)) else {
            continue;
        };
        let args = json!({"code": f.code, "severity": f.severity.word(), "message": f.message,
                          "evidence": item, "at_ns": at});
        marks.push((
            clock.clone(),
            Mark::Instant {
                name: f.code.to_owned(),
                at,
                args,
            },
        ));
    }
}

/// The marks of every finding of `input`'s audits, each with its clock, and the findings
/// whole for `otherData.findings`.
pub(super) fn marks(case: &Case, input: &Input) -> (Vec<(String, Mark)>, Vec<Value>) {
    let mut marks = Vec::new();
    let mut listed = Vec::new();
    for (rank, audit) in &input.audits {
        for f in &audit.findings {
            let before = marks.len();
            finding_marks(case, input, *rank, audit, f, &mut marks);
            listed.push(json!({
                "rank": rank, "code": f.code, "severity": f.severity.word(), "count": f.count,
                "message": f.message, "evidence": f.evidence.items,
                "evidence_more": f.evidence.more, "fix": f.fix,
                "marks": marks.len() - before,
            }));
        }
    }
    (marks, listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_time_of_an_evidence_item_is_exact() {
        assert_eq!(
            first_time("ProfilerStep#4: cudaEventSynchronize at t+29.601167 ms, returned t+1 s"),
            Some(29_601_167)
        );
        assert_eq!(
            first_time("cudaEventQuery [t+713.056027 ms, t+713.065747 ms)"),
            Some(713_056_027)
        );
        assert_eq!(first_time("at t+0 ns"), Some(0));
        assert_eq!(
            first_time("order unknown between: gpu0-s7 ↔ gpu0-s40"),
            None
        );
        assert_eq!(first_time("t+fast"), None);
    }
}
