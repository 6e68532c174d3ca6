//! The rows of an export, checked and joined: GPU rows kept (uncollected ones set aside,
//! reversed ones refused), one API call per (process, correlationId), each sync row's device
//! taken from its context's GPU rows, event records tied to their calls, and every sync row
//! classified by the API call that made it ([`Plan`]) or set aside with its reason.
//!
//! The decisions are listed in the module documentation of [`super`]; [`super::activities`]
//! turns the joined rows into the format-neutral intermediate.

use crate::trace::model::base_call_name;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};

use super::error::NsysError;
use super::facts::Counts;
use super::read::{self, ApiRow, EventRow, Export, GpuKind, GpuRow, Proc, SyncRow};

/// The device of a sync row whose context has no GPU row (CUPTI device ids are small).
pub(super) const UNKNOWN_DEVICE: i64 = -1;

/// How many example rowids a skipped-row note lists.
const EXAMPLES: usize = 3;

/// The rows of an export, joined.
pub(super) struct Joined {
    /// GPU rows with timestamps, sorted by (start, end, kind, rowid).
    pub(super) gpu: Vec<GpuRow>,
    /// Runtime and driver calls, one per (process, correlationId), by (start, rowid).
    pub(super) api: Vec<ApiRow>,
    /// (process, correlationId) → index into `api`.
    pub(super) call_of: HashMap<(Proc, i64), usize>,
    /// The calls' names (`StringIds`), by name id.
    pub(super) names: HashMap<i64, String>,
    /// Sync rows, each with the device of its (process, context).
    pub(super) syncs: Vec<SyncRow>,
    /// Event records (CUDA_EVENT rows) and their record calls (index into `api`).
    pub(super) records: Vec<(EventRow, Option<usize>)>,
    /// What each classified sync row becomes (index into `syncs`).
    pub(super) plans: Vec<(usize, Plan)>,
    /// Rows read, joined, set aside.
    pub(super) counts: Counts,
    /// Rows set aside, with why.
    pub(super) skipped: Skipped,
}

/// A planned op from one sync row (indices into the call and event-record lists).
#[derive(Clone, Copy, Debug)]
pub(super) enum Plan {
    /// The host waits for the row's stream (`cudaStreamSynchronize`).
    WaitStream { call: usize },
    /// The host waits for the device of the row's (process, context).
    WaitDevice { call: usize },
    /// The host waits for an identified event record.
    WaitEvent { call: usize, record: usize },
    /// The row's stream waits for an identified event record.
    StreamWait { call: usize, record: usize },
}

/// Reads the CUDA tables of `export` and joins them.
///
/// # Errors
/// `not-nsys`, `no-cuda-activity`, `duplicate-row`, `bad-row`, and the reader's errors.
pub(super) fn join(export: &mut Export) -> Result<Joined, NsysError> {
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
        gpu.iter()
            .map(|r| (r.kind.table(), r.rowid))
            .chain(event_rows.iter().map(|e| (read::CUDA_EVENT, e.rowid))),
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
    let gpu = keep_gpu_rows(gpu, &mut counts, &mut skipped)?;
    let (api, call_of) = calls(&api_all, &mut counts)?;
    let names = call_names(export, &api)?;
    count_calls_without_gpu_rows(&gpu, &api, &names, &mut counts);
    let (syncs, event_rows) = place_on_devices(&gpu, syncs, event_rows);
    let records: Vec<(EventRow, Option<usize>)> = event_rows
        .into_iter()
        .map(|e| {
            let call = call_of.get(&(e.key.proc, e.correlation)).copied();
            (e, call)
        })
        .collect();
    counts.sync_rows = syncs.len();
    let mut joined = Joined {
        gpu,
        api,
        call_of,
        names,
        syncs,
        records,
        plans: Vec::new(),
        counts,
        skipped,
    };
    joined.plans = classify_syncs(&mut joined);
    Ok(joined)
}

/// Counts GPU rows per kind, sets aside "not collected" (0, 0) rows, refuses reversed ones,
/// and sorts the rest by (start, end, kind, rowid).
fn keep_gpu_rows(
    mut gpu: Vec<GpuRow>,
    counts: &mut Counts,
    skipped: &mut Skipped,
) -> Result<Vec<GpuRow>, NsysError> {
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
    Ok(gpu)
}

/// Runtime (0) and driver (1) calls, one per (process, correlationId), and the index of each
/// key; refuses a reversed call.
#[allow(clippy::type_complexity)]
fn calls(
    api_all: &[ApiRow],
    counts: &mut Counts,
) -> Result<(Vec<ApiRow>, HashMap<(Proc, i64), usize>), NsysError> {
    let (api, duplicates) = dedup_calls(api_all, counts);
    counts.duplicate_api_rows = duplicates;
    let call_of: HashMap<(Proc, i64), usize> = api
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.proc, c.correlation), i))
        .collect();
    if let Some(c) = api.iter().find(|c| c.end < c.start) {
        return Err(NsysError::new(
            format!("{}[rowid {}].end", read::RUNTIME, c.rowid),
            "bad-row",
            format!(
                "the call ends at {} ns, before its start {} ns",
                c.end, c.start
            ),
        ));
    }
    counts.api_calls = api.len();
    Ok((api, call_of))
}

/// The name of every kept call, from `StringIds`.
fn call_names(export: &mut Export, api: &[ApiRow]) -> Result<HashMap<i64, String>, NsysError> {
    let mut names: HashMap<i64, String> = HashMap::new();
    for c in api {
        if let Entry::Vacant(slot) = names.entry(c.name_id) {
            let n = export
                .string(c.name_id)?
                .unwrap_or_else(|| format!("<StringIds id {} missing>", c.name_id));
            slot.insert(n);
        }
    }
    Ok(names)
}

/// Calls that normally queue GPU work, without any GPU row, by name.
fn count_calls_without_gpu_rows(
    gpu: &[GpuRow],
    api: &[ApiRow],
    names: &HashMap<i64, String>,
    counts: &mut Counts,
) {
    let gpu_keys: HashSet<(Proc, i64)> = gpu.iter().map(|r| (r.key.proc, r.correlation)).collect();
    for c in api {
        if gpu_keys.contains(&(c.proc, c.correlation)) {
            continue;
        }
        let base = base_call_name(&names[&c.name_id]);
        if queues_gpu_work(base) {
            *counts
                .calls_without_gpu_row
                .entry(base.to_owned())
                .or_default() += 1;
        }
    }
}

/// The device of each (process, context), from GPU rows, given to its sync and event rows.
/// The sync table's own deviceId is not used: CUPTI's synchronization record has no device,
/// and nsys writes 0 there (in mfu_2gpu_before, process 145's context 2 runs every kernel
/// on device 1, while its sync rows say device 0).
fn place_on_devices(
    gpu: &[GpuRow],
    syncs: Vec<SyncRow>,
    event_rows: Vec<EventRow>,
) -> (Vec<SyncRow>, Vec<EventRow>) {
    let mut ctx_device: HashMap<(Proc, i64), i64> = HashMap::new();
    for r in gpu {
        ctx_device
            .entry((r.key.proc, r.key.context))
            .or_insert(r.key.device);
    }
    for e in &event_rows {
        ctx_device
            .entry((e.key.proc, e.key.context))
            .or_insert(e.key.device);
    }
    let syncs = syncs
        .into_iter()
        .map(|mut s| {
            s.key.device = ctx_device
                .get(&(s.key.proc, s.key.context))
                .copied()
                .unwrap_or(UNKNOWN_DEVICE);
            s
        })
        .collect();
    let event_rows = event_rows
        .into_iter()
        .map(|mut e| {
            e.key.device = ctx_device[&(e.key.proc, e.key.context)];
            e
        })
        .collect();
    (syncs, event_rows)
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

/// What the call named `api` (its base name) asks for.
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

/// Classifies every sync row by the API call that made it: a plan, or a reason set aside.
fn classify_syncs(j: &mut Joined) -> Vec<(usize, Plan)> {
    let mut by_event: HashMap<(Proc, i64), Vec<usize>> = HashMap::new();
    for (i, (e, _)) in j.records.iter().enumerate() {
        by_event.entry((e.key.proc, e.event)).or_default().push(i);
    }
    let mut plans: Vec<(usize, Plan)> = Vec::new();
    for (s_idx, s) in j.syncs.iter().enumerate() {
        let Some(&c_idx) = j.call_of.get(&(s.key.proc, s.correlation)) else {
            j.skipped.add(
                "sync rows whose API call is not in the file: without the call's name the sync cannot be classified, so no wait is declared".to_owned(),
                s.rowid,
            );
            continue;
        };
        let api_name = base_call_name(&j.names[&j.api[c_idx].name_id]).to_owned();
        let kind = classify(&api_name);
        let needs_device = matches!(
            kind,
            SyncKind::Stream | SyncKind::Context | SyncKind::StreamWaitEvent
        );
        if needs_device && s.key.device == UNKNOWN_DEVICE {
            j.skipped.add(
                format!("{api_name} sync rows of a context with no GPU row in the file: its device is unknown, so no wait is declared"),
                s.rowid,
            );
            continue;
        }
        let plan = match kind {
            SyncKind::Stream if s.key.stream == read::NONE_ID => Err(format!(
                "{api_name} sync rows without a stream id: no wait is declared"
            )),
            SyncKind::Stream => Ok(Plan::WaitStream { call: c_idx }),
            SyncKind::Context => Ok(Plan::WaitDevice { call: c_idx }),
            SyncKind::Event | SyncKind::StreamWaitEvent => {
                event_plan(j, &by_event, s, c_idx, kind == SyncKind::Event, &api_name)
            }
            SyncKind::Query => Err(format!(
                "{api_name} sync rows: a query polls and returns at once, it is not a wait"
            )),
            SyncKind::Other => Err(format!(
                "sync rows made by {api_name}, which this reader does not classify: no wait is declared"
            )),
        };
        match plan {
            Ok(plan) => plans.push((s_idx, plan)),
            Err(why) => j.skipped.add(why, s.rowid),
        }
    }
    plans
}

/// The plan of an event sync (`is_wait`: the host waits) or a stream-wait on an event, or
/// why there is none.
fn event_plan(
    j: &Joined,
    by_event: &HashMap<(Proc, i64), Vec<usize>>,
    s: &SyncRow,
    c_idx: usize,
    is_wait: bool,
    api_name: &str,
) -> Result<Plan, String> {
    let found = s
        .event
        .and_then(|ev| identify_record(j, s, &j.api[c_idx], ev, by_event));
    match found {
        Some(r) if is_wait => Ok(Plan::WaitEvent {
            call: c_idx,
            record: r,
        }),
        Some(r) if s.key.stream != read::NONE_ID => Ok(Plan::StreamWait {
            call: c_idx,
            record: r,
        }),
        Some(_) => Err(format!("{api_name} sync rows without the waiting stream's id: no stream-wait is declared")),
        None => Err(format!(
            "{api_name} sync rows whose event cannot be tied to the record that it waits for ({}): no {} is declared",
            if j.records.is_empty() {
                "the file has no CUPTI_ACTIVITY_KIND_CUDA_EVENT rows"
            } else {
                "no CUDA_EVENT row of that event id is recorded by an earlier call of the process"
            },
            if is_wait { "host wait" } else { "stream-wait" }
        )),
    }
}

/// Rows set aside, grouped by why, with a few example rowids each.
#[derive(Default)]
pub(super) struct Skipped(BTreeMap<String, (usize, Vec<i64>)>);

impl Skipped {
    /// Sets aside one more row, `rowid`, for `why`.
    pub(super) fn add(&mut self, why: String, rowid: i64) {
        let entry = self.0.entry(why).or_default();
        entry.0 += 1;
        if entry.1.len() < EXAMPLES {
            entry.1.push(rowid);
        }
    }

    /// One note per reason: how many, why, and a few rowids.
    pub(super) fn notes(&self) -> Vec<String> {
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
    let inner_key = |r: &ApiRow| {
        (
            r.start,
            std::cmp::Reverse(r.end),
            std::cmp::Reverse(r.rowid),
        )
    };
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
                        if inner_key(row) > inner_key(old) {
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
    j: &Joined,
    sync: &SyncRow,
    call: &ApiRow,
    event: i64,
    by_event: &HashMap<(Proc, i64), Vec<usize>>,
) -> Option<usize> {
    let record_call = |i: usize| j.records[i].1.map(|c| &j.api[c]);
    by_event
        .get(&(sync.key.proc, event))?
        .iter()
        .copied()
        .filter(|&i| {
            let e = &j.records[i].0;
            let linked = match (sync.event_sync_id, e.event_sync_id) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            };
            linked && record_call(i).is_some_and(|c| c.end <= call.start)
        })
        .max_by_key(|&i| {
            let c = record_call(i).expect("filtered on the call");
            (c.end, c.rowid)
        })
}

/// Whether a call normally queues GPU work that CUPTI reports as a kernel, copy or set.
fn queues_gpu_work(api: &str) -> bool {
    let launch = api.contains("Launch") && !api.contains("HostFunc");
    let copy_or_set = ["cudaMemcpy", "cuMemcpy", "cudaMemset", "cuMemset"]
        .iter()
        .any(|p| api.starts_with(p));
    launch || copy_or_set
}

/// A table that returns one rowid twice is damaged (a valid b-tree cannot): the ids built
/// from rowids would collide, so it is an input error naming the row, never a case that
/// does not validate.
fn refuse_repeated_rowids<'a>(rows: impl Iterator<Item = (&'a str, i64)>) -> Result<(), NsysError> {
    let mut seen = HashSet::new();
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
