//! The op → kernels view: for every host op that launched kernels, as the trace records the
//! link, how many kernels it launched, through how many launch calls, and for how long they
//! ran — exact in integer ns, per op name and device.
//!
//! The link is the one the profiler recorded, never a guess from time:
//!
//! ```text
//! cpu_op "aten::addmm"        args."External id": 41 ─────────┐
//!   cuda_runtime cudaLaunchKernel  "External id": 41, "correlation": 907
//!     kernel "sm90_gemm…"                        "correlation": 907 (and often "External id": 41)
//! ```
//!
//! A kernel's op is found through its **launch call** (the first runtime or driver call
//! with the kernel's correlation): the call's External id names a host op
//! ([`crate::trace::model::CpuOp`]), and that op's span must hold the call. The span check
//! only ever *rejects* a recorded link, it never makes one: some traces copy the
//! correlation into the External id (HTA's `df_index_resolver`, `sampled_rank-*`, the alexnet
//! `benchmark_result`), where the id names an unrelated op by chance; in every trace whose
//! links are real (`nccl_data`, `event_sync_trace`, the 2021 resnet50 traces) every named op
//! holds its call. The kernel's own External id, where present, must agree with its call's;
//! alone (no launch call recorded) it is not used, since nothing could check it. When two
//! recorded ops share the External id and both hold the call, the innermost (latest start)
//! is the op.
//!
//! Every kernel is in exactly one row: kernels whose op is not recorded are in the row
//! [`NO_OP`] of their device, counted by reason in [`OpLinks`]. So the kernel counts add up
//! to the trace's kernels, and the totals to their summed durations. Copies and sets are not
//! kernels and are left out (the kernel table has them).
//!
//! `share_of_busy_permille` is the row's total over its device's **kernel busy time** (the
//! union of the device's kernels), in tenths of a percent; overlapping kernels can push the
//! shares of a device past 100 % in sum. A total or busy time past 64-bit ns makes the mean
//! and the share unknown, with `unknown_why` (review D10), as in the kernel table.
//!
//! Nsight Systems traces and case files carry no host ops: every kernel is then in the row
//! [`NO_OP`], and [`OpLinks::unknown_why`] says why. Rows are sorted by total, largest first
//! (ties: device, name). Cost: O(n log n) in kernels, calls and ops.

use std::collections::BTreeMap;

use serde::Serialize;

use super::index::Index;
use crate::trace::model::{ActivityKind, ApiCall, CpuOp};

/// The name of the row that holds the kernels whose launching op is not recorded.
pub const NO_OP: &str = "(no recorded op)";

/// How many kernels each row shows in [`OpRow::top_kernels`].
pub const TOP_KERNELS: usize = 3;

/// A kernel name within an op's row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpKernel {
    /// The kernel's name.
    pub name: String,
    /// How many of the row's kernels have this name.
    pub count: u64,
    /// Σ their durations, ns.
    pub total_ns: i128,
}

/// One row: the kernels one op name launched on one device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpRow {
    /// The op's name (`aten::addmm`), or [`NO_OP`].
    pub name: String,
    /// Whether the row is an op's (`false` for [`NO_OP`]).
    pub recorded: bool,
    /// `gpu0`.
    pub device: String,
    /// How many kernels.
    pub kernels: u64,
    /// How many distinct launch calls (by correlation) launched them; kernels without a
    /// recorded launch call add none.
    pub launches: u64,
    /// Σ kernel durations, ns (`i128`: need not fit in 64 bits).
    pub total_ns: i128,
    /// `total_ns / kernels`, rounded to the nearest ns (halves up); `None` when `total_ns` is
    /// unknown (past 64-bit ns).
    pub mean_ns: Option<i128>,
    /// The shortest kernel, ns.
    pub min_ns: i128,
    /// The longest kernel, ns.
    pub max_ns: i128,
    /// `total_ns` over the device's kernel busy time, in tenths of a percent, rounded half
    /// up; `None` when the device's kernels never ran for any time, or a total it comes from
    /// is unknown (`unknown_why`).
    pub share_of_busy_permille: Option<i64>,
    /// Why the mean or the share is unknown, when one is; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_why: Option<String>,
    /// The row's kernel names with the largest totals, at most [`TOP_KERNELS`] (ties: name).
    pub top_kernels: Vec<OpKernel>,
}

/// How the kernels of a trace were joined to their ops: counts by outcome, which add up to
/// the trace's kernels.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpLinks {
    /// Kernels whose op is recorded.
    pub linked: u64,
    /// Kernels with no launch call recorded for their correlation (or no correlation).
    pub no_launch_call: u64,
    /// Kernels whose launch call carries no External id.
    pub no_external_id: u64,
    /// Kernels whose launch call's External id names no host op of the trace.
    pub no_such_op: u64,
    /// Kernels whose launch call's External id names ops none of which holds the call in
    /// its span (an id that copies the correlation, not a link).
    pub op_does_not_hold_call: u64,
    /// Kernels whose own External id differs from their launch call's.
    pub kernel_disagrees: u64,
    /// Why no kernel's op can be known for this kind of input (Nsight Systems, a case
    /// file); absent for Kineto traces, whose links are read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_why: Option<String>,
}

impl OpLinks {
    /// Every kernel counted, linked or not.
    pub fn kernels(&self) -> u64 {
        self.linked
            + self.no_launch_call
            + self.no_external_id
            + self.no_such_op
            + self.op_does_not_hold_call
            + self.kernel_disagrees
    }
}

/// Why a kernel's op is not known.
#[derive(Clone, Copy)]
enum Miss {
    NoLaunchCall,
    NoExternalId,
    NoSuchOp,
    OpDoesNotHoldCall,
    KernelDisagrees,
}

/// The op that `call` names, if the trace records one that holds it ([`Miss`] otherwise).
fn op_of<'t>(call: &ApiCall, ops: &'t [CpuOp]) -> Result<&'t CpuOp, Miss> {
    let external = call.external.ok_or(Miss::NoExternalId)?;
    let first = ops.partition_point(|op| op.external < external);
    let named = ops[first..].iter().take_while(|op| op.external == external);
    let mut any = false;
    let mut best: Option<&CpuOp> = None;
    for op in named {
        any = true;
        if op.start <= call.start && call.end <= op.end {
            // `ops` is sorted by (id, start, end, name): the last holder is the innermost.
            best = Some(op);
        }
    }
    match (any, best) {
        (false, _) => Err(Miss::NoSuchOp),
        (true, None) => Err(Miss::OpDoesNotHoldCall),
        (true, Some(op)) => Ok(op),
    }
}

/// A row being summed.
struct Acc {
    kernels: u64,
    total: i128,
    min: i128,
    max: i128,
    launches: Vec<i64>,
    names: BTreeMap<String, (u64, i128)>,
}

/// The op view of the indexed trace: its rows, largest total first, and how its kernels were
/// joined (a kernel's launch call is the index's: the first call with its correlation).
pub fn op_rows(index: &Index<'_>) -> (Vec<OpRow>, OpLinks) {
    let trace = index.trace;
    let mut links = OpLinks::default();
    if trace.source != "kineto" {
        links.unknown_why = Some(format!(
            "not recorded: a {} input carries no host ops (PyTorch's cpu_op), so no kernel's launching op is known",
            match trace.source.as_str() {
                "nsys" => "Nsight Systems",
                "case" => "case-file",
                other => other,
            }
        ));
    }
    let mut busy: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    let mut rows: BTreeMap<(i64, Option<&str>), Acc> = BTreeMap::new();
    let kernels = trace
        .activities
        .iter()
        .zip(&index.launch)
        .filter(|(a, _)| a.kind == ActivityKind::Kernel);
    for (a, launch) in kernels {
        busy.entry(a.device).or_default().push((a.start, a.end));
        let call = launch.map(|c| &trace.calls[c]);
        let op = match call {
            None => Err(Miss::NoLaunchCall),
            Some(call) => match (a.external, call.external) {
                (Some(k), Some(c)) if k != c => Err(Miss::KernelDisagrees),
                _ => op_of(call, &trace.ops),
            },
        };
        let counter = match op {
            Ok(_) => &mut links.linked,
            Err(Miss::NoLaunchCall) => &mut links.no_launch_call,
            Err(Miss::NoExternalId) => &mut links.no_external_id,
            Err(Miss::NoSuchOp) => &mut links.no_such_op,
            Err(Miss::OpDoesNotHoldCall) => &mut links.op_does_not_hold_call,
            Err(Miss::KernelDisagrees) => &mut links.kernel_disagrees,
        };
        *counter += 1;
        let len = i128::from(a.end) - i128::from(a.start);
        let acc = rows
            .entry((a.device, op.ok().map(|op| &*op.name)))
            .or_insert_with(|| Acc {
                kernels: 0,
                total: 0,
                min: len,
                max: len,
                launches: Vec::new(),
                names: BTreeMap::new(),
            });
        acc.kernels += 1;
        acc.total += len;
        acc.min = acc.min.min(len);
        acc.max = acc.max.max(len);
        if let (Some(_), Some(corr)) = (call, a.correlation) {
            acc.launches.push(corr);
        }
        match acc.names.get_mut(&*a.name) {
            Some(n) => *n = (n.0 + 1, n.1 + len),
            None => {
                acc.names.insert(a.name.to_string(), (1, len));
            }
        }
    }
    let busy: BTreeMap<i64, i128> = busy
        .into_iter()
        .map(|(d, pieces)| {
            let union = crate::interval_set::IntervalSet::from_pairs(pieces).measure_ns();
            (d, union)
        })
        .collect();
    let mut out: Vec<OpRow> = rows
        .into_iter()
        .map(|((device, name), acc)| row_of(device, name, acc, busy.get(&device).copied()))
        .collect();
    out.sort_by(|x, y| {
        y.total_ns
            .cmp(&x.total_ns)
            .then_with(|| (&x.device, &x.name).cmp(&(&y.device, &y.name)))
    });
    (out, links)
}

/// The finished row of `acc`, on `device` whose kernel busy time is `busy`.
fn row_of(device: i64, name: Option<&str>, mut acc: Acc, busy: Option<i128>) -> OpRow {
    acc.launches.sort_unstable();
    acc.launches.dedup();
    let mut top: Vec<OpKernel> = acc
        .names
        .into_iter()
        .map(|(name, (count, total_ns))| OpKernel {
            name,
            count,
            total_ns,
        })
        .collect();
    top.sort_by(|x, y| {
        y.total_ns
            .cmp(&x.total_ns)
            .then_with(|| x.name.cmp(&y.name))
    });
    top.truncate(TOP_KERNELS);
    let device = format!("gpu{device}");
    let total = acc.total;
    let derived = super::kernels::mean_and_share(
        total,
        acc.kernels,
        busy,
        &format!("{device}'s kernel busy time"),
    );
    OpRow {
        name: name.unwrap_or(NO_OP).to_owned(),
        recorded: name.is_some(),
        device,
        kernels: acc.kernels,
        launches: acc.launches.len() as u64,
        total_ns: total,
        mean_ns: derived.mean_ns,
        min_ns: acc.min,
        max_ns: acc.max,
        share_of_busy_permille: derived.share_of_busy_permille,
        unknown_why: derived.unknown_why,
        top_kernels: top,
    }
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
