//! Joined rows → the format-neutral [`Activities`] the one builder turns into a case
//! ([`crate::import::build`]): a clock id per process, all on the one session clock (same
//! domain and instance), device labels and stream ids in the shared naming scheme, every GPU
//! row a phase, and the host program's steps.
//!
//! # Names
//!
//! A stream is `gpu<d>-s<s>` and a device `gpu<d>`, as in a Kineto import. nsys keys a
//! stream by (process, deviceId, contextId, streamId), so two processes, or two contexts of
//! one process, can use the same `(d, s)`: only then does the name get a suffix that tells
//! them apart, `-<clock>` (`-pid145`) when the processes differ and `-ctx<c>` when the
//! contexts differ (both when both do): `gpu0-s7-pid100`, `gpu0-s7-pid200`. A device is
//! labelled the same way per (process, context) sharing it, so that a device-wide wait of one
//! process never covers another's work: `gpu0-pid100`, `gpu0-pid200`.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::error::NsysError;
use super::join::{Joined, Plan};
use super::kinds;
use super::read::{Export, GpuKind, GpuRow, Proc, SessionStart, StreamKey};
use crate::case::raw::{RawClock, RawEvent, RawEventState, RawImplicit, RawStreamKind};
use crate::import::activity::{
    self, Activities, FinalSync, HostWait, Op, Step, StepKey, Target, WorkClass, WorkKind,
};
use crate::import::copies;
use crate::trace::model::base_call_name;

/// The clock domain of every imported clock.
pub const DOMAIN: &str = "nsys-session";

/// The ids every step refers to.
struct Ids {
    /// Process → clock index (and id, in `clocks`).
    clock_of: BTreeMap<Proc, usize>,
    /// Stream key → stream index.
    stream_of: BTreeMap<StreamKey, usize>,
    /// (process, device, context) → device index.
    device_of: BTreeMap<(Proc, i64, i64), usize>,
    /// Stream index → stream id.
    stream_ids: Vec<String>,
}

/// An event record: its step, its declaration, and its stream.
type Record = (Step, RawEvent, StreamKey);

/// The activities of the joined rows; `file_name` names the file in clock instances.
///
/// # Errors
/// The reader's errors (reading kernel names, stream kinds, memory kinds).
pub(super) fn activities(
    export: &mut Export,
    j: &mut Joined,
    session: SessionStart,
    file_name: &str,
) -> Result<(Activities, Vec<(Proc, String)>), NsysError> {
    let procs: BTreeSet<Proc> = j
        .gpu
        .iter()
        .map(|r| r.key.proc)
        .chain(j.api.iter().map(|c| c.proc))
        .chain(j.syncs.iter().map(|s| s.key.proc))
        .collect();
    let clocks = clocks(&procs, session, file_name);
    let clock_of: BTreeMap<Proc, usize> = procs.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let stream_keys = stream_keys(j);
    let (devices, device_of) = device_labels(&stream_keys, &clock_of, &clocks);
    let kinds = declared_stream_kinds(export, &stream_keys, j, &procs)?;
    let names = stream_names(&stream_keys, &clock_of, &clocks);
    let streams = names
        .iter()
        .map(|(k, id)| activity::Stream {
            id: id.clone(),
            clock: clock_of[&k.proc],
            device: device_of[&(k.proc, k.device, k.context)],
            kind: kinds.get(k).copied(),
        })
        .collect();
    let ids = Ids {
        clock_of,
        stream_of: stream_keys
            .iter()
            .enumerate()
            .map(|(i, k)| (*k, i))
            .collect(),
        device_of,
        stream_ids: names.into_iter().map(|(_, id)| id).collect(),
    };
    let work = work(export, j, &ids)?;
    let (mut steps, events) = sync_steps(j, &ids);
    let mut program = launch_steps(j, &ids);
    let copies = copy_steps(export, j, &ids, &events)?;
    program.append(&mut steps);
    program.extend(events.iter().map(|(step, _, _)| step.clone()));
    program.extend(copies);
    let processes = clock_of_list(&ids, &clocks);
    Ok((
        Activities {
            clocks,
            devices,
            streams,
            work,
            annotations: Vec::new(),
            events: events.into_iter().map(|(_, e, _)| e).collect(),
            steps: program,
            final_sync: FinalSync::Unattributed,
        },
        processes,
    ))
}

/// Each process and its clock id, in clock order.
fn clock_of_list(ids: &Ids, clocks: &[RawClock]) -> Vec<(Proc, String)> {
    ids.clock_of
        .iter()
        .map(|(p, &i)| (*p, clocks[i].id.clone()))
        .collect()
}

/// One clock id per process: `pid<pid>` (`-2`, `-3` when two `globalPid`s share a pid), all
/// with the session's instance.
fn clocks(procs: &BTreeSet<Proc>, session: SessionStart, file_name: &str) -> Vec<RawClock> {
    let mut used: HashSet<String> = HashSet::new();
    procs
        .iter()
        .map(|p| {
            let mut id = format!("pid{}", p.pid());
            let mut n = 2;
            while used.contains(&id) {
                id = format!("pid{}-{n}", p.pid());
                n += 1;
            }
            used.insert(id.clone());
            RawClock {
                id,
                domain: DOMAIN.to_owned(),
                instance: Some(clock_instance(session, file_name)),
            }
        })
        .collect()
}

/// The instance of every process's clock: the session. nsys records the rows of every
/// process of a report on one session timebase (0 = the session start, `utcEpochNs`;
/// SPEC §10 decision in docs/ranks.md, "Processes of one nsys session"), so the processes'
/// clocks differ in id (the id names the process whose host program a wait belongs to) and
/// agree in domain and instance: one clock, comparable readings. The process is not part of
/// the instance.
fn clock_instance(session: SessionStart, file_name: &str) -> String {
    match session {
        SessionStart::Utc(ns) => format!("nsys session started at utcEpochNs {ns}"),
        SessionStart::Absent => format!(
            "nsys session of unknown start (no TARGET_INFO_SESSION_START_TIME: session-relative times only) in {file_name}"
        ),
        SessionStart::Ambiguous(n) => format!(
            "nsys session of unknown start (TARGET_INFO_SESSION_START_TIME holds {n} values) in {file_name}"
        ),
    }
}

/// Every stream with GPU work, or named by a wait or an event record.
fn stream_keys(j: &Joined) -> BTreeSet<StreamKey> {
    let mut keys: BTreeSet<StreamKey> = j.gpu.iter().map(|r| r.key).collect();
    for (s_idx, plan) in &j.plans {
        if let Plan::WaitStream { .. } | Plan::StreamWait { .. } = plan {
            keys.insert(j.syncs[*s_idx].key);
        }
        if let Plan::WaitEvent { record, .. } | Plan::StreamWait { record, .. } = plan {
            keys.insert(j.records[*record].0.key);
        }
    }
    keys
}

/// The suffix that tells `who` apart from the other (process, context) pairs of `group`:
/// `-<clock>` when the group's processes differ, `-ctx<c>` when its contexts do.
fn suffix(
    group: &BTreeSet<(Proc, i64)>,
    who: (Proc, i64),
    clock_of: &BTreeMap<Proc, usize>,
    clocks: &[RawClock],
) -> String {
    let procs: BTreeSet<Proc> = group.iter().map(|g| g.0).collect();
    let contexts: BTreeSet<i64> = group.iter().map(|g| g.1).collect();
    let mut s = String::new();
    if procs.len() > 1 {
        s.push('-');
        s.push_str(&clocks[clock_of[&who.0]].id);
    }
    if contexts.len() > 1 {
        s.push_str(&format!("-ctx{}", who.1));
    }
    s
}

/// Device labels, ordered by (device, process, context), and the index of each (process,
/// device, context) with a stream.
#[allow(clippy::type_complexity)]
fn device_labels(
    keys: &BTreeSet<StreamKey>,
    clock_of: &BTreeMap<Proc, usize>,
    clocks: &[RawClock],
) -> (Vec<String>, BTreeMap<(Proc, i64, i64), usize>) {
    let mut owners: BTreeMap<i64, BTreeSet<(Proc, i64)>> = BTreeMap::new();
    for k in keys {
        owners
            .entry(k.device)
            .or_default()
            .insert((k.proc, k.context));
    }
    let mut labels = Vec::new();
    let mut index = BTreeMap::new();
    for (device, group) in &owners {
        for &(proc, context) in group {
            index.insert((proc, *device, context), labels.len());
            labels.push(format!(
                "gpu{device}{}",
                suffix(group, (proc, context), clock_of, clocks)
            ));
        }
    }
    (labels, index)
}

/// Each stream's id, in key order: `gpu<d>-s<s>`, with a suffix only when another process
/// or context uses the same `(d, s)`.
fn stream_names(
    keys: &BTreeSet<StreamKey>,
    clock_of: &BTreeMap<Proc, usize>,
    clocks: &[RawClock],
) -> Vec<(StreamKey, String)> {
    let mut groups: BTreeMap<(i64, i64), BTreeSet<(Proc, i64)>> = BTreeMap::new();
    for k in keys {
        groups
            .entry((k.device, k.stream))
            .or_default()
            .insert((k.proc, k.context));
    }
    keys.iter()
        .map(|k| {
            let group = &groups[&(k.device, k.stream)];
            let tail = suffix(group, (k.proc, k.context), clock_of, clocks);
            (*k, format!("gpu{}-s{}{tail}", k.device, k.stream))
        })
        .collect()
}

/// The kinds of the declared streams that the file gives ([`kinds::stream_kinds`]).
fn declared_stream_kinds(
    export: &Export,
    stream_keys: &BTreeSet<StreamKey>,
    j: &Joined,
    procs: &BTreeSet<Proc>,
) -> Result<BTreeMap<StreamKey, RawStreamKind>, NsysError> {
    let per_thread: HashSet<StreamKey> = j
        .gpu
        .iter()
        .filter(|r| {
            j.call_of
                .get(&(r.key.proc, r.correlation))
                .is_some_and(|&c| {
                    let n = &j.names[&j.api[c].name_id];
                    n.contains("_ptsz") || n.contains("_ptds")
                })
        })
        .map(|r| r.key)
        .collect();
    let keys: Vec<StreamKey> = stream_keys.iter().copied().collect();
    let procs: Vec<Proc> = procs.iter().copied().collect();
    Ok(kinds::stream_kinds(
        &keys,
        &export.stream_info()?,
        export.stream_flag_names()?.as_ref(),
        &per_thread,
        &procs,
    ))
}

/// Every GPU row, in start order: a phase `kernel-<rowid>` (`memcpy-`, `memset-`) labelled
/// with the kernel's name, `memcpy HtoD 4096 B` or `memset 4096 B`.
fn work(export: &mut Export, j: &Joined, ids: &Ids) -> Result<Vec<activity::Work>, NsysError> {
    let mut kernel_names: HashMap<i64, String> = HashMap::new();
    let mut work = Vec::with_capacity(j.gpu.len());
    for r in &j.gpu {
        let label = match r.kind {
            GpuKind::Kernel => match r.name_id {
                Some(id) => {
                    if let Entry::Vacant(slot) = kernel_names.entry(id) {
                        let n = export
                            .string(id)?
                            .unwrap_or_else(|| format!("kernel (StringIds id {id} missing)"));
                        slot.insert(n);
                    }
                    kernel_names[&id].clone()
                }
                None => "kernel".to_owned(),
            },
            GpuKind::Memcpy => format!(
                "memcpy {}{}",
                copy_kind_name(r.copy_kind),
                r.bytes.map(|b| format!(" {b} B")).unwrap_or_default()
            ),
            GpuKind::Memset => format!(
                "memset{}",
                r.bytes.map(|b| format!(" {b} B")).unwrap_or_default()
            ),
        };
        let kind = match r.kind {
            GpuKind::Kernel => WorkKind::Kernel,
            GpuKind::Memcpy => WorkKind::Memcpy,
            GpuKind::Memset => WorkKind::Memset,
        };
        work.push(activity::Work {
            phase: phase_id(r).into(),
            class: WorkClass::of(kind, &label),
            label: label.into(),
            kind,
            stream: ids.stream_of[&r.key],
            start: r.start,
            end: r.end,
        });
    }
    Ok(work)
}

/// The launch of every GPU row whose call is in the file, when the call returns; the rows
/// without one are counted (never launched).
fn launch_steps(j: &mut Joined, ids: &Ids) -> Vec<Step> {
    let mut steps = Vec::new();
    for (w, r) in j.gpu.iter().enumerate() {
        match j.call_of.get(&(r.key.proc, r.correlation)) {
            Some(&c) => {
                let call = &j.api[c];
                steps.push(Step {
                    key: (call.end, 0, call.start, call.rowid, r.start, r.rowid),
                    clock: ids.clock_of[&r.key.proc],
                    op: Op::Launch(w),
                });
            }
            None => {
                *j.counts
                    .gpu_rows_without_call
                    .entry(r.kind.word())
                    .or_default() += 1;
            }
        }
    }
    steps
}

/// A host wait placed at its call's start, returning at its end.
fn host_wait(call: &super::read::ApiRow, clock: usize, id: String, target: Target) -> Step {
    Step {
        key: (call.start, 1, call.start, call.rowid, 0, 0),
        clock,
        op: Op::HostWait(Box::new(HostWait {
            id,
            target,
            start: call.start,
            returned: call.end,
            implicit: None,
        })),
    }
}

/// The waits and stream-waits of the classified sync rows (`sync-<rowid>`), and the event
/// records they name (each a record step when its call returns, and a declared event).
fn sync_steps(j: &mut Joined, ids: &Ids) -> (Vec<Step>, Vec<Record>) {
    let mut steps = Vec::new();
    let mut declared: BTreeSet<usize> = BTreeSet::new();
    for (s_idx, plan) in j.plans.clone() {
        let s = &j.syncs[s_idx];
        let (id, clock) = (format!("sync-{}", s.rowid), ids.clock_of[&s.key.proc]);
        match plan {
            Plan::WaitStream { call } => {
                *j.counts.waits.entry("stream").or_default() += 1;
                let target = Target::Stream(ids.stream_of[&s.key]);
                steps.push(host_wait(&j.api[call], clock, id, target));
            }
            Plan::WaitDevice { call } => {
                match ids.device_of.get(&(s.key.proc, s.key.device, s.key.context)) {
                    Some(&d) => {
                        *j.counts.waits.entry("device").or_default() += 1;
                        steps.push(host_wait(&j.api[call], clock, id, Target::Device(d)));
                    }
                    None => j.skipped.add(
                        "context/device sync rows of a context with no stream in the file: a wait that covers nothing is not declared".to_owned(),
                        s.rowid,
                    ),
                }
            }
            Plan::WaitEvent { call, record } => {
                *j.counts.waits.entry("event").or_default() += 1;
                declared.insert(record);
                let target = Target::Event(event_id(j.records[record].0.rowid));
                steps.push(host_wait(&j.api[call], clock, id, target));
            }
            Plan::StreamWait { call, record } => {
                j.counts.stream_waits += 1;
                declared.insert(record);
                let call = &j.api[call];
                steps.push(Step {
                    key: (call.end, 0, call.start, call.rowid, 0, s.rowid),
                    clock,
                    op: Op::StreamWait {
                        stream: ids.stream_of[&s.key],
                        event: event_id(j.records[record].0.rowid),
                    },
                });
            }
        }
    }
    let records = declared
        .into_iter()
        .map(|r| {
            let (e, call) = &j.records[r];
            let call = &j.api[call.expect("identified records have their call")];
            let step = Step {
                key: (call.end, 0, call.start, call.rowid, 0, e.rowid),
                clock: ids.clock_of[&e.key.proc],
                op: Op::Record(event_id(e.rowid)),
            };
            let event = RawEvent {
                id: event_id(e.rowid),
                stream: ids.stream_ids[ids.stream_of[&e.key]].clone(),
                timing: false,
                state: RawEventState::Completed,
                at: None,
            };
            (step, event, e.key)
        })
        .collect();
    (steps, records)
}

/// The implicit waits of synchronous copies (SPEC §4; [`crate::import::copies`]):
/// `copy-<rowid>` on the copy's stream, right after its launch, returning when its call
/// returns; not when another submission to that stream returned while the call ran.
fn copy_steps(
    export: &Export,
    j: &mut Joined,
    ids: &Ids,
    records: &[Record],
) -> Result<Vec<Step>, NsysError> {
    let submitted = submissions(j, records);
    let memory_kinds = export.memory_kinds()?;
    let mut steps = Vec::new();
    for (w, r) in j.gpu.iter().enumerate() {
        if r.kind != GpuKind::Memcpy {
            continue;
        }
        let Some(&c) = j.call_of.get(&(r.key.proc, r.correlation)) else {
            continue;
        };
        let call = &j.api[c];
        let Some(how) = copies::call_of(base_call_name(&j.names[&call.name_id])) else {
            continue;
        };
        let (direction, host) = kinds::copy_facts(r, memory_kinds.as_ref());
        let Some(implicit) = copies::implicit_wait(how, direction, host) else {
            continue;
        };
        if kinds::overtaken(&submitted[&r.key], call.start, call.end) {
            j.skipped.add(format!("{} copies during whose call another submission to the same stream returned (another thread): the copy's place in its stream is unknown, so no implicit wait is declared", implicit.word()), r.rowid);
            continue;
        }
        *j.counts.waits.entry(implicit_key(implicit)).or_default() += 1;
        // The same ordering key as the copy's launch, pushed after it: the sort is stable.
        let key: StepKey = (call.end, 0, call.start, call.rowid, r.start, r.rowid);
        steps.push(Step {
            key,
            clock: ids.clock_of[&r.key.proc],
            op: Op::HostWait(Box::new(HostWait {
                id: format!("copy-{}", r.rowid),
                target: Target::Stream(ids.stream_of[&r.key]),
                start: call.start,
                returned: call.end,
                implicit: Some((implicit, w)),
            })),
        });
    }
    Ok(steps)
}

/// When each submission to a stream returned (launches, event records, stream-waits), sorted
/// per stream.
fn submissions(j: &Joined, records: &[Record]) -> HashMap<StreamKey, Vec<i64>> {
    let mut submitted: HashMap<StreamKey, Vec<i64>> = HashMap::new();
    for r in &j.gpu {
        if let Some(&c) = j.call_of.get(&(r.key.proc, r.correlation)) {
            submitted.entry(r.key).or_default().push(j.api[c].end);
        }
    }
    for (step, _, key) in records {
        submitted.entry(*key).or_default().push(step.key.0);
    }
    for (s_idx, plan) in &j.plans {
        if let Plan::StreamWait { call, .. } = plan {
            submitted
                .entry(j.syncs[*s_idx].key)
                .or_default()
                .push(j.api[*call].end);
        }
    }
    submitted.values_mut().for_each(|v| v.sort_unstable());
    submitted
}

/// The summary's word for an implicit wait (`Counts::waits`).
fn implicit_key(kind: RawImplicit) -> &'static str {
    match kind {
        RawImplicit::SyncCopyDtoh => "stream (implicit: sync-copy-dtoh)",
        RawImplicit::AsyncCopyDtohPageable => "stream (implicit: async-copy-dtoh-pageable)",
        RawImplicit::PageableHtod => "stream (implicit: pageable-htod)",
    }
}

/// CUPTI's `copyKind` numbers (`CUpti_ActivityMemcpyKind`).
fn copy_kind_name(kind: Option<i64>) -> String {
    match kind {
        Some(1) => "HtoD".into(),
        Some(2) => "DtoH".into(),
        Some(3) => "HtoA".into(),
        Some(4) => "AtoH".into(),
        Some(5) => "AtoA".into(),
        Some(6) => "AtoD".into(),
        Some(7) => "DtoA".into(),
        Some(8) => "DtoD".into(),
        Some(9) => "HtoH".into(),
        Some(10) => "PtoP".into(),
        Some(n) => format!("kind {n}"),
        None => "kind unknown".into(),
    }
}

fn phase_id(r: &GpuRow) -> String {
    format!("{}-{}", r.kind.word(), r.rowid)
}

fn event_id(rowid: i64) -> String {
    format!("event-{rowid}")
}
