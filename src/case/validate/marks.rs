//! The `marks` section: single readings of a declared clock.

use super::ids::{time, IdTable, Result};
use crate::case::raw::RawMark;
use crate::case::MarkDef;

/// The validated marks and their id table.
pub(super) fn marks<'a>(
    raw: &'a [RawMark],
    clock_ids: &IdTable<'_>,
) -> Result<(IdTable<'a>, Vec<MarkDef>)> {
    let mut mark_ids = IdTable::new("mark", "marks");
    let mut marks = Vec::with_capacity(raw.len());
    for (i, m) in raw.iter().enumerate() {
        mark_ids.add(&m.id, i, format!("marks[{i}].id"))?;
        let clock = clock_ids.resolve(&m.clock, || format!("marks[{i}].clock"))?;
        marks.push(MarkDef {
            id: m.id.clone(),
            clock,
            at: time(&m.at, || format!("marks[{i}].at"))?,
        });
    }
    Ok((mark_ids, marks))
}
