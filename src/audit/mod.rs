//! `worksheet audit`: does a profile support the claims about to be made from it?
//!
//! An audit reads the format-neutral recorded model of a trace ([`crate::trace::model::Trace`]:
//! Kineto, Nsight Systems, or a case file), then reports:
//!
//! - **findings** with stable codes ([`finding::CODES`], catalogue in `docs/findings.md`):
//!   a blocking sync every step, cold first steps, the profiler's own final sync, stream joins
//!   the trace did not record, annotation ranges that only measure submission, starved or
//!   deep launch queues, and integrity problems (activities before their launch, overlaps in
//!   one stream, zero timestamps, negative durations, events outside the window, GPU work
//!   without a launch);
//! - a **per-step table** ([`steps`]) and the steady-state verdict over steps (SPEC §9);
//! - an **exposed-time breakdown** per device ([`breakdown`]) whose four parts add up to the
//!   span exactly;
//! - a **kernel breakdown** ([`kernels`]): count, total, mean, min, max and share of busy time
//!   per device, stream and name;
//! - an **op → kernels view** ([`ops`]): per launching host op (as the trace records the link:
//!   correlation → launch call → External id → `cpu_op`) and device, the kernels it launched;
//! - HTA's other first-page views, exact (`docs/hta-views.md`): the **idle-time breakdown**
//!   per stream by cause ([`idle`]), the **queue length** per stream ([`queue`]), the
//!   **launch statistics** ([`launch`]) and the **memory bandwidth** by kind ([`bandwidth`]).
//!
//! ```text
//! trace ──import::read_audit_trace──▶ trace::model::Trace ──Index──▶ findings, steps, breakdown ──▶ Audit
//!                                                                                          │
//!                           text / JSON / Markdown (render.rs) ◀───────────────────────────┘
//! ```
//!
//! Everything here is pure: the command (`crate::cmd::audit`) reads the file and writes the
//! report, and nothing here imports `crate::import`.
//! Every time is integer ns; shares are exact integer percentages with one decimal.
//!
//! HTA compatibility (`--compat hta`) is its own module (`peer::hta`): the command
//! (`crate::cmd::audit`) prints its comparison after the audit, as `import --compat hta` does.

pub mod bandwidth;
pub mod breakdown;
pub mod finding;
pub mod idle;
pub mod index;
pub mod integrity;
pub mod kernels;
pub mod launch;
pub mod ops;
pub mod queue;
pub mod ranges;
pub mod render;
pub mod steps;
pub mod syncs;

use serde::Serialize;

pub use crate::trace::model::Trace;
pub use breakdown::Breakdown;
pub use finding::{Evidence, Finding, Severity, CODES};
pub use kernels::KernelRow;
pub use steps::{StepRow, StepsSteady};

/// The JSON report's `format`.
pub const FORMAT_NAME: &str = "worksheet-audit";
/// The JSON report's `version`.
pub const FORMAT_VERSION: u32 = 1;

/// Options of the analysis. Empty today (`--compat hta` is a separate comparison printed beside
/// the audit, not an option of it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuditOptions {}

/// An audit's result.
#[derive(Clone, Debug, Serialize)]
pub struct Audit {
    /// Always [`FORMAT_NAME`].
    pub format: &'static str,
    /// Always [`FORMAT_VERSION`].
    pub version: u32,
    /// The input, as named on the command line.
    pub input: String,
    /// `kineto`, `nsys` or `case`.
    pub source: String,
    /// The trace's earliest time, ns: every `t+…` in messages is relative to it.
    pub origin_ns: i64,
    /// The per-step table (empty without step markers).
    pub steps: Vec<StepRow>,
    /// The steady-state verdicts over steps (absent with fewer than two steps).
    pub steady_state: Option<StepsSteady>,
    /// The exposed-time breakdown per device.
    pub breakdown: Vec<Breakdown>,
    /// The kernel breakdown: every GPU activity in one row per device, stream and name,
    /// largest total first ([`kernels`]).
    pub kernels: Vec<KernelRow>,
    /// The op → kernels view: every kernel in one row per launching op name and device
    /// (or the row `(no recorded op)`), largest total first ([`ops`]).
    pub ops: Vec<ops::OpRow>,
    /// How the kernels were joined to their ops ([`ops::OpLinks`]).
    pub op_links: ops::OpLinks,
    /// The idle-time breakdown per stream, by HTA's causes ([`idle`]).
    pub idle: Vec<idle::IdleRow>,
    /// The queue length per stream ([`queue`]).
    pub queues: Vec<queue::QueueRow>,
    /// The launch statistics ([`launch`]).
    pub launches: launch::Launches,
    /// The memory bandwidth per device and kind ([`bandwidth`]).
    pub bandwidth: Vec<bandwidth::BandwidthRow>,
    /// The findings, most severe first, then in catalogue order.
    pub findings: Vec<Finding>,
    /// Stream pairs `((device, stream), (device, stream))` whose joins the trace did not
    /// record (`dependency-unrecorded`).
    #[serde(skip)]
    pub unrecorded_pairs: Vec<((i64, i64), (i64, i64))>,
    /// The reader's notes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Audit {
    /// Whether a finding at or above `threshold` exists.
    pub fn fails(&self, threshold: Severity) -> bool {
        self.findings.iter().any(|f| f.severity >= threshold)
    }

    /// The finding with `code`, if any.
    pub fn finding(&self, code: &str) -> Option<&Finding> {
        self.findings.iter().find(|f| f.code == code)
    }
}

/// Audits `trace`; `input` names it in the report. Time: O(n log n) in the events, plus
/// O(steps × activities of a device) for the step table.
pub fn audit(trace: &Trace, input: &str, _options: &AuditOptions) -> Audit {
    let index = index::Index::new(trace);
    let host_steps = steps::host_steps(&index);
    let rows = steps::step_rows(&index, &host_steps);
    let (steady, cold) = steps::cold_steps(&index, &host_steps, &rows);
    let steady_from = steady.as_ref().map_or(0, |s| s.warmup_steps);
    let mut findings: Vec<Finding> = Vec::new();
    findings.extend(integrity::shape(&index, host_steps.len()));
    findings.extend(syncs::sync_in_loop(&index, &host_steps, steady_from));
    findings.extend(cold);
    findings.extend(syncs::profiler_sync(&index));
    findings.extend(syncs::dependency_unrecorded(&index));
    findings.extend(ranges::host_range_measures_submission(&index));
    findings.extend(ranges::launch_queue_delay(&index, &host_steps));
    findings.extend(integrity::kernel_before_launch(&index));
    findings.extend(integrity::same_stream_overlap(&index));
    findings.extend(integrity::problems(&index));
    findings.extend(integrity::outside_window(&index));
    findings.extend(integrity::gpu_without_launch(&index));
    let rank = |code: &str| CODES.iter().position(|c| *c == code).unwrap_or(CODES.len());
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(rank(a.code).cmp(&rank(b.code)))
    });
    let (op_rows, op_links) = ops::op_rows(&index);
    Audit {
        format: FORMAT_NAME,
        version: FORMAT_VERSION,
        input: input.to_owned(),
        source: trace.source.clone(),
        origin_ns: index.origin,
        steps: rows,
        steady_state: steady,
        breakdown: breakdown::breakdowns(&index),
        kernels: kernels::kernel_rows(trace),
        ops: op_rows,
        op_links,
        idle: idle::idle_rows(&index),
        queues: queue::queue_rows(&index),
        launches: launch::launches(&index),
        bandwidth: bandwidth::bandwidth_rows(trace),
        findings,
        unrecorded_pairs: syncs::unrecorded_pairs(&index),
        notes: trace.notes.clone(),
    }
}
#[cfg(test)]
mod tests;
