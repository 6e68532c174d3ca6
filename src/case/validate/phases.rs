//! The `phases` section: each an interval on a stream's clock (or a declared clock when it
//! has no stream). Labels are moved in, not copied: a large case holds each label once.

use super::ids::{interval, time, IdTable, Result};
use crate::case::raw::RawPhase;
use crate::case::{CaseError, ClockDef, PhaseDef, StreamDef};

/// The validated phases and their id table; `labels` are the phases' labels, taken out of
/// `raw` beforehand.
pub(super) fn phases<'a>(
    raw: &'a [RawPhase],
    mut labels: Vec<Option<crate::case::raw::Label>>,
    clock_ids: &IdTable<'_>,
    clocks: &[ClockDef],
    stream_ids: &IdTable<'_>,
    streams: &[StreamDef],
) -> Result<(IdTable<'a>, Vec<PhaseDef>)> {
    let mut phase_ids = IdTable::new("phase", "phases");
    let mut phases = Vec::with_capacity(raw.len());
    for (i, p) in raw.iter().enumerate() {
        phase_ids.add(&p.id, i, format!("phases[{i}].id"))?;
        let stream = p
            .stream
            .as_ref()
            .map(|s| stream_ids.resolve(s, || format!("phases[{i}].stream")))
            .transpose()?;
        let declared_clock = p
            .clock
            .as_ref()
            .map(|c| clock_ids.resolve(c, || format!("phases[{i}].clock")))
            .transpose()?;
        let clock = match (stream, declared_clock) {
            (Some(s), None) => streams[s].clock,
            (None, Some(c)) => c,
            (Some(s), Some(c)) if streams[s].clock == c => c,
            (Some(s), Some(_)) => {
                return Err(CaseError::new(
                    format!("phases[{i}].clock"),
                    "bad-value",
                    format!(
                        "phase `{}` names clock `{}`, but its stream `{}` runs on clock `{}`",
                        p.id,
                        clocks[declared_clock.unwrap_or(0)].id,
                        streams[s].id,
                        clocks[streams[s].clock].id
                    ),
                ))
            }
            (None, None) => {
                return Err(CaseError::new(
                    format!("phases[{i}].clock"),
                    "missing-field",
                    format!("phase `{}` needs a `stream` or a `clock`", p.id),
                ))
            }
        };
        let start = time(&p.start, || format!("phases[{i}].start"))?;
        let end = time(&p.end, || format!("phases[{i}].end"))?;
        let interval = interval(start, end, &format!("phases[{i}].end"))?;
        phases.push(PhaseDef {
            id: p.id.clone(),
            label: labels[i].take().unwrap_or_else(|| p.id.clone()),
            stream,
            clock,
            interval,
        });
    }
    Ok((phase_ids, phases))
}
