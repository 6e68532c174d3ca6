//! Nsight Systems SQLite exports (`nsys export --type sqlite`) read into a case.
//!
//! [`import_nsys`] opens the file **read-only** (it is never modified), inspects its schema,
//! reads the CUDA tables and builds a [`RawCase`] with the [`ExportFacts`] about the file.
//! Every time is the file's own integer nanoseconds: no floating point. The layout is the
//! one every format shares (`src/import/mod.rs`): read → intermediate → build → summary.
//!
//! ```text
//!  report.sqlite ──read (schema, rows by column name)──▶ Export
//!         Export ──join (checks, one call per key, sync rows classified)──▶ Joined
//!         Joined ──activities (clocks, names, work, program steps)──▶ import::activity::Activities
//!     Activities ──import::build (declarations, program order, timers, questions)──▶ RawCase
//!         Joined ──facts (versions, processes, counts, notes)──▶ facts rows of the one summary
//! ```
//!
//! ```no_run
//! use std::path::Path;
//! use worksheet::import::nsys::import_nsys;
//!
//! let import = import_nsys(Path::new("report1.sqlite"), "report1").unwrap();
//! for (what, value) in import.facts.rows() {
//!     println!("{what}: {value}");
//! }
//! std::fs::write("report1.json", import.case.to_json_pretty()).unwrap();
//! ```
//!
//! # What is read
//!
//! Tables exist only when they have rows, and columns vary by nsys version, so the reader
//! asks the schema first and reads columns **by name** (2024.5 inserted `greenContextId`
//! before `streamId`). An absent table means "no rows", never an error.
//!
//! | table | columns read |
//! |---|---|
//! | `CUPTI_ACTIVITY_KIND_KERNEL` | start, end, deviceId, contextId, streamId, correlationId, globalPid, shortName (else demangledName) → `StringIds` |
//! | `CUPTI_ACTIVITY_KIND_MEMCPY` | the same keys, bytes, copyKind |
//! | `CUPTI_ACTIVITY_KIND_MEMSET` | the same keys, bytes |
//! | `CUPTI_ACTIVITY_KIND_RUNTIME` | start, end, globalTid, correlationId, nameId → `StringIds`, eventClass (when present) |
//! | `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION` | start, end, deviceId, contextId, streamId, correlationId, globalPid, eventId, eventSyncId (when present) |
//! | `CUPTI_ACTIVITY_KIND_CUDA_EVENT` | deviceId, contextId, streamId, correlationId, globalPid, eventId, eventSyncId (when present) |
//! | `TARGET_INFO_SESSION_START_TIME` | utcEpochNs (absent in 2021.2 files) |
//! | `TARGET_INFO_GPU` | id, cuDevice, name, uuid, busLocation (listed, not mapped: its `id` is nsys's own and need not be the CUDA ordinal of `deviceId`) |
//! | `META_DATA_EXPORT` / `EXPORT_META_DATA` | EXPORT_PRODUCT_VERSION, EXPORT_SCHEMA_VERSION, DERIVED_* |
//!
//! `syncType` is **not** read: its numbering changed between versions (`cudaDeviceSynchronize`
//! is 1 in 2021.2 and 4 in 2025.1). A sync row is classified by the name of the API call that
//! made it, joined by (process, correlationId).
//!
//! # How the rows become a case
//!
//! - **Clocks: one session clock, one clock id per process.** nsys records every row of a
//!   report, of every process, on one session timebase: 0 is the session start, absolute
//!   = `utcEpochNs + t` (NVIDIA's documentation, cited in docs/ranks.md, "Processes of one
//!   nsys session"). So every process's clock has domain `nsys-session` and the same
//!   instance, naming the session start (`utcEpochNs`): one clock in the sense of SPEC §2,
//!   whose readings compare exactly across processes and are drawn on one axis. The clock
//!   **id** stays per process, `pid<pid>` (`-2`, `-3` if two `globalPid`s share a pid): it
//!   says whose host program a wait or timer belongs to, and a host wait answers only for
//!   timers on its own clock id (a process's wait says nothing about another's work). A file
//!   without `TARGET_INFO_SESSION_START_TIME` (2021.2) gets an instance that says the start
//!   is unknown and names the file, since nothing else tells two such sessions apart. Times
//!   stay relative to the session start, as the file has them.
//! - **Processes** are `globalPid`/`globalTid` with the thread bits (0–23) cleared; the pid
//!   is bits 24–47. correlationId is unique only within a process, so every join is on
//!   (process, correlationId).
//! - **API calls**: `eventClass` 0 (runtime) and 1 (driver). Other classes (67 = CUDA
//!   backtrace rows in nsys 2022.2, which repeat their call's correlationId and enclose it)
//!   are counted by class and, when they repeat a call's correlationId, as duplicates; they
//!   are never calls, so nothing is counted twice. Two calls with one (process,
//!   correlationId) keep the innermost and count the other as a duplicate. Names lose their
//!   version suffix (`cudaLaunchKernel_v7000` → `cudaLaunchKernel`).
//! - **Streams: one per (process, deviceId, contextId, streamId)** with GPU rows, or named by
//!   a stream sync, a stream-wait or an event record. Id `gpu<d>-s<s>` and device `gpu<d>`,
//!   the names a Kineto import uses. Only when two processes or two contexts use the same
//!   `(d, s)` does the id get a suffix telling them apart: `-<clock>` (`-pid145`) when the
//!   processes differ, `-ctx<c>` when the contexts differ. Likewise, when two (process,
//!   context) pairs use one device, each gets its own label (`gpu<d>-pid<pid>`,
//!   `gpu<d>-ctx<c>`), so that a device-wide wait of one process never covers another's
//!   work. A sync row's device is the device of its (process, context) in the GPU
//!   rows, **never the sync table's `deviceId`**: CUPTI's synchronization record has no
//!   device, and nsys writes 0 there (in `mfu_2gpu_before`, process 145's context 2 runs every
//!   kernel on device 1 while its sync rows say device 0). A sync of a context with no GPU
//!   row has no known device and declares no wait. `greenContextId` (2024.5 on) is not
//!   read: a green context's work is keyed by its parent context and stream.
//! - **Phases: every kernel, memcpy and memset row**, id `kernel-<rowid>` (`memcpy-`,
//!   `memset-`) where rowid is the SQLite rowid (`SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL
//!   WHERE rowid = N` finds it), label the kernel's short name, `memcpy HtoD 4096 B` or
//!   `memset 4096 B`. Rows with start = end = 0 (CUPTI: timestamps not collected) are left
//!   out and noted; a row that ends before it starts is the error `bad-row`.
//! - **Program, in host-time order.** A GPU row whose call is found is launched at its
//!   call's *end* (the work is queued by then); a host wait is placed at its call's *start*;
//!   at equal times submissions come first. Placing waits at their start and launches at
//!   their end means that a launch made by another thread while a wait was already under way
//!   is not claimed covered by it: the order under-claims rather than over-claims.
//!   **A GPU row without its call** (cut by a capture window) is a phase that is never
//!   launched, so no wait can be shown to cover it; **a launch, copy or set call without a
//!   GPU row** is counted by name. Both are counted in the summary.
//! - **Sync rows → waits**, by API name: `cudaStreamSynchronize` → host wait on that stream;
//!   `cudaDeviceSynchronize` / `cuCtxSynchronize` → host wait on the device label of the
//!   row's (process, device, context); `cudaEventSynchronize` → host wait on the event, when
//!   the event's record can be identified; `cudaStreamWaitEvent` → a `stream-wait` op (the
//!   stream, not the host, waits), likewise. Each wait returns (`at`) at its call's end, on
//!   the process clock; id `sync-<rowid>`. `cudaEventQuery` / `cudaStreamQuery` poll and
//!   return at once: they are not waits.
//! - **Copies that are waits** (SPEC §4, "Implicit waits"; CUDA runtime API, "API
//!   synchronization behavior"). A synchronous `cudaMemcpy` has no sync row, but a
//!   device-to-host one returns only once the copy has completed. A `_MEMCPY` row whose call
//!   (by name, with or without `Async`), `copyKind` and `srcKind` / `dstKind` make it a
//!   synchronous DtoH copy, an `Async` DtoH copy into pageable memory, or a synchronous HtoD
//!   copy from pageable memory becomes a host wait `copy-<rowid>` on its stream with
//!   `implicit` and `copy`, right after its launch, returning at the call's end; not when
//!   another submission to that stream returned while the call ran. The numbering of the
//!   memory kinds and the streams' kinds from `TARGET_INFO_CUDA_STREAM.flag` (legacy
//!   default, blocking, non-blocking) are in `kinds.rs`; the shared mapping from copy facts
//!   to waits is `crate::import::copies`.
//! - **Events** are identified only through `CUPTI_ACTIVITY_KIND_CUDA_EVENT` rows: same
//!   process and eventId (and eventSyncId when both rows carry one), recorded by the latest
//!   call that ended before the sync's call started (event ids are reused). Such an event is
//!   declared in the record's stream (`event-<rowid>`), recorded at its record call's end,
//!   `timing: false` (the file does not say whether it was created with timing, and no
//!   question asks for its time) and `completed`. Without a CUDA_EVENT row (none of the
//!   five reference files has one) the sync is kept as a note, never as a guessed wait.
//! - **Questions** are the builder's, the same as a Kineto import's: `stream:<stream>`,
//!   `device:<device>`, and per device `compute:` (kernels whose name has no `nccl`),
//!   `communication:` (kernels whose name contains `nccl`, any case) and `memory:` (memcpy
//!   and memset rows), each only when not empty; then `completion:all-work` per process that
//!   launches work (a host timer from its first API call to the return of its last host
//!   wait; suffixed `-<clock>` when several processes launch work), and
//!   `completion:before-final-sync` when that last wait is device-wide with nothing launched
//!   after it (did the waits before it cover the work?). Unlike a Kineto import, the wait
//!   keeps its id: nothing says whose it is. No `expect`: the import states facts and
//!   questions; `worksheet eval` answers them.
//! - The mapping is documented for users in `fixtures/README.md` ("Nsight Systems SQLite exports").
//! - **Provenance** holds the file name, versions, session start, the GPUs listed, the counts
//!   and the notes; the summary's facts table shows the same ([`ExportFacts::rows`]).
//!
//! # Errors
//!
//! [`NsysError`] with a stable code ([`NSYS_ERROR_CODES`]), the file and where in it: an
//! empty file, a file that is not SQLite, a truncated file (checked against the page count in
//! the SQLite header before SQLite reads it), a damaged one, an SQLite database that is not
//! an Nsight Systems export, an export without CUDA rows, a missing column, a bad row.

mod activities;
mod build;
mod facts;
mod join;
mod kinds;

use crate::trace::nsys::{error, read};

use std::path::Path;

pub use activities::DOMAIN;
pub use error::{NsysError, NSYS_ERROR_CODES};
pub use facts::{Counts, ExportFacts, ProcessFacts};
pub use read::{ExportInfo, GpuInfo};

use crate::case::raw::RawCase;

/// An export read into a case, with what the reader found.
#[derive(Clone, Debug)]
pub struct NsysImport {
    /// The case: clocks, streams, events, phases, program, questions, provenance.
    pub case: RawCase,
    /// Versions, session start, GPUs, processes, counts and notes: the summary's facts rows
    /// ([`ExportFacts::rows`]).
    pub facts: ExportFacts,
    /// The times of the case's work phases ([`crate::import::build::steps::WorkSpans`]).
    pub work_spans: crate::import::build::steps::WorkSpans,
}

/// Reads the Nsight Systems SQLite export at `path` into a case named `name`.
///
/// The file is opened read-only and never modified. Cost: one pass over each CUDA table,
/// O(n log n) in the number of rows (sorting), with all rows in memory.
///
/// # Errors
/// [`NsysError`] naming the file (as `path` displays), where in it, and what was expected.
pub fn import_nsys(path: &Path, name: &str) -> Result<NsysImport, NsysError> {
    import_nsys_recorded(path, name, false).map(|(import, _)| import)
}

/// [`import_nsys`], and with `recorded`, the export's recorded model
/// ([`crate::trace::model::Trace`], for the audit) from the same open file.
///
/// # Errors
/// As [`import_nsys`]. The inner result is the recorded model's.
pub fn import_nsys_recorded(
    path: &Path,
    name: &str,
    recorded: bool,
) -> Result<
    (
        NsysImport,
        Option<Result<crate::trace::model::Trace, NsysError>>,
    ),
    NsysError,
> {
    let shown = path.display().to_string();
    let file_name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.clone());
    let mut export = read::open(path).map_err(|e| e.in_file(&shown))?;
    let import = build::build(&mut export, &file_name, name).map_err(|e| e.in_file(&shown))?;
    let trace = recorded.then(|| {
        crate::trace::nsys::neutral::from_export(&mut export).map_err(|e| e.in_file(&shown))
    });
    Ok((import, trace))
}
