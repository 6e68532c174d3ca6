//! Questions across two clocks (SPEC §10): exact on one clock, **bounded** through the case's
//! clock relations, unknown otherwise.
//!
//! A reading `t_b` on clock `b` and `t_a` on clock `a`, with `offset(b) − offset(a) ∈ [lo, hi]`,
//! are `[t_b − t_a − hi, t_b − t_a − lo]` apart in true time:
//!
//! ```text
//!   clock a   ──────●t_a──────────────────────►
//!   clock b   ─────────────────●t_b───────────►   (its origin lies lo..hi after a's)
//!   t_b − t_a − hi  ≤  true elapsed  ≤  t_b − t_a − lo
//! ```
//!
//! Clocks with equal domain and instance are one clock, whatever their ids. No chain of
//! relations: `cross-domain` / `cross-instance` as before. Conflicting relations:
//! `inconsistent-relation`, naming them.

use crate::case::{Case, ClockIdx};
use crate::relation::Related;
use crate::units::Nanos;
use crate::verdict::{Reason, Verdict};

/// The bound through the relations, the relations named, and the declared ones assumed.
pub(super) struct Through {
    lo: i128,
    hi: i128,
    via: Vec<String>,
    assumes: Vec<String>,
}

impl Through {
    /// `v` with a note `assumes <declaration> (declared)` per declared relation used: the
    /// relation's first evidence line (`clocks-within 0 ns`), else its id.
    fn assuming(&self, mut v: Verdict) -> Verdict {
        for a in &self.assumes {
            v = v.with_note(format!("assumes {a} (declared)"));
        }
        v
    }
}

/// What the case's relations imply about `offset(b) − offset(a)`, as `[lo, hi]` with the
/// names of the relations used; or the unknown verdict (with `what` leading its detail).
pub(super) fn offset(
    case: &Case,
    a: ClockIdx,
    b: ClockIdx,
    what: &dyn Fn() -> String,
) -> Result<Through, Verdict> {
    let (ca, cb) = (case.clock(a), case.clock(b));
    if ca == cb {
        return Ok(Through {
            lo: 0,
            hi: 0,
            via: Vec::new(),
            assumes: Vec::new(),
        });
    }
    let (canon, graph) = case.relation_graph();
    let describe = |k: usize| {
        let r = &case.relations[k];
        format!(
            "`{}` ({} → {}: {}, {})",
            r.id,
            case.clocks[r.a].id,
            case.clocks[r.b].id,
            r.bound,
            r.source.word()
        )
    };
    match graph.relate(canon[a], canon[b]) {
        Related::Bounded { lo, hi, via } => {
            let mut assumes: Vec<String> = Vec::new();
            for &k in &via {
                let r = &case.relations[k];
                if r.source == crate::relation::Source::Declared {
                    let what = r.evidence.first().unwrap_or(&r.id).clone();
                    if !assumes.contains(&what) {
                        assumes.push(what);
                    }
                }
            }
            Ok(Through {
                lo,
                hi,
                via: via.into_iter().map(describe).collect(),
                assumes,
            })
        }
        Related::Unrelated => {
            let reason = cb.comparable_with(ca).err().unwrap_or(Reason::CrossInstance);
            Err(Verdict::unknown_because(
                reason,
                format!(
                    "{}; no clock relation joins {} and {}",
                    what(),
                    case.clocks[a].id,
                    case.clocks[b].id
                ),
            ))
        }
        Related::Inconsistent { conflicting } => Err(Verdict::unknown_because(
            Reason::InconsistentRelation,
            format!(
                "{}; the clock relations {} admit no offset together (their bounds intersect empty)",
                what(),
                conflicting
                    .into_iter()
                    .map(describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// `[lo, hi]` as a verdict: bounded, or `overflow` past `i64` nanoseconds.
fn bounded(lo: i128, hi: i128) -> Verdict {
    match (i64::try_from(lo), i64::try_from(hi)) {
        (Ok(lo), Ok(hi)) if lo == hi => Verdict::bounded(Nanos::new(lo), Nanos::new(hi))
            .with_note("exact: the relations pin the offset to one value (lo = hi)"),
        (Ok(lo), Ok(hi)) => Verdict::bounded(Nanos::new(lo), Nanos::new(hi)),
        _ => Verdict::unknown(Reason::Overflow),
    }
}

/// The true time from reading `from` to reading `to`: known on one clock, bounded across
/// related clocks, unknown otherwise (`what` names the two readings in the detail).
pub(super) fn between(
    case: &Case,
    from: (ClockIdx, Nanos),
    to: (ClockIdx, Nanos),
    what: &dyn Fn() -> String,
) -> Verdict {
    let read = i128::from(to.1.as_i64()) - i128::from(from.1.as_i64());
    if case.clock(from.0) == case.clock(to.0) {
        return match i64::try_from(read) {
            Ok(v) => Verdict::known(Nanos::new(v)),
            Err(_) => Verdict::unknown(Reason::Overflow),
        };
    }
    match offset(case, from.0, to.0, what) {
        Err(v) => v,
        Ok(t) => t.assuming(bounded(read - t.hi, read - t.lo).with_note(format!(
            "read across clocks {} → {} ({} between the readings); bounded through {}",
            case.clocks[from.0].id,
            case.clocks[to.0].id,
            crate::engine::wide(read),
            t.via.join(", ")
        ))),
    }
}

/// `offset(b) − offset(a)`: known 0 on one clock, bounded through relations, else unknown.
pub(super) fn clock_offset(case: &Case, a: ClockIdx, b: ClockIdx) -> Verdict {
    let what = || {
        format!(
            "clock {} is {} and clock {} is {}",
            case.clocks[a].id,
            case.clock(a),
            case.clocks[b].id,
            case.clock(b)
        )
    };
    match offset(case, a, b, &what) {
        Err(v) => v,
        Ok(t) if t.via.is_empty() && (t.lo, t.hi) == (0, 0) => {
            Verdict::known(Nanos::ZERO).with_note("one clock (same domain and instance)")
        }
        Ok(t) => t.assuming(bounded(t.lo, t.hi).with_note(format!(
            "offset({}) − offset({}) through {}",
            case.clocks[b].id,
            case.clocks[a].id,
            t.via.join(", ")
        ))),
    }
}

/// `m − s` for two known-or-bounded verdicts: interval subtraction `[m.lo − s.hi, m.hi − s.lo]`;
/// known when both are known. `None` for an unknown side.
pub(super) fn subtract(m: &Verdict, s: &Verdict) -> Option<Verdict> {
    let ((ml, mh), (sl, sh)) = (m.range()?, s.range()?);
    let w = |n: Nanos| i128::from(n.as_i64());
    if matches!((m, s), (Verdict::Known { .. }, Verdict::Known { .. })) {
        return Some(match ml.checked_sub(sl) {
            Some(v) => Verdict::known(v),
            None => Verdict::unknown(Reason::Overflow),
        });
    }
    Some(bounded(w(ml) - w(sh), w(mh) - w(sl)))
}
