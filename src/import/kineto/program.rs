//! The host program of a Kineto case: launches, event records, stream waits and host waits,
//! placed in host-time order.
//!
//! Each GPU activity is launched by the API call with its correlation; `cuda_sync` rows of
//! blocking calls become host waits, `Stream Wait Event` rows stream waits; older traces'
//! `cudaDeviceSynchronize` calls without a row become device waits when the trace's work is
//! on one device; synchronous copies become implicit waits (SPEC §4). Work is *enqueued* when
//! its call returns and a wait *starts* when its call starts, so every step is keyed by
//! `(time, rank, call start, seq)` ([`Placed`]) and sorted once. What is not mapped is counted
//! with its reason ([`Plan::not_mapped`]). The plan's steps become the format-neutral
//! program ([`crate::import::activity::Step`]); the one builder orders them and adds the
//! completion timers, and marks the profiler's final sync (`final-device-sync`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::names::{
    base_call_name, is_blocking_device_sync, is_blocking_event_sync, is_blocking_stream_sync,
    is_query, is_stream_wait_call,
};
use super::{copies, GpuWork, Read, SyncRow, WorkKind};
use crate::case::raw::RawImplicit;
use crate::trace::model::ApiCall;

/// A host-program step before ids are final. The waits are boxed: a plan is almost all
/// launches, and a step costs 16 bytes instead of the host wait's 88 (at ×10 of
/// `df_index_resolver` the plan's list was 50 MB).
pub(super) enum Step {
    Launch(usize),
    Record(i64),
    StreamWait(Box<StreamWait>),
    HostWait(Box<HostWait>),
}

/// A stream waits for an event record.
pub(super) struct StreamWait {
    /// The waiting stream.
    pub(super) stream: (i64, i64),
    /// The correlation of the event record it waits for.
    pub(super) record: i64,
}

/// The host waits.
pub(super) struct HostWait {
    pub(super) id: String,
    pub(super) target: Target,
    pub(super) start: i64,
    pub(super) returned: i64,
    /// A copy that is a wait (SPEC §4): why, and the copy (index into the work).
    pub(super) implicit: Option<(RawImplicit, usize)>,
}

/// What a host wait waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Target {
    Event(i64),
    Stream((i64, i64)),
    Device(i64),
}

/// A step with its place in host time: `(time, rank, call start, seq)`.
pub(super) struct Placed {
    pub(super) key: (i64, u8, i64, usize),
    pub(super) step: Step,
}

/// The host program in host-time order, with what the summary says about it.
#[derive(Default)]
pub(super) struct Plan {
    /// The steps, sorted by key.
    pub(super) placed: Vec<Placed>,
    /// Every stream: with work, or named by a wait.
    pub(super) streams: BTreeSet<(i64, i64)>,
    /// Event records a wait names: correlation → stream.
    pub(super) records: BTreeMap<i64, (i64, i64)>,
    /// Host waits declared, by kind.
    pub(super) host_waits: BTreeMap<String, u64>,
    /// Stream waits declared.
    pub(super) stream_waits: u64,
    /// Sync rows and calls not mapped, by reason.
    pub(super) not_mapped: BTreeMap<String, u64>,
    /// `cudaDeviceSynchronize` calls without a row taken as waits on the only device.
    pub(super) assumed_device_sync: u64,
    /// The only device with GPU work, when there is one.
    pub(super) single_device: Option<i64>,
    /// Launches whose host order disagrees with their stream's GPU order.
    pub(super) order_disagreements: u64,
}

/// Counts one more under `why`.
pub(super) fn count(map: &mut BTreeMap<String, u64>, why: impl Into<String>) {
    *map.entry(why.into()).or_default() += 1;
}

/// Places every step of the host program; `work_devices` are the devices with GPU work
/// (`read.work` is sorted).
pub(super) fn plan(read: &Read, work_devices: &BTreeSet<i64>) -> Plan {
    // At most a launch per activity, a wait per copy, a step and a record per sync row: the
    // list is made once at that size instead of grown by doubling (the calls without a row
    // reserve their own).
    let copies = read
        .work
        .iter()
        .filter(|w| w.kind == WorkKind::Memcpy)
        .count();
    let mut plan = Plan {
        placed: Vec::with_capacity(read.work.len() + copies + 2 * read.syncs.len()),
        streams: read.work.iter().map(|w| (w.device, w.stream)).collect(),
        single_device: if work_devices.len() == 1 {
            work_devices.first().copied()
        } else {
            None
        },
        ..Plan::default()
    };
    place_launches(read, &mut plan);
    let synced_calls = place_sync_rows(read, &mut plan);
    place_unsynced_calls(read, &synced_calls, work_devices.len(), &mut plan);
    for &rc in plan.records.keys() {
        let Some(call) = read.call(rc) else {
            continue;
        };
        plan.placed.push(Placed {
            key: (call.end, 0, call.start, usize::MAX),
            step: Step::Record(rc),
        });
    }
    plan.placed.sort_by_key(|p| p.key);
    let copy_waits = keep_copy_waits(&mut plan, read);
    for (why, n) in copy_waits {
        *plan.host_waits.entry(why).or_default() += n;
    }
    plan.order_disagreements = order_disagreements(&plan.placed, read);
    plan
}

/// Each activity whose call is in the trace is launched when the call returns; a copy that
/// is a wait follows its launch.
fn place_launches(read: &Read, plan: &mut Plan) {
    // Copy waits made so far per call: a call with more than one `gpu_memcpy` row (a
    // hostile or repeated row) gives each copy its own id.
    let mut copies_of_call: HashMap<i64, u32> = HashMap::new();
    for (k, w) in read.work.iter().enumerate() {
        if let Some(call) = w.correlation.and_then(|c| read.call(c)) {
            plan.placed.push(Placed {
                key: (call.end, 0, call.start, k),
                step: Step::Launch(k),
            });
            if let Some(wait) = copy_wait(w, k, call, &mut copies_of_call) {
                plan.placed.push(Placed {
                    key: (call.end, 0, call.start, k),
                    step: wait,
                });
            }
        }
    }
}

/// The implicit wait a `gpu_memcpy` row's call makes (SPEC §4; [`super::copies`]): a host
/// wait on the copy's stream, returning when its call returns. Its id is
/// `copy-c<correlation>`. A trace that gives one call several `gpu_memcpy` rows gives each
/// copy that is a wait its own: the n-th wait of the call (n ≥ 2) is
/// `copy-c<correlation>.<n>`, which no correlation alone spells (the `.<n>` suffix as in
/// the repeated phase ids of [`super::build`]; `n` counts this call's copy waits, not its
/// phases). `made` counts the copy waits made per call.
fn copy_wait(w: &GpuWork, k: usize, call: &ApiCall, made: &mut HashMap<i64, u32>) -> Option<Step> {
    if w.kind != WorkKind::Memcpy {
        return None;
    }
    let how = copies::call_of(base_call_name(&call.name))?;
    let (direction, host) = copies::kineto_copy(&w.name);
    let kind = copies::implicit_wait(how, direction, host)?;
    let correlation = w.correlation?;
    let nth = made.entry(correlation).or_default();
    *nth += 1;
    let id = if *nth == 1 {
        format!("copy-c{correlation}")
    } else {
        format!("copy-c{correlation}.{nth}")
    };
    Some(Step::HostWait(Box::new(HostWait {
        id,
        target: Target::Stream((w.device, w.stream)),
        start: call.start,
        returned: call.end,
        implicit: Some((kind, k)),
    })))
}

/// Maps each `cuda_sync` row to a wait, or counts why not. Returns the correlations of the
/// calls that have a row.
fn place_sync_rows(read: &Read, plan: &mut Plan) -> BTreeSet<i64> {
    let mut synced_calls: BTreeSet<i64> = BTreeSet::new();
    for row in &read.syncs {
        if let Some(c) = row.correlation {
            if !synced_calls.insert(c) && read.has_call(c) {
                // One call waits once: a second cuda_sync row for it (a repeated row) would
                // declare a second wait with the same id.
                count(
                    &mut plan.not_mapped,
                    format!(
                        "{}: a second cuda_sync row for the same call (same correlation): counted once",
                        row.kind
                    ),
                );
                continue;
            }
        }
        match row.correlation.and_then(|c| read.call(c)) {
            Some(call) => map_sync_row(read, row, call, plan),
            None => count(
                &mut plan.not_mapped,
                format!(
                    "{}: its API call (same correlation) is not in the trace",
                    row.kind
                ),
            ),
        }
    }
    synced_calls
}

/// The stream and correlation of the event record a row waits for.
fn record_of(
    read: &Read,
    row: &SyncRow,
    device: i64,
) -> std::result::Result<((i64, i64), i64), &'static str> {
    match (row.record_corr, row.wait_on_stream) {
        (Some(rc), Some(ws)) if rc >= 0 && ws >= 0 && ws != i64::from(u32::MAX) => {
            if read.has_call(rc) {
                Ok(((device, ws), rc))
            } else {
                Err("the cudaEventRecord it names is not in the trace")
            }
        }
        _ => Err("the trace does not say which event record it waits for"),
    }
}

/// One `cuda_sync` row of `call`: a host wait, a stream wait, or a reason it is neither.
fn map_sync_row(read: &Read, row: &SyncRow, call: &ApiCall, plan: &mut Plan) {
    let corr = row.correlation.unwrap_or_default();
    let device = row.device.unwrap_or(0);
    let wait = |target: Target| Placed {
        key: (call.start, 1, call.start, row.event),
        step: Step::HostWait(Box::new(HostWait {
            id: format!("wait-c{corr}"),
            target,
            start: call.start,
            returned: call.end,
            implicit: None,
        })),
    };
    match row.kind.as_str() {
        _ if is_query(&call.name) => count(
            &mut plan.not_mapped,
            format!(
                "{} by {}: a query returns at once and may have said \"not ready\": not a wait",
                row.kind, call.name
            ),
        ),
        "Stream Sync" if is_blocking_stream_sync(&call.name) => match row.stream {
            Some(s) if s >= 0 && s != i64::from(u32::MAX) => {
                plan.streams.insert((device, s));
                plan.placed.push(wait(Target::Stream((device, s))));
                count(&mut plan.host_waits, "on a stream (Stream Sync)");
            }
            _ => count(&mut plan.not_mapped, "Stream Sync: no stream named"),
        },
        "Event Sync" if is_blocking_event_sync(&call.name) => match record_of(read, row, device) {
            Ok((stream, rc)) => {
                plan.streams.insert(stream);
                plan.records.insert(rc, stream);
                plan.placed.push(wait(Target::Event(rc)));
                count(&mut plan.host_waits, "on an event (Event Sync)");
            }
            Err(why) => count(&mut plan.not_mapped, format!("Event Sync: {why}")),
        },
        "Context Sync" if is_blocking_device_sync(&call.name) => {
            if plan.streams.iter().any(|(d, _)| *d == device) {
                plan.placed.push(wait(Target::Device(device)));
                count(&mut plan.host_waits, "on a device (Context Sync)");
            } else {
                count(
                    &mut plan.not_mapped,
                    "Context Sync: no stream of its device appears in the trace",
                );
            }
        }
        "Stream Wait Event" if is_stream_wait_call(&call.name) => {
            map_stream_wait(read, row, call, device, plan);
        }
        kind => count(
            &mut plan.not_mapped,
            format!(
                "{kind} by {}: not a blocking call this importer knows",
                call.name
            ),
        ),
    }
}

/// A `Stream Wait Event` row: the waiting stream waits for the event record it names.
fn map_stream_wait(read: &Read, row: &SyncRow, call: &ApiCall, device: i64, plan: &mut Plan) {
    match (record_of(read, row, device), row.stream) {
        (Ok((from, rc)), Some(s)) if s >= 0 => {
            plan.streams.insert(from);
            plan.streams.insert((device, s));
            plan.records.insert(rc, from);
            plan.placed.push(Placed {
                key: (call.end, 0, call.start, row.event),
                step: Step::StreamWait(Box::new(StreamWait {
                    stream: (device, s),
                    record: rc,
                })),
            });
            plan.stream_waits += 1;
        }
        (Err(why), _) => count(&mut plan.not_mapped, format!("Stream Wait Event: {why}")),
        _ => count(
            &mut plan.not_mapped,
            "Stream Wait Event: no waiting stream named",
        ),
    }
}

/// Older traces: blocking calls with no `cuda_sync` row. A device synchronize is a wait on
/// the only device with work; stream and event synchronizes name no target and are counted.
fn place_unsynced_calls(
    read: &Read,
    synced_calls: &BTreeSet<i64>,
    devices: usize,
    plan: &mut Plan,
) {
    // Only the blocking calls are placed or counted: the list holds those alone, not every
    // call of the trace (at ×10 of `df_index_resolver` that list was 50 MB).
    let blocking = |name: &str| {
        is_blocking_device_sync(name)
            || is_blocking_stream_sync(name)
            || is_blocking_event_sync(name)
    };
    let mut call_list: Vec<(i64, &ApiCall)> = read
        .first_calls()
        .filter(|(c, call)| blocking(&call.name) && !synced_calls.contains(c))
        .collect();
    call_list.sort_by_key(|&(c, call)| (call.start, c));
    plan.placed.reserve_exact(call_list.len());
    for (corr, call) in call_list {
        if is_blocking_device_sync(&call.name) {
            match plan.single_device {
                Some(device) => {
                    plan.placed.push(Placed {
                        key: (call.start, 1, call.start, usize::MAX),
                        step: Step::HostWait(Box::new(HostWait {
                            id: format!("wait-c{corr}"),
                            target: Target::Device(device),
                            start: call.start,
                            returned: call.end,
                            implicit: None,
                        })),
                    });
                    plan.assumed_device_sync += 1;
                    count(
                        &mut plan.host_waits,
                        format!("on a device ({}, no cuda_sync row)", call.name),
                    );
                }
                None => count(
                    &mut plan.not_mapped,
                    format!(
                        "{} without a cuda_sync row: the trace's work is on {devices} devices, the call names none",
                        call.name,
                    ),
                ),
            }
        } else if is_blocking_stream_sync(&call.name) || is_blocking_event_sync(&call.name) {
            count(
                &mut plan.not_mapped,
                format!(
                    "{} without a cuda_sync row: the trace does not say what it waited for",
                    call.name
                ),
            );
        }
    }
}

/// Keeps an implicit copy wait only when nothing else was submitted to its stream while its
/// call ran: a launch from another thread that returned during a synchronous copy may have
/// been queued before or after the copy, so the copy's return proves nothing about it, and
/// the program order (launches keyed by their return) would claim it covered. Such waits are
/// dropped and counted. Returns the kept waits counted by kind.
fn keep_copy_waits(plan: &mut Plan, read: &Read) -> BTreeMap<String, u64> {
    let records = &plan.records;
    let stream_of = |p: &Placed| match &p.step {
        Step::Launch(k) => Some((read.work[*k].device, read.work[*k].stream)),
        Step::Record(rc) => records.get(rc).copied(),
        Step::StreamWait(wait) => Some(wait.stream),
        Step::HostWait(_) => None,
    };
    let placed = &plan.placed;
    let mut kept = BTreeMap::new();
    let mut dropped = vec![false; placed.len()];
    for (i, p) in placed.iter().enumerate() {
        let Step::HostWait(wait) = &p.step else {
            continue;
        };
        let HostWait {
            target: Target::Stream(stream),
            start,
            implicit: Some((kind, k)),
            ..
        } = &**wait
        else {
            continue;
        };
        let overtaken = placed[..i]
            .iter()
            .rev()
            .take_while(|q| q.key.0 > *start)
            .any(|q| {
                !matches!(q.step, Step::Launch(j) if j == *k) && stream_of(q) == Some(*stream)
            });
        let word = kind.word();
        if overtaken {
            dropped[i] = true;
            count(
                &mut plan.not_mapped,
                format!("{word} copy: another submission to its stream returned while the copy's call ran, so the copy's place in the stream is unknown: not a wait"),
            );
        } else {
            *kept
                .entry(format!("on a stream (implicit: {word} copy)"))
                .or_default() += 1;
        }
    }
    let mut i = 0;
    plan.placed.retain(|_| {
        i += 1;
        !dropped[i - 1]
    });
    kept
}

/// Launch order against execution order, per stream: launches that start on the GPU before
/// one launched earlier on the same stream.
fn order_disagreements(placed: &[Placed], read: &Read) -> u64 {
    let mut last_start: HashMap<(i64, i64), i64> = HashMap::new();
    let mut disagreements = 0u64;
    for p in placed {
        if let Step::Launch(k) = p.step {
            let w = &read.work[k];
            let last = last_start.entry((w.device, w.stream)).or_insert(i64::MIN);
            if w.start < *last {
                disagreements += 1;
            }
            *last = (*last).max(w.start);
        }
    }
    disagreements
}
