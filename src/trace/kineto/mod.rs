//! PyTorch profiler (Kineto) Chrome-trace JSON, read: the rows the importer interprets
//! (`Read`) and the format-neutral recorded model ([`crate::trace::model::Trace`]), both from
//! one streaming pass.
//!
//! What the rows mean (which call launched which kernel, which sync row is a wait) is decided
//! above, in `import::kineto`; its module documentation describes the mapping. Here:
//!
//! ```text
//!  JSON text ──split (the fast path: events cut on the gunzipping thread)──▶ pieces
//!     pieces ──read (serde visitors; number: exact µs → ns, never f64)──▶ Read
//!       Read ──neutral (what only the audit reads, from the same pass)──▶ trace::model::Trace
//!  JSON text ──lenient (a trace the importer refuses, for the audit)──▶ trace::model::Trace
//! ```
//!
//! `names` holds the call-name predicates both the readers and the importer use.

pub(crate) mod handoff;
pub mod lenient;
#[cfg(test)]
mod lenient_tests;
pub(crate) mod names;
pub(crate) mod neutral;
pub(crate) mod number;
pub(crate) mod read;
pub(crate) mod split;
pub mod tap;

use std::collections::{BTreeMap, HashMap};

use serde_json::value::RawValue;

use super::ReadOptions;
use crate::error::InputError;
use crate::trace::model::{ApiCall, Name, Names};

type Result<T> = std::result::Result<T, InputError>;

/// The clock every imported time is on.
pub const CLOCK_ID: &str = "kineto";

/// What a GPU activity does: the recorded model's kind.
pub(crate) use crate::trace::model::ActivityKind as WorkKind;

impl WorkKind {
    /// The kind of a Kineto category (`kernel`, `gpu_memcpy`, `gpu_memset`; 2021:
    /// `Kernel`, `Memcpy`, `Memset`).
    pub(crate) fn of_category(cat: &str) -> Option<WorkKind> {
        match cat {
            "kernel" | "Kernel" => Some(WorkKind::Kernel),
            "gpu_memcpy" | "Memcpy" => Some(WorkKind::Memcpy),
            "gpu_memset" | "Memset" => Some(WorkKind::Memset),
            _ => None,
        }
    }
}

/// One GPU activity, on the trace's clock, in absolute ns.
pub(crate) struct GpuWork {
    pub(crate) kind: WorkKind,
    pub(crate) name: Name,
    pub(crate) device: i64,
    pub(crate) stream: i64,
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) correlation: Option<i64>,
    /// `args."External id"`, where an integer.
    pub(crate) external: Option<i64>,
    pub(crate) collective: Option<Box<crate::trace::model::CollectiveArgs>>,
    /// Its place among the trace's GPU work in file order (the build sorts the work by
    /// stream and time; the audit reads it in file order, [`PendingAudit::end`]).
    pub(crate) place: u32,
    /// Copies and sets: `args.bytes`, where given.
    pub(crate) bytes: Option<u64>,
}

/// A `gpu_user_annotation` range.
pub(crate) struct Annotation {
    pub(crate) name: Name,
    pub(crate) device: i64,
    pub(crate) stream: i64,
    pub(crate) start: i64,
    pub(crate) end: i64,
}

/// A `cuda_sync` row.
pub(crate) struct SyncRow {
    pub(crate) event: usize,
    pub(crate) kind: String,
    pub(crate) device: Option<i64>,
    pub(crate) stream: Option<i64>,
    pub(crate) wait_on_stream: Option<i64>,
    pub(crate) record_corr: Option<i64>,
    pub(crate) correlation: Option<i64>,
}

/// Everything read from the events, before the case is built.
#[derive(Default)]
pub(crate) struct Read {
    pub(crate) events: usize,
    pub(crate) work: Vec<GpuWork>,
    pub(crate) annotations: Vec<Annotation>,
    /// The first API call (`cuda_runtime`, `cuda_driver`, 2021 `Runtime`) of each correlation:
    /// its place in `audit.calls`, where every call is held once for the audit and the
    /// importer ([`Read::call`]). At ×10 of `df_index_resolver` a second copy of the calls
    /// here was 21.5 MB; the places are 8.
    pub(crate) calls: HashMap<i64, usize>,
    pub(crate) duplicate_calls: u64,
    pub(crate) syncs: Vec<SyncRow>,
    pub(crate) ignored: BTreeMap<String, u64>,
    pub(crate) pids: HashMap<i64, u64>,
    pub(crate) legacy_categories: bool,
    pub(crate) rounded: u64,
    pub(crate) zero_ts_with_base: u64,
    pub(crate) fractional_ts: bool,
    /// What only the audit reads.
    pub(crate) audit: neutral::AuditRead,
    /// Every name kept (work, calls, annotations, the audit's ranges), each held once.
    pub(crate) names: Names,
}

impl Read {
    /// The first API call with `correlation`, where the trace has one.
    pub(crate) fn call(&self, correlation: i64) -> Option<&ApiCall> {
        self.calls.get(&correlation).map(|&k| &self.audit.calls[k])
    }

    /// Whether the trace has an API call with `correlation`.
    pub(crate) fn has_call(&self, correlation: i64) -> bool {
        self.calls.contains_key(&correlation)
    }

    /// The first API call of each correlation, with the correlation, in no given order.
    pub(crate) fn first_calls(&self) -> impl Iterator<Item = (i64, &ApiCall)> {
        self.calls.iter().map(|(&c, &k)| (c, &self.audit.calls[k]))
    }
}

/// The audit's result: the audit's model of a trace, or why it could not be made.
pub(crate) type AuditResult = Result<crate::trace::model::Trace>;

/// The audit's model of a trace the importer also builds a case from, made around the build
/// so that nothing is held twice: [`audit_begin`] takes the audit's own part of the read; the
/// build hands over the calls once it has placed its program from them
/// ([`PendingAudit::take_calls`]) and the work once it has made its activities
/// ([`PendingAudit::take_work`]); [`PendingAudit::end`] puts the work back in file order (the
/// build sorts it) and makes the audit's activities of it in place. At ×10 of
/// `df_index_resolver` a copy of the work made up front was 25 MB at the import's peak.
pub(crate) struct PendingAudit {
    model: neutral::AuditRead,
    work: Vec<GpuWork>,
    syncs: Vec<Option<i64>>,
    devices: Vec<crate::trace::model::Device>,
}

/// The audit's part of what the pass read, taken out of `read` (see [`PendingAudit`]); the
/// calls and the work stay in `read`, for the build. The host ops no call names are dropped
/// first: at ×10 of `df_index_resolver` they are 42 MB, and no call names any of them.
pub(crate) fn audit_begin(read: &mut Read, top: &read::TopLevel) -> PendingAudit {
    read.audit.keep_named_ops();
    let calls = std::mem::take(&mut read.audit.calls);
    let model = std::mem::take(&mut read.audit);
    read.audit.calls = calls;
    PendingAudit {
        model,
        work: Vec::new(),
        syncs: read.syncs.iter().map(|s| s.correlation).collect(),
        devices: devices_of(top),
    }
}

impl PendingAudit {
    /// Takes every API call of the read (`read.audit.calls`, in file order).
    pub(crate) fn take_calls(&mut self, calls: Vec<ApiCall>) {
        self.model.calls = calls;
    }

    /// Takes the read's GPU work, in any order.
    pub(crate) fn take_work(&mut self, work: Vec<GpuWork>) {
        self.work = work;
    }

    /// The audit's model: the work back in file order becomes the activities, reusing its
    /// memory.
    pub(crate) fn end(mut self) -> AuditResult {
        self.work.sort_unstable_by_key(|w| w.place);
        let activities = neutral::activities_taking(self.work);
        neutral::finish(self.model, &self.syncs, activities).map(|mut trace| {
            trace.devices = self.devices;
            trace
        })
    }
}

/// The devices of the top level's `deviceProperties` (none when it has none).
fn devices_of(top: &read::TopLevel) -> Vec<crate::trace::model::Device> {
    top.device_properties.as_ref().map_or_else(
        Vec::new,
        crate::trace::model::Device::from_kineto_properties,
    )
}

/// The audit's model of what the pass read when no case is built: the work becomes the
/// activities (reusing its memory), and the importer's own look-ups are freed first.
pub(crate) fn audit_taking(mut read: Read, top: &read::TopLevel) -> AuditResult {
    read.calls = HashMap::new();
    let mut pending = audit_begin(&mut read, top);
    pending.take_calls(read.audit.calls);
    pending.take_work(read.work);
    pending.end()
}

/// Calls `each` with the text of every element of the trace's `traceEvents`, in order, as
/// the fast path's splitter cuts them (the whole text is never held). `None` when the
/// splitter cannot follow the text, or the document is not an object with exactly one
/// `traceEvents` array: the caller then reads the trace another way. Values are not checked
/// here; a trace the importer has read is valid JSON.
pub(crate) fn for_each_event<R: std::io::Read + Send>(
    text: R,
    mut each: impl FnMut(&[u8]),
) -> Option<()> {
    use split::Piece;
    std::thread::scope(|scope| {
        let pieces = split::in_thread(scope, text);
        if !matches!(pieces.recv()?, Piece::Object) {
            return None;
        }
        let mut arrays = 0;
        let mut events_key = false;
        loop {
            match pieces.recv()? {
                Piece::Key(raw) => events_key = raw == b"\"traceEvents\"",
                Piece::Value(_) if !events_key => {}
                Piece::EventsBegin => arrays += 1,
                Piece::Events(batch) => {
                    for &(start, end) in &batch.spans {
                        each(&batch.text[start..end]);
                    }
                    pieces.give_back(batch.text);
                }
                Piece::EventsEnd => {}
                Piece::End if arrays == 1 => return Some(()),
                _ => return None,
            }
        }
    })
}

/// The audit's model of a trace by the import's fast path alone (no case is built): `None`
/// when the fast path gives up (see [`import_split`]); the caller then reads the trace with
/// the lenient reader of [`trace`], which audits traces the importer refuses. `tap` sees every
/// top-level value and event on the way ([`tap::EventTap`]).
pub(crate) fn audit_split<R: std::io::Read + Send>(
    text: R,
    options: &ReadOptions,
    refusal: Option<super::source::Refusal>,
    tap: &mut dyn tap::EventTap,
) -> Option<AuditResult> {
    let (read, top, _) = std::thread::scope(|scope| {
        let pieces = split::in_thread_refusing(scope, text, refusal);
        read::read_pieces(&pieces, options, tap)
    })?;
    Some(audit_taking(read, &top))
}

/// The exact value of a JSON number scaled by 10^`scale` (3: µs → ns), as an integer;
/// `Ok(None)` when the value is not a number. `path` names the field in errors.
///
/// # Errors
/// `inexact-value` when digits remain below 1 (unless rounding is on; then `rounded` counts
/// it), `overflow` past `i64`.
pub(crate) fn exact_number(
    raw: &RawValue,
    scale: i32,
    path: &str,
    options: &ReadOptions,
    rounded: &mut u64,
) -> Result<Option<i64>> {
    number::exact_number_at(raw, scale, &|| path.to_owned(), options, rounded)
}
