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
//!   returns (a call with several `gpu_memcpy` rows waits for each: `copy-c<correlation>.2`,
//!   and so on, for the second and later). A copy whose stream received another submission
//!   that returned while the copy's call ran (another thread) is not a wait, and is counted:
//!   its place in the stream is not known. **Stream kinds are not declared**: Kineto records no stream flags (its
//!   GPU rows carry `device`, `context`, `stream`; the metadata rows only `stream N`), so a
//!   copy's wait covers its own stream only, even on stream 7.
//! - **The profiler's own sync.** PyTorch calls `torch.cuda.synchronize()` when the profiler
//!   stops, so every trace ends with a device-wide wait the script did not issue. The last
//!   host wait, when it is device-wide and nothing is launched after it, gets the id
//!   `final-device-sync` and a note saying it is most likely the profiler's.
//! - **Questions** (asked by the one builder, `src/import/build.rs`, as for every format).
//!   `stream:<stream>` (intervals of each stream's work), `device:<device>`
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
//!
//! # Modules (the layout of `nsys/`: read → intermediate → build → summary)
//!
//! ```text
//!  JSON text ──read (one streaming pass; read/visit: serde visitors; number: exact µs → ns)──▶ Read
//!       Read ──program (the host program placed) + build (phase ids)──▶ import::activity::Activities
//! Activities ──import::build (the one builder: declarations, order, timers, questions)──▶ RawCase
//!       Read ──summary (format, facts, notes, provenance)──▶ Imported ──▶ import's one Summary
//!       Read ──audit (what only the audit reads, from the same pass)──▶ trace::model::Trace
//! ```
//!
//! `names` holds phase ids and call-name predicates. The audit's joins and step questions
//! are added to the case by the one builder's last stage (`import::build::steps`), for every
//! format.

mod build;
#[cfg(test)]
mod fast_tests;
#[cfg(test)]
mod neutral_tests;
mod program;
#[cfg(test)]
mod scan_tests;
mod summary;

use crate::trace::kineto::tap::EventTap;
pub use crate::trace::kineto::CLOCK_ID;
use crate::trace::kineto::{names, read, split, AuditResult, GpuWork, Read, SyncRow, WorkKind};

#[cfg(test)]
use crate::trace::kineto::number::{scaled_decimal, Scaled};
use build::build;
#[cfg(test)]
use read::stream_of_tid;

use super::{copies, ImportError, ImportOptions, Imported};

type Result<T> = std::result::Result<T, ImportError>;

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

/// Imports a Kineto trace streamed from `reader` (JSON text, in one pass: `trace::kineto::read`);
/// `name` names the case. Errors are not yet attributed to a file.
///
/// # Errors
/// As [`import_text`], and `io`, `too-large` or `bad-syntax` for trouble the reader reports
/// (see `src/trace/source.rs`).
pub fn import_reader<R: std::io::BufRead>(
    reader: R,
    name: &str,
    options: &ImportOptions,
) -> Result<Imported> {
    let (read, top, base) = read::read_trace(reader, options)?;
    Ok(build(read, &top, base, name, None))
}

/// Imports a Kineto trace streamed from `reader`, as [`import_reader`], and hands back the
/// audit's model of the same trace ([`crate::trace::model::Trace`]) from the same pass: the
/// file is read and parsed once.
///
/// # Errors
/// As [`import_reader`]. The inner result is the audit's: an error there (a host range
/// only the audit reads whose time overflows) does not stop the import.
pub fn import_with_audit<R: std::io::BufRead>(
    reader: R,
    name: &str,
    options: &ImportOptions,
) -> Result<(Imported, Result<crate::trace::model::Trace>)> {
    let parsed = read::read_trace(reader, options)?;
    Ok(with_audit(parsed, name))
}

/// The case (and, with `audit`, the audit's model) of a trace read by [`read::read_trace`]
/// or [`read::read_pieces`].
fn finish(parsed: read::Parsed, name: &str, audit: bool) -> (Imported, Option<AuditResult>) {
    if audit {
        let (imported, trace) = with_audit(parsed, name);
        (imported, Some(trace))
    } else {
        let (read, top, base) = parsed;
        (build(read, &top, base, name, None), None)
    }
}

/// The case and the audit's model of a trace read whole.
fn with_audit(parsed: read::Parsed, name: &str) -> (Imported, AuditResult) {
    let (mut read, top, base) = parsed;
    let mut pending = crate::trace::kineto::audit_begin(&mut read, &top);
    let imported = build(read, &top, base, name, Some(&mut pending));
    (imported, pending.end())
}

/// The fast path of [`import_with_audit`] / [`import_reader`]: `text` (the trace's JSON,
/// gunzipped and checked) is cut into events on a second thread (`split.rs`) and each event
/// parsed from its slice. `None` when the splitter or the parser met anything it does not
/// take for granted — a syntax error, a field the importer refuses, trouble reading: the
/// caller then reads the trace again with the careful reader, which reports it exactly.
/// A trace this path reads gives the same case, facts, notes and audit as the careful
/// reader, byte for byte (`import::kineto::fast_tests` and the `kineto_fast` fuzz target).
/// `tap` sees every top-level value and event on the way (`--compat hta` gathers its rows
/// so, in the same pass).
pub(crate) fn import_split<R: std::io::Read + Send>(
    text: R,
    name: &str,
    options: &ImportOptions,
    audit: bool,
    refusal: Option<crate::trace::source::Refusal>,
    tap: &mut dyn EventTap,
) -> Option<(Imported, Option<AuditResult>)> {
    let parsed = std::thread::scope(|scope| {
        let pieces = split::in_thread_refusing(scope, text, refusal);
        read::read_pieces(&pieces, options, tap)
    })?;
    Some(finish(parsed, name, audit))
}

/// The fast path ([`import_split`]) on a whole text, with the audit's model: `None` where it
/// gives up (a caller then reads the trace with the careful reader, [`import_with_audit`]).
/// For the fuzz target `kineto_fast`, which checks that every answer it gives is the careful
/// reader's; not a way to import (it never words an error).
#[doc(hidden)]
pub fn import_fast(
    text: &[u8],
    name: &str,
    options: &ImportOptions,
) -> Option<(Imported, Result<crate::trace::model::Trace>)> {
    let mut no_tap = crate::trace::kineto::tap::NoTap;
    let (imported, audit) = import_split(text, name, options, true, None, &mut no_tap)?;
    Some((imported, audit?))
}

/// The id of a stream: `gpu<device>-s<stream>`.
fn stream_id((device, stream): (i64, i64)) -> String {
    format!("gpu{device}-s{stream}")
}

/// The id of a device: `gpu<device>`.
fn device_id(device: i64) -> String {
    format!("gpu{device}")
}

/// The id of the event an event record records: `record-c<correlation>`.
fn record_id(corr: i64) -> String {
    format!("record-c{corr}")
}

#[cfg(test)]
mod tests {
    use super::names::{short_name, SHORT_NAME_CHARS};
    use super::*;
    use serde_json::value::RawValue;

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
