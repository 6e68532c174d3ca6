//! The `events` section: each on a declared stream, its state consistent with its timestamp.

use super::ids::{time, IdTable, Result};
use crate::case::raw::{RawEvent, RawEventState};
use crate::case::{CaseError, EventDef, EventState};

/// The validated events and their id table.
pub(super) fn events<'a>(
    raw: &'a [RawEvent],
    stream_ids: &IdTable<'_>,
) -> Result<(IdTable<'a>, Vec<EventDef>)> {
    let mut event_ids = IdTable::new("event", "events");
    let mut events = Vec::with_capacity(raw.len());
    for (i, e) in raw.iter().enumerate() {
        event_ids.add(&e.id, i, format!("events[{i}].id"))?;
        let stream = stream_ids.resolve(&e.stream, || format!("events[{i}].stream"))?;
        let state = match (e.state, &e.at, e.timing) {
            (RawEventState::Completed, Some(at), _) => {
                EventState::Completed(time(at, || format!("events[{i}].at"))?)
            }
            (RawEventState::Completed, None, false) => EventState::CompletedUntimed,
            (RawEventState::Completed, None, true) => {
                return Err(CaseError::new(
                    format!("events[{i}].at"),
                    "missing-field",
                    format!(
                    "event `{}` is completed and timing-enabled, so it needs its timestamp `at`",
                    e.id
                ),
                ))
            }
            (RawEventState::Pending | RawEventState::NotRecorded, Some(_), _) => {
                return Err(CaseError::new(
                    format!("events[{i}].at"),
                    "inconsistent-event",
                    format!(
                        "event `{}` has not completed, so it cannot have a timestamp",
                        e.id
                    ),
                ))
            }
            (RawEventState::Pending, None, _) => EventState::Pending,
            (RawEventState::NotRecorded, None, _) => EventState::NotRecorded,
        };
        events.push(EventDef {
            id: e.id.clone(),
            stream,
            timing: e.timing,
            state,
        });
    }
    Ok((event_ids, events))
}
