//! PyTorch profiler (Kineto) Chrome-trace JSON → a case.
//!
//! # What is read
//!
//! A Kineto trace is `{"traceEvents": [...], "baseTimeNanoseconds"?, "distributedInfo"?,
//! "deviceProperties"?, ...}` (a bare JSON array of events is read too). Three versions are
//! known, and each has a compatibility test on a real gzipped trace (`tests/import.rs`):
//!
//! | version | `ts` / `dur` | categories |
//! |---|---|---|
//! | current (2023–) | µs with three decimals, relative to `baseTimeNanoseconds` | `kernel`, `gpu_memcpy`, `gpu_memset`, `cuda_runtime`, `cuda_driver`, `cuda_sync`, `gpu_user_annotation` |
//! | integer µs (2022–2024) | integer absolute Unix µs (`dur` may have decimals) | the same, lowercase |
//! | 2021 | integer absolute Unix µs | `Kernel`, `Memcpy`, `Memset`, `Runtime`; `tid: "stream 7"` |
//!
//! # Exact times
//!
//! `ts` and `dur` are read from the number's **text** (serde_json's `RawValue`), never through
//! `f64`: `4458676522690.655` µs is exactly 4 458 676 522 690 655 ns. With a base, absolute
//! ns = `baseTimeNanoseconds` + ts × 1000; without one, `ts` is absolute Unix µs. An exponent
//! (`1.5e3`) is read exactly too. A value with a non-zero digit below 1 ns is refused as
//! `inexact-value` (the case format's rule), unless `--round-sub-ns` asks to round it to the
//! nearest ns (halves away from zero); rounded values are counted and noted.
//!
//! # The mapping, decision by decision
//!
//! - **Clock.** One trace is one process (one rank). Since CUDA 11.6 Kineto has CUPTI report
//!   on the host's clock and converts both host and GPU times to Unix ns: they share one
//!   *approximated* timebase. So the case has **one clock**, id and domain `kineto`, whose
//!   instance names the rank and process (`rank 1 of 2, pid 2140915`). Two ranks are two
//!   instances: their union or difference is `cross-instance`, never a number.
//! - **Streams.** Each (device `pid` / `args.device`, stream `tid` / `args.stream`) that runs
//!   GPU work, or that a sync row names, is a stream `gpu<D>-s<S>` of device `gpu<D>`.
//! - **Phases.** Every `kernel` / `gpu_memcpy` / `gpu_memset` (2021: `Kernel` / `Memcpy` /
//!   `Memset`) event is a phase in its stream: id `<short name>#<correlation>` (short name:
//!   the kernel name without `void `, template and argument lists, 48 characters at most;
//!   `#u<n>` when there is no correlation; `.2`, `.3` for repeats), label the name cut to 120
//!   characters. `[ts, ts + dur)`; `dur: 0` is a zero-length phase. GPU events with no
//!   CPU correlation are **kept** (HTA drops them), counted, and never claimed as launched.
//! - **Annotations.** `gpu_user_annotation` ranges are not work: Kineto draws them wider
//!   than the work they group so that viewers nest them (by 1 ns or 1 µs depending on the
//!   version). They become phases **without a stream**, id `annotation-<n>:<short name>`,
//!   in no question, so `render` shows them and no number counts them.
//! - **Program.** A GPU event's launch is the `cuda_runtime` / `cuda_driver` call with the
//!   same `args.correlation` (`cudaLaunchKernel`, `cudaMemcpyAsync`, ... whatever its name).
//!   Ops are ordered by host time: work is *enqueued* when its call **returns** (launches,
//!   event records, stream waits are keyed by call end) and a host wait *starts* when its
//!   call **starts**, so a launch on another thread that has not returned when a wait
//!   begins is not covered by that wait. Launches of one stream keep their GPU order on
//!   ties; disagreements between launch order and execution order are counted.
//! - **Waits** (`cuda_sync` rows, joined to their API call by correlation):
//!   `Stream Sync` → host wait on the stream; `Event Sync` → host wait on the event recorded
//!   by the `cudaEventRecord` whose correlation is `wait_on_cuda_event_record_corr_id`, in
//!   stream `wait_on_stream`; `Context Sync` (stream −1 / 4294967295) → host wait on the
//!   device; `Stream Wait Event` → a stream-wait. Only **blocking** calls become host waits:
//!   CUPTI also reports `cudaEventQuery` as `Event Sync`, but a query returns at once and
//!   may have returned "not ready", so it proves nothing and is counted, not mapped. A row
//!   whose call or event record is missing from the trace is counted with its reason.
//!   Older traces have no `cuda_sync` rows: a `cudaDeviceSynchronize` call is then a wait on
//!   the device only when the trace's GPU work is on exactly one device (the call names
//!   none); `cudaStreamSynchronize` / `cudaEventSynchronize` without a row name no target
//!   and are counted, not mapped. Events a wait names are declared `timing: false`,
//!   `completed`: the trace says neither how they were created nor when they completed.
//! - **Copies that are waits** (SPEC §4, "Implicit waits"; the CUDA runtime API's "API
//!   synchronization behavior"; the mapping is `src/import/copies.rs`). A `gpu_memcpy` row's
//!   name carries its direction and memory kinds (`Memcpy DtoH (Device -> Pageable)`,
//!   `Memcpy HtoD (Pinned -> Device)`); its runtime row, joined by correlation, says whether
//!   the call was synchronous (`cudaMemcpy`) or `Async` (`cudaMemcpyAsync`). A synchronous
//!   device-to-host copy, an `Async` one into pageable memory, and a synchronous pageable
//!   host-to-device copy become a host wait `copy-c<correlation>` on the copy's stream with
//!   `implicit` and `copy`, placed right after the copy's launch and returning when the call
//!   returns. A copy whose stream received another submission that returned while the
//!   copy's call ran (another thread) is not a wait, and is counted: its place in the stream
//!   is not known. **Stream kinds are not declared**: Kineto records no stream flags (its
//!   GPU rows carry `device`, `context`, `stream`; the metadata rows only `stream N`), so a
//!   copy's wait covers its own stream only, even on stream 7.
//! - **The profiler's own sync.** PyTorch calls `torch.cuda.synchronize()` when the profiler
//!   stops, so every trace ends with a device-wide wait the script did not issue. The last
//!   host wait, when it is device-wide and nothing is launched after it, gets the id
//!   `final-device-sync` and a note saying it is most likely the profiler's.
//! - **Questions.** `stream:<stream>` (intervals of each stream's work), `device:<device>`
//!   (all work of the device pooled: busy = union, idle = span − union), and per device
//!   `compute:`, `communication:` (kernels whose name contains `nccl`, any case) and
//!   `memory:` (copies and sets), each only when not empty. Then `completion:all-work` (the
//!   host timer from the first API call to the return of the last wait: is all launched work
//!   covered?) and, when there is a final device sync, `completion:before-final-sync` (did the
//!   script's own waits cover its work?). A completion claim names the **last launch of each
//!   stream**: coverage is a per-stream prefix (SPEC §4), so that is the same claim as all of
//!   the stream's launched work, and it keeps the case small.
//!
//! Nothing else is imported: CPU ops, Python frames, flows, instants and memory events are
//! counted by category in the summary.

mod audit;
mod read;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use read::TopLevel;
#[cfg(test)]
use read::{scaled_decimal, stream_of_tid, Scaled};
use serde_json::value::RawValue;

use super::{copies, ImportError, ImportOptions, Imported};
use crate::case::raw::{
    RawCase, RawClock, RawEvent, RawEventState, RawImplicit, RawOp, RawPhase, RawQuestion,
    RawStream, RawTime,
};
use crate::units::Nanos;

pub mod trace;

type Result<T> = std::result::Result<T, ImportError>;

/// The clock every imported time is on.
pub const CLOCK_ID: &str = "kineto";

/// Longest short name used in a phase id.
const SHORT_NAME_CHARS: usize = 48;

/// Longest phase label.
const LABEL_CHARS: usize = 120;

/// What a GPU activity does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WorkKind {
    Kernel,
    Memcpy,
    Memset,
}

impl WorkKind {
    fn of_category(cat: &str) -> Option<WorkKind> {
        match cat {
            "kernel" | "Kernel" => Some(WorkKind::Kernel),
            "gpu_memcpy" | "Memcpy" => Some(WorkKind::Memcpy),
            "gpu_memset" | "Memset" => Some(WorkKind::Memset),
            _ => None,
        }
    }
}

/// One GPU activity, on the trace's clock, in absolute ns.
struct GpuWork {
    kind: WorkKind,
    name: String,
    device: i64,
    stream: i64,
    start: i64,
    end: i64,
    correlation: Option<i64>,
}

/// A `gpu_user_annotation` range.
struct Annotation {
    name: String,
    device: i64,
    stream: i64,
    start: i64,
    end: i64,
}

/// A host API call (`cuda_runtime`, `cuda_driver`, 2021 `Runtime`).
struct HostCall {
    name: String,
    start: i64,
    end: i64,
}

/// A `cuda_sync` row.
struct SyncRow {
    event: usize,
    kind: String,
    device: Option<i64>,
    stream: Option<i64>,
    wait_on_stream: Option<i64>,
    record_corr: Option<i64>,
    correlation: Option<i64>,
}

/// Everything read from the events, before the case is built.
#[derive(Default)]
struct Read {
    events: usize,
    work: Vec<GpuWork>,
    annotations: Vec<Annotation>,
    calls: HashMap<i64, HostCall>,
    duplicate_calls: u64,
    syncs: Vec<SyncRow>,
    ignored: BTreeMap<String, u64>,
    pids: HashMap<i64, u64>,
    legacy_categories: bool,
    rounded: u64,
    zero_ts_with_base: u64,
    fractional_ts: bool,
    /// What only the audit reads.
    audit: audit::AuditRead,
}

/// Imports a Kineto trace from its JSON text; `name` names the case. Errors are not yet
/// attributed to a file.
///
/// # Errors
/// [`ImportError`] with the JSON path and code of the first problem: `bad-syntax`,
/// `wrong-type`, `missing-field`, `bad-value`, `inexact-value`, `overflow`,
/// `reversed-interval`.
pub fn import_text(text: &str, name: &str, options: &ImportOptions) -> Result<Imported> {
    import_reader(text.as_bytes(), name, options)
}

/// Imports a Kineto trace streamed from `reader` (JSON text, in one pass: `kineto/read.rs`);
/// `name` names the case. Errors are not yet attributed to a file.
///
/// # Errors
/// As [`import_text`], and `io`, `too-large` or `bad-syntax` for trouble the reader reports
/// (see `src/import/text.rs`).
pub fn import_reader<R: std::io::BufRead>(
    reader: R,
    name: &str,
    options: &ImportOptions,
) -> Result<Imported> {
    let (read, top, base) = read::read_trace(reader, options)?;
    Ok(build(read, &top, base, name))
}

/// Imports a Kineto trace streamed from `reader`, as [`import_reader`], and hands back the
/// audit's model of the same trace ([`crate::audit::model::Trace`]) from the same pass: the
/// file is read and parsed once.
///
/// # Errors
/// As [`import_reader`]. The inner result is the audit's: an error there (a host range
/// only the audit reads whose time overflows) does not stop the import.
pub fn import_with_audit<R: std::io::BufRead>(
    reader: R,
    name: &str,
    options: &ImportOptions,
) -> Result<(Imported, Result<crate::audit::model::Trace>)> {
    let (mut read, top, base) = read::read_trace(reader, options)?;
    let activities = audit::activities(&read);
    let audit = std::mem::take(&mut read.audit);
    let syncs: Vec<Option<i64>> = read.syncs.iter().map(|s| s.correlation).collect();
    let imported = build(read, &top, base, name);
    Ok((imported, audit::finish(audit, &syncs, activities)))
}

/// The exact value of a JSON number scaled by 10^`scale` (3: µs → ns), as an integer;
/// `Ok(None)` when the value is not a number. `path` names the field in errors.
///
/// # Errors
/// `inexact-value` when digits remain below 1 (unless rounding is on; then `rounded` counts
/// it), `overflow` past `i64`.
pub(super) fn exact_number(
    raw: &RawValue,
    scale: i32,
    path: &str,
    options: &ImportOptions,
    rounded: &mut u64,
) -> Result<Option<i64>> {
    read::exact_number_at(raw, scale, &|| path.to_owned(), options, rounded)
}

/// A predicate choosing GPU work for a question.
type WorkFilter<'f> = &'f dyn Fn(&GpuWork) -> bool;

/// A host-program step before ids are final.
enum Step {
    Launch(usize),
    Record(i64),
    StreamWait {
        stream: (i64, i64),
        record: i64,
    },
    HostWait {
        id: String,
        target: Target,
        start: i64,
        returned: i64,
        /// A copy that is a wait (SPEC §4): why, and the copy (index into the work).
        implicit: Option<(RawImplicit, usize)>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Event(i64),
    Stream((i64, i64)),
    Device(i64),
}

/// A step with its place in host time: `(time, rank, call start, seq)`.
struct Placed {
    key: (i64, u8, i64, usize),
    step: Step,
}

fn stream_id((device, stream): (i64, i64)) -> String {
    format!("gpu{device}-s{stream}")
}

fn device_id(device: i64) -> String {
    format!("gpu{device}")
}

fn record_id(corr: i64) -> String {
    format!("record-c{corr}")
}

/// A call name without the per-thread-stream and version suffixes (`_ptsz`, `_v2`).
fn base_call_name(name: &str) -> &str {
    let mut n = name;
    for suffix in ["_ptsz", "_ptds", "_v2", "_v3"] {
        n = n.strip_suffix(suffix).unwrap_or(n);
    }
    n
}

fn is_blocking_stream_sync(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaStreamSynchronize" | "cuStreamSynchronize"
    )
}

fn is_blocking_event_sync(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaEventSynchronize" | "cuEventSynchronize"
    )
}

fn is_blocking_device_sync(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaDeviceSynchronize" | "cuCtxSynchronize"
    )
}

fn is_stream_wait_call(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaStreamWaitEvent" | "cuStreamWaitEvent"
    )
}

fn is_query(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaEventQuery" | "cuEventQuery" | "cudaStreamQuery" | "cuStreamQuery"
    )
}

/// `text` cut to `max` characters, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((i, _)) => format!("{}…", &text[..i]),
    }
}

/// A readable short form of a kernel name for ids: no `void `, no template or argument
/// list, whitespace as `_`.
fn short_name(name: &str) -> String {
    let n = name.trim().replace("(anonymous namespace)::", "");
    let n = n.strip_prefix("void ").unwrap_or(&n);
    let cut_at = n.find(['<', '(']).unwrap_or(n.len());
    let s = n[..cut_at].trim();
    let s = if s.is_empty() { n } else { s };
    let s: String = s
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    let s = cut(&s, SHORT_NAME_CHARS);
    if s.is_empty() {
        "gpu-work".to_owned()
    } else {
        s
    }
}

fn is_communication(work: &GpuWork) -> bool {
    work.kind == WorkKind::Kernel && work.name.to_ascii_lowercase().contains("nccl")
}

/// Why a sync row or call did not become a wait, for the summary.
fn count(map: &mut BTreeMap<String, u64>, why: impl Into<String>) {
    *map.entry(why.into()).or_default() += 1;
}

/// The implicit wait a `gpu_memcpy` row's call makes (SPEC §4; [`super::copies`]): a host
/// wait on the copy's stream, returning when its call returns.
fn copy_wait(w: &GpuWork, k: usize, call: &HostCall) -> Option<Step> {
    if w.kind != WorkKind::Memcpy {
        return None;
    }
    let how = copies::call_of(base_call_name(&call.name))?;
    let (direction, host) = copies::kineto_copy(&w.name);
    let kind = copies::implicit_wait(how, direction, host)?;
    Some(Step::HostWait {
        id: format!("copy-c{}", w.correlation.unwrap_or_default()),
        target: Target::Stream((w.device, w.stream)),
        start: call.start,
        returned: call.end,
        implicit: Some((kind, k)),
    })
}

/// Keeps an implicit copy wait only when nothing else was submitted to its stream while its
/// call ran: a launch from another thread that returned during a synchronous copy may have
/// been queued before or after the copy, so the copy's return proves nothing about it, and
/// the program order (launches keyed by their return) would claim it covered. Such waits are
/// dropped and counted. Returns the kept waits counted by kind.
fn keep_copy_waits(
    placed: &mut Vec<Placed>,
    read: &Read,
    records: &BTreeMap<i64, (i64, i64)>,
    not_mapped: &mut BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    let stream_of = |p: &Placed| match &p.step {
        Step::Launch(k) => Some((read.work[*k].device, read.work[*k].stream)),
        Step::Record(rc) => records.get(rc).copied(),
        Step::StreamWait { stream, .. } => Some(*stream),
        Step::HostWait { .. } => None,
    };
    let mut kept = BTreeMap::new();
    let mut dropped = vec![false; placed.len()];
    for (i, p) in placed.iter().enumerate() {
        let Step::HostWait {
            target: Target::Stream(stream),
            start,
            implicit: Some((kind, k)),
            ..
        } = &p.step
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
                not_mapped,
                format!("{word} copy: another submission to its stream returned while the copy's call ran, so the copy's place in the stream is unknown: not a wait"),
            );
        } else {
            *kept
                .entry(format!("on a stream (implicit: {word} copy)"))
                .or_default() += 1;
        }
    }
    let mut i = 0;
    placed.retain(|_| {
        i += 1;
        !dropped[i - 1]
    });
    kept
}

/// Builds the case from what was read.
fn build(mut read: Read, top: &TopLevel, base: Option<i64>, name: &str) -> Imported {
    // Phases: GPU work ordered by (device, stream, start, end).
    read.work
        .sort_by_key(|w| (w.device, w.stream, w.start, w.end));
    let mut streams: BTreeSet<(i64, i64)> =
        read.work.iter().map(|w| (w.device, w.stream)).collect();
    let work_devices: BTreeSet<i64> = read.work.iter().map(|w| w.device).collect();

    let mut phase_ids: Vec<String> = Vec::with_capacity(read.work.len());
    let mut seen_ids: HashMap<String, u32> = HashMap::with_capacity(read.work.len());
    let mut uncorrelated = 0u64;
    for (k, w) in read.work.iter().enumerate() {
        let base_id = match w.correlation.filter(|c| read.calls.contains_key(c)) {
            Some(c) => format!("{}#{c}", short_name(&w.name)),
            None => {
                uncorrelated += 1;
                format!("{}#u{k}", short_name(&w.name))
            }
        };
        let n = seen_ids.entry(base_id.clone()).or_insert(0);
        *n += 1;
        phase_ids.push(if *n == 1 {
            base_id
        } else {
            format!("{base_id}.{n}")
        });
    }

    // The host program.
    let mut placed: Vec<Placed> = Vec::with_capacity(read.work.len() + read.syncs.len());
    for (k, w) in read.work.iter().enumerate() {
        if let Some(call) = w.correlation.and_then(|c| read.calls.get(&c)) {
            placed.push(Placed {
                key: (call.end, 0, call.start, k),
                step: Step::Launch(k),
            });
            if let Some(wait) = copy_wait(w, k, call) {
                placed.push(Placed {
                    key: (call.end, 0, call.start, k),
                    step: wait,
                });
            }
        }
    }
    let mut host_waits: BTreeMap<String, u64> = BTreeMap::new();
    let mut stream_waits = 0u64;
    let mut not_mapped: BTreeMap<String, u64> = BTreeMap::new();
    let mut records: BTreeMap<i64, (i64, i64)> = BTreeMap::new(); // corr → (stream key)
    let mut synced_calls: BTreeSet<i64> = BTreeSet::new();
    for row in &read.syncs {
        if let Some(c) = row.correlation {
            if !synced_calls.insert(c) && read.calls.contains_key(&c) {
                // One call waits once: a second cuda_sync row for it (a repeated row) would
                // declare a second wait with the same id.
                count(
                    &mut not_mapped,
                    format!(
                        "{}: a second cuda_sync row for the same call (same correlation): counted once",
                        row.kind
                    ),
                );
                continue;
            }
        }
        let call = row.correlation.and_then(|c| read.calls.get(&c));
        let Some(call) = call else {
            count(
                &mut not_mapped,
                format!(
                    "{}: its API call (same correlation) is not in the trace",
                    row.kind
                ),
            );
            continue;
        };
        let corr = row.correlation.unwrap_or_default();
        let device = row.device.unwrap_or(0);
        let record_of = |row: &SyncRow| -> std::result::Result<((i64, i64), i64), &'static str> {
            match (row.record_corr, row.wait_on_stream) {
                (Some(rc), Some(ws)) if rc >= 0 && ws >= 0 && ws != i64::from(u32::MAX) => {
                    if read.calls.contains_key(&rc) {
                        Ok(((device, ws), rc))
                    } else {
                        Err("the cudaEventRecord it names is not in the trace")
                    }
                }
                _ => Err("the trace does not say which event record it waits for"),
            }
        };
        let wait = |target: Target| Step::HostWait {
            id: format!("wait-c{corr}"),
            target,
            start: call.start,
            returned: call.end,
            implicit: None,
        };
        match row.kind.as_str() {
            _ if is_query(&call.name) => count(
                &mut not_mapped,
                format!(
                    "{} by {}: a query returns at once and may have said \"not ready\": not a wait",
                    row.kind, call.name
                ),
            ),
            "Stream Sync" if is_blocking_stream_sync(&call.name) => match row.stream {
                Some(s) if s >= 0 && s != i64::from(u32::MAX) => {
                    streams.insert((device, s));
                    placed.push(Placed {
                        key: (call.start, 1, call.start, row.event),
                        step: wait(Target::Stream((device, s))),
                    });
                    count(&mut host_waits, "on a stream (Stream Sync)");
                }
                _ => count(&mut not_mapped, "Stream Sync: no stream named"),
            },
            "Event Sync" if is_blocking_event_sync(&call.name) => match record_of(row) {
                Ok((stream, rc)) => {
                    streams.insert(stream);
                    records.insert(rc, stream);
                    placed.push(Placed {
                        key: (call.start, 1, call.start, row.event),
                        step: wait(Target::Event(rc)),
                    });
                    count(&mut host_waits, "on an event (Event Sync)");
                }
                Err(why) => count(&mut not_mapped, format!("Event Sync: {why}")),
            },
            "Context Sync" if is_blocking_device_sync(&call.name) => {
                if streams.iter().any(|(d, _)| *d == device) {
                    placed.push(Placed {
                        key: (call.start, 1, call.start, row.event),
                        step: wait(Target::Device(device)),
                    });
                    count(&mut host_waits, "on a device (Context Sync)");
                } else {
                    count(
                        &mut not_mapped,
                        "Context Sync: no stream of its device appears in the trace",
                    );
                }
            }
            "Stream Wait Event" if is_stream_wait_call(&call.name) => {
                match (record_of(row), row.stream) {
                    (Ok((from, rc)), Some(s)) if s >= 0 => {
                        streams.insert(from);
                        streams.insert((device, s));
                        records.insert(rc, from);
                        placed.push(Placed {
                            key: (call.end, 0, call.start, row.event),
                            step: Step::StreamWait {
                                stream: (device, s),
                                record: rc,
                            },
                        });
                        stream_waits += 1;
                    }
                    (Err(why), _) => count(&mut not_mapped, format!("Stream Wait Event: {why}")),
                    _ => count(
                        &mut not_mapped,
                        "Stream Wait Event: no waiting stream named",
                    ),
                }
            }
            kind => count(
                &mut not_mapped,
                format!(
                    "{kind} by {}: not a blocking call this importer knows",
                    call.name
                ),
            ),
        }
    }
    // Older traces: blocking calls with no cuda_sync row.
    let single_device = if work_devices.len() == 1 {
        work_devices.first().copied()
    } else {
        None
    };
    let mut assumed_device_sync = 0u64;
    let mut call_list: Vec<(&i64, &HostCall)> = read
        .calls
        .iter()
        .filter(|(c, _)| !synced_calls.contains(c))
        .collect();
    call_list.sort_by_key(|(c, call)| (call.start, **c));
    for (&corr, call) in call_list {
        if is_blocking_device_sync(&call.name) {
            match single_device {
                Some(device) => {
                    placed.push(Placed {
                        key: (call.start, 1, call.start, usize::MAX),
                        step: Step::HostWait {
                            id: format!("wait-c{corr}"),
                            target: Target::Device(device),
                            start: call.start,
                            returned: call.end,
                            implicit: None,
                        },
                    });
                    assumed_device_sync += 1;
                    count(
                        &mut host_waits,
                        format!("on a device ({}, no cuda_sync row)", call.name),
                    );
                }
                None => count(
                    &mut not_mapped,
                    format!(
                        "{} without a cuda_sync row: the trace's work is on {} devices, the call names none",
                        call.name,
                        work_devices.len()
                    ),
                ),
            }
        } else if is_blocking_stream_sync(&call.name) || is_blocking_event_sync(&call.name) {
            count(
                &mut not_mapped,
                format!(
                    "{} without a cuda_sync row: the trace does not say what it waited for",
                    call.name
                ),
            );
        }
    }
    for &rc in records.keys() {
        let call = &read.calls[&rc];
        placed.push(Placed {
            key: (call.end, 0, call.start, usize::MAX),
            step: Step::Record(rc),
        });
    }
    placed.sort_by_key(|p| p.key);
    let copy_waits = keep_copy_waits(&mut placed, &read, &records, &mut not_mapped);
    for (why, n) in copy_waits {
        *host_waits.entry(why).or_default() += n;
    }

    // The last host wait: the profiler's own device synchronize when it is device-wide and
    // nothing is launched after it.
    let last_wait = placed
        .iter()
        .rposition(|p| matches!(p.step, Step::HostWait { .. }));
    let final_sync = last_wait.filter(|&i| {
        matches!(
            &placed[i].step,
            Step::HostWait {
                target: Target::Device(_),
                ..
            }
        ) && !placed[i..]
            .iter()
            .any(|p| matches!(p.step, Step::Launch(_)))
    });
    let mut final_sync_note = None;
    if let Some(i) = final_sync {
        if let Step::HostWait { id, .. } = &mut placed[i].step {
            final_sync_note = Some(format!(
                "`final-device-sync` (was `{id}`) is the trace's last wait, device-wide, with nothing launched after it: most likely the PyTorch profiler's own synchronize when it stops, not the script's"
            ));
            *id = "final-device-sync".to_owned();
        }
    }

    // Launch order against execution order, per stream.
    let mut last_start: HashMap<(i64, i64), i64> = HashMap::new();
    let mut order_disagreements = 0u64;
    for p in &placed {
        if let Step::Launch(k) = p.step {
            let w = &read.work[k];
            let last = last_start.entry((w.device, w.stream)).or_insert(i64::MIN);
            if w.start < *last {
                order_disagreements += 1;
            }
            *last = (*last).max(w.start);
        }
    }

    // Timers and the completion questions.
    // Every placed step carries the start of its API call: the first is the trace's start.
    let first_call = placed.iter().map(|p| p.key.2).min();
    let ns = |v: i64| RawTime::from(Nanos::new(v));
    let mut program: Vec<RawOp> = Vec::with_capacity(placed.len() + 4);
    let launched_any = placed.iter().any(|p| matches!(p.step, Step::Launch(_)));
    let timers = launched_any && first_call.is_some();
    let t0 = first_call.unwrap_or(0);
    if timers {
        program.push(RawOp::TimerStart {
            timer: "all-work".into(),
            clock: CLOCK_ID.into(),
            at: ns(t0),
        });
        if final_sync.is_some() {
            program.push(RawOp::TimerStart {
                timer: "before-final-sync".into(),
                clock: CLOCK_ID.into(),
                at: ns(t0),
            });
        }
    }
    // The last launch of each stream before program position `upto` (in `placed`).
    let last_launches = |upto: usize| -> Vec<String> {
        let mut last: BTreeMap<(i64, i64), usize> = BTreeMap::new();
        for p in &placed[..upto] {
            if let Step::Launch(k) = p.step {
                let w = &read.work[k];
                last.insert((w.device, w.stream), k);
            }
        }
        last.values().map(|&k| phase_ids[k].clone()).collect()
    };
    let stop_all_after = last_wait.unwrap_or(placed.len().saturating_sub(1));
    // All launched work is claimed, also work launched after the last wait (then the claim
    // is honestly not covered).
    let all_work_claim = last_launches(placed.len());
    let script_claim = final_sync.map(last_launches);
    let max_return = placed
        .iter()
        .filter_map(|p| match p.step {
            Step::HostWait { returned, .. } => Some(returned),
            _ => None,
        })
        .max();
    let last_end = placed.last().map_or(t0, |p| p.key.0);
    let mut used_records: BTreeSet<i64> = BTreeSet::new();
    for (i, p) in placed.iter().enumerate() {
        if timers && Some(i) == final_sync {
            if let Step::HostWait { start, .. } = p.step {
                program.push(RawOp::TimerStop {
                    timer: "before-final-sync".into(),
                    clock: CLOCK_ID.into(),
                    at: ns(start),
                });
            }
        }
        program.push(match &p.step {
            Step::Launch(k) => RawOp::Launch {
                phase: phase_ids[*k].clone(),
            },
            Step::Record(rc) => {
                used_records.insert(*rc);
                RawOp::Record {
                    event: record_id(*rc),
                }
            }
            Step::StreamWait { stream, record } => RawOp::StreamWait {
                stream: stream_id(*stream),
                event: record_id(*record),
            },
            Step::HostWait {
                id,
                target,
                returned,
                implicit,
                ..
            } => {
                let (event, stream, device) = match target {
                    Target::Event(rc) => (Some(record_id(*rc)), None, None),
                    Target::Stream(s) => (None, Some(stream_id(*s)), None),
                    Target::Device(d) => (None, None, Some(device_id(*d))),
                };
                RawOp::HostWait {
                    id: id.clone(),
                    event,
                    stream,
                    device,
                    clock: Some(CLOCK_ID.into()),
                    at: Some(ns(*returned)),
                    implicit: implicit.map(|(kind, _)| kind),
                    copy: implicit.map(|(_, k)| phase_ids[k].clone()),
                }
            }
        });
        if timers && i == stop_all_after {
            program.push(RawOp::TimerStop {
                timer: "all-work".into(),
                clock: CLOCK_ID.into(),
                at: ns(max_return.unwrap_or(last_end).max(t0)),
            });
        }
    }

    // Declarations.
    let instance = clock_instance(top, &read, name);
    let mut case = RawCase::new(name);
    case.clocks.push(RawClock {
        id: CLOCK_ID.into(),
        domain: "kineto".into(),
        instance: Some(instance.clone()),
    });
    for &s in &streams {
        case.streams.push(RawStream {
            id: stream_id(s),
            clock: CLOCK_ID.into(),
            device: device_id(s.0),
            kind: None,
        });
    }
    for (&rc, &stream) in &records {
        if used_records.contains(&rc) {
            case.events.push(RawEvent {
                id: record_id(rc),
                stream: stream_id(stream),
                timing: false,
                state: RawEventState::Completed,
                at: None,
            });
        }
    }
    for (k, w) in read.work.iter().enumerate() {
        case.phases.push(RawPhase {
            id: phase_ids[k].clone(),
            label: Some(cut(&w.name, LABEL_CHARS)),
            stream: Some(stream_id((w.device, w.stream))),
            clock: None,
            start: ns(w.start),
            end: ns(w.end),
        });
    }
    read.annotations
        .sort_by_key(|a| (a.device, a.stream, a.start, a.end));
    for (n, a) in read.annotations.iter().enumerate() {
        case.phases.push(RawPhase {
            id: format!("annotation-{}:{}", n + 1, short_name(&a.name)),
            label: Some(format!(
                "{} (gpu_user_annotation on {}: a range, not work)",
                cut(&a.name, LABEL_CHARS),
                stream_id((a.device, a.stream))
            )),
            stream: None,
            clock: Some(CLOCK_ID.into()),
            start: ns(a.start),
            end: ns(a.end),
        });
    }
    case.program = program;

    // Interval questions.
    let mut questions = Vec::new();
    let phases_where = |keep: &dyn Fn(&GpuWork) -> bool| -> Vec<String> {
        read.work
            .iter()
            .enumerate()
            .filter(|(_, w)| keep(w))
            .map(|(k, _)| phase_ids[k].clone())
            .collect()
    };
    for &s in &streams {
        let list = phases_where(&|w| (w.device, w.stream) == s);
        if !list.is_empty() {
            questions.push(intervals(format!("stream:{}", stream_id(s)), list));
        }
    }
    for &d in &work_devices {
        let classes: [(&str, WorkFilter); 4] = [
            ("device", &|_| true),
            ("compute", &|w| {
                w.kind == WorkKind::Kernel && !is_communication(w)
            }),
            ("communication", &|w| is_communication(w)),
            ("memory", &|w| w.kind != WorkKind::Kernel),
        ];
        for (class, keep) in classes {
            let list = phases_where(&|w| w.device == d && keep(w));
            if !list.is_empty() {
                questions.push(intervals(format!("{class}:{}", device_id(d)), list));
            }
        }
    }
    if timers {
        questions.push(RawQuestion::HostCompletion {
            id: "completion:all-work".into(),
            timer: "all-work".into(),
            work: Some(all_work_claim),
            expect: None,
        });
        if let Some(claim) = script_claim {
            questions.push(RawQuestion::HostCompletion {
                id: "completion:before-final-sync".into(),
                timer: "before-final-sync".into(),
                work: Some(claim),
                expect: None,
            });
        }
    }
    case.questions = questions;

    // What the summary says.
    let legacy = read.legacy_categories;
    let format = match (base, legacy) {
        (Some(_), _) => "kineto: ts in µs (ns decimals) since baseTimeNanoseconds".to_owned(),
        (None, true) => "kineto 2021: integer Unix µs, capitalised categories".to_owned(),
        (None, false) if read.fractional_ts => "kineto: absolute Unix µs with decimals".to_owned(),
        (None, false) => "kineto: integer absolute Unix µs".to_owned(),
    };
    let kernels = read
        .work
        .iter()
        .filter(|w| w.kind == WorkKind::Kernel)
        .count();
    let copies = read
        .work
        .iter()
        .filter(|w| w.kind == WorkKind::Memcpy)
        .count();
    let sets = read
        .work
        .iter()
        .filter(|w| w.kind == WorkKind::Memset)
        .count();
    let launches = placed
        .iter()
        .filter(|p| matches!(p.step, Step::Launch(_)))
        .count();
    let list = |m: &BTreeMap<String, u64>| {
        if m.is_empty() {
            "none".to_owned()
        } else {
            m.iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join("; ")
        }
    };
    let mut facts: Vec<(String, String)> = vec![
        ("trace events read".into(), read.events.to_string()),
        (
            "GPU activities imported as phases".into(),
            format!("{} ({kernels} kernels, {copies} copies, {sets} sets)", read.work.len()),
        ),
        (
            "GPU activities with no CPU correlation".into(),
            format!("{uncorrelated} (kept in every interval question; HTA drops them; never claimed as launched)"),
        ),
        (
            "gpu_user_annotation ranges".into(),
            format!("{} (phases without a stream, in no question: not work)", read.annotations.len()),
        ),
        ("launches placed in the program".into(), launches.to_string()),
        ("host waits".into(), list(&host_waits)),
        ("stream waits (Stream Wait Event)".into(), stream_waits.to_string()),
        ("sync rows and calls not mapped".into(), list(&not_mapped)),
        ("other events (not imported)".into(), list(&read.ignored)),
    ];
    if read.duplicate_calls > 0 {
        facts.push((
            "API calls sharing a correlation (first kept)".into(),
            read.duplicate_calls.to_string(),
        ));
    }
    if read.rounded > 0 {
        facts.push((
            "values rounded to the nearest ns (--round-sub-ns)".into(),
            read.rounded.to_string(),
        ));
    }
    if order_disagreements > 0 {
        facts.push((
            "launches whose host order disagrees with their stream's GPU order".into(),
            order_disagreements.to_string(),
        ));
    }

    let mut notes = vec![
        format!(
            "host and GPU timestamps share one clock `{CLOCK_ID}` (instance `{instance}`): Kineto converts CUPTI's GPU times to the host's Unix time, an approximation; another rank or process is another instance"
        ),
        "communication = kernels whose name contains `nccl` (HTA: `^nccl.*Kernel`); memory = copies and sets; compute = every other kernel".to_owned(),
        "a completion claim names the last launch of each stream: coverage is a per-stream prefix, so this claims all of the stream's launched work".to_owned(),
    ];
    if let Some(n) = final_sync_note {
        notes.push(n);
    }
    if assumed_device_sync > 0 {
        notes.push(format!(
            "{assumed_device_sync} cudaDeviceSynchronize call(s) without a cuda_sync row are taken as waits on {}, the only device with GPU work in the trace (the call itself names no device)",
            single_device.map_or_else(String::new, device_id)
        ));
    }
    if read.zero_ts_with_base > 0 {
        notes.push(format!(
            "{} GPU event(s) have `ts` 0: Kineto clamps negative relative times to 0, so their start may be an artefact",
            read.zero_ts_with_base
        ));
    }
    if read.rounded > 0 {
        notes.push(format!(
            "{} value(s) had digits below 1 ns and were rounded to the nearest ns (--round-sub-ns)",
            read.rounded
        ));
    }

    let mut provenance = serde_json::Map::new();
    provenance.insert("importer".into(), "worksheet import (kineto)".into());
    provenance.insert("trace_format".into(), format.clone().into());
    if let Some(v) = &top.schema_version {
        provenance.insert("schemaVersion".into(), v.clone());
    }
    if let Some(v) = &top.trace_name {
        provenance.insert("traceName".into(), v.clone());
    }
    if let Some(b) = base {
        provenance.insert("baseTimeNanoseconds".into(), b.into());
    }
    if let Some(v) = &top.distributed_info {
        provenance.insert("distributedInfo".into(), v.clone());
    }
    if let Some(names) = device_names(top, &work_devices) {
        provenance.insert("devices".into(), names);
    }
    provenance.insert(
        "facts".into(),
        serde_json::Value::Object(
            facts
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::from(v.clone())))
                .collect(),
        ),
    );
    provenance.insert("notes".into(), serde_json::Value::from(notes.clone()));
    case.provenance = Some(provenance);
    case.description = Some(format!(
        "PyTorch profiler (Kineto) trace imported by `worksheet import` ({format}). GPU kernels, copies and sets are phases in their streams; \
         launches are the API calls with the same correlation, in host-time order; cuda_sync rows of blocking calls are host waits, Stream Wait Event rows stream waits. \
         Questions: intervals per stream, per device and per class of work (compute, communication, memory), and whether the trace's waits cover its work. \
         provenance.notes lists every assumption."
    ));
    Imported {
        case,
        format,
        facts,
        notes,
    }
}

fn intervals(id: String, phases: Vec<String>) -> RawQuestion {
    RawQuestion::Intervals {
        id,
        phases: Some(phases),
        expect: None,
    }
}

/// `rank R of W, pid P` (or what the trace has of it).
fn clock_instance(top: &TopLevel, read: &Read, name: &str) -> String {
    let info = top.distributed_info.as_ref();
    let field = |k: &str| {
        info.and_then(|i| i.get(k))
            .and_then(serde_json::Value::as_i64)
    };
    let pid = read
        .pids
        .iter()
        .max_by_key(|(pid, n)| (**n, std::cmp::Reverse(**pid)))
        .map(|(pid, _)| *pid);
    let mut parts = Vec::new();
    match (field("rank"), field("world_size")) {
        (Some(r), Some(w)) => parts.push(format!("rank {r} of {w}")),
        (Some(r), None) => parts.push(format!("rank {r}")),
        _ => {}
    }
    if let Some(pid) = pid {
        parts.push(format!("pid {pid}"));
    }
    if parts.is_empty() {
        format!("trace {name}")
    } else {
        parts.join(", ")
    }
}

/// `{"gpu0": "NVIDIA A100-PG509-200"}` for the devices with work, from `deviceProperties`.
fn device_names(top: &TopLevel, devices: &BTreeSet<i64>) -> Option<serde_json::Value> {
    let list = top.device_properties.as_ref()?.as_array()?;
    let mut map = serde_json::Map::new();
    for d in list {
        let (Some(id), Some(name)) = (
            d.get("id").and_then(serde_json::Value::as_i64),
            d.get("name").and_then(serde_json::Value::as_str),
        ) else {
            continue;
        };
        if devices.contains(&id) {
            map.insert(device_id(id), name.into());
        }
    }
    (!map.is_empty()).then_some(serde_json::Value::Object(map))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaled(text: &str) -> Option<Scaled> {
        scaled_decimal(text, 3)
    }

    #[test]
    fn microsecond_text_is_read_exactly_into_ns() {
        assert_eq!(
            scaled("4458676522690.655"),
            Some(Scaled::Exact(4_458_676_522_690_655))
        );
        assert_eq!(
            scaled("1712867402348256"),
            Some(Scaled::Exact(1_712_867_402_348_256_000))
        );
        assert_eq!(scaled("12.5"), Some(Scaled::Exact(12_500)));
        assert_eq!(scaled("0"), Some(Scaled::Exact(0)));
        assert_eq!(scaled("0.001"), Some(Scaled::Exact(1)));
        assert_eq!(scaled("-3"), Some(Scaled::Exact(-3000)));
        assert_eq!(scaled("1.5e3"), Some(Scaled::Exact(1_500_000)));
        assert_eq!(scaled("15E-1"), Some(Scaled::Exact(1_500)));
        assert_eq!(scaled("2.000000"), Some(Scaled::Exact(2_000)));
    }

    /// A real `ts` of `nccl_data.json.gz`: through f64, × 1000 and truncated, it would be
    /// 4458676522709058 ns, one ns early. The text is the truth.
    #[test]
    fn the_text_never_goes_through_f64() {
        let v: f64 = "4458676522709.059".parse().unwrap();
        assert_eq!((v * 1000.0) as i64, 4_458_676_522_709_058);
        assert_eq!(
            scaled("4458676522709.059"),
            Some(Scaled::Exact(4_458_676_522_709_059))
        );
    }

    #[test]
    fn digits_below_a_nanosecond_round_to_the_nearest() {
        assert_eq!(scaled("1.0004"), Some(Scaled::Rounded(1_000)));
        assert_eq!(scaled("1.0005"), Some(Scaled::Rounded(1_001)));
        assert_eq!(scaled("-1.0005"), Some(Scaled::Rounded(-1_001)));
        assert_eq!(scaled("0.0009"), Some(Scaled::Rounded(1)));
        assert_eq!(scaled("0.00004"), Some(Scaled::Rounded(0)));
        assert_eq!(scaled("0.00009"), Some(Scaled::Rounded(0)));
        assert_eq!(scaled("1.0010"), Some(Scaled::Exact(1_001)));
    }

    #[test]
    fn non_numbers_and_overflow_are_none() {
        for bad in [
            "",
            "-",
            "1.",
            ".5",
            "1e",
            "abc",
            "1.2.3",
            "0x10",
            "1e999999999",
        ] {
            assert_eq!(scaled(bad), None, "{bad}");
        }
        assert_eq!(
            scaled("9223372036854775.807"),
            Some(Scaled::Exact(i64::MAX))
        );
        assert_eq!(scaled("9223372036854775.808"), None);
        assert_eq!(
            scaled("-9223372036854775.808"),
            Some(Scaled::Exact(i64::MIN))
        );
        assert_eq!(scaled("1e400"), None);
    }

    #[test]
    fn short_names_drop_templates_and_arguments() {
        assert_eq!(
            short_name("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int, float)"),
            "at::native::vectorized_elementwise_kernel"
        );
        assert_eq!(
            short_name("Memcpy HtoD (Pageable -> Device)"),
            "Memcpy_HtoD"
        );
        assert_eq!(short_name("Memset (Device)"), "Memset");
        assert_eq!(
            short_name("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>>(int)"),
            "at::native::multi_tensor_apply_kernel"
        );
        assert_eq!(short_name("(weird)"), "(weird)");
        assert_eq!(short_name(""), "gpu-work");
        assert_eq!(
            short_name(&"k".repeat(100)).chars().count(),
            SHORT_NAME_CHARS + 1
        );
    }

    /// A kernel (`cat` kernel) on `stream`, launched by call `corr` over `[c0, c1)` µs.
    fn kernel(stream: i64, corr: i64, ts: i64, dur: i64, c0: i64, c1: i64) -> String {
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "k{corr}", "pid": 0, "tid": {stream}, "ts": {ts}, "dur": {dur},
                "args": {{"device": 0, "stream": {stream}, "correlation": {corr}}}}},
               {}"#,
            call("cudaLaunchKernel", corr, c0, c1)
        )
    }

    fn call(name: &str, corr: i64, c0: i64, c1: i64) -> String {
        format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{name}", "pid": 9, "tid": 9, "ts": {c0}, "dur": {},
                "args": {{"correlation": {corr}}}}}"#,
            c1 - c0
        )
    }

    fn sync(kind: &str, corr: i64, stream: i64, on_stream: i64, record: i64) -> String {
        format!(
            r#"{{"ph": "X", "cat": "cuda_sync", "name": "{kind}", "pid": 0, "tid": {stream}, "ts": 0, "dur": 0,
                "args": {{"cuda_sync_kind": "{kind}", "stream": {stream}, "wait_on_stream": {on_stream},
                          "wait_on_cuda_event_record_corr_id": {record}, "correlation": {corr}, "device": 0}}}}"#
        )
    }

    /// The completion answers of a trace made of `events`.
    fn completions(events: &[String]) -> Vec<(String, String)> {
        let text = format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n"));
        let imported = import_text(&text, "t", &ImportOptions::default()).expect("imports");
        let summary = super::super::summarize(&imported, false).expect("validates");
        summary
            .completion
            .into_iter()
            .map(|c| (c.question, c.answer))
            .collect()
    }

    ///  s7:  [k1)  record(c2)
    ///  s9:              wait(c2) [k4)  record(c5)
    ///  host: ... cudaEventSynchronize(c5) → covers k4 (order) and k1 (the join)
    #[test]
    fn an_event_wait_covers_work_joined_by_a_stream_wait() {
        let mut events = vec![
            kernel(7, 1, 20, 10, 10, 12),
            call("cudaEventRecord", 2, 13, 14),
            call("cudaStreamWaitEvent", 3, 15, 16),
            sync("Stream Wait Event", 3, 9, 7, 2),
            kernel(9, 4, 31, 9, 17, 18),
            call("cudaEventRecord", 5, 19, 20),
            call("cudaEventSynchronize", 6, 21, 45),
            sync("Event Sync", 6, -1, 9, 5),
        ];
        let answers = completions(&events);
        assert_eq!(answers.len(), 1, "no final device sync: {answers:?}");
        assert_eq!(answers[0].1, "known 35 us");
        // Without the stream wait, the event on s9 says nothing about k1 on s7.
        events.drain(2..4);
        assert_eq!(completions(&events)[0].1, "unknown (wait-misses-work)");
    }

    /// A launch on another thread that has not returned when the wait starts is not
    /// covered by it, and neither is work launched after the last wait.
    #[test]
    fn a_wait_covers_only_launches_that_returned_before_it_started() {
        let events = [
            kernel(7, 1, 40, 5, 10, 30),
            call("cudaDeviceSynchronize", 2, 20, 50),
            sync("Context Sync", 2, -1, -1, -1),
        ];
        assert_eq!(completions(&events)[0].1, "unknown (wait-misses-work)");
        let events = [
            kernel(7, 1, 40, 5, 10, 19),
            call("cudaDeviceSynchronize", 2, 20, 50),
            sync("Context Sync", 2, -1, -1, -1),
        ];
        let answers = completions(&events);
        assert_eq!(answers[0].1, "known 40 us");
        assert_eq!(answers[1].1, "unknown (no-wait)", "{answers:?}");
        let mut later = events.to_vec();
        later.push(kernel(7, 3, 60, 5, 55, 58));
        let answers = completions(&later);
        assert_eq!(
            answers.len(),
            1,
            "work after the last wait: it is not final"
        );
        assert_eq!(answers[0].1, "unknown (wait-misses-work)");
    }

    /// `cudaEventQuery` is reported as `Event Sync` but returns at once: not a wait.
    #[test]
    fn an_event_query_is_not_a_wait() {
        let events = [
            kernel(7, 1, 20, 10, 10, 12),
            call("cudaEventRecord", 2, 13, 14),
            call("cudaEventQuery", 3, 40, 41),
            sync("Event Sync", 3, -1, 7, 2),
        ];
        assert_eq!(completions(&events)[0].1, "unknown (no-wait)");
    }

    #[test]
    fn legacy_stream_tids_are_read() {
        let raw: Box<RawValue> = serde_json::from_str(r#""stream 7""#).unwrap();
        assert_eq!(stream_of_tid(&raw), Some(7));
        let raw: Box<RawValue> = serde_json::from_str("24").unwrap();
        assert_eq!(stream_of_tid(&raw), Some(24));
        let raw: Box<RawValue> = serde_json::from_str(r#""main""#).unwrap();
        assert_eq!(stream_of_tid(&raw), None);
    }
}
