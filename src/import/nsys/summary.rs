//! What an import found, as numbers and as a table for people. Pure: the summary is built by
//! the import, and [`summary_table`] only formats it.

use std::collections::BTreeMap;

use comfy_table::{presets::ASCII_MARKDOWN, CellAlignment, Table};
use serde_json::{json, Value};

use super::read::{ExportInfo, GpuInfo};
use super::NsysImport;
use crate::engine::wide;
use crate::interval::SetAnalysis;

/// Everything the summary table shows, as values.
#[derive(Clone, Debug)]
pub struct NsysSummary {
    /// The file name (no directories).
    pub file: String,
    /// Versions and export metadata.
    pub export: ExportInfo,
    /// `TARGET_INFO_SESSION_START_TIME.utcEpochNs`, when the file has one value.
    pub session_start_utc_ns: Option<i64>,
    /// `TARGET_INFO_GPU` rows, as listed.
    pub gpus: Vec<GpuInfo>,
    /// One per process with CUDA rows, each its own clock.
    pub processes: Vec<ProcessSummary>,
    /// One per stream with GPU rows.
    pub streams: Vec<StreamSummary>,
    /// One per device (its streams pooled), on one clock each.
    pub devices: Vec<DeviceSummary>,
    /// Rows read, joined, set aside.
    pub counts: Counts,
    /// What was set aside and why, and other warnings, for people.
    pub notes: Vec<String>,
}

/// A process and its clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessSummary {
    /// Operating-system pid (`globalPid` bits 24–47).
    pub pid: i64,
    /// `globalPid` as stored (thread bits clear).
    pub global_pid: i64,
    /// The case clock id of the process.
    pub clock: String,
    /// Runtime and driver calls kept.
    pub api_calls: usize,
    /// Kernel, memcpy and memset rows.
    pub gpu_rows: usize,
}

/// One stream: all its GPU work (kernels, copies, sets) as one set.
#[derive(Clone, Debug)]
pub struct StreamSummary {
    /// The case stream id.
    pub id: String,
    /// The case clock id.
    pub clock: String,
    /// The case device label.
    pub device: String,
    /// Kernel rows.
    pub kernels: usize,
    /// Memcpy rows.
    pub memcpys: usize,
    /// Memset rows.
    pub memsets: usize,
    /// Algebra of all its rows.
    pub all: SetAnalysis,
}

/// One device: its streams pooled, and kernels against copies.
#[derive(Clone, Debug)]
pub struct DeviceSummary {
    /// The case device label.
    pub device: String,
    /// The case clock id (a device label never spans two clocks).
    pub clock: String,
    /// All rows.
    pub all: SetAnalysis,
    /// Kernel rows (K).
    pub kernels: SetAnalysis,
    /// Memcpy rows (C).
    pub memcpy: SetAnalysis,
    /// Memset rows.
    pub memset: SetAnalysis,
    /// |K ∪ C|.
    pub kernels_or_memcpy_union_ns: i128,
}

impl DeviceSummary {
    /// |K ∩ C| = |K| + |C| − |K ∪ C|: time when a kernel and a copy both run. Exact.
    pub fn kernel_memcpy_overlap_ns(&self) -> i128 {
        self.kernels.union_ns + self.memcpy.union_ns - self.kernels_or_memcpy_union_ns
    }
}

/// Counts of rows read, joined and set aside.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Rows read per GPU table (`kernel`, `memcpy`, `memset`).
    pub gpu_rows: BTreeMap<&'static str, usize>,
    /// GPU rows with no runtime/driver call of the same process and correlationId: phases
    /// that are never launched in the program.
    pub gpu_rows_without_call: BTreeMap<&'static str, usize>,
    /// Runtime (`eventClass` 0) and driver (1) calls kept, one per correlationId.
    pub api_calls: usize,
    /// `CUPTI_ACTIVITY_KIND_RUNTIME` rows of other event classes, by class (not calls).
    pub other_class_rows: BTreeMap<i64, usize>,
    /// Rows that repeat a kept call's (process, correlationId), not counted again.
    pub duplicate_api_rows: usize,
    /// Calls that normally queue GPU work (launches, copies, sets) with no GPU row, by name.
    pub calls_without_gpu_row: BTreeMap<String, usize>,
    /// `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION` rows read.
    pub sync_rows: usize,
    /// Host waits declared, by target (`stream`, `device`, `event`).
    pub waits: BTreeMap<&'static str, usize>,
    /// Stream-waits on events declared.
    pub stream_waits: usize,
}

impl Counts {
    /// The counts as JSON (for the case's provenance).
    pub fn to_json(&self) -> Value {
        json!({
            "gpu_rows": self.gpu_rows,
            "gpu_rows_without_call": self.gpu_rows_without_call,
            "api_calls": self.api_calls,
            "other_class_rows": self.other_class_rows.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<_, _>>(),
            "duplicate_api_rows": self.duplicate_api_rows,
            "calls_without_gpu_row": self.calls_without_gpu_row,
            "sync_rows": self.sync_rows,
            "waits": self.waits,
            "stream_waits": self.stream_waits,
        })
    }
}

impl ExportInfo {
    /// `nsys 2025.1.1.110, schema 3.17.1 (META_DATA_EXPORT)`, or what is known without metadata.
    pub fn version_line(&self) -> String {
        let mut parts = Vec::new();
        match (&self.metadata_table, &self.nsys_version) {
            (Some(table), version) => parts.push(format!(
                "nsys {}, schema {} ({table})",
                version.as_deref().unwrap_or("?"),
                self.schema_version.as_deref().unwrap_or("?")
            )),
            (None, _) => parts.push("no export metadata table".to_owned()),
        }
        if let Some(v) = &self.path_version {
            if self
                .nsys_version
                .as_deref()
                .is_none_or(|n| !n.starts_with(v.as_str()))
            {
                parts.push(format!("capture-side install path names nsys {v}"));
            }
        }
        parts.join("; ")
    }
}

fn table() -> Table {
    let mut t = Table::new();
    crate::table::fit(&mut t);
    t.load_preset(ASCII_MARKDOWN);
    t
}

fn right(t: &mut Table, from: usize) {
    let n = t.column_count();
    for i in from..n {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn span(a: &SetAnalysis) -> String {
    match a.span_ns() {
        Some(s) => wide(s),
        None => "unknown (empty-set)".to_owned(),
    }
}

/// The import's summary for people: the file and its versions, one row per stream (count,
/// busy = union, sum, gaps, max depth, span), one row per device (streams pooled; kernels K
/// against copies C with |K ∩ C| = |K| + |C| − |K ∪ C|), the row counts and the notes.
/// Values are exact (integer ns, printed in the largest unit that keeps every digit).
pub fn summary_table(import: &NsysImport) -> String {
    let s = &import.summary;
    let mut out = String::new();
    out.push_str(&format!("Nsight Systems export {}\n", s.file));
    out.push_str(&format!("  {}\n", s.export.version_line()));
    out.push_str(&match s.session_start_utc_ns {
        Some(ns) => format!("  session start: utcEpochNs {ns} (times below are relative to it)\n"),
        None => "  session start: unknown (times below are session-relative only)\n".to_owned(),
    });
    for g in &s.gpus {
        out.push_str(&format!(
            "  TARGET_INFO_GPU id {}: {} (cuDevice {}, bus {})\n",
            g.id.map_or("?".to_owned(), |v| v.to_string()),
            g.name.as_deref().unwrap_or("?"),
            g.cu_device.map_or("?".to_owned(), |v| v.to_string()),
            g.bus.as_deref().unwrap_or("?")
        ));
    }
    if s.gpus.is_empty() {
        out.push_str("  TARGET_INFO_GPU: absent (the GPU model is not recorded)\n");
    }
    for p in &s.processes {
        out.push_str(&format!(
            "  process pid {} = clock {}: {} API calls, {} GPU rows\n",
            p.pid, p.clock, p.api_calls, p.gpu_rows
        ));
    }

    out.push_str("\nStreams (all GPU work of the stream: kernels, memcpy, memset)\n");
    let mut t = table();
    t.set_header(vec![
        "stream",
        "kernels",
        "memcpy",
        "memset",
        "busy (union)",
        "sum",
        "gaps total",
        "max depth",
        "span",
    ]);
    for st in &s.streams {
        t.add_row(vec![
            st.id.clone(),
            st.kernels.to_string(),
            st.memcpys.to_string(),
            st.memsets.to_string(),
            wide(st.all.union_ns),
            wide(st.all.sum_ns),
            wide(st.all.gap_total_ns()),
            st.all.max_depth.to_string(),
            span(&st.all),
        ]);
    }
    right(&mut t, 1);
    out.push_str(&t.to_string());
    out.push('\n');

    out.push_str(
        "\nDevices (streams pooled; K = kernels, C = memcpy; K ∩ C = K + C − (K ∪ C), exact)\n",
    );
    let mut t = table();
    t.set_header(vec![
        "device",
        "clock",
        "K busy (∪)",
        "K sum (Σ)",
        "C busy (∪)",
        "K ∪ C",
        "K ∩ C",
        "busy (all)",
        "max depth",
        "span",
    ]);
    for d in &s.devices {
        t.add_row(vec![
            d.device.clone(),
            d.clock.clone(),
            wide(d.kernels.union_ns),
            wide(d.kernels.sum_ns),
            wide(d.memcpy.union_ns),
            wide(d.kernels_or_memcpy_union_ns),
            wide(d.kernel_memcpy_overlap_ns()),
            wide(d.all.union_ns),
            d.all.max_depth.to_string(),
            span(&d.all),
        ]);
    }
    right(&mut t, 2);
    out.push_str(&t.to_string());
    out.push('\n');

    let c = &s.counts;
    out.push_str("\nRows\n");
    let mut t = table();
    t.set_header(vec!["what", "count"]);
    for (kind, n) in &c.gpu_rows {
        t.add_row(vec![format!("{kind} rows"), n.to_string()]);
        let orphan = c.gpu_rows_without_call.get(kind).copied().unwrap_or(0);
        t.add_row(vec![
            format!("  {kind} rows without a launching call (never launched)"),
            orphan.to_string(),
        ]);
    }
    t.add_row(vec![
        "runtime/driver calls (event class 0, 1)".to_owned(),
        c.api_calls.to_string(),
    ]);
    t.add_row(vec![
        "  duplicate runtime rows (same process and correlationId), not counted again".to_owned(),
        c.duplicate_api_rows.to_string(),
    ]);
    for (class, n) in &c.other_class_rows {
        t.add_row(vec![
            format!("  rows of event class {class} (not calls)"),
            n.to_string(),
        ]);
    }
    let without: usize = c.calls_without_gpu_row.values().sum();
    t.add_row(vec![
        "  launch/copy/set calls without a GPU row".to_owned(),
        without.to_string(),
    ]);
    for (name, n) in &c.calls_without_gpu_row {
        t.add_row(vec![format!("    {name}"), n.to_string()]);
    }
    t.add_row(vec!["sync rows".to_owned(), c.sync_rows.to_string()]);
    for (target, n) in &c.waits {
        t.add_row(vec![format!("  host waits on a {target}"), n.to_string()]);
    }
    t.add_row(vec![
        "  stream-waits on an event".to_owned(),
        c.stream_waits.to_string(),
    ]);
    right(&mut t, 1);
    out.push_str(&t.to_string());
    out.push('\n');

    if !s.notes.is_empty() {
        out.push_str("\nNotes\n");
        for n in &s.notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    out
}
