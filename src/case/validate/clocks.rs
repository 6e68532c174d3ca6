//! The `clocks` section: each clock has an id, a domain and the instance that fixes its epoch.

use super::ids::{IdTable, Result};
use crate::case::raw::RawClock;
use crate::case::{CaseError, ClockDef};
use crate::clock::ClockId;

/// The validated clocks and their id table.
pub(super) fn clocks(raw: &[RawClock]) -> Result<(IdTable<'_>, Vec<ClockDef>)> {
    let mut clock_ids = IdTable::new("clock", "clocks");
    let mut clocks = Vec::with_capacity(raw.len());
    for (i, c) in raw.iter().enumerate() {
        clock_ids.add(&c.id, i, format!("clocks[{i}].id"))?;
        if c.domain.trim().is_empty() {
            return Err(CaseError::new(
                format!("clocks[{i}].domain"),
                "bad-value",
                "a clock needs a domain such as `host` or `device`",
            ));
        }
        let instance = match c.instance.as_deref() {
            Some(s) if !s.trim().is_empty() => s,
            _ => {
                return Err(CaseError::new(
                    format!("clocks[{i}].instance"),
                    "missing-instance",
                    format!(
                        "clock `{}` has no instance: name what fixes its epoch (a boot id, a GPU context, a process); \
                         without it no two timestamps can be shown comparable",
                        c.id
                    ),
                ))
            }
        };
        clocks.push(ClockDef {
            id: c.id.clone(),
            clock: ClockId::new(c.domain.clone(), instance),
        });
    }
    Ok((clock_ids, clocks))
}
