//! Nsight Systems SQLite export → the audit's [`Trace`] model.
//!
//! Read-only, like the importer: the GPU activity and synchronization tables through the
//! importer's own readers (`read.rs`), and two queries of its own: runtime calls with
//! their thread (`globalTid`), and NVTX push/pop and start/end ranges (`eventType` 59 and
//! 60) as annotation ranges. Exports carry no `ProfilerStep#N` ranges unless the program
//! pushed NVTX ranges of that name; those are read as steps.
//!
//! Streams are numbered by `streamId` within their device; devices by `deviceId`. Rows of
//! several processes on one device are one device here (they share its time).

use std::collections::HashSet;
use std::path::Path;

use rusqlite::Connection;

use super::error::{sqlite_error, NsysError};
use super::read::{self, GpuKind, RUNTIME};
use crate::trace::model::{
    Activity, ActivityKind, ApiCall, CopyDirection, HostRange, RangeKind, Step, Trace,
};

/// NVTX `eventType`s of ranges: push/pop (59) and start/end (60).
const NVTX_RANGES: [i64; 2] = [59, 60];

/// Reads the export at `path` into the audit model.
///
/// # Errors
/// The importer's errors for a file that is not an intact Nsight Systems export.
pub fn read_trace(path: &Path) -> Result<Trace, NsysError> {
    let shown = path.display().to_string();
    read_inner(path).map_err(|e| e.in_file(&shown))
}

fn read_inner(path: &Path) -> Result<Trace, NsysError> {
    let mut export = read::open(path)?;
    from_export(&mut export)
}

/// The recorded model of an export already open (the one the importer read its case from:
/// the file is opened once for both).
///
/// # Errors
/// The importer's errors for a file that is not an intact Nsight Systems export.
pub(crate) fn from_export(export: &mut read::Export) -> Result<Trace, NsysError> {
    if !export.looks_like_nsys() {
        return Err(NsysError::new(
            "$",
            "not-nsys",
            "an SQLite database with no Nsight Systems table; an `nsys export --type sqlite` file is expected",
        ));
    }
    let mut trace = Trace {
        source: "nsys".to_owned(),
        ..Trace::default()
    };
    for kind in GpuKind::ALL {
        for row in export.gpu_rows(kind)? {
            let name = match (kind, row.name_id) {
                (GpuKind::Kernel, Some(id)) => export.string(id)?.unwrap_or_default(),
                (GpuKind::Kernel, None) => "kernel".to_owned(),
                (GpuKind::Memcpy, _) => format!("memcpy kind {}", row.copy_kind.unwrap_or(-1)),
                (GpuKind::Memset, _) => "memset".to_owned(),
            };
            if row.end < row.start {
                trace.problems.push(crate::trace::model::Problem {
                    kind: crate::trace::model::ProblemKind::NegativeDuration,
                    at: format!("{} rowid {}", kind.table(), row.rowid),
                    name: name.into(),
                    start: row.start,
                    duration: row.end - row.start,
                });
                continue;
            }
            trace.activities.push(Activity {
                kind: match kind {
                    GpuKind::Kernel => ActivityKind::Kernel,
                    GpuKind::Memcpy => ActivityKind::Memcpy,
                    GpuKind::Memset => ActivityKind::Memset,
                },
                // CUPTI copyKind 2 is DtoH; the export does not say pageable or pinned here.
                copy: (kind == GpuKind::Memcpy).then_some(match row.copy_kind {
                    Some(2) => CopyDirection::DeviceToHost,
                    _ => CopyDirection::Other,
                }),
                name: name.into(),
                device: row.key.device,
                stream: row.key.stream,
                start: row.start,
                end: row.end,
                correlation: Some(process_correlation(row.key.proc.pid(), row.correlation)),
                external: None,
                collective: None,
                bytes: row.bytes.and_then(|b| u64::try_from(b).ok()),
            });
        }
    }
    let synced: HashSet<i64> = export
        .sync_rows()?
        .iter()
        .map(|r| process_correlation(r.key.proc.pid(), r.correlation))
        .collect();
    trace.has_sync_rows = !synced.is_empty();
    let calls = runtime_calls(export.connection(), export.has_table(RUNTIME))?;
    for (start, end, thread, correlation, name_id) in calls {
        let name = export.string(name_id)?.unwrap_or_default();
        let correlation = process_correlation(read::Proc::from_global(thread).pid(), correlation);
        trace.calls.push(ApiCall {
            name: name.into(),
            thread: Some(thread),
            start,
            end,
            correlation: Some(correlation),
            external: None,
            sync_recorded: synced.contains(&correlation),
        });
    }
    if export.has_table("NVTX_EVENTS") {
        for (start, end, thread, name) in nvtx_ranges(export.connection())? {
            if name.starts_with("ProfilerStep#") {
                trace.steps.push(Step {
                    name: name.into(),
                    start,
                    end,
                    thread: Some(thread),
                });
            } else {
                trace.ranges.push(HostRange {
                    kind: RangeKind::Annotation,
                    name: name.into(),
                    thread: Some(thread),
                    start,
                    end,
                });
            }
        }
    }
    trace.steps.sort_by_key(|s| (s.start, s.end));
    Ok(trace)
}

/// A correlation id unique across the processes of one export: CUPTI numbers correlations
/// per process, so the process id goes into the high bits.
fn process_correlation(pid: i64, correlation: i64) -> i64 {
    (pid << 32) | (correlation & 0xFFFF_FFFF)
}

/// `(start, end, globalTid, correlationId, nameId)` of every runtime/driver call row
/// (`eventClass` 0 or 1 when the column exists).
type CallRow = (i64, i64, i64, i64, i64);

fn runtime_calls(conn: &Connection, present: bool) -> Result<Vec<CallRow>, NsysError> {
    if !present {
        return Ok(Vec::new());
    }
    let has_class = conn
        .prepare(&format!("SELECT eventClass FROM {RUNTIME} LIMIT 0"))
        .is_ok();
    let sql = format!(
        "SELECT start, end, globalTid, correlationId, nameId FROM {RUNTIME} \
         WHERE start IS NOT NULL AND end IS NOT NULL AND globalTid IS NOT NULL \
         AND correlationId IS NOT NULL AND nameId IS NOT NULL{}",
        if has_class {
            " AND (eventClass IS NULL OR eventClass IN (0, 1))"
        } else {
            ""
        }
    );
    let mut stmt = conn.prepare(&sql).map_err(|e| sqlite_error(RUNTIME, &e))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .map_err(|e| sqlite_error(RUNTIME, &e))?;
    let mut out: Vec<CallRow> = Vec::new();
    let mut seen: HashSet<(i64, i64)> = HashSet::new();
    for row in rows {
        let row: CallRow = row.map_err(|e| sqlite_error(RUNTIME, &e))?;
        // One call per (process, correlation), as the importer keeps them.
        if seen.insert((row.2 & !0xFF_FFFF, row.3)) && row.1 >= row.0 {
            out.push(row);
        }
    }
    Ok(out)
}

/// `(start, end, globalTid, text)` of every closed NVTX range.
fn nvtx_ranges(conn: &Connection) -> Result<Vec<(i64, i64, i64, String)>, NsysError> {
    let has_text_id = conn
        .prepare("SELECT textId FROM NVTX_EVENTS LIMIT 0")
        .is_ok();
    let sql = format!(
        "SELECT n.start, n.end, n.globalTid, {} FROM NVTX_EVENTS n {} \
         WHERE n.eventType IN ({}, {}) AND n.start IS NOT NULL AND n.end IS NOT NULL \
         AND n.end >= n.start AND n.globalTid IS NOT NULL",
        if has_text_id {
            "COALESCE(n.text, s.value, '')"
        } else {
            "COALESCE(n.text, '')"
        },
        if has_text_id {
            "LEFT JOIN StringIds s ON s.id = n.textId"
        } else {
            ""
        },
        NVTX_RANGES[0],
        NVTX_RANGES[1]
    );
    let mut stmt = conn
        .prepare(&sql)
        .map_err(|e| sqlite_error("NVTX_EVENTS", &e))?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .map_err(|e| sqlite_error("NVTX_EVENTS", &e))?;
    rows.map(|r| r.map_err(|e| sqlite_error("NVTX_EVENTS", &e)))
        .collect()
}
