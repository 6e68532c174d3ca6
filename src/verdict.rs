//! Verdicts: every answer is **known** (an exact value with notes) or **unknown** with a
//! stable reason code.
//!
//! Reason codes are part of the public interface (SPEC §5): they are added, never renamed.
//! Malformed input is neither known nor unknown: it is an error (see [`crate::case::CaseError`]).

use std::fmt;

use serde::{Serialize, Serializer};

use crate::units::Nanos;

/// Why a claim cannot be supported by the evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Reason {
    /// A completion claim whose stop does not follow a wait.
    NoWait,
    /// The wait returns, but its coverage does not include all of the claimed work.
    WaitMissesWork,
    /// Two timestamps of different clock domains are subtracted or merged.
    CrossDomain,
    /// Same domain, different instance (two host boots, two contexts).
    CrossInstance,
    /// An event pair where either event was created without timing.
    TimingDisabled,
    /// The end (or start) event has not completed when read.
    EventIncomplete,
    /// An event pair in two streams with no declared dependency between them.
    CrossStream,
    /// The span of an empty set.
    EmptySet,
    /// The attribution of a difference of two durations.
    NotCausal,
    /// A steady-state claim backed by fewer than the declared minimum of warm-up runs, or by
    /// no stability evidence.
    SingleWarmup,
    /// A steady-state claim whose measured samples drift: the first and last parts disagree.
    Drift,
    /// The exact result does not fit in a signed 64-bit count of nanoseconds.
    Overflow,
    /// A trace shows that streams were joined (stream-wait or event-record calls) but not
    /// which streams or events: their order is unknown.
    DependencyUnrecorded,
    /// The evidence relating two clocks conflicts: the bounds on their offset intersect
    /// empty (SPEC §10).
    InconsistentRelation,
    /// A comparison of two runs whose devices, clocks, workloads or configurations differ
    /// (`worksheet compare`).
    Incomparable,
}

impl Reason {
    /// Every reason, in the order of SPEC §5 (then the added ones).
    pub const ALL: [Reason; 15] = [
        Reason::NoWait,
        Reason::WaitMissesWork,
        Reason::CrossDomain,
        Reason::CrossInstance,
        Reason::TimingDisabled,
        Reason::EventIncomplete,
        Reason::CrossStream,
        Reason::EmptySet,
        Reason::NotCausal,
        Reason::SingleWarmup,
        Reason::Drift,
        Reason::Overflow,
        Reason::DependencyUnrecorded,
        Reason::InconsistentRelation,
        Reason::Incomparable,
    ];

    /// The stable kebab-case code, for example `no-wait`.
    pub const fn code(self) -> &'static str {
        match self {
            Reason::NoWait => "no-wait",
            Reason::WaitMissesWork => "wait-misses-work",
            Reason::CrossDomain => "cross-domain",
            Reason::CrossInstance => "cross-instance",
            Reason::TimingDisabled => "timing-disabled",
            Reason::EventIncomplete => "event-incomplete",
            Reason::CrossStream => "cross-stream",
            Reason::EmptySet => "empty-set",
            Reason::NotCausal => "not-causal",
            Reason::SingleWarmup => "single-warmup",
            Reason::Drift => "drift",
            Reason::Overflow => "overflow",
            Reason::DependencyUnrecorded => "dependency-unrecorded",
            Reason::InconsistentRelation => "inconsistent-relation",
            Reason::Incomparable => "incomparable",
        }
    }

    /// A one-line explanation of the code, for people.
    pub const fn explanation(self) -> &'static str {
        match self {
            Reason::NoWait => "the stop does not follow a wait, so it proves nothing about completion",
            Reason::WaitMissesWork => "the wait returned, but its coverage does not include all of the claimed work",
            Reason::CrossDomain => "the timestamps come from different clock domains, which share no origin",
            Reason::CrossInstance => "the timestamps come from different instances of one clock domain (another boot, context or process)",
            Reason::TimingDisabled => "an event of the pair was created without timing",
            Reason::EventIncomplete => "an event of the pair had not completed when it was read",
            Reason::CrossStream => "the events are in two streams with no declared dependency between them",
            Reason::EmptySet => "an empty set has no span",
            Reason::NotCausal => "a difference of two durations does not name its cause",
            Reason::SingleWarmup => "a steady-state claim needs more warm-up runs than declared and a stability check",
            Reason::Drift => "the first and last parts of the measured samples disagree",
            Reason::Overflow => "the exact result does not fit in 64-bit nanoseconds",
            Reason::DependencyUnrecorded => "the trace shows the streams were joined but not which streams or events: their order is unknown",
            Reason::InconsistentRelation => "the evidence relating the two clocks conflicts: their offset bounds intersect empty",
            Reason::Incomparable => "the two runs differ in device, clock, workload or configuration, so no change between them is measured",
        }
    }

    /// The reason with this code, if any.
    pub fn from_code(code: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.code() == code)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

/// The answer to one question about a duration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Supported by the evidence: an exact value and notes on what it includes.
    Known {
        /// The exact duration.
        value: Nanos,
        /// What the value includes or does not claim ("makes no completion claim").
        notes: Vec<String>,
    },
    /// A quantity that mixes two clocks related by evidence (SPEC §10): the value is known
    /// to lie in the closed range `[lo, hi]`. `lo = hi` is an exact value.
    ///
    /// Invariants: `lo <= hi` (built by [`Verdict::bounded`]).
    Bounded {
        /// The smallest value the evidence allows (inclusive).
        lo: Nanos,
        /// The largest value the evidence allows (inclusive).
        hi: Nanos,
        /// Which relations the bound rests on, and what the value includes.
        notes: Vec<String>,
    },
    /// Not supported by the evidence.
    Unknown {
        /// Why, as a stable code.
        reason: Reason,
        /// A specific explanation (which event, which wait); may repeat the generic one.
        detail: String,
    },
}

impl Verdict {
    /// A known value without notes.
    pub fn known(value: Nanos) -> Self {
        Verdict::Known {
            value,
            notes: Vec::new(),
        }
    }

    /// An unknown with the reason's generic explanation.
    pub fn unknown(reason: Reason) -> Self {
        Verdict::Unknown {
            reason,
            detail: reason.explanation().to_owned(),
        }
    }

    /// An unknown with a specific explanation.
    pub fn unknown_because(reason: Reason, detail: impl Into<String>) -> Self {
        Verdict::Unknown {
            reason,
            detail: detail.into(),
        }
    }

    /// A bounded value in `[lo, hi]` without notes; the bounds are put in order, so a
    /// caller cannot build a reversed range.
    pub fn bounded(lo: Nanos, hi: Nanos) -> Self {
        Verdict::Bounded {
            lo: lo.min(hi),
            hi: lo.max(hi),
            notes: Vec::new(),
        }
    }

    /// Adds a note to a known or bounded verdict (no effect on an unknown).
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        if let Verdict::Known { notes, .. } | Verdict::Bounded { notes, .. } = &mut self {
            notes.push(note.into());
        }
        self
    }

    /// The value, when known exactly: a known verdict, or a bounded one with `lo = hi`.
    pub fn value(&self) -> Option<Nanos> {
        match self {
            Verdict::Known { value, .. } => Some(*value),
            Verdict::Bounded { lo, hi, .. } if lo == hi => Some(*lo),
            Verdict::Bounded { .. } | Verdict::Unknown { .. } => None,
        }
    }

    /// The closed range the value lies in: `[v, v]` when known, `[lo, hi]` when bounded.
    pub fn range(&self) -> Option<(Nanos, Nanos)> {
        match self {
            Verdict::Known { value, .. } => Some((*value, *value)),
            Verdict::Bounded { lo, hi, .. } => Some((*lo, *hi)),
            Verdict::Unknown { .. } => None,
        }
    }

    /// The notes of a known or bounded verdict (empty for an unknown).
    pub fn notes(&self) -> &[String] {
        match self {
            Verdict::Known { notes, .. } | Verdict::Bounded { notes, .. } => notes,
            Verdict::Unknown { .. } => &[],
        }
    }

    /// The reason, when unknown.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Verdict::Known { .. } | Verdict::Bounded { .. } => None,
            Verdict::Unknown { reason, .. } => Some(*reason),
        }
    }
}

impl From<Result<Nanos, Reason>> for Verdict {
    fn from(result: Result<Nanos, Reason>) -> Self {
        match result {
            Ok(value) => Verdict::known(value),
            Err(reason) => Verdict::unknown(reason),
        }
    }
}

impl fmt::Display for Verdict {
    /// `known 40 us`, `bounded [-1 us, 2.5 us]` or `unknown (no-wait)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Known { value, .. } => write!(f, "known {value}"),
            Verdict::Bounded { lo, hi, .. } => write!(f, "bounded [{lo}, {hi}]"),
            Verdict::Unknown { reason, .. } => write!(f, "unknown ({reason})"),
        }
    }
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        match self {
            Verdict::Known { value, notes } => {
                map.serialize_entry("verdict", "known")?;
                map.serialize_entry("value", value)?;
                map.serialize_entry("value_ns", &value.as_i64())?;
                if !notes.is_empty() {
                    map.serialize_entry("notes", notes)?;
                }
            }
            Verdict::Bounded { lo, hi, notes } => {
                map.serialize_entry("verdict", "bounded")?;
                map.serialize_entry("lo", lo)?;
                map.serialize_entry("hi", hi)?;
                map.serialize_entry("lo_ns", &lo.as_i64())?;
                map.serialize_entry("hi_ns", &hi.as_i64())?;
                let width = i128::from(hi.as_i64()) - i128::from(lo.as_i64());
                match i64::try_from(width) {
                    Ok(w) => map.serialize_entry("width", &Nanos::new(w))?,
                    Err(_) => map.serialize_entry("width", &format!("{width} ns"))?,
                }
                if !notes.is_empty() {
                    map.serialize_entry("notes", notes)?;
                }
            }
            Verdict::Unknown { reason, detail } => {
                map.serialize_entry("verdict", "unknown")?;
                map.serialize_entry("reason", reason)?;
                map.serialize_entry("detail", detail)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wide amount past 64-bit nanoseconds is written with this reason's code, and one
    /// within it exactly, as `Nanos` displays it.
    #[test]
    fn a_wide_overflow_is_written_with_the_overflow_reason() {
        let past = i128::from(i64::MAX) + 1;
        assert_eq!(
            crate::units::format_wide(past),
            format!("unknown ({})", Reason::Overflow)
        );
        assert_eq!(crate::units::format_wide(-past - 1), "unknown (overflow)");
        assert_eq!(crate::units::format_wide(1_500), "1.5 us");
        assert_eq!(
            crate::units::format_wide(i128::from(i64::MAX)),
            Nanos::new(i64::MAX).to_string()
        );
    }

    /// Mutation campaign (issue 16): `notes()` hands back the verdict's own notes.
    #[test]
    fn notes_are_the_verdicts_own() {
        let notes = vec!["one".to_owned(), "two".to_owned()];
        let known = Verdict::Known {
            value: Nanos::new(5),
            notes: notes.clone(),
        };
        assert_eq!(known.notes(), &notes[..]);
        let bounded = Verdict::Bounded {
            lo: Nanos::new(1),
            hi: Nanos::new(2),
            notes: vec!["three".to_owned()],
        };
        assert_eq!(bounded.notes(), &["three".to_owned()][..]);
        let plain = Verdict::Known {
            value: Nanos::new(5),
            notes: Vec::new(),
        };
        assert!(plain.notes().is_empty());
    }

    #[test]
    fn codes_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for r in Reason::ALL {
            assert!(seen.insert(r.code()));
            assert_eq!(Reason::from_code(r.code()), Some(r));
        }
        assert_eq!(Reason::from_code("launch-overhead"), None);
    }

    /// Each code has its own one-line explanation, and an unknown without a specific detail
    /// carries it (what `worksheet` prints after the code).
    #[test]
    fn every_reason_has_its_own_explanation() {
        let mut seen = std::collections::HashSet::new();
        for r in Reason::ALL {
            let text = r.explanation();
            assert!(text.len() > 20 && !text.contains('\n'), "{r}: {text:?}");
            assert!(seen.insert(text), "{r} shares its explanation");
        }
        let Verdict::Unknown { detail, .. } = Verdict::unknown(Reason::NoWait) else {
            panic!("unknown is unknown")
        };
        assert_eq!(
            detail,
            "the stop does not follow a wait, so it proves nothing about completion"
        );
    }

    #[test]
    fn verdict_json_lists_notes_only_when_there_are_some() {
        let bare = serde_json::to_value(Verdict::known(Nanos::new(40_000))).unwrap();
        assert_eq!(
            bare,
            serde_json::json!({"verdict": "known", "value": "40 us", "value_ns": 40_000})
        );
        let noted = Verdict::known(Nanos::new(40_000)).with_note("makes no completion claim");
        assert_eq!(
            serde_json::to_value(noted).unwrap()["notes"],
            serde_json::json!(["makes no completion claim"])
        );
        assert_eq!(
            serde_json::to_value(Verdict::unknown_because(Reason::NoWait, "no wait")).unwrap(),
            serde_json::json!({"verdict": "unknown", "reason": "no-wait", "detail": "no wait"})
        );
    }

    #[test]
    fn bounded_displays_its_range_and_is_exact_only_when_closed() {
        let v = Verdict::bounded(Nanos::new(2_500), Nanos::new(-1_000));
        assert_eq!(v.to_string(), "bounded [-1 us, 2.5 us]");
        assert_eq!(v.value(), None);
        assert_eq!(v.range(), Some((Nanos::new(-1_000), Nanos::new(2_500))));
        let point = Verdict::bounded(Nanos::new(7), Nanos::new(7));
        assert_eq!(point.value(), Some(Nanos::new(7)));
        let json = serde_json::to_value(v.with_note("via r1")).unwrap();
        assert_eq!(json["verdict"], "bounded");
        assert_eq!(json["lo_ns"], -1_000);
        assert_eq!(json["hi_ns"], 2_500);
        assert_eq!(json["width"], "3.5 us");
        assert_eq!(json["notes"][0], "via r1");
    }

    #[test]
    fn verdict_displays_value_or_reason() {
        assert_eq!(
            Verdict::known(Nanos::new(140_000)).to_string(),
            "known 140 us"
        );
        assert_eq!(
            Verdict::unknown(Reason::NoWait).to_string(),
            "unknown (no-wait)"
        );
    }
}
