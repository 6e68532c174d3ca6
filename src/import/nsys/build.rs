//! The mapping from the rows of an export to a case (the decisions are listed in the
//! module documentation of [`super`]; this file carries them out).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::error::NsysError;
use super::read::{
    ApiRow, EventRow, Export, GpuKind, GpuRow, Proc, SessionStart, StreamKey, SyncRow,
};
use super::summary::{Counts, DeviceSummary, NsysSummary, ProcessSummary, StreamSummary};
use super::{kinds, NsysImport};
use crate::case::raw::{
    RawCase, RawClock, RawEvent, RawEventState, RawImplicit, RawOp, RawPhase, RawQuestion,
    RawStream, RawStreamKind, RawTime,
};
use crate::import::copies;
use crate::interval::{analyze, Interval};
use crate::units::Nanos;

/// The clock domain of every imported clock.
pub const DOMAIN: &str = "nsys-session";

/// The device of a sync row whose context has no GPU row (CUPTI device ids are small).
const UNKNOWN_DEVICE: i64 = -1;

/// How many example rowids a skipped-row note lists.
const EXAMPLES: usize = 3;

/// Reads everything and builds the case and its summary.
pub(crate) fn build(
    export: &mut Export,
    file_name: &str,
    name: &str,
) -> Result<NsysImport, NsysError> {
    if !export.looks_like_nsys() {
        return Err(NsysError::new(
            "$",
            "not-nsys",
            format!(
                "an SQLite database with {} table(s), none of them an Nsight Systems one \
                 (StringIds, CUPTI_ACTIVITY_KIND_*, TARGET_INFO_*, META_DATA_EXPORT); \
                 an `nsys export --type sqlite` file is expected",
                export.table_count()
            ),
        ));
    }
    let mut gpu: Vec<GpuRow> = Vec::new();
    for kind in GpuKind::ALL {
        gpu.extend(export.gpu_rows(kind)?);
    }
    let api_all = export.api_rows()?;
    let syncs = export.sync_rows()?;
    let event_rows = export.event_rows()?;
    refuse_repeated_rowids(
        gpu.iter().map(|r| (r.kind.table(), r.rowid)).chain(
            event_rows
                .iter()
                .map(|e| (super::read::CUDA_EVENT, e.rowid)),
        ),
    )?;
    if gpu.is_empty() && api_all.is_empty() && syncs.is_empty() {
        return Err(NsysError::new(
            "$",
            "no-cuda-activity",
            "an Nsight Systems export without CUDA rows: CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, \
             _MEMSET, _RUNTIME and _SYNCHRONIZATION are absent or empty (nsys creates a table \
             only when it has rows); a profile taken with `--trace=cuda` is expected",
        ));
    }
    let mut counts = Counts::default();
    let mut skipped = Skipped::default();

    // GPU rows: drop "not collected" (0, 0) rows, refuse reversed ones.
    for kind in GpuKind::ALL {
        counts
            .gpu_rows
            .insert(kind.word(), gpu.iter().filter(|r| r.kind == kind).count());
    }
    gpu.retain(|r| {
        let uncollected = r.start == 0 && r.end == 0;
        if uncollected {
            skipped.add(
                format!("{} rows with start = end = 0 (CUPTI could not collect their timestamps): left out", r.kind.word()),
                r.rowid,
            );
        }
        !uncollected
    });
    if let Some(r) = gpu.iter().find(|r| r.end < r.start) {
        return Err(NsysError::new(
            format!("{}[rowid {}].end", r.kind.table(), r.rowid),
            "bad-row",
            format!(
                "the row ends at {} ns, before its start {} ns",
                r.end, r.start
            ),
        ));
    }
    gpu.sort_by_key(|r| (r.start, r.end, r.kind, r.rowid));

    // API calls: keep runtime (0) and driver (1) rows; one call per (process, correlationId).
    let (api, duplicates) = dedup_calls(&api_all, &mut counts);
    counts.duplicate_api_rows = duplicates;
    let call_of: HashMap<(Proc, i64), usize> = api
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.proc, c.correlation), i))
        .collect();
    if let Some(c) = api.iter().find(|c| c.end < c.start) {
        return Err(NsysError::new(
            format!("{}[rowid {}].end", super::read::RUNTIME, c.rowid),
            "bad-row",
            format!(
                "the call ends at {} ns, before its start {} ns",
                c.end, c.start
            ),
        ));
    }
    counts.api_calls = api.len();

    // Calls that normally queue GPU work, without any GPU row.
    let gpu_keys: HashSet<(Proc, i64)> = gpu.iter().map(|r| (r.key.proc, r.correlation)).collect();
    let mut names: HashMap<i64, String> = HashMap::new();
    for c in &api {
        if let Entry::Vacant(slot) = names.entry(c.name_id) {
            let n = export
                .string(c.name_id)?
                .unwrap_or_else(|| format!("<StringIds id {} missing>", c.name_id));
            slot.insert(n);
        }
    }
    for c in &api {
        if gpu_keys.contains(&(c.proc, c.correlation)) {
            continue;
        }
        let base = api_base(&names[&c.name_id]);
        if queues_gpu_work(base) {
            *counts
                .calls_without_gpu_row
                .entry(base.to_owned())
                .or_default() += 1;
        }
    }

    // The device of each (process, context), from GPU rows. The sync table's own deviceId is
    // not used: CUPTI's synchronization record has no device, and nsys writes 0 there (in
    // mfu_2gpu_before, process 145's context 2 runs every kernel on device 1, while its sync
    // rows say device 0).
    let mut ctx_device: HashMap<(Proc, i64), i64> = HashMap::new();
    for r in &gpu {
        ctx_device
            .entry((r.key.proc, r.key.context))
            .or_insert(r.key.device);
    }
    for e in &event_rows {
        ctx_device
            .entry((e.key.proc, e.key.context))
            .or_insert(e.key.device);
    }
    let syncs: Vec<SyncRow> = syncs
        .into_iter()
        .map(|mut s| {
            s.key.device = ctx_device
                .get(&(s.key.proc, s.key.context))
                .copied()
                .unwrap_or(UNKNOWN_DEVICE);
            s
        })
        .collect();
    let event_rows: Vec<EventRow> = event_rows
        .into_iter()
        .map(|mut e| {
            e.key.device = ctx_device[&(e.key.proc, e.key.context)];
            e
        })
        .collect();

    // Events recorded in streams (CUDA_EVENT rows), placed by their record call.
    let records: Vec<(EventRow, Option<&ApiRow>)> = event_rows
        .into_iter()
        .map(|e| {
            let call = call_of.get(&(e.key.proc, e.correlation)).map(|&i| &api[i]);
            (e, call)
        })
        .collect();
    let mut records_by_event: HashMap<(Proc, i64), Vec<usize>> = HashMap::new();
    for (i, (e, _)) in records.iter().enumerate() {
        records_by_event
            .entry((e.key.proc, e.event))
            .or_default()
            .push(i);
    }

    // Synchronization rows: classify by the API call that made them.
    counts.sync_rows = syncs.len();
    let mut plans: Vec<(usize, Plan)> = Vec::new();
    for (s_idx, s) in syncs.iter().enumerate() {
        let Some(&c_idx) = call_of.get(&(s.key.proc, s.correlation)) else {
            skipped.add(
                "sync rows whose API call is not in the file: without the call's name the sync cannot be classified, so no wait is declared".to_owned(),
                s.rowid,
            );
            continue;
        };
        let call = &api[c_idx];
        let api_name = api_base(&names[&call.name_id]).to_owned();
        let kind = classify(&api_name);
        let needs_device = matches!(
            kind,
            SyncKind::Stream | SyncKind::Context | SyncKind::StreamWaitEvent
        );
        if needs_device && s.key.device == UNKNOWN_DEVICE {
            skipped.add(
                format!("{api_name} sync rows of a context with no GPU row in the file: its device is unknown, so no wait is declared"),
                s.rowid,
            );
            continue;
        }
        match kind {
            SyncKind::Stream => {
                if s.key.stream == super::read::NONE_ID {
                    skipped.add(format!("{api_name} sync rows without a stream id: no wait is declared"), s.rowid);
                } else {
                    plans.push((s_idx, Plan::WaitStream { call: c_idx }));
                }
            }
            SyncKind::Context => plans.push((s_idx, Plan::WaitDevice { call: c_idx })),
            SyncKind::Event | SyncKind::StreamWaitEvent => {
                let is_wait = kind == SyncKind::Event;
                let found = s.event.and_then(|ev| {
                    identify_record(s, call, ev, &records, &records_by_event)
                });
                match found {
                    Some(r) if is_wait => plans.push((s_idx, Plan::WaitEvent { call: c_idx, record: r })),
                    Some(r) if s.key.stream != super::read::NONE_ID => {
                        plans.push((s_idx, Plan::StreamWait { call: c_idx, record: r }))
                    }
                    Some(_) => skipped.add(format!("{api_name} sync rows without the waiting stream's id: no stream-wait is declared"), s.rowid),
                    None => skipped.add(
                        format!(
                            "{api_name} sync rows whose event cannot be tied to the record that it waits for ({}): no {} is declared",
                            if records.is_empty() {
                                "the file has no CUPTI_ACTIVITY_KIND_CUDA_EVENT rows"
                            } else {
                                "no CUDA_EVENT row of that event id is recorded by an earlier call of the process"
                            },
                            if is_wait { "host wait" } else { "stream-wait" }
                        ),
                        s.rowid,
                    ),
                }
            }
            SyncKind::Query => skipped.add(
                format!("{api_name} sync rows: a query polls and returns at once, it is not a wait"),
                s.rowid,
            ),
            SyncKind::Other => skipped.add(
                format!("sync rows made by {api_name}, which this reader does not classify: no wait is declared"),
                s.rowid,
            ),
        }
    }

    // Processes, clocks.
    let session = export.session_start()?;
    let mut procs: BTreeSet<Proc> = BTreeSet::new();
    procs.extend(gpu.iter().map(|r| r.key.proc));
    procs.extend(api.iter().map(|c| c.proc));
    procs.extend(syncs.iter().map(|s| s.key.proc));
    let mut clock_of: BTreeMap<Proc, String> = BTreeMap::new();
    let mut used: HashSet<String> = HashSet::new();
    for p in &procs {
        let mut id = format!("pid{}", p.pid());
        let mut n = 2;
        while used.contains(&id) {
            id = format!("pid{}-{n}", p.pid());
            n += 1;
        }
        used.insert(id.clone());
        clock_of.insert(*p, id);
    }
    let mut case = RawCase::new(name);
    for (p, id) in &clock_of {
        case.clocks.push(RawClock {
            id: id.clone(),
            domain: DOMAIN.to_owned(),
            instance: Some(clock_instance(session, file_name, *p)),
        });
    }

    // Streams: every stream with GPU work, or named by a wait or an event record.
    let mut stream_keys: BTreeSet<StreamKey> = gpu.iter().map(|r| r.key).collect();
    for (s_idx, plan) in &plans {
        let s = &syncs[*s_idx];
        match plan {
            Plan::WaitStream { .. } | Plan::StreamWait { .. } => {
                stream_keys.insert(s.key);
            }
            Plan::WaitDevice { .. } => {}
            Plan::WaitEvent { .. } => {}
        }
        if let Plan::WaitEvent { record, .. } | Plan::StreamWait { record, .. } = plan {
            stream_keys.insert(records[*record].0.key);
        }
    }
    let mut owners: BTreeMap<i64, BTreeSet<(Proc, i64)>> = BTreeMap::new();
    for k in &stream_keys {
        owners
            .entry(k.device)
            .or_default()
            .insert((k.proc, k.context));
    }
    let device_label = |proc: Proc, device: i64, context: i64| -> Option<String> {
        let set = owners.get(&device)?;
        if !set.contains(&(proc, context)) {
            return None;
        }
        Some(if set.len() == 1 {
            format!("gpu{device}")
        } else {
            format!("gpu{device}-{}-ctx{context}", clock_of[&proc])
        })
    };
    let stream_kinds =
        declared_stream_kinds(export, &stream_keys, &gpu, &api, &call_of, &names, &procs)?;
    let mut stream_id: BTreeMap<StreamKey, String> = BTreeMap::new();
    for k in &stream_keys {
        let id = format!(
            "{}-gpu{}-ctx{}-s{}",
            clock_of[&k.proc], k.device, k.context, k.stream
        );
        case.streams.push(RawStream {
            id: id.clone(),
            clock: clock_of[&k.proc].clone(),
            device: device_label(k.proc, k.device, k.context)
                .expect("every declared stream has an owner"),
            kind: stream_kinds.get(k).copied(),
        });
        stream_id.insert(*k, id);
    }

    // Phases: every GPU row, in start order.
    let mut kernel_names: HashMap<i64, String> = HashMap::new();
    for r in &gpu {
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
        case.phases.push(RawPhase {
            id: phase_id(r),
            label: Some(label),
            stream: Some(stream_id[&r.key].clone()),
            clock: None,
            start: t(r.start),
            end: t(r.end),
        });
    }

    // The program: launches, event records, stream-waits and host waits in host-time order.
    let mut items: Vec<Item> = Vec::new();
    for r in &gpu {
        match call_of.get(&(r.key.proc, r.correlation)) {
            Some(&c) => items.push(Item {
                at: api[c].end,
                rank: 0,
                tie: (api[c].start, api[c].rowid, r.start, r.rowid),
                op: RawOp::Launch { phase: phase_id(r) },
            }),
            None => {
                *counts
                    .gpu_rows_without_call
                    .entry(r.kind.word())
                    .or_default() += 1;
            }
        }
    }
    let mut declared_events: BTreeSet<usize> = BTreeSet::new();
    for (s_idx, plan) in &plans {
        let s = &syncs[*s_idx];
        let wait_id = format!("sync-{}", s.rowid);
        let clock = clock_of[&s.key.proc].clone();
        match *plan {
            Plan::WaitStream { call } => {
                counts.waits.entry("stream").and_modify(|n| *n += 1).or_insert(1);
                items.push(host_wait(&api[call], RawOp::HostWait {
                    id: wait_id,
                    event: None,
                    stream: Some(stream_id[&s.key].clone()),
                    device: None,
                    clock: Some(clock),
                    at: Some(t(api[call].end)),
                    implicit: None,
                    copy: None,
                }));
            }
            Plan::WaitDevice { call } => match device_label(s.key.proc, s.key.device, s.key.context) {
                Some(device) => {
                    counts.waits.entry("device").and_modify(|n| *n += 1).or_insert(1);
                    items.push(host_wait(&api[call], RawOp::HostWait {
                        id: wait_id,
                        event: None,
                        stream: None,
                        device: Some(device),
                        clock: Some(clock),
                        at: Some(t(api[call].end)),
                        implicit: None,
                        copy: None,
                    }));
                }
                None => skipped.add(
                    "context/device sync rows of a context with no stream in the file: a wait that covers nothing is not declared".to_owned(),
                    s.rowid,
                ),
            },
            Plan::WaitEvent { call, record } => {
                counts.waits.entry("event").and_modify(|n| *n += 1).or_insert(1);
                declared_events.insert(record);
                items.push(host_wait(&api[call], RawOp::HostWait {
                    id: wait_id,
                    event: Some(event_id(&records[record].0)),
                    stream: None,
                    device: None,
                    clock: Some(clock),
                    at: Some(t(api[call].end)),
                    implicit: None,
                    copy: None,
                }));
            }
            Plan::StreamWait { call, record } => {
                counts.stream_waits += 1;
                declared_events.insert(record);
                items.push(Item {
                    at: api[call].end,
                    rank: 0,
                    tie: (api[call].start, api[call].rowid, 0, s.rowid),
                    op: RawOp::StreamWait {
                        stream: stream_id[&s.key].clone(),
                        event: event_id(&records[record].0),
                    },
                });
            }
        }
    }
    for &r in &declared_events {
        let (e, call) = &records[r];
        let call = call.expect("identified records have their call");
        case.events.push(RawEvent {
            id: event_id(e),
            stream: stream_id[&e.key].clone(),
            timing: false,
            state: RawEventState::Completed,
            at: None,
        });
        items.push(Item {
            at: call.end,
            rank: 0,
            tie: (call.start, call.rowid, 0, e.rowid),
            op: RawOp::Record { event: event_id(e) },
        });
    }
    let mut submitted: HashMap<StreamKey, Vec<i64>> = HashMap::new();
    for r in &gpu {
        if let Some(&c) = call_of.get(&(r.key.proc, r.correlation)) {
            submitted.entry(r.key).or_default().push(api[c].end);
        }
    }
    for &r in &declared_events {
        if let (e, Some(call)) = &records[r] {
            submitted.entry(e.key).or_default().push(call.end);
        }
    }
    for (s_idx, plan) in &plans {
        if let Plan::StreamWait { call, .. } = plan {
            submitted
                .entry(syncs[*s_idx].key)
                .or_default()
                .push(api[*call].end);
        }
    }
    submitted.values_mut().for_each(|v| v.sort_unstable());
    let memory_kinds = export.memory_kinds()?;
    for r in gpu.iter().filter(|r| r.kind == GpuKind::Memcpy) {
        let Some(&c) = call_of.get(&(r.key.proc, r.correlation)) else {
            continue;
        };
        let call = &api[c];
        let Some(how) = copies::call_of(api_base(&names[&call.name_id])) else {
            continue;
        };
        let (direction, host) = kinds::copy_facts(r, memory_kinds.as_ref());
        let Some(implicit) = copies::implicit_wait(how, direction, host) else {
            continue;
        };
        if kinds::overtaken(&submitted[&r.key], call.start, call.end) {
            skipped.add(format!("{} copies during whose call another submission to the same stream returned (another thread): the copy's place in its stream is unknown, so no implicit wait is declared", implicit.word()), r.rowid);
            continue;
        }
        *counts.waits.entry(implicit_key(implicit)).or_default() += 1;
        // The same ordering key as the copy's launch, pushed after it: the sort is stable.
        items.push(Item {
            at: call.end,
            rank: 0,
            tie: (call.start, call.rowid, r.start, r.rowid),
            op: RawOp::HostWait {
                id: format!("copy-{}", r.rowid),
                event: None,
                stream: Some(stream_id[&r.key].clone()),
                device: None,
                clock: Some(clock_of[&r.key.proc].clone()),
                at: Some(t(call.end)),
                implicit: Some(implicit),
                copy: Some(phase_id(r)),
            },
        });
    }
    items.sort_by_key(|i| (i.at, i.rank, i.tie));
    case.program = items.into_iter().map(|i| i.op).collect();

    // Questions and the summary's algebra.
    let mut rows_of: BTreeMap<StreamKey, Vec<&GpuRow>> = BTreeMap::new();
    for r in &gpu {
        rows_of.entry(r.key).or_default().push(r);
    }
    let mut streams_summary = Vec::new();
    for (k, rows) in &rows_of {
        let id = &stream_id[k];
        case.questions
            .push(intervals_question(format!("stream-{id}"), rows));
        let count = |kind| rows.iter().filter(|r| r.kind == kind).count();
        streams_summary.push(StreamSummary {
            id: id.clone(),
            clock: clock_of[&k.proc].clone(),
            device: device_label(k.proc, k.device, k.context).unwrap_or_default(),
            kernels: count(GpuKind::Kernel),
            memcpys: count(GpuKind::Memcpy),
            memsets: count(GpuKind::Memset),
            all: analyze(&intervals(rows)),
        });
    }
    let mut by_device: BTreeMap<String, (String, Vec<&GpuRow>)> = BTreeMap::new();
    for r in &gpu {
        let label = device_label(r.key.proc, r.key.device, r.key.context).unwrap_or_default();
        by_device
            .entry(label)
            .or_insert_with(|| (clock_of[&r.key.proc].clone(), Vec::new()))
            .1
            .push(r);
    }
    let mut devices_summary = Vec::new();
    for (label, (clock, rows)) in &by_device {
        let of = |kind: GpuKind| -> Vec<&GpuRow> {
            rows.iter().copied().filter(|r| r.kind == kind).collect()
        };
        let (k, c, m) = (
            of(GpuKind::Kernel),
            of(GpuKind::Memcpy),
            of(GpuKind::Memset),
        );
        case.questions
            .push(intervals_question(format!("device-{label}"), rows));
        for (word, set) in [("kernels", &k), ("memcpy", &c), ("memset", &m)] {
            if !set.is_empty() {
                case.questions
                    .push(intervals_question(format!("device-{label}-{word}"), set));
            }
        }
        let kc: Vec<&GpuRow> = k.iter().chain(c.iter()).copied().collect();
        devices_summary.push(DeviceSummary {
            device: label.clone(),
            clock: clock.clone(),
            all: analyze(&intervals(rows)),
            kernels: analyze(&intervals(&k)),
            memcpy: analyze(&intervals(&c)),
            memset: analyze(&intervals(&m)),
            kernels_or_memcpy_union_ns: analyze(&intervals(&kc)).union_ns,
        });
    }

    let processes = clock_of
        .iter()
        .map(|(p, clock)| ProcessSummary {
            pid: p.pid(),
            global_pid: p.0,
            clock: clock.clone(),
            api_calls: api.iter().filter(|c| c.proc == *p).count(),
            gpu_rows: gpu.iter().filter(|r| r.key.proc == *p).count(),
        })
        .collect();
    let export_info = export.export_info()?;
    let gpus = export.gpus()?;
    let mut notes = skipped.notes();
    match session {
        SessionStart::Utc(_) => {}
        SessionStart::Absent => notes.insert(0, "the file has no TARGET_INFO_SESSION_START_TIME (nsys 2021.2 wrote none): times are session-relative only, and each clock's instance says its start is unknown".to_owned()),
        SessionStart::Ambiguous(n) => notes.insert(0, format!("TARGET_INFO_SESSION_START_TIME holds {n} different values: none is used, and each clock's instance says its start is unknown")),
    }
    if !export_info.derived.is_empty() {
        notes.insert(0, format!(
            "the export metadata says the file was derived from another ({}): totals describe what was kept, not the whole run",
            export_info.derived.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
        ));
    }
    let summary = NsysSummary {
        file: file_name.to_owned(),
        export: export_info,
        session_start_utc_ns: match session {
            SessionStart::Utc(ns) => Some(ns),
            _ => None,
        },
        gpus,
        processes,
        streams: streams_summary,
        devices: devices_summary,
        counts,
        notes,
    };
    case.description = Some(describe(&summary));
    case.provenance = Some(provenance(&summary));
    Ok(NsysImport { case, summary })
}

/// The summary's word for an implicit wait (`Counts::waits`).
fn implicit_key(kind: RawImplicit) -> &'static str {
    match kind {
        RawImplicit::SyncCopyDtoh => "stream (implicit: sync-copy-dtoh)",
        RawImplicit::AsyncCopyDtohPageable => "stream (implicit: async-copy-dtoh-pageable)",
        RawImplicit::PageableHtod => "stream (implicit: pageable-htod)",
    }
}

/// The kinds of the declared streams that the file gives ([`kinds::stream_kinds`]).
fn declared_stream_kinds(
    export: &Export,
    stream_keys: &BTreeSet<StreamKey>,
    gpu: &[GpuRow],
    api: &[ApiRow],
    call_of: &HashMap<(Proc, i64), usize>,
    names: &HashMap<i64, String>,
    procs: &BTreeSet<Proc>,
) -> Result<BTreeMap<StreamKey, RawStreamKind>, NsysError> {
    let per_thread: HashSet<StreamKey> = gpu
        .iter()
        .filter(|r| {
            call_of.get(&(r.key.proc, r.correlation)).is_some_and(|&c| {
                let n = &names[&api[c].name_id];
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

/// What a sync row's API call asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SyncKind {
    /// `cudaStreamSynchronize`: the host waits for one stream.
    Stream,
    /// `cudaDeviceSynchronize`, `cuCtxSynchronize`: the host waits for the whole context.
    Context,
    /// `cudaEventSynchronize`: the host waits for an event.
    Event,
    /// `cudaStreamWaitEvent`: a stream (not the host) waits for an event.
    StreamWaitEvent,
    /// `cudaEventQuery`, `cudaStreamQuery`: a poll, not a wait.
    Query,
    /// Anything else.
    Other,
}

fn classify(api: &str) -> SyncKind {
    match api {
        "cudaStreamSynchronize" | "cuStreamSynchronize" => SyncKind::Stream,
        "cudaDeviceSynchronize" | "cudaThreadSynchronize" | "cuCtxSynchronize" => SyncKind::Context,
        "cudaEventSynchronize" | "cuEventSynchronize" => SyncKind::Event,
        "cudaStreamWaitEvent" | "cuStreamWaitEvent" => SyncKind::StreamWaitEvent,
        "cudaEventQuery" | "cuEventQuery" | "cudaStreamQuery" | "cuStreamQuery" => SyncKind::Query,
        _ => SyncKind::Other,
    }
}

/// A planned op from one sync row (indices into the call and event-record lists).
#[derive(Clone, Copy, Debug)]
enum Plan {
    WaitStream { call: usize },
    WaitDevice { call: usize },
    WaitEvent { call: usize, record: usize },
    StreamWait { call: usize, record: usize },
}

/// A program op with its place in host time.
struct Item {
    /// Host time that orders it: a submission's call end, a host wait's call start.
    at: i64,
    /// At equal times, submissions (0) come before host waits (1).
    rank: u8,
    /// Deterministic order beyond that.
    tie: (i64, i64, i64, i64),
    op: RawOp,
}

fn host_wait(call: &ApiRow, op: RawOp) -> Item {
    Item {
        at: call.start,
        rank: 1,
        tie: (call.start, call.rowid, 0, 0),
        op,
    }
}

/// Rows set aside, grouped by why, with a few example rowids each.
#[derive(Default)]
struct Skipped(BTreeMap<String, (usize, Vec<i64>)>);

impl Skipped {
    fn add(&mut self, why: String, rowid: i64) {
        let entry = self.0.entry(why).or_default();
        entry.0 += 1;
        if entry.1.len() < EXAMPLES {
            entry.1.push(rowid);
        }
    }

    fn notes(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|(why, (n, examples))| {
                format!(
                    "{n} {why} (rowid {}{})",
                    examples
                        .iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    if *n > examples.len() { ", …" } else { "" }
                )
            })
            .collect()
    }
}

/// Runtime and driver calls, one per (process, correlationId), and how many rows were set
/// aside as duplicates of a kept call.
///
/// Rows of another `eventClass` (67, CUDA backtrace rows in nsys 2022.2) are not calls: they
/// are counted by class, and those that repeat a kept call's correlationId are also counted
/// as duplicates. Two calls with one key keep the innermost (latest start, then earliest end),
/// since a wrapper row encloses the call it wraps.
fn dedup_calls(all: &[ApiRow], counts: &mut Counts) -> (Vec<ApiRow>, usize) {
    let mut kept: HashMap<(Proc, i64), ApiRow> = HashMap::new();
    let mut others: Vec<&ApiRow> = Vec::new();
    let mut duplicates = 0usize;
    for row in all {
        match row.class {
            None | Some(0) | Some(1) => {
                let key = (row.proc, row.correlation);
                match kept.get(&key) {
                    None => {
                        kept.insert(key, row.clone());
                    }
                    Some(old) => {
                        duplicates += 1;
                        let inner = (
                            row.start,
                            std::cmp::Reverse(row.end),
                            std::cmp::Reverse(row.rowid),
                        ) > (
                            old.start,
                            std::cmp::Reverse(old.end),
                            std::cmp::Reverse(old.rowid),
                        );
                        if inner {
                            kept.insert(key, row.clone());
                        }
                    }
                }
            }
            Some(class) => {
                *counts.other_class_rows.entry(class).or_default() += 1;
                others.push(row);
            }
        }
    }
    duplicates += others
        .iter()
        .filter(|r| kept.contains_key(&(r.proc, r.correlation)))
        .count();
    let mut calls: Vec<ApiRow> = kept.into_values().collect();
    calls.sort_by_key(|c| (c.start, c.rowid));
    (calls, duplicates)
}

/// The CUDA_EVENT row that a sync on `event` refers to: same process and event id (and the
/// same `eventSyncId` when both rows carry one), recorded by the latest call that ended
/// before the sync's call started. Event ids are reused, hence "latest before".
fn identify_record(
    sync: &SyncRow,
    call: &ApiRow,
    event: i64,
    records: &[(EventRow, Option<&ApiRow>)],
    by_event: &HashMap<(Proc, i64), Vec<usize>>,
) -> Option<usize> {
    by_event
        .get(&(sync.key.proc, event))?
        .iter()
        .copied()
        .filter(|&i| {
            let (e, rec_call) = &records[i];
            let linked = match (sync.event_sync_id, e.event_sync_id) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            };
            linked && rec_call.is_some_and(|c| c.end <= call.start)
        })
        .max_by_key(|&i| {
            let c = records[i].1.expect("filtered on the call");
            (c.end, c.rowid)
        })
}

/// `cudaLaunchKernel` from `cudaLaunchKernel_v7000`; also drops `_ptsz` / `_ptds`.
fn api_base(name: &str) -> &str {
    let mut base = name;
    loop {
        let before = base;
        for suffix in ["_ptsz", "_ptds"] {
            base = base.strip_suffix(suffix).unwrap_or(base);
        }
        if let Some(i) = base.rfind("_v") {
            let digits = &base[i + 2..];
            if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
                base = &base[..i];
            }
        }
        if base == before {
            return base;
        }
    }
}

/// Whether a call normally queues GPU work that CUPTI reports as a kernel, copy or set.
fn queues_gpu_work(api: &str) -> bool {
    let launch = api.contains("Launch") && !api.contains("HostFunc");
    let copy_or_set = ["cudaMemcpy", "cuMemcpy", "cudaMemset", "cuMemset"]
        .iter()
        .any(|p| api.starts_with(p));
    launch || copy_or_set
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

/// A table that returns one rowid twice is damaged (a valid b-tree cannot): the ids built
/// from rowids would collide, so it is an input error naming the row, never a case that
/// does not validate.
fn refuse_repeated_rowids<'a>(rows: impl Iterator<Item = (&'a str, i64)>) -> Result<(), NsysError> {
    let mut seen = std::collections::HashSet::new();
    for (table, rowid) in rows {
        if !seen.insert((table, rowid)) {
            return Err(NsysError::new(
                format!("{table}[rowid {rowid}]"),
                "duplicate-row",
                "the table returns this rowid twice; a rowid is unique in an intact SQLite table (a damaged file?)",
            ));
        }
    }
    Ok(())
}

fn phase_id(r: &GpuRow) -> String {
    format!("{}-{}", r.kind.word(), r.rowid)
}

fn event_id(e: &EventRow) -> String {
    format!("event-{}", e.rowid)
}

fn t(ns: i64) -> RawTime {
    RawTime::from(Nanos::new(ns))
}

fn intervals(rows: &[&GpuRow]) -> Vec<Interval> {
    rows.iter()
        .map(|r| {
            Interval::new(Nanos::new(r.start), Nanos::new(r.end))
                .expect("reversed rows are refused above")
        })
        .collect()
}

fn intervals_question(id: String, rows: &[&GpuRow]) -> RawQuestion {
    RawQuestion::Intervals {
        id,
        phases: Some(rows.iter().map(|r| phase_id(r)).collect()),
        expect: None,
    }
}

fn clock_instance(session: SessionStart, file_name: &str, p: Proc) -> String {
    let process = format!("process pid {} (globalPid {})", p.pid(), p.0);
    match session {
        SessionStart::Utc(ns) => format!("nsys session started at utcEpochNs {ns}; {process}"),
        SessionStart::Absent => format!(
            "nsys session of unknown start (no TARGET_INFO_SESSION_START_TIME: session-relative times only) in {file_name}; {process}"
        ),
        SessionStart::Ambiguous(n) => format!(
            "nsys session of unknown start (TARGET_INFO_SESSION_START_TIME holds {n} values) in {file_name}; {process}"
        ),
    }
}

fn describe(s: &NsysSummary) -> String {
    let rows = |w: &str| s.counts.gpu_rows.get(w).copied().unwrap_or(0);
    format!(
        "Imported from the Nsight Systems export {} ({}): {} kernel, {} memcpy and {} memset rows \
         on {} stream(s) of {} process(es). Times are the file's own integer ns on the session \
         axis (absolute = utcEpochNs + t). Each process is its own clock. GPU rows whose \
         launching call is missing are phases that are never launched.",
        s.file,
        s.export.version_line(),
        rows("kernel"),
        rows("memcpy"),
        rows("memset"),
        s.streams.len(),
        s.processes.len()
    )
}

fn provenance(s: &NsysSummary) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("source".into(), json!("nsys-sqlite"));
    p.insert("file".into(), json!(s.file));
    p.insert("metadata_table".into(), json!(s.export.metadata_table));
    p.insert("nsys_version".into(), json!(s.export.nsys_version));
    p.insert("schema_version".into(), json!(s.export.schema_version));
    p.insert("nsys_version_in_paths".into(), json!(s.export.path_version));
    if !s.export.derived.is_empty() {
        let derived: Map<String, Value> = s
            .export
            .derived
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        p.insert("derived".into(), Value::Object(derived));
    }
    p.insert(
        "session_start_utc_epoch_ns".into(),
        json!(s.session_start_utc_ns),
    );
    p.insert(
        "gpus".into(),
        Value::Array(
            s.gpus
                .iter()
                .map(|g| json!({"id": g.id, "cuDevice": g.cu_device, "name": g.name, "uuid": g.uuid, "busLocation": g.bus}))
                .collect(),
        ),
    );
    p.insert("counts".into(), s.counts.to_json());
    p.insert("notes".into(), json!(s.notes));
    p
}
