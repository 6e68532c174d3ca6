//! The format-neutral intermediate every trace reader produces, and that one builder
//! ([`super::build`]) turns into a case.
//!
//! A reader (Kineto JSON: `kineto/read*.rs` and `kineto/program.rs`; Nsight Systems SQLite:
//! `nsys/read.rs`, `nsys/join.rs` and `nsys/activities.rs`) interprets its format: which
//! rows are GPU work, which API call launched them, which synchronizations are waits, what
//! they wait for. What it hands over is the same for every format:
//!
//! - **clocks** (one per traced process), **devices** (labels) and **streams** (each on a
//!   clock, on a device, with its kind when the format records one);
//! - **GPU work**: kernels, copies and sets, each a phase in its stream, with the name
//!   that classifies it (communication = kernels whose name contains `nccl`);
//! - **annotations**: ranges that are not work (phases without a stream, in no question);
//! - **events** that the program records and waits on;
//! - the **host program** as steps, each with its place in host time ([`StepKey`]):
//!   launches (work queued when its call returns), event records, stream waits, host
//!   waits (which start when their call starts and return when it returns; a synchronous
//!   copy's implicit wait names its copy).
//!
//! Ids are the reader's (`<kernel>#<correlation>` for Kineto, `kernel-<rowid>` for nsys): they
//! say where a phase came from. The question ids are the builder's, the same for every
//! format: `stream:<stream>`, `device:<device>`, `compute:<device>`,
//! `communication:<device>`, `memory:<device>`, `completion:<what>`.

use crate::case::raw::{RawClock, RawEvent, RawImplicit, RawPhase, RawStreamKind};

/// What a GPU activity does, and its class: the recorded model's own types, so the two views
/// of a trace never classify work differently.
pub use crate::trace::model::{ActivityKind as WorkKind, WorkClass};

/// A stream: its id, clock and device (indices into [`Activities`]), and kind when known.
#[derive(Clone, Debug)]
pub struct Stream {
    /// The case's stream id.
    pub id: String,
    /// Index into [`Activities::clocks`].
    pub clock: usize,
    /// Index into [`Activities::devices`].
    pub device: usize,
    /// The stream's kind, when the format records it.
    pub kind: Option<RawStreamKind>,
}

/// One GPU activity: a phase in its stream.
#[derive(Clone, Debug)]
pub struct Work {
    /// The phase id.
    pub phase: crate::case::raw::PhaseId,
    /// The phase's label for people (shared by the phases labelled alike).
    pub label: crate::case::raw::Label,
    /// Kernel, copy or set.
    pub kind: WorkKind,
    /// Its class (compute, communication, memory).
    pub class: WorkClass,
    /// Index into [`Activities::streams`].
    pub stream: usize,
    /// Start, ns on the stream's clock.
    pub start: i64,
    /// End, ns on the stream's clock.
    pub end: i64,
}

/// What a host wait waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// An event (its id).
    Event(String),
    /// A stream (index into [`Activities::streams`]).
    Stream(usize),
    /// A device (index into [`Activities::devices`]).
    Device(usize),
}

/// One step of the host program.
#[derive(Clone, Debug)]
pub enum Op {
    /// The launch of a GPU activity (index into [`Activities::work`]).
    Launch(usize),
    /// The record of an event (its id).
    Record(String),
    /// A stream (index) waits for an event (id).
    StreamWait {
        /// The waiting stream.
        stream: usize,
        /// The event.
        event: String,
    },
    /// The host waits (boxed: a program is almost all launches, and a step then costs 88
    /// bytes, not the host wait's 152).
    HostWait(Box<HostWait>),
}

/// A host wait of the program.
#[derive(Clone, Debug)]
pub struct HostWait {
    /// The wait's id.
    pub id: String,
    /// What it waits for.
    pub target: Target,
    /// When its call started (ns on the step's clock).
    pub start: i64,
    /// When its call returned.
    pub returned: i64,
    /// A synchronous copy's implicit wait (SPEC §4): why, and the copy (index into the
    /// work).
    pub implicit: Option<(RawImplicit, usize)>,
}

/// A step's place in host time: `(time, rank, call start, tie, tie, tie)`. `time` is the
/// call's end for a submission (launch, record, stream wait: the work is queued once the
/// call returns) and the call's start for a host wait; at equal times submissions (rank 0)
/// come before waits (rank 1); the call's start and the reader's own ties (row ids, event
/// order) make the order deterministic. Steps with equal keys keep the reader's order.
pub type StepKey = (i64, u8, i64, i64, i64, i64);

/// A program step with its place in host time and its clock.
#[derive(Clone, Debug)]
pub struct Step {
    /// Where it goes.
    pub key: StepKey,
    /// Index into [`Activities::clocks`]: the process whose host made the call.
    pub clock: usize,
    /// What it does.
    pub op: Op,
}

/// Everything a reader hands to the builder.
#[derive(Clone, Debug, Default)]
pub struct Activities {
    /// The clocks, one per traced process.
    pub clocks: Vec<RawClock>,
    /// Device labels, in the order their questions are asked.
    pub devices: Vec<String>,
    /// The streams, in declaration (and question) order.
    pub streams: Vec<Stream>,
    /// GPU work, in declaration order (the order of each question's phases).
    pub work: Vec<Work>,
    /// Ranges that are not work: phases without a stream, in no question.
    pub annotations: Vec<RawPhase>,
    /// Events some op records or waits for, declared in this order.
    pub events: Vec<RawEvent>,
    /// The host program, in any order: the builder sorts it by key (stably).
    pub steps: Vec<Step>,
    /// What the last host wait of a clock is, when it is device-wide with nothing launched
    /// after it: `completion:before-final-sync` then asks whether the waits before it
    /// already covered the work.
    pub final_sync: FinalSync,
}

/// Who most likely issued a final device-wide sync (the last host wait of a clock, with
/// nothing launched after it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FinalSync {
    /// The profiler: PyTorch's profiler calls `torch.cuda.synchronize()` when it stops, so
    /// every Kineto trace ends with a wait the script did not issue. The wait is renamed
    /// `final-device-sync` and a note says so.
    Profiler,
    /// Not known (an Nsight Systems capture: the program, a harness or a profiler). The wait
    /// keeps its id; a note names it.
    #[default]
    Unattributed,
}
