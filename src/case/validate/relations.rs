//! Validation of `clock_relations` (SPEC §10): both clocks resolve, the ends are exact times.
//!
//! A relation with `lo > hi` is kept: it is conflicting evidence, not malformed input, and the
//! questions it touches answer `unknown (inconsistent-relation)`.

use super::ids::{time, IdTable};
use crate::case::raw::{RawClockRelation, RawRelationSource};
use crate::case::{CaseError, RelationDef};
use crate::relation::{Bound, Source};

/// The validated relations, in file order.
///
/// # Errors
/// `unknown-reference` for a clock that is not declared, the time errors of `lo` / `hi`
/// (`missing-unit`, `inexact-value`, ...), `duplicate-id` for a repeated relation id.
pub(super) fn relations(
    raw: &[RawClockRelation],
    clocks: &IdTable<'_>,
) -> Result<Vec<RelationDef>, CaseError> {
    let mut out: Vec<RelationDef> = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let path = |f: &str| format!("clock_relations[{i}].{f}");
        let id = match &r.id {
            Some(id) if id.trim().is_empty() => {
                return Err(CaseError::new(
                    path("id"),
                    "empty-id",
                    "a clock relation's id, when given, must not be empty",
                ))
            }
            Some(id) => id.clone(),
            None => format!("clock_relations[{i}]"),
        };
        if let Some(first) = out.iter().position(|d| d.id == id) {
            return Err(CaseError::new(
                path("id"),
                "duplicate-id",
                format!("clock relation id `{id}` is already used by clock_relations[{first}]"),
            ));
        }
        let a = clocks.resolve(&r.a, || path("a"))?;
        let b = clocks.resolve(&r.b, || path("b"))?;
        let lo = time(&r.lo, || path("lo"))?;
        let hi = time(&r.hi, || path("hi"))?;
        out.push(RelationDef {
            id,
            a,
            b,
            bound: Bound::new(lo, hi),
            source: match r.source {
                RawRelationSource::Declared => Source::Declared,
                RawRelationSource::Collectives => Source::Collectives,
            },
            evidence: r.evidence.clone(),
        });
    }
    Ok(out)
}
