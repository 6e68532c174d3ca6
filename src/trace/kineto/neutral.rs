//! What the audit reads from a Kineto trace, gathered by the importer's one streaming pass.
//!
//! `worksheet import` audits the trace it imports ([`crate::audit`]). The audit's model
//! ([`Trace`]) needs more than the case does: every API call in file order with its host
//! thread, `ProfilerStep#N` ranges (host and GPU), `record_function` annotations, `aten::item`
//! scalar reads, the profiler's window, and integrity problems (negative durations, zero
//! timestamps). The streaming reader (`read.rs`) hands the events the importer keeps and the
//! few host events only the audit wants to this module, so the file is read and parsed once.
//!
//! The rules are those of the lenient whole-text reader `worksheet audit` uses
//! ([`super::trace::read_trace`]), restricted to traces the importer accepts: an event only
//! the audit reads never makes `import` fail on its time's *digits* (a time that is not an
//! exact ns is left out and counted), a negative duration is a [`Problem`], not an error; but
//! a time that overflows 64-bit ns once the base is added is an error, as it is for that
//! reader. Such an error is kept apart ([`AuditRead::error`]) and only surfaces once the
//! import itself has succeeded, where the audit used to fail after it.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::{GpuWork, WorkKind};
use crate::trace::model::{
    keep_named_ops, Activity, ActivityKind, ApiCall, CopyDirection, CpuOp, HostRange, Name,
    Problem, ProblemKind, RangeKind, Step, Trace,
};
use crate::{error::InputError as ImportError, trace::ReadOptions as ImportOptions};

/// What an event that only the audit reads is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuditOnly {
    /// The profiler's own range (`cat: "Trace"`): the recording window.
    Window,
    /// A `ProfilerStep#N` on the host.
    Step,
    /// An annotation or a scalar read on the host.
    Range(RangeKind),
    /// Any other host op (`cpu_op`, 2021 `Operator`): kept as a [`CpuOp`] when its `args`
    /// give an External id.
    Op,
}

/// Whether events of category `cat` are host ops, whose External id the op view reads.
pub(crate) fn is_op_category(cat: &str) -> bool {
    matches!(cat, "cpu_op" | "Operator")
}

/// An `args."External id"` value: an integer, or nothing. Any other value (a string, a
/// float, an object) is skipped, never an error, so the field can never make an event's
/// `args` unreadable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LooseId(pub(crate) Option<i64>);

impl<'de> Deserialize<'de> for LooseId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LooseId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LooseId, E> {
                Ok(LooseId(Some(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LooseId, E> {
                Ok(LooseId(i64::try_from(v).ok()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<LooseId, E> {
                Ok(LooseId(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<LooseId, E> {
                Ok(LooseId(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<LooseId, E> {
                Ok(LooseId(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<LooseId, E> {
                Ok(LooseId(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LooseId, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LooseId(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LooseId, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LooseId(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// The External id of an event's `args`: `"External id"`, else the 2021 spelling
/// `"external id"` (an integer; anything else is no id).
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub(crate) struct ExternalId {
    #[serde(rename = "External id", default)]
    upper: LooseId,
    #[serde(rename = "external id", default)]
    lower: LooseId,
}

impl ExternalId {
    /// The id, where one is given.
    pub(crate) fn get(self) -> Option<i64> {
        self.upper.0.or(self.lower.0)
    }
}

/// The External id of a host op from its `args` text: `None` when the text is not an object
/// the reader can read, or names no integer id. The one reading every Kineto path uses.
pub(crate) fn op_external(args: &[u8]) -> Option<i64> {
    serde_json::from_slice::<ExternalId>(args)
        .ok()
        .and_then(ExternalId::get)
}

/// Whether the audit reads a complete (`ph: X`) event of category `cat`, named `name`, that
/// the importer does not keep. `name` is `None` while it is not known yet; the answer is then
/// `Some` for every category that may be wanted (`cpu_op`: it depends on the name).
pub(crate) fn audit_only(cat: &str, name: Option<&str>) -> Option<AuditOnly> {
    let is_step = |n: &str| n.starts_with("ProfilerStep#");
    let is_scalar = |n: &str| matches!(n, "aten::item" | "aten::_local_scalar_dense");
    let range = |n: &str| {
        Some(if is_step(n) {
            AuditOnly::Step
        } else if is_scalar(n) {
            AuditOnly::Range(RangeKind::ScalarRead)
        } else {
            AuditOnly::Range(RangeKind::Annotation)
        })
    };
    match cat {
        "Trace" => Some(AuditOnly::Window),
        "user_annotation" => range(name.unwrap_or("")),
        "cpu_op" | "Operator" => match name {
            None => Some(AuditOnly::Op),
            Some(n) if is_step(n) || is_scalar(n) => range(n),
            Some(_) => Some(AuditOnly::Op),
        },
        _ => None,
    }
}

/// Whether a `gpu_user_annotation` range (which the importer keeps) is also a GPU step.
pub(crate) fn is_step_name(name: &str) -> bool {
    name.starts_with("ProfilerStep#")
}

/// The audit's share of the streaming pass.
#[derive(Default)]
pub(crate) struct AuditRead {
    /// Every API call, in file order (the importer keeps one per correlation).
    pub(crate) calls: Vec<ApiCall>,
    /// `ProfilerStep#N` on the host, in file order.
    pub(crate) steps: Vec<Step>,
    /// `ProfilerStep#N` drawn on the GPU (`gpu_user_annotation`), in file order.
    pub(crate) gpu_steps: Vec<Step>,
    /// Annotations and scalar reads.
    pub(crate) ranges: Vec<HostRange>,
    /// Host ops with an External id, in file order (only those a call names are kept at the
    /// end).
    pub(crate) ops: Vec<CpuOp>,
    /// The profiler's window.
    pub(crate) window: Option<(i64, i64)>,
    /// Negative durations and zero timestamps, in file order.
    pub(crate) problems: Vec<Problem>,
    /// Host ranges whose time is not an exact ns: left out, counted.
    pub(crate) unreadable: u64,
    /// The first error the audit meets where the importer does not (a host range whose time
    /// overflows): the audit of an imported trace fails with it.
    pub(crate) error: Option<ImportError>,
}

/// An event only the audit reads, with its times as read (before the base is added).
pub(crate) struct AuditEvent {
    pub(crate) what: AuditOnly,
    pub(crate) name: Name,
    /// Host ops: the External id of its `args` ([`op_external`]).
    pub(crate) external: Option<i64>,
    pub(crate) thread: Option<i64>,
    pub(crate) ts: i64,
    pub(crate) dur: i64,
}

/// The times of an event only the audit reads: `Err(())` when a time is missing, not a
/// number, not an exact ns or overflows (the event is counted as unreadable), as
/// [`super::trace::read_trace`] does.
pub(crate) fn audit_times(
    ts: Option<&serde_json::value::RawValue>,
    dur: Option<&serde_json::value::RawValue>,
    options: &ImportOptions,
) -> std::result::Result<(i64, i64), ()> {
    let (Some(ts), Some(dur)) = (ts, dur) else {
        return Err(());
    };
    let mut rounded = 0;
    let no_path = || String::new();
    let ts =
        super::number::exact_number_at(ts, 3, &no_path, options, &mut rounded).map_err(|_| ())?;
    let dur =
        super::number::exact_number_at(dur, 3, &no_path, options, &mut rounded).map_err(|_| ())?;
    ts.zip(dur).ok_or(())
}

impl AuditRead {
    /// Files an event only the audit reads, placed on the clock (`base` + `ts`); `at` is its
    /// JSON path.
    pub(crate) fn place(&mut self, e: AuditEvent, at: &dyn Fn() -> String, base: Option<i64>) {
        if self.error.is_some() {
            return;
        }
        let overflow = |field: &str| {
            ImportError::new(
                format!("{}.{field}", at()),
                "overflow",
                "the time does not fit in 64-bit nanoseconds",
            )
        };
        let Some(start) = base.map_or(Some(e.ts), |b| b.checked_add(e.ts)) else {
            self.error = Some(overflow("ts"));
            return;
        };
        if e.dur < 0 {
            self.problems.push(Problem {
                kind: ProblemKind::NegativeDuration,
                at: at(),
                name: e.name,
                start,
                duration: e.dur,
            });
            return;
        }
        let Some(end) = start.checked_add(e.dur) else {
            self.error = Some(overflow("dur"));
            return;
        };
        let thread = e.thread;
        if let Some(external) = e.external {
            self.ops.push(CpuOp {
                external,
                name: Name::clone(&e.name),
                start,
                end,
            });
        }
        match e.what {
            AuditOnly::Op => {}
            AuditOnly::Window => {
                self.window = Some(match self.window {
                    Some((a, b)) => (a.min(start), b.max(end)),
                    None => (start, end),
                });
            }
            AuditOnly::Step => self.steps.push(Step {
                name: e.name,
                start,
                end,
                thread,
            }),
            AuditOnly::Range(kind) => self.ranges.push(HostRange {
                kind,
                name: e.name,
                thread,
                start,
                end,
            }),
        }
    }

    /// Keeps the host ops some call names ([`keep_named_ops`]), in its order.
    pub(crate) fn keep_named_ops(&mut self) {
        let ops = std::mem::take(&mut self.ops);
        self.ops = keep_named_ops(ops, &self.calls);
    }

    /// A GPU activity the importer kept that starts exactly at the base (relative `ts` 0).
    pub(crate) fn zero_timestamp(&mut self, at: String, work: &GpuWork, ts_was_zero: bool) {
        if ts_was_zero {
            self.problems.push(Problem {
                kind: ProblemKind::ZeroTimestamp,
                at,
                name: work.name.clone(),
                start: work.start,
                duration: work.end - work.start,
            });
        }
    }
}

/// The audit's GPU activities, taking the importer's `work` (in file order): the activities
/// reuse its memory, and share its names.
pub(crate) fn activities_taking(work: Vec<GpuWork>) -> Vec<Activity> {
    work.into_iter().map(|w| activity(&w)).collect()
}

/// The audit's GPU activity of a work.
fn activity(w: &GpuWork) -> Activity {
    Activity {
        kind: match w.kind {
            WorkKind::Kernel => ActivityKind::Kernel,
            WorkKind::Memcpy => ActivityKind::Memcpy,
            WorkKind::Memset => ActivityKind::Memset,
        },
        copy: (w.kind == WorkKind::Memcpy).then(|| copy_direction(&w.name)),
        name: w.name.clone(),
        device: w.device,
        stream: w.stream,
        start: w.start,
        end: w.end,
        correlation: w.correlation,
        external: w.external,
        collective: w.collective.clone(),
        bytes: w.bytes,
    }
}

/// The audit's model of the trace, from what the pass read: `activities` (see
/// [`activities_taking`]), the calls with whether a `cuda_sync` row (`syncs`: their correlations)
/// records them.
///
/// # Errors
/// The first error the audit met ([`AuditRead::error`]).
pub(crate) fn finish(
    mut audit: AuditRead,
    syncs: &[Option<i64>],
    activities: Vec<Activity>,
) -> Result<Trace, ImportError> {
    if let Some(err) = audit.error {
        return Err(err);
    }
    let mut recorded: Vec<i64> = syncs.iter().filter_map(|c| *c).collect();
    recorded.sort_unstable();
    for call in &mut audit.calls {
        call.sync_recorded = call
            .correlation
            .is_some_and(|c| recorded.binary_search(&c).is_ok());
    }
    // Kept for as long as the audit runs: no slack from the doubling growth.
    audit.calls.shrink_to_fit();
    audit.steps.sort_by_key(|s| (s.start, s.end));
    audit.gpu_steps.sort_by_key(|s| (s.start, s.end));
    let mut notes = Vec::new();
    if audit.unreadable > 0 {
        notes.push(format!(
            "{} host range(s) without an exact ns time (missing, not a number, below 1 ns or overflowing) are left out",
            audit.unreadable
        ));
    }
    // Every GPU event the importer kept names its device and stream (it refuses one that
    // does not), so the lenient reader's "no device or stream" note never applies here.
    Ok(Trace {
        source: "kineto".to_owned(),
        activities,
        calls: audit.calls,
        ranges: audit.ranges,
        steps: audit.steps,
        gpu_steps: audit.gpu_steps,
        window: audit.window,
        has_sync_rows: !syncs.is_empty(),
        problems: audit.problems,
        notes,
        // Filled by the caller from the top level (`deviceProperties`).
        devices: Vec::new(),
        // The named ones alone: `AuditRead::keep_named_ops` ran before the activities were made.
        ops: audit.ops,
    })
}

/// The direction of a copy from its Kineto name, `Memcpy DtoH (Device -> Pageable)`.
pub(crate) fn copy_direction(name: &str) -> CopyDirection {
    if name.contains("DtoH") {
        if name.contains("Pageable") {
            CopyDirection::DeviceToPageable
        } else {
            CopyDirection::DeviceToHost
        }
    } else {
        CopyDirection::Other
    }
}
