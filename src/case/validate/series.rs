//! The `series` section: repeated samples (warm-up, measured, failed), each an exact time.

use super::ids::{time, IdTable, Result};
use crate::case::raw::{RawSeries, RawTime};
use crate::case::SeriesDef;
use crate::units::Nanos;

/// The validated series and their id table.
pub(super) fn series(raw: &[RawSeries]) -> Result<(IdTable<'_>, Vec<SeriesDef>)> {
    let mut series_ids = IdTable::new("series", "series");
    let mut series = Vec::with_capacity(raw.len());
    for (i, s) in raw.iter().enumerate() {
        series_ids.add(&s.id, i, format!("series[{i}].id"))?;
        let list = |values: &[RawTime], field: &str| -> Result<Vec<Nanos>> {
            values
                .iter()
                .enumerate()
                .map(|(j, v)| time(v, || format!("series[{i}].{field}[{j}]")))
                .collect()
        };
        series.push(SeriesDef {
            id: s.id.clone(),
            label: s.label.clone(),
            warmup: list(&s.warmup, "warmup")?,
            measured: list(&s.measured, "measured")?,
            failed: list(&s.failed, "failed")?,
        });
    }
    Ok((series_ids, series))
}
