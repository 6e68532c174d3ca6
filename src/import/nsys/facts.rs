//! What an Nsight Systems import found about the file: versions, the session start, the GPUs
//! and processes, the rows read, joined and set aside, and the notes. They become rows of the
//! one summary's facts table ([`ExportFacts::rows`]; every count is printed, `0` or `none`
//! when there is nothing), the case's description and its provenance. The numbers about the
//! work (per stream, per device, per class) are the summary's, from the case's questions.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::read::{ExportInfo, GpuInfo};

/// What the reader found about the file, apart from the case.
#[derive(Clone, Debug)]
pub struct ExportFacts {
    /// The file name (no directories).
    pub file: String,
    /// Versions and export metadata.
    pub export: ExportInfo,
    /// `TARGET_INFO_SESSION_START_TIME.utcEpochNs`, when the file has one value.
    pub session_start_utc_ns: Option<i64>,
    /// `TARGET_INFO_GPU` rows, as listed.
    pub gpus: Vec<GpuInfo>,
    /// One per process with CUDA rows, each a clock id on the one session clock.
    pub processes: Vec<ProcessFacts>,
    /// Streams declared.
    pub streams: usize,
    /// Launches placed in the program.
    pub launches: usize,
    /// Rows read, joined, set aside.
    pub counts: Counts,
    /// What was set aside and why, and other warnings, for people.
    pub notes: Vec<String>,
}

/// A process and its clock id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessFacts {
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

/// `total (a 1, b 2)` for a map of counts, `0` when it is empty or all zero.
fn total_of<K: std::fmt::Display>(map: &BTreeMap<K, usize>) -> String {
    let total: usize = map.values().sum();
    if total == 0 {
        return "0".to_owned();
    }
    let parts: Vec<String> = map
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    format!("{total} ({})", parts.join(", "))
}

/// `a 1, b 2`, or `none`.
fn listed<K: std::fmt::Display>(map: &BTreeMap<K, usize>) -> String {
    if map.is_empty() {
        "none".to_owned()
    } else {
        map.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl ExportFacts {
    /// The facts rows of the summary, in order; no value is empty.
    pub fn rows(&self) -> Vec<(String, String)> {
        let c = &self.counts;
        let gpus = if self.gpus.is_empty() {
            "none (TARGET_INFO_GPU absent: the GPU model is not recorded)".to_owned()
        } else {
            self.gpus
                .iter()
                .map(|g| {
                    format!(
                        "id {}: {} (cuDevice {}, bus {})",
                        g.id.map_or("?".to_owned(), |v| v.to_string()),
                        g.name.as_deref().unwrap_or("?"),
                        g.cu_device.map_or("?".to_owned(), |v| v.to_string()),
                        g.bus.as_deref().unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let processes = self
            .processes
            .iter()
            .map(|p| {
                format!(
                    "pid {} = clock {}: {} API calls, {} GPU rows",
                    p.pid, p.clock, p.api_calls, p.gpu_rows
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let other_classes: BTreeMap<String, usize> = c
            .other_class_rows
            .iter()
            .map(|(k, v)| (format!("eventClass {k}:"), *v))
            .collect();
        vec![
            (
                "session start".into(),
                match self.session_start_utc_ns {
                    Some(ns) => format!("utcEpochNs {ns} (times are relative to it)"),
                    None => "unknown (times are session-relative only)".to_owned(),
                },
            ),
            ("GPUs listed (TARGET_INFO_GPU)".into(), gpus),
            (
                "processes (clock ids of the one session clock)".into(),
                if processes.is_empty() {
                    "none".into()
                } else {
                    processes
                },
            ),
            ("GPU rows".into(), listed(&c.gpu_rows)),
            (
                "GPU rows without a launching call (phases never launched)".into(),
                total_of(&c.gpu_rows_without_call),
            ),
            (
                "launches placed in the program".into(),
                self.launches.to_string(),
            ),
            ("streams declared".into(), self.streams.to_string()),
            ("runtime/driver calls kept".into(), c.api_calls.to_string()),
            (
                "duplicate runtime rows (not counted again)".into(),
                c.duplicate_api_rows.to_string(),
            ),
            (
                "runtime rows of other event classes (not calls)".into(),
                total_of(&other_classes),
            ),
            (
                "launch/copy/set calls without a GPU row".into(),
                total_of(&c.calls_without_gpu_row),
            ),
            ("sync rows read".into(), c.sync_rows.to_string()),
            ("host waits declared".into(), listed(&c.waits)),
            ("stream waits declared".into(), c.stream_waits.to_string()),
        ]
    }

    /// The case's description.
    pub(super) fn describe(&self) -> String {
        let rows = |w: &str| self.counts.gpu_rows.get(w).copied().unwrap_or(0);
        format!(
            "Imported from the Nsight Systems export {} ({}): {} kernel, {} memcpy and {} memset rows \
             on {} stream(s) of {} process(es). Times are the file's own integer ns on the session \
             axis (absolute = utcEpochNs + t), which nsys records every process on: the processes \
             share one clock (clock ids `pid<pid>` name whose program a wait is). GPU rows whose \
             launching call is missing are phases that are never launched. Questions: intervals \
             per stream, per device and per class of work (compute, communication, memory), and \
             whether the file's waits cover its work.",
            self.file,
            self.export.version_line(),
            rows("kernel"),
            rows("memcpy"),
            rows("memset"),
            self.streams,
            self.processes.len()
        )
    }

    /// The case's provenance.
    pub(super) fn provenance(&self) -> Map<String, Value> {
        let mut p = Map::new();
        p.insert("source".into(), json!("nsys-sqlite"));
        p.insert("file".into(), json!(self.file));
        p.insert("metadata_table".into(), json!(self.export.metadata_table));
        p.insert("nsys_version".into(), json!(self.export.nsys_version));
        p.insert("schema_version".into(), json!(self.export.schema_version));
        p.insert(
            "nsys_version_in_paths".into(),
            json!(self.export.path_version),
        );
        if !self.export.derived.is_empty() {
            let derived: Map<String, Value> = self
                .export
                .derived
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            p.insert("derived".into(), Value::Object(derived));
        }
        p.insert(
            "session_start_utc_epoch_ns".into(),
            json!(self.session_start_utc_ns),
        );
        p.insert(
            "gpus".into(),
            Value::Array(
                self.gpus
                    .iter()
                    .map(|g| json!({"id": g.id, "cuDevice": g.cu_device, "name": g.name, "uuid": g.uuid, "busLocation": g.bus}))
                    .collect(),
            ),
        );
        p.insert("counts".into(), self.counts.to_json());
        p.insert("notes".into(), json!(self.notes));
        p
    }
}
