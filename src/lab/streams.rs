//! `worksheet lab streams`: the classic copy/compute overlap lesson, measured and checked.
//!
//! A buffer of `u32` words goes host → device (pinned memory), through a kernel, and back.
//! **Serial**: one stream, three operations on the whole buffer. **Concurrent**: the buffer in
//! `chunks` pieces dealt round-robin over `streams` streams, each piece copied in, computed
//! and copied out in its stream, so one piece's copies overlap another's compute:
//!
//! ```text
//! serial      s0: [==== in ====][==== compute ====][==== out ====]
//! concurrent  s0: [in0][cmp0][out0]      [in2][cmp2][out2]
//!             s1:      [in1][cmp1][out1]      [in3][cmp3][out3]
//!                 ^ begin (s1.. wait on it)          joins → end ^
//! ```
//!
//! Timing: each pipeline is timed by two events on `s0` (the concurrent one joins every
//! stream back into `s0` before its end event: *events at the joins*), over `warmup` + `reps`
//! repetitions; speedup = median serial / median concurrent. One more **instrumented**
//! repetition of each records an event before and after every operation, so each stream's
//! busy time, the union, the copy/compute overlap and the gaps are computed by the
//! interval algebra; those extra events cost device time, so the instrumented totals are
//! reported apart from the clean ones.
//!
//! Correctness: the kernel runs `iters` steps of a 32-bit LCG on every word. Before each
//! repetition the host output is filled with a wrong value for every word; after it, every
//! word is compared with the host's own answer, computed independently by the LCG's
//! closed form ([`lcg_jump`]). A pipeline whose output is wrong is reported invalid.

use comfy_table::{presets::ASCII_MARKDOWN, Table};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::capture::backend::{Backend, BackendError, EventId, StreamId};
use crate::capture::build::{
    diff, event, host_wait_device, known, launch, phase, record, t, timer, GPU, HOST,
};
use crate::capture::record::{utc_now, DeviceInfo, DriverAnswer};
use crate::case::raw::{
    PhaseId, RawCase, RawClock, RawExpectIntervals, RawOp, RawQuestion, RawSeries, RawStream,
};
use crate::interval::{analyze, Interval, SetAnalysis};
use crate::stats::{SampleSet, Summary};
use crate::units::Nanos;

pub use crate::capture::lcg::{input_word, lcg_iterate, lcg_jump, LCG_A, LCG_C};

/// What the lab was asked to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StreamsOptions {
    /// Words (`u32`) in the buffer.
    pub words: usize,
    /// Streams of the concurrent pipeline.
    pub streams: usize,
    /// Chunks of the concurrent pipeline.
    pub chunks: usize,
    /// LCG steps per word in the kernel.
    pub iters: u32,
    /// Warm-up repetitions of each pipeline.
    pub warmup: usize,
    /// Measured repetitions of each pipeline.
    pub reps: usize,
    /// The command line, for provenance.
    pub command: String,
}

impl Default for StreamsOptions {
    fn default() -> Self {
        StreamsOptions {
            words: 16 << 20,
            streams: 4,
            chunks: 16,
            iters: 1_000,
            warmup: 2,
            reps: 10,
            command: "worksheet lab streams".into(),
        }
    }
}

/// A pipeline stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Host → device copy.
    CopyIn,
    /// The kernel.
    Compute,
    /// Device → host copy.
    CopyOut,
}

impl Stage {
    /// `copy-in`, `compute`, `copy-out`.
    pub fn code(self) -> &'static str {
        match self {
            Stage::CopyIn => "copy-in",
            Stage::Compute => "compute",
            Stage::CopyOut => "copy-out",
        }
    }
}

/// One operation of an instrumented run, placed between the events around it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpRecord {
    /// Stage.
    pub stage: Stage,
    /// Chunk index (0 for the serial pipeline).
    pub chunk: usize,
    /// Stream index.
    pub stream: usize,
    /// The event before it, on the event clock.
    pub start: Nanos,
    /// The event after it.
    pub end: Nanos,
}

/// One instrumented run of a pipeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Instrumented {
    /// Begin event position (stream 0).
    pub begin: Nanos,
    /// End event position (stream 0, after the joins).
    pub end: Nanos,
    /// Host timer start (before the first call) and stop (after the device-wide wait).
    pub host: (Nanos, Nanos),
    /// Every operation, in submission order.
    pub ops: Vec<OpRecord>,
    /// Join events: `(stream, position)`, streams 1.. only.
    pub joins: Vec<(usize, Nanos)>,
}

/// Whether a pipeline's output was right.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Words compared (every word).
    pub words: usize,
    /// Repetitions checked.
    pub repetitions: usize,
    /// Wrong words, over all repetitions.
    pub mismatches: usize,
    /// The first wrong word: `(index, got, expected)`.
    pub first: Option<(usize, u32, u32)>,
}

impl Verification {
    /// True when every word of every repetition was right.
    pub fn valid(&self) -> bool {
        self.mismatches == 0 && self.repetitions > 0
    }
}

/// Timings of one pipeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pipeline {
    /// Device intervals (begin → end) of the warm-up repetitions.
    pub warmup: Vec<Nanos>,
    /// Device intervals of the measured repetitions.
    pub measured: Vec<Nanos>,
    /// Host completion (timer start → return of the device-wide wait) of the measured ones.
    pub host: Vec<Nanos>,
    /// The instrumented repetition.
    pub instrumented: Instrumented,
    /// Output check.
    pub verification: Verification,
}

impl Pipeline {
    /// Median of the measured device intervals.
    pub fn median(&self) -> Option<Summary> {
        SampleSet::from_runs(&self.warmup, &self.measured)
            .ok()
            .and_then(|s| Summary::of(&s).ok())
    }
}

/// Everything the lab recorded.
#[derive(Clone, Debug, Serialize)]
pub struct StreamsRecord {
    /// The machine.
    pub device: DeviceInfo,
    /// When (UTC).
    pub date: String,
    /// What was asked.
    pub options: StreamsOptions,
    /// One stream, three operations.
    pub serial: Pipeline,
    /// Chunks over streams.
    pub concurrent: Pipeline,
}

fn chunk_range(words: usize, chunks: usize, c: usize) -> std::ops::Range<usize> {
    let per = words.div_ceil(chunks);
    (c * per).min(words)..((c + 1) * per).min(words)
}

struct Lab {
    streams: Vec<StreamId>,
    begin: EventId,
    end: EventId,
    joins: Vec<EventId>,
    /// Events before and after each op of an instrumented run.
    around: Vec<(EventId, EventId)>,
    anchor: [EventId; 2],
    anchor_at: Nanos,
    anchor_current: usize,
}

fn must_elapse<B: Backend>(b: &mut B, a: EventId, z: EventId) -> Result<Nanos, BackendError> {
    match b.elapsed(a, z) {
        DriverAnswer::Elapsed { value } => Ok(value),
        other => Err(BackendError::Other(format!(
            "reading an elapsed time: the driver answered {other}"
        ))),
    }
}

impl Lab {
    fn reanchor<B: Backend>(&mut self, b: &mut B) -> Result<(), BackendError> {
        let next = 1 - self.anchor_current;
        b.record(self.anchor[next], self.streams[0])?;
        b.wait_event(self.anchor[next])?;
        let step = must_elapse(b, self.anchor[self.anchor_current], self.anchor[next])?;
        self.anchor_at = Nanos::new(self.anchor_at.as_i64() + step.as_i64());
        self.anchor_current = next;
        Ok(())
    }

    fn at<B: Backend>(&self, b: &mut B, e: EventId) -> Result<Nanos, BackendError> {
        let off = must_elapse(b, self.anchor[self.anchor_current], e)?;
        Ok(Nanos::new(self.anchor_at.as_i64() + off.as_i64()))
    }
}

/// One pipeline run's device interval, host timer readings and (instrumented) detail.
type PipelineRun = (Nanos, (Nanos, Nanos), Option<Instrumented>);

/// One pipeline run. `concurrent` picks the pipeline; `instrument` adds events around ops.
fn pipeline<B: Backend>(
    b: &mut B,
    lab: &mut Lab,
    o: &StreamsOptions,
    concurrent: bool,
    instrument: bool,
) -> Result<PipelineRun, BackendError> {
    let s0 = lab.streams[0];
    let k = if concurrent { o.streams } else { 1 };
    let pieces = if concurrent { o.chunks } else { 1 };
    if instrument {
        lab.reanchor(b)?;
    }
    b.sync_device()?;
    let t0 = b.now();
    b.record(lab.begin, s0)?;
    for s in 1..k {
        b.stream_wait(lab.streams[s], lab.begin)?;
    }
    let mut plan = Vec::new();
    for c in 0..pieces {
        let stream = c % k;
        let range = chunk_range(o.words, pieces, c);
        for stage in [Stage::CopyIn, Stage::Compute, Stage::CopyOut] {
            let id = plan.len();
            let sid = lab.streams[stream];
            if instrument {
                b.record(lab.around[id].0, sid)?;
            }
            match stage {
                Stage::CopyIn => b.copy_in(sid, range.clone())?,
                Stage::Compute => b.compute(sid, range.clone(), o.iters)?,
                Stage::CopyOut => b.copy_out(sid, range.clone())?,
            }
            if instrument {
                b.record(lab.around[id].1, sid)?;
            }
            plan.push((stage, c, stream));
        }
    }
    for s in 1..k {
        b.record(lab.joins[s], lab.streams[s])?;
        b.stream_wait(s0, lab.joins[s])?;
    }
    b.record(lab.end, s0)?;
    b.sync_device()?;
    let t1 = b.now();
    let total = must_elapse(b, lab.begin, lab.end)?;
    let detail = if instrument {
        let begin = lab.at(b, lab.begin)?;
        let mut ops = Vec::with_capacity(plan.len());
        for (id, (stage, chunk, stream)) in plan.into_iter().enumerate() {
            let (a, z) = lab.around[id];
            ops.push(OpRecord {
                stage,
                chunk,
                stream,
                start: lab.at(b, a)?,
                end: lab.at(b, z)?,
            });
        }
        let mut joins = Vec::new();
        for s in 1..k {
            joins.push((s, lab.at(b, lab.joins[s])?));
        }
        Some(Instrumented {
            begin,
            end: Nanos::new(begin.as_i64() + total.as_i64()),
            host: (t0, t1),
            ops,
            joins,
        })
    } else {
        None
    };
    Ok((total, (t0, t1), detail))
}

fn verify<B: Backend>(b: &mut B, expected: &[u32], v: &mut Verification) {
    let out = b.lab_output();
    v.repetitions += 1;
    for (i, (got, want)) in out.iter().zip(expected).enumerate() {
        if got != want {
            v.mismatches += 1;
            if v.first.is_none() {
                v.first = Some((i, *got, *want));
            }
        }
    }
    if out.len() != expected.len() {
        v.mismatches += expected.len().abs_diff(out.len());
    }
}

fn poison<B: Backend>(b: &mut B, expected: &[u32]) {
    for (o, e) in b.lab_output().iter_mut().zip(expected) {
        *o = !*e;
    }
}

/// Runs the lab on `b`.
///
/// # Errors
/// A driver failure, or options that make no pipeline (no words, streams or chunks).
pub fn run<B: Backend>(b: &mut B, o: &StreamsOptions) -> Result<StreamsRecord, BackendError> {
    if o.words == 0 || o.streams == 0 || o.chunks == 0 || o.reps == 0 {
        return Err(BackendError::Other(
            "lab streams needs words, streams, chunks and repetitions > 0".into(),
        ));
    }
    b.lab_alloc(o.words)?;
    for (i, w) in b.lab_input().iter_mut().enumerate() {
        *w = input_word(i);
    }
    let (ja, jc) = lcg_jump(o.iters);
    let expected: Vec<u32> = (0..o.words)
        .map(|i| ja.wrapping_mul(input_word(i)).wrapping_add(jc))
        .collect();

    let mut streams = Vec::with_capacity(o.streams);
    for _ in 0..o.streams {
        streams.push(b.new_stream()?);
    }
    let n_ops = 3 * o.chunks.max(1);
    let mut around = Vec::with_capacity(n_ops);
    for _ in 0..n_ops {
        around.push((b.new_event(true)?, b.new_event(true)?));
    }
    let mut joins = Vec::with_capacity(o.streams);
    for _ in 0..o.streams {
        joins.push(b.new_event(true)?);
    }
    let mut lab = Lab {
        streams,
        begin: b.new_event(true)?,
        end: b.new_event(true)?,
        joins,
        around,
        anchor: [b.new_event(true)?, b.new_event(true)?],
        anchor_at: Nanos::ZERO,
        anchor_current: 0,
    };
    b.record(lab.anchor[0], lab.streams[0])?;
    b.wait_event(lab.anchor[0])?;

    let mut pipelines = Vec::new();
    for concurrent in [false, true] {
        let mut p = Pipeline {
            warmup: Vec::new(),
            measured: Vec::new(),
            host: Vec::new(),
            instrumented: Instrumented {
                begin: Nanos::ZERO,
                end: Nanos::ZERO,
                host: (Nanos::ZERO, Nanos::ZERO),
                ops: Vec::new(),
                joins: Vec::new(),
            },
            verification: Verification {
                words: o.words,
                repetitions: 0,
                mismatches: 0,
                first: None,
            },
        };
        for rep in 0..o.warmup + o.reps + 1 {
            let instrument = rep == o.warmup + o.reps;
            poison(b, &expected);
            let (total, (t0, t1), detail) = pipeline(b, &mut lab, o, concurrent, instrument)?;
            verify(b, &expected, &mut p.verification);
            if let Some(d) = detail {
                p.instrumented = d;
            } else if rep < o.warmup {
                p.warmup.push(total);
            } else {
                p.measured.push(total);
                p.host.push(Nanos::new(t1.as_i64() - t0.as_i64()));
            }
        }
        pipelines.push(p);
    }
    let concurrent = pipelines.pop().expect("two pipelines");
    let serial = pipelines.pop().expect("two pipelines");
    Ok(StreamsRecord {
        device: b.info(),
        date: utc_now(),
        options: o.clone(),
        serial,
        concurrent,
    })
}

/// Stream id in the case: `s0`, `s1`, ….
fn sid(s: usize) -> String {
    format!("s{s}")
}

fn op_id(prefix: &str, op: &OpRecord) -> String {
    if prefix == "serial" {
        format!("serial-{}", op.stage.code())
    } else {
        format!("{prefix}-c{}-{}", op.chunk, op.stage.code())
    }
}

fn count_only(n: usize) -> Option<RawExpectIntervals> {
    Some(RawExpectIntervals {
        verdict: None,
        reason: None,
        count: Some(n as u64),
        sum: None,
        union: None,
        span: None,
        gaps: None,
        overlap: None,
        overlap_regions: None,
        max_depth: None,
    })
}

fn pipeline_case(prefix: &str, p: &Pipeline, device: &str, case: &mut RawCase) {
    let d = &p.instrumented;
    let id = |s: &str| format!("{prefix}-{s}");
    pipeline_events_and_phases(prefix, d, case);
    let streams: Vec<usize> = {
        let mut v: Vec<usize> = d.ops.iter().map(|o| o.stream).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    pipeline_program(prefix, d, device, &streams, case);
    case.questions.push(RawQuestion::DeviceInterval {
        id: id("device-interval"),
        start: id("begin"),
        end: id("end"),
        expect: known(diff(d.end, d.begin)),
    });
    case.questions.push(RawQuestion::HostCompletion {
        id: id("host-completion"),
        timer: id("host-completion"),
        work: None,
        expect: known(diff(d.host.1, d.host.0)),
    });
    pipeline_interval_questions(prefix, d, &streams, case);
    case.series.push(RawSeries {
        id: id("device-interval"),
        label: Some(format!(
            "{prefix} pipeline, begin → end events (no events around the operations)"
        )),
        warmup: p.warmup.iter().map(|v| t(*v)).collect(),
        measured: p.measured.iter().map(|v| t(*v)).collect(),
        failed: Vec::new(),
    });
    case.questions.push(RawQuestion::SteadyState {
        id: id("steady"),
        series: id("device-interval"),
        min_warmup: None,
        tolerance_percent: None,
        expect: None,
    });
}

/// The pipeline's events (begin, end, one join per stream) and one phase per operation.
fn pipeline_events_and_phases(prefix: &str, d: &Instrumented, case: &mut RawCase) {
    let id = |s: &str| format!("{prefix}-{s}");
    case.events.push(event(id("begin"), "s0", Some(d.begin)));
    case.events.push(event(id("end"), "s0", Some(d.end)));
    for (s, at) in &d.joins {
        case.events
            .push(event(format!("{prefix}-join-s{s}"), &sid(*s), Some(*at)));
    }
    for op in &d.ops {
        case.phases.push(phase(
            op_id(prefix, op),
            format!(
                "{} of chunk {} in stream s{} (between the events around it)",
                op.stage.code(),
                op.chunk,
                op.stream
            ),
            &sid(op.stream),
            op.start,
            op.end,
        ));
    }
}

/// The pipeline's program: the timer around begin, the fork to every stream, the launches,
/// the joins back to s0, end, and the device wait.
fn pipeline_program(
    prefix: &str,
    d: &Instrumented,
    device: &str,
    streams: &[usize],
    case: &mut RawCase,
) {
    let id = |s: &str| format!("{prefix}-{s}");
    case.program
        .push(timer(true, id("host-completion"), d.host.0));
    case.program.push(record(id("begin")));
    for s in streams.iter().filter(|s| **s != 0) {
        case.program.push(RawOp::StreamWait {
            stream: sid(*s),
            event: id("begin"),
        });
    }
    for op in &d.ops {
        case.program.push(launch(op_id(prefix, op)));
    }
    for (s, _) in &d.joins {
        let j = format!("{prefix}-join-s{s}");
        case.program.push(record(j.clone()));
        case.program.push(RawOp::StreamWait {
            stream: "s0".into(),
            event: j,
        });
    }
    case.program.push(record(id("end")));
    case.program
        .push(host_wait_device(id("wait"), device, d.host.1));
    case.program
        .push(timer(false, id("host-completion"), d.host.1));
}

/// The interval questions: all operations, and (but for the serial pipeline) per stream,
/// the copies and the compute.
fn pipeline_interval_questions(
    prefix: &str,
    d: &Instrumented,
    streams: &[usize],
    case: &mut RawCase,
) {
    let id = |s: &str| format!("{prefix}-{s}");
    let all: Vec<PhaseId> = d.ops.iter().map(|o| op_id(prefix, o).into()).collect();
    case.questions.push(RawQuestion::Intervals {
        id: id("all"),
        phases: Some(all.clone()),
        expect: count_only(all.len()),
    });
    if prefix != "serial" {
        for s in streams {
            let mine: Vec<PhaseId> = d
                .ops
                .iter()
                .filter(|o| o.stream == *s)
                .map(|o| op_id(prefix, o).into())
                .collect();
            case.questions.push(RawQuestion::Intervals {
                id: format!("{prefix}-stream-s{s}"),
                phases: Some(mine.clone()),
                expect: count_only(mine.len()),
            });
        }
        let copies: Vec<PhaseId> = d
            .ops
            .iter()
            .filter(|o| o.stage != Stage::Compute)
            .map(|o| op_id(prefix, o).into())
            .collect();
        let compute: Vec<PhaseId> = d
            .ops
            .iter()
            .filter(|o| o.stage == Stage::Compute)
            .map(|o| op_id(prefix, o).into())
            .collect();
        case.questions.push(RawQuestion::Intervals {
            id: id("copies"),
            phases: Some(copies.clone()),
            expect: count_only(copies.len()),
        });
        case.questions.push(RawQuestion::Intervals {
            id: id("compute"),
            phases: Some(compute.clone()),
            expect: count_only(compute.len()),
        });
    }
}

/// `serial / concurrent` as text with two decimals, from integer nanoseconds.
pub fn speedup_text(serial: Nanos, concurrent: Nanos) -> String {
    if concurrent.as_i64() <= 0 {
        return "-".into();
    }
    let hundredths = (i128::from(serial.as_i64()) * 100 + i128::from(concurrent.as_i64()) / 2)
        / i128::from(concurrent.as_i64());
    format!("{}.{:02}x", hundredths / 100, hundredths % 100)
}

fn provenance(r: &StreamsRecord) -> Map<String, Value> {
    let d = &r.device;
    let med = |p: &Pipeline| p.median().map(|s| s.median());
    let mut m = Map::new();
    m.insert(
        "tool".into(),
        json!(format!("worksheet {}", env!("CARGO_PKG_VERSION"))),
    );
    m.insert("command".into(), json!(r.options.command));
    m.insert("date".into(), json!(r.date));
    m.insert("simulated".into(), json!(d.simulated));
    m.insert(
        "device".into(),
        json!({"name": d.name, "uuid": d.uuid, "context": d.context, "compute_capability": d.compute_capability,
               "driver_cuda_version": d.driver_cuda_version, "driver_version": d.driver_version}),
    );
    m.insert(
        "host".into(),
        json!({"hostname": d.hostname, "boot_id": d.boot_id, "pid": d.pid}),
    );
    m.insert(
        "options".into(),
        json!({"bytes": r.options.words * 4, "words": r.options.words, "streams": r.options.streams,
               "chunks": r.options.chunks, "kernel_lcg_steps_per_word": r.options.iters,
               "warmup": r.options.warmup, "reps": r.options.reps, "host_memory": "pinned (cuMemHostAlloc)"}),
    );
    if let (Some(s), Some(c)) = (med(&r.serial), med(&r.concurrent)) {
        m.insert(
            "speedup".into(),
            json!({"serial_median": s, "concurrent_median": c, "serial_over_concurrent": speedup_text(s, c)}),
        );
    }
    m.insert(
        "verification".into(),
        json!({"serial": r.serial.verification, "concurrent": r.concurrent.verification,
               "method": "every output word of every repetition compared with the host's closed-form LCG result; the output was poisoned before each repetition"}),
    );
    m.insert(
        "phases".into(),
        json!("each operation of the instrumented repetition is placed between an event recorded just before and one just after it in its stream: it includes any wait for a copy engine or for SMs"),
    );
    m
}

/// The lab's case file.
pub fn streams_case(r: &StreamsRecord, name: &str) -> RawCase {
    let d = &r.device;
    let mut case = RawCase::new(name);
    case.description = Some(format!(
        "{}lab streams on {}: {} MiB copied in, computed ({} LCG steps per word) and copied out, serial on one stream \
         vs {} chunks over {} streams; events at the joins; one instrumented repetition of each places every operation.",
        if d.simulated { "SIMULATED " } else { "" },
        d.name,
        r.options.words * 4 / (1 << 20),
        r.options.iters,
        r.options.chunks,
        r.options.streams
    ));
    case.provenance = Some(provenance(r));
    case.clocks = vec![
        RawClock {
            id: HOST.into(),
            domain: "host".into(),
            instance: Some(d.host_instance()),
        },
        RawClock {
            id: GPU.into(),
            domain: "device".into(),
            instance: Some(d.event_instance()),
        },
    ];
    case.streams = (0..r.options.streams)
        .map(|s| RawStream {
            id: sid(s),
            clock: GPU.into(),
            device: d.uuid.clone(),
            kind: None,
        })
        .collect();
    pipeline_case("serial", &r.serial, &d.uuid, &mut case);
    pipeline_case("concurrent", &r.concurrent, &d.uuid, &mut case);
    case
}

fn intervals_of(ops: &[&OpRecord]) -> SetAnalysis {
    let list: Vec<Interval> = ops
        .iter()
        .filter_map(|o| Interval::new(o.start, o.end).ok())
        .collect();
    analyze(&list)
}

fn wide(ns: i128) -> String {
    crate::engine::wide(ns)
}

/// The lab's printed report: timings, speedup, verification, and the instrumented run's
/// interval algebra.
pub fn streams_report(r: &StreamsRecord) -> String {
    let mut out = format!("{}\n", timings_table(r));
    if let (Some(s), Some(c)) = (r.serial.median(), r.concurrent.median()) {
        out += &format!(
            "speedup = serial / concurrent = {} / {} = {}{}\n",
            s.median(),
            c.median(),
            speedup_text(s.median(), c.median()),
            if r.serial.verification.valid() && r.concurrent.verification.valid() {
                ""
            } else {
                " — INVALID: an output is wrong, so this speedup does not count"
            }
        );
    }
    out + &algebra_text(r)
}

/// One row per pipeline: runs, the median, P90 and max of the device time, the host
/// completion median, and whether its output verified.
fn timings_table(r: &StreamsRecord) -> Table {
    let mut t = Table::new();
    crate::table::fit(&mut t);
    t.load_preset(ASCII_MARKDOWN).set_header(vec![
        "pipeline",
        "runs",
        "median",
        "P90",
        "max",
        "host completion median",
        "output",
    ]);
    let host_median = |p: &Pipeline| {
        SampleSet::from_runs(&[], &p.host)
            .ok()
            .and_then(|s| Summary::of(&s).ok())
            .map(|s| s.median().to_string())
            .unwrap_or_default()
    };
    for (name, p) in [
        ("serial (1 stream)".to_owned(), &r.serial),
        (
            format!(
                "concurrent ({} streams, {} chunks)",
                r.options.streams, r.options.chunks
            ),
            &r.concurrent,
        ),
    ] {
        let s = p.median();
        let v = &p.verification;
        t.add_row(vec![
            name,
            p.measured.len().to_string(),
            s.map(|s| s.median().to_string()).unwrap_or_default(),
            s.map(|s| s.p90().to_string()).unwrap_or_default(),
            s.map(|s| s.max().to_string()).unwrap_or_default(),
            host_median(p),
            if v.valid() {
                format!("verified ({} words × {} reps)", v.words, v.repetitions)
            } else {
                format!("WRONG: {} mismatches, first {:?}", v.mismatches, v.first)
            },
        ]);
    }
    t
}

/// The instrumented concurrent run's interval algebra per stream, for the copies, the
/// compute and all operations, then the copy/compute overlap and the instrumented totals.
fn algebra_text(r: &StreamsRecord) -> String {
    let d = &r.concurrent.instrumented;
    let mut t = Table::new();
    crate::table::fit(&mut t);
    t.load_preset(ASCII_MARKDOWN).set_header(vec![
        "instrumented concurrent run",
        "ops",
        "busy (sum)",
        "union",
        "span",
        "overlap",
        "gaps",
        "max depth",
    ]);
    let mut row = |name: String, a: SetAnalysis| {
        t.add_row(vec![
            name,
            a.count.to_string(),
            wide(a.sum_ns),
            wide(a.union_ns),
            a.span_ns()
                .map(wide)
                .unwrap_or_else(|| "unknown (empty-set)".into()),
            wide(a.overlap_ns()),
            format!("{} ({})", a.gaps.len(), wide(a.gap_total_ns())),
            a.max_depth.to_string(),
        ]);
    };
    for s in 0..r.options.streams {
        let mine: Vec<&OpRecord> = d.ops.iter().filter(|o| o.stream == s).collect();
        row(format!("stream s{s}"), intervals_of(&mine));
    }
    let copies: Vec<&OpRecord> = d.ops.iter().filter(|o| o.stage != Stage::Compute).collect();
    let compute: Vec<&OpRecord> = d.ops.iter().filter(|o| o.stage == Stage::Compute).collect();
    let all: Vec<&OpRecord> = d.ops.iter().collect();
    let (ac, ak, aa) = (
        intervals_of(&copies),
        intervals_of(&compute),
        intervals_of(&all),
    );
    let both = ac.union_ns + ak.union_ns - aa.union_ns;
    row("copies (in + out)".into(), ac);
    row("compute".into(), ak);
    row("all operations".into(), aa);
    format!(
        "{t}\ncopy/compute overlap = union(copies) + union(compute) − union(all) = {}; instrumented totals: serial {}, concurrent {}\n",
        wide(both),
        diff(r.serial.instrumented.end, r.serial.instrumented.begin),
        diff(d.end, d.begin),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closed_form_agrees_with_the_loop() {
        for iters in [0, 1, 2, 3, 7, 64, 1000, 4097] {
            let (a, c) = lcg_jump(iters);
            for x in [0_u32, 1, 7, 0xdead_beef, u32::MAX] {
                assert_eq!(a.wrapping_mul(x).wrapping_add(c), lcg_iterate(x, iters));
            }
        }
    }

    #[test]
    fn chunks_cover_the_buffer_exactly() {
        for (words, chunks) in [(10, 3), (16, 16), (5, 8), (1 << 20, 16)] {
            let mut next = 0;
            for c in 0..chunks {
                let r = chunk_range(words, chunks, c);
                assert_eq!(r.start, next.min(words));
                next = r.end;
            }
            assert_eq!(next, words);
        }
    }

    #[test]
    fn speedup_is_rounded_to_hundredths() {
        assert_eq!(speedup_text(Nanos::new(157), Nanos::new(100)), "1.57x");
        assert_eq!(speedup_text(Nanos::new(2), Nanos::new(3)), "0.67x");
        assert_eq!(speedup_text(Nanos::new(1), Nanos::ZERO), "-");
    }
}

#[cfg(test)]
mod lab_tests {
    use super::*;
    use crate::capture::sim::{Sim, Tape};
    use crate::case::load_case_str;
    use crate::engine::evaluate;

    fn small() -> StreamsOptions {
        StreamsOptions {
            words: 1 << 12,
            streams: 3,
            chunks: 7,
            iters: 50,
            warmup: 1,
            reps: 3,
            command: "test".into(),
        }
    }

    #[test]
    fn a_simulated_lab_verifies_its_output_and_its_case_loads() {
        let rec = run(&mut Sim::new(), &small()).unwrap();
        assert!(rec.serial.verification.valid());
        assert!(rec.concurrent.verification.valid());
        assert_eq!(rec.serial.verification.repetitions, 5);
        assert_eq!(rec.concurrent.instrumented.ops.len(), 21);
        assert_eq!(rec.concurrent.instrumented.joins.len(), 2);
        let case = load_case_str(&streams_case(&rec, "lab").to_json_pretty(), "lab.json").unwrap();
        let report = evaluate(&case);
        for id in [
            "serial-device-interval",
            "concurrent-device-interval",
            "concurrent-host-completion",
        ] {
            let v = report.answer(id).unwrap().outcome.verdict().unwrap();
            assert!(v.value().is_some(), "{id}: {v}");
        }
        assert!(streams_report(&rec).contains("speedup = serial / concurrent"));
    }

    #[test]
    fn a_wrong_output_makes_the_pipeline_invalid() {
        let mut tape = Tape {
            drop_first_copy_out: true,
            ..Tape::default()
        };
        let rec = run(&mut tape, &small()).unwrap();
        // The first repetition of the serial pipeline never copied its result back.
        assert!(!rec.serial.verification.valid());
        assert_eq!(rec.serial.verification.mismatches, 1 << 12);
        assert!(rec.concurrent.verification.valid());
        assert!(streams_report(&rec).contains("INVALID"));
    }
}
