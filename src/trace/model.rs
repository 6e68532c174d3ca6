//! The format-neutral trace model every audit reads: what a profiler recorded, in integer ns
//! on the trace's one clock, before any decision about what it means.
//!
//! The Kineto readers (`import::kineto::trace`, lenient, for `worksheet audit`; and the
//! importer's own streaming pass, `import::kineto::audit`) and the Nsight Systems reader
//! (`import::nsys::trace`) fill a [`Trace`]; a case file gives a smaller one
//! ([`Trace::from_case`]). Nothing here is judged: an activity that starts before its launch,
//! two activities of one stream that overlap, a zero timestamp are all kept as they were read,
//! so the findings can count them.
//!
//! ```text
//! host thread 1:  [ProfilerStep#3 ..................................)
//!                   [cudaLaunchKernel)  [cudaStreamSynchronize.....)
//!                        │ correlation 41
//! gpu0 stream 7:         └──▶[ kernel #41 ====)
//! ```
//!
//! Invariants: every `start <= end` (a negative duration is a [`Problem`], and the event is not
//! kept); all times are on one clock.

use std::collections::HashSet;
use std::sync::Arc;

use serde::Serialize;

/// A name as the model holds it (a kernel, a call, a range): shared, so that a name a trace
/// repeats 10,000 times is held once ([`Names`]), and read as a `&str` like a `String`.
pub type Name = Arc<str>;

/// The names of one trace, each held once: a reader asks for every name it keeps through
/// [`Names::get`], and the events that share a name share its text.
#[derive(Debug, Default)]
pub struct Names {
    set: HashSet<Name>,
}

/// Writes a [`Name`] as its text (serde's `rc` feature would do the same for every crate
/// that uses serde; this keeps the build as it was).
fn name_text<S: serde::Serializer>(name: &Name, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(name)
}

impl Names {
    /// The one shared copy of `text`, made the first time it is asked for.
    pub fn get(&mut self, text: &str) -> Name {
        if let Some(name) = self.set.get(text) {
            return Arc::clone(name);
        }
        let name: Name = Arc::from(text);
        self.set.insert(Arc::clone(&name));
        name
    }
}

/// What a GPU activity does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActivityKind {
    /// A kernel.
    Kernel,
    /// A memory copy.
    Memcpy,
    /// A memory set.
    Memset,
}

/// The class of work an activity belongs to, for the breakdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkClass {
    /// Kernels that are not communication.
    Compute,
    /// Kernels whose name contains `nccl` (any case), as HTA and the importer decide.
    Communication,
    /// Copies and sets.
    Memory,
}

/// The direction of a copy, where the trace says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CopyDirection {
    /// Device to host, into pageable memory (a synchronous copy even when `Async`).
    DeviceToPageable,
    /// Device to host (pinned memory, or the trace does not say).
    DeviceToHost,
    /// Any other direction.
    Other,
}

/// One GPU activity (kernel, copy, set).
#[derive(Clone, Debug, Serialize)]
pub struct Activity {
    /// What it does.
    pub kind: ActivityKind,
    /// Its name (kernel name, `Memcpy DtoH (Device -> Pageable)`, ...).
    #[serde(serialize_with = "name_text")]
    pub name: Name,
    /// The device.
    pub device: i64,
    /// The stream, within the device.
    pub stream: i64,
    /// Start, ns.
    pub start: i64,
    /// End, ns (`>= start`).
    pub end: i64,
    /// The correlation id that joins it to the host call that launched it (Nsight Systems:
    /// the process id in the high 32 bits, since CUPTI numbers correlations per process).
    pub correlation: Option<i64>,
    /// Kineto: the activity's own `args."External id"` (2021: `"external id"`), where it is an
    /// integer; the op view reads the launch call's instead and uses this one only to see
    /// that the two agree ([`CpuOp`]).
    pub external: Option<i64>,
    /// Copies: the direction.
    pub copy: Option<CopyDirection>,
    /// Collective kernels: the process group and collective the trace names (Kineto's
    /// `args."Process Group Name"` and `args."Collective name"`, both present), for the
    /// multi-rank import.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collective: Option<Box<CollectiveArgs>>,
    /// Copies and sets: the bytes moved or set, where the trace records them (Kineto
    /// `args.bytes`); `None` for kernels and where the trace does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// What a collective kernel's `args` say it is part of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CollectiveArgs {
    /// The process group (`"Process Group Name"`).
    pub group: String,
    /// The collective (`"Collective name"`: `allreduce`, ...).
    pub name: String,
}

impl CollectiveArgs {
    /// The pair when both are named, else `None` (boxed: most activities are not
    /// collectives, so the model pays one pointer for the field).
    pub fn of(group: Option<String>, name: Option<String>) -> Option<Box<CollectiveArgs>> {
        Some(Box::new(CollectiveArgs {
            group: group?,
            name: name?,
        }))
    }
}

impl Activity {
    /// Compute, communication or memory.
    pub fn class(&self) -> WorkClass {
        WorkClass::of(self.kind, &self.name)
    }
}

impl WorkClass {
    /// The class of an activity of `kind` named `name` (HTA: `^nccl.*Kernel`; here any name
    /// containing `nccl`, any case).
    pub fn of(kind: ActivityKind, name: &str) -> WorkClass {
        match kind {
            ActivityKind::Memcpy | ActivityKind::Memset => WorkClass::Memory,
            ActivityKind::Kernel if name.to_ascii_lowercase().contains("nccl") => {
                WorkClass::Communication
            }
            ActivityKind::Kernel => WorkClass::Compute,
        }
    }
}

/// A CUDA runtime or driver API call on the host.
#[derive(Clone, Debug, Serialize)]
pub struct ApiCall {
    /// The API name (`cudaLaunchKernel`, `cudaStreamSynchronize`, ...).
    #[serde(serialize_with = "name_text")]
    pub name: Name,
    /// The host thread, where the trace names it.
    pub thread: Option<i64>,
    /// Call start, ns.
    pub start: i64,
    /// Call return, ns.
    pub end: i64,
    /// Correlation id.
    pub correlation: Option<i64>,
    /// Kineto: the call's `args."External id"` (2021: `"external id"`), where it is an
    /// integer: the External id of the host op the profiler linked the call to ([`CpuOp`]).
    pub external: Option<i64>,
    /// Whether a sync row (`cuda_sync`, CUPTI synchronization) records what this call joined
    /// or waited for.
    pub sync_recorded: bool,
}

/// A host op (Kineto `cpu_op`, 2021 `Operator`) that a runtime or driver call names by its
/// External id: the op the profiler recorded as launching that call. Only the ops some call
/// names are kept ([`keep_named_ops`]).
///
/// Some traces copy the correlation into the calls' External id (HTA's `df_index_resolver`,
/// `sampled_rank-*`, the alexnet `benchmark_result`): such an id may name an unrelated op by
/// chance, which the op view catches because that op's span does not hold the call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CpuOp {
    /// Its `args."External id"` (2021: `"external id"`).
    pub external: i64,
    /// The op's name (`aten::addmm`).
    #[serde(serialize_with = "name_text")]
    pub name: Name,
    /// Start, ns.
    pub start: i64,
    /// End, ns (`>= start`).
    pub end: i64,
}

/// The ops of `ops` whose External id some call of `calls` names, sorted by (External id,
/// start, end, name): the same list whatever order a reader met them in.
pub fn keep_named_ops(mut ops: Vec<CpuOp>, calls: &[ApiCall]) -> Vec<CpuOp> {
    let mut named: Vec<i64> = calls.iter().filter_map(|c| c.external).collect();
    named.sort_unstable();
    named.dedup();
    ops.retain(|op| named.binary_search(&op.external).is_ok());
    ops.sort_by(|a, b| {
        (a.external, a.start, a.end, &*a.name).cmp(&(b.external, b.start, b.end, &*b.name))
    });
    ops.shrink_to_fit();
    ops
}

/// What a host range is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RangeKind {
    /// A `record_function` / `user_annotation` range, or an NVTX range.
    Annotation,
    /// An op that reads a GPU value on the host and blocks for it (`aten::item`,
    /// `aten::_local_scalar_dense`).
    ScalarRead,
}

/// A range on the host timeline.
#[derive(Clone, Debug, Serialize)]
pub struct HostRange {
    /// What it is.
    pub kind: RangeKind,
    /// Its name.
    #[serde(serialize_with = "name_text")]
    pub name: Name,
    /// The host thread, where the trace names it.
    pub thread: Option<i64>,
    /// Start, ns.
    pub start: i64,
    /// End, ns.
    pub end: i64,
}

/// A `ProfilerStep#N` range: on the host, and on the GPU when the trace draws it there too.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// `ProfilerStep#N`.
    #[serde(serialize_with = "name_text")]
    pub name: Name,
    /// Host start, ns.
    pub start: i64,
    /// Host end, ns.
    pub end: i64,
    /// The host thread.
    pub thread: Option<i64>,
}

/// An integrity problem found while reading (the event itself is kept only when it is
/// well-formed).
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    /// Which kind.
    pub kind: ProblemKind,
    /// Where: `traceEvents[12]`, `CUPTI_ACTIVITY_KIND_KERNEL rowid 7`.
    pub at: String,
    /// The event's name.
    #[serde(serialize_with = "name_text")]
    pub name: Name,
    /// Its start (as read), ns.
    pub start: i64,
    /// Its duration (as read), ns; negative for [`ProblemKind::NegativeDuration`].
    pub duration: i64,
}

/// Problems the readers count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// A GPU event whose timestamp is exactly the trace's base (relative `ts` 0): Kineto
    /// clamps negative relative times to 0, so its start is likely an artefact.
    ZeroTimestamp,
    /// An event with a negative duration (not kept).
    NegativeDuration,
}

/// What the trace says of a GPU (Kineto `deviceProperties`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Device {
    /// The device number activities name.
    pub id: i64,
    /// Its name (`NVIDIA H200`), where given.
    pub name: Option<String>,
    /// Compute capability `(major, minor)`, where given.
    pub compute: Option<(i64, i64)>,
}

impl Device {
    /// The devices of a Kineto `deviceProperties` array; entries without an integer `id` are
    /// skipped, and anything that is not an array gives none.
    pub fn from_kineto_properties(value: &serde_json::Value) -> Vec<Device> {
        let Some(list) = value.as_array() else {
            return Vec::new();
        };
        let int = |d: &serde_json::Value, k: &str| d.get(k).and_then(serde_json::Value::as_i64);
        let mut devices: Vec<Device> = list
            .iter()
            .filter_map(|d| {
                Some(Device {
                    id: int(d, "id")?,
                    name: d.get("name").and_then(|n| n.as_str()).map(str::to_owned),
                    compute: int(d, "computeMajor")
                        .map(|m| (m, int(d, "computeMinor").unwrap_or(0))),
                })
            })
            .collect();
        devices.sort_by_key(|d| d.id);
        devices
    }
}

/// Everything an audit reads.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Trace {
    /// The format, for people: `kineto`, `nsys`, `case`.
    pub source: String,
    /// GPU activities.
    pub activities: Vec<Activity>,
    /// Runtime and driver calls.
    pub calls: Vec<ApiCall>,
    /// Annotation ranges and scalar reads on the host.
    pub ranges: Vec<HostRange>,
    /// `ProfilerStep#N` ranges on the host, in time order.
    pub steps: Vec<Step>,
    /// `ProfilerStep#N` ranges the trace draws on the GPU (`gpu_user_annotation`).
    pub gpu_steps: Vec<Step>,
    /// The profiler's recording window, when the trace states it.
    pub window: Option<(i64, i64)>,
    /// Whether the trace has any sync rows at all (`cuda_sync`, CUPTI synchronization).
    pub has_sync_rows: bool,
    /// Problems found while reading.
    pub problems: Vec<Problem>,
    /// Things the reader could not use, with counts (for people).
    pub notes: Vec<String>,
    /// The GPUs, as the trace describes them (empty when it does not).
    pub devices: Vec<Device>,
    /// The host ops that calls name by their External id ([`CpuOp`]; Kineto only), sorted
    /// by External id.
    pub ops: Vec<CpuOp>,
}

/// A call name without per-thread-stream and version suffixes (`_ptsz`, `_v2`, `_v7000`).
pub fn base_call_name(name: &str) -> &str {
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

/// What a host call does to ordering, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallRole {
    /// `cudaDeviceSynchronize`, `cuCtxSynchronize`: blocks the host for the whole device.
    DeviceSync,
    /// `cudaStreamSynchronize`: blocks the host for one stream.
    StreamSync,
    /// `cudaEventSynchronize`: blocks the host for one event.
    EventSync,
    /// `cudaStreamWaitEvent`: a stream (not the host) waits for an event.
    StreamWait,
    /// `cudaEventRecord(WithFlags)`: records an event in a stream.
    EventRecord,
    /// `cudaEventQuery`, `cudaStreamQuery`: a poll, not a wait.
    Query,
    /// A synchronous copy call (`cudaMemcpy`, `cuMemcpyDtoH`): blocks when it copies to the host.
    SyncCopy,
    /// Anything else.
    Other,
}

impl CallRole {
    /// The role of a call by its name.
    pub fn of(name: &str) -> CallRole {
        match base_call_name(name) {
            "cudaDeviceSynchronize" | "cudaThreadSynchronize" | "cuCtxSynchronize" => {
                CallRole::DeviceSync
            }
            "cudaStreamSynchronize" | "cuStreamSynchronize" => CallRole::StreamSync,
            "cudaEventSynchronize" | "cuEventSynchronize" => CallRole::EventSync,
            "cudaStreamWaitEvent" | "cuStreamWaitEvent" => CallRole::StreamWait,
            "cudaEventRecord"
            | "cudaEventRecordWithFlags"
            | "cuEventRecord"
            | "cuEventRecordWithFlags" => CallRole::EventRecord,
            "cudaEventQuery" | "cuEventQuery" | "cudaStreamQuery" | "cuStreamQuery" => {
                CallRole::Query
            }
            "cudaMemcpy" | "cuMemcpyDtoH" | "cuMemcpy" => CallRole::SyncCopy,
            _ => CallRole::Other,
        }
    }

    /// Whether the host blocks in this call until GPU work completes.
    pub fn blocks_host(self) -> bool {
        matches!(
            self,
            CallRole::DeviceSync | CallRole::StreamSync | CallRole::EventSync
        )
    }
}

impl Trace {
    /// A trace from a validated case: phases in streams are activities (kernels, compute),
    /// host waits are blocking calls. Cases carry no steps, correlations or annotations, so
    /// only the breakdown and the per-stream findings apply.
    pub fn from_case(case: &crate::case::Case) -> Trace {
        use crate::case::{Op, WaitTarget};
        let mut trace = Trace {
            source: "case".to_owned(),
            ..Trace::default()
        };
        let mut devices: Vec<&str> = case.streams.iter().map(|s| s.device.as_str()).collect();
        devices.sort_unstable();
        devices.dedup();
        let device_of = |name: &str| devices.iter().position(|d| *d == name).unwrap_or(0) as i64;
        for p in &case.phases {
            let Some(s) = p.stream else { continue };
            trace.activities.push(Activity {
                kind: ActivityKind::Kernel,
                name: p.label.clone(),
                device: device_of(&case.streams[s].device),
                stream: s as i64,
                start: p.interval.start().as_i64(),
                end: p.interval.end().as_i64(),
                correlation: None,
                external: None,
                copy: None,
                collective: None,
                bytes: None,
            });
        }
        for op in &case.program {
            if let Op::HostWait {
                target,
                returned: Some((_, at)),
                ..
            } = op
            {
                let name = match target {
                    WaitTarget::Device(_) => "cudaDeviceSynchronize",
                    WaitTarget::Stream(_) => "cudaStreamSynchronize",
                    WaitTarget::Event(_) => "cudaEventSynchronize",
                };
                trace.calls.push(ApiCall {
                    name: name.into(),
                    thread: None,
                    start: at.as_i64(),
                    end: at.as_i64(),
                    correlation: None,
                    external: None,
                    sync_recorded: true,
                });
            }
        }
        trace.has_sync_rows = true;
        trace
            .notes
            .push("a case file has no steps, launches by correlation or annotations: only the breakdown and the per-stream findings apply".to_owned());
        trace
    }
}
