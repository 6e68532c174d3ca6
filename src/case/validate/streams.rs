//! The `streams` section (each on a declared clock, on a named device, of an optional kind)
//! and the `unrecorded_joins` between two of them.

use super::ids::{IdTable, Result};
use crate::case::implicit::stream_kind;
use crate::case::raw::{RawStream, RawUnrecordedJoin};
use crate::case::{CaseError, StreamDef, StreamIdx};

/// The validated streams and their id table.
pub(super) fn streams<'a>(
    raw: &'a [RawStream],
    clock_ids: &IdTable<'_>,
) -> Result<(IdTable<'a>, Vec<StreamDef>)> {
    let mut stream_ids = IdTable::new("stream", "streams");
    let mut streams = Vec::with_capacity(raw.len());
    for (i, s) in raw.iter().enumerate() {
        stream_ids.add(&s.id, i, format!("streams[{i}].id"))?;
        let clock = clock_ids.resolve(&s.clock, || format!("streams[{i}].clock"))?;
        if s.device.trim().is_empty() {
            return Err(CaseError::new(
                format!("streams[{i}].device"),
                "bad-value",
                "a stream needs the device it belongs to",
            ));
        }
        streams.push(StreamDef {
            id: s.id.clone(),
            clock,
            device: s.device.clone(),
            kind: s.kind.map(stream_kind),
        });
    }
    Ok((stream_ids, streams))
}

/// A pair of streams whose joins a trace showed but did not record, with what it showed.
type UnrecordedJoin = ((StreamIdx, StreamIdx), Option<String>);

/// The validated unrecorded joins: each names exactly two declared streams.
pub(super) fn unrecorded_joins(
    raw: &[RawUnrecordedJoin],
    stream_ids: &IdTable<'_>,
) -> Result<Vec<UnrecordedJoin>> {
    let mut unrecorded_joins = Vec::with_capacity(raw.len());
    for (i, j) in raw.iter().enumerate() {
        let [a, b] = j.streams.as_slice() else {
            return Err(CaseError::new(
                format!("unrecorded_joins[{i}].streams"),
                "bad-value",
                format!(
                    "an unrecorded join names exactly two streams, not {}",
                    j.streams.len()
                ),
            ));
        };
        let a = stream_ids.resolve(a, || format!("unrecorded_joins[{i}].streams[0]"))?;
        let b = stream_ids.resolve(b, || format!("unrecorded_joins[{i}].streams[1]"))?;
        unrecorded_joins.push(((a, b), j.why.clone()));
    }
    Ok(unrecorded_joins)
}
