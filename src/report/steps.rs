//! The steps the report's timeline draws as brackets, and where the audit's times lie on the
//! case's clocks.
//!
//! A step is a `ProfilerStep#N` (or any named step) over an exact time range on one clock:
//! first the case's marks `step:<name>:start` and `step:<name>:end` on one clock (a rank's
//! `r0.step:…` in a multi-rank case; what
//! `worksheet import` writes for each of the audit's steps, and what a case written by hand
//! may hold), then the audit's steps (`provenance.audit.steps`: `start_ns` after the audit's
//! origin, `host_ns` long) that the marks do not name, placed on the case's clock when it has
//! exactly one. The audit's times (its steps', its evidence's `t+…`) count from its
//! `origin_ns` on that clock; a case of several clocks leaves them unplaced, as
//! `export --perfetto` does.

use std::collections::BTreeMap;

use crate::case::Case;
use crate::clock::ClockId;

/// One step over `[start, end]` on clock `clock` (ns on that clock, exact).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Its name (`ProfilerStep#4`).
    pub name: String,
    /// Its clock (every clock id of one domain and instance is this clock).
    pub clock: ClockId,
    /// Start, ns on the clock.
    pub start: i64,
    /// End, ns on the clock.
    pub end: i64,
    /// Where it comes from: the marks' ids, or the audit.
    pub source: String,
}

/// The clock the audit's times are on and the audit's origin on it: the case's only clock
/// (several clock ids of one domain and instance, such as the processes of one Nsight
/// Systems session, are one clock), when the case carries an audit
/// (`provenance.audit.origin_ns`).
pub fn audit_origin(case: &Case) -> Option<(ClockId, i64)> {
    let origin = case.provenance.as_ref()?.get("audit")?["origin_ns"].as_i64()?;
    let clock = &case.clocks.first()?.clock;
    case.clocks
        .iter()
        .all(|c| &c.clock == clock)
        .then(|| (clock.clone(), origin))
}

/// The case's steps, in start order: from its marks, then the audit's steps they lack.
pub fn steps(case: &Case) -> Vec<Step> {
    // (name, clock, prefix) -> (start, end) of the marks `<prefix>step:<name>:start|end`.
    type Key = (String, ClockId, String);
    let mut ends: BTreeMap<Key, (Option<i64>, Option<i64>)> = BTreeMap::new();
    for m in &case.marks {
        // `step:<name>:start`, or a rank's `r0.step:<name>:start` in a multi-rank case.
        let Some(at) =
            m.id.find("step:")
                .filter(|&i| i == 0 || m.id[..i].ends_with('.') || m.id[..i].ends_with('/'))
        else {
            continue;
        };
        let rest = &m.id[at + "step:".len()..];
        let (name, start) = if let Some(n) = rest.strip_suffix(":start") {
            (n, true)
        } else if let Some(n) = rest.strip_suffix(":end") {
            (n, false)
        } else {
            continue;
        };
        let clock = case.clocks[m.clock].clock.clone();
        let key = (name.to_owned(), clock, m.id[..at].to_owned());
        let slot = ends.entry(key).or_default();
        if start {
            slot.0 = Some(m.at.as_i64());
        } else {
            slot.1 = Some(m.at.as_i64());
        }
    }
    let mut out: Vec<Step> = ends
        .into_iter()
        .filter_map(|((name, clock, prefix), se)| match se {
            (Some(start), Some(end)) if start <= end => Some(Step {
                source: format!("marks {prefix}step:{name}:start → {prefix}step:{name}:end"),
                name,
                clock,
                start,
                end,
            }),
            _ => None,
        })
        .collect();
    if let Some((clock, origin)) = audit_origin(case) {
        let audit = &case.provenance.as_ref().expect("audit_origin read it")["audit"];
        for s in audit["steps"].as_array().map_or(&[][..], Vec::as_slice) {
            let (Some(name), Some(start), Some(host)) = (
                s["step"].as_str(),
                s["start_ns"].as_i64(),
                s["host_ns"].as_i64(),
            ) else {
                continue;
            };
            let (Some(start), true) = (origin.checked_add(start), host >= 0) else {
                continue;
            };
            let Some(end) = start.checked_add(host) else {
                continue;
            };
            if out.iter().any(|o| o.name == name && o.clock == clock) {
                continue;
            }
            out.push(Step {
                name: name.to_owned(),
                clock: clock.clone(),
                start,
                end,
                source: "the audit's steps".to_owned(),
            });
        }
    }
    out.sort_by(|a, b| (&a.clock, a.start, a.end).cmp(&(&b.clock, b.start, b.end)));
    out
}

/// Rows for brackets `[start, end]` in start order, so that no two in one row overlap: each
/// takes the first row whose last bracket ended before it starts.
pub fn rows(spans: &[(i64, i64)]) -> Vec<usize> {
    let mut last_end: Vec<i64> = Vec::new();
    spans
        .iter()
        .map(|&(s, e)| {
            let row = last_end
                .iter()
                .position(|&end| end < s)
                .unwrap_or(last_end.len());
            if row == last_end.len() {
                last_end.push(e);
            } else {
                last_end[row] = e;
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_that_overlap_take_new_rows() {
        assert_eq!(rows(&[(0, 10), (11, 20), (15, 30), (21, 25)]), [0, 0, 1, 0]);
        // Touching brackets (one ends where the next starts) overlap at that instant.
        assert_eq!(rows(&[(0, 10), (10, 20)]), [0, 1]);
        assert!(rows(&[]).is_empty());
    }

    #[test]
    fn a_case_s_step_marks_and_the_audit_s_steps_are_steps() {
        let mut case = crate::case::load_case_str(
            r#"{"format": "worksheet-case", "version": 1, "name": "s",
                "clocks": [{"id": "host", "domain": "host", "instance": "h"}],
                "marks": [{"id": "step:A:start", "clock": "host", "at": "10 ns"},
                          {"id": "step:A:end", "clock": "host", "at": "25 ns"},
                          {"id": "step:B:start", "clock": "host", "at": "30 ns"},
                          {"id": "r1.step:D:start", "clock": "host", "at": "40 ns"},
                          {"id": "r1.step:D:end", "clock": "host", "at": "41 ns"},
                          {"id": "xstep:E:start", "clock": "host", "at": "40 ns"},
                          {"id": "xstep:E:end", "clock": "host", "at": "41 ns"}],
                "phases": [], "questions": []}"#,
            "s.json",
        )
        .unwrap();
        let found = steps(&case);
        let names: Vec<(&str, i64, i64)> = found
            .iter()
            .map(|s| (s.name.as_str(), s.start, s.end))
            .collect();
        // B has no end; `xstep:` is no step.
        assert_eq!(names, [("A", 10, 25), ("D", 40, 41)]);
        assert_eq!(found[1].source, "marks r1.step:D:start → r1.step:D:end");
        case.provenance = serde_json::json!({"audit": {"origin_ns": 1000, "steps": [
            {"step": "A", "start_ns": 0, "host_ns": 5},
            {"step": "C", "start_ns": 100, "host_ns": 7}]}})
        .as_object()
        .cloned();
        let found = steps(&case);
        let names: Vec<(&str, i64, i64)> = found
            .iter()
            .map(|s| (s.name.as_str(), s.start, s.end))
            .collect();
        // A comes from its marks (not the audit's), C from the audit: origin + start.
        assert_eq!(names, [("A", 10, 25), ("D", 40, 41), ("C", 1100, 1107)]);
        assert_eq!(found[2].source, "the audit's steps");
    }
}
