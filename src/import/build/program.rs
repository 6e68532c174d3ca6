//! The host program of an imported case: the reader's steps in host-time order, with the
//! timers and claims of the completion questions.
//!
//! Steps are sorted once, stably, by their key ([`StepKey`]). Per clock (process) that
//! launches work, the `all-work` timer starts at the first API call of that process and
//! stops right after its last host wait, when the last of its waits has returned. When that
//! wait is device-wide and nothing is launched after it, `before-final-sync` stops where it
//! starts ([`FinalSync`]: a profiler's is renamed `final-device-sync`).
//!
//! [`StepKey`]: crate::import::activity::StepKey

use std::collections::BTreeMap;

use super::ns;
use crate::case::raw::{PhaseId, RawClock, RawHostWait, RawOp, RawQuestion};
use crate::import::activity::{FinalSync, HostWait, Op, Step, Stream, Target, Work};

/// What the program refers to.
pub(super) struct Context<'a> {
    pub(super) clocks: &'a [RawClock],
    pub(super) devices: &'a [String],
    pub(super) streams: &'a [Stream],
    pub(super) work: &'a [Work],
}

/// The program, its completion questions, and what the summary says about them.
pub(super) struct Placed {
    pub(super) program: Vec<RawOp>,
    pub(super) completion: Vec<RawQuestion>,
    pub(super) launches: usize,
    pub(super) notes: Vec<String>,
}

/// The timers of one clock: where they start, stop, and what they claim.
struct Timers {
    clock: usize,
    /// `-<clock id>` when several clocks have timers, else empty.
    suffix: String,
    t0: i64,
    /// Position after which `all-work` stops, and when.
    stop_all: (usize, i64),
    /// Position of the final sync (`before-final-sync` stops where it starts).
    final_sync: Option<usize>,
}

/// Sorts `steps` and makes the program, the timers and the completion questions.
pub(super) fn place(c: &Context, mut steps: Vec<Step>, final_sync: FinalSync) -> Placed {
    steps.sort_by_key(|s| s.key);
    let with_timers: Vec<usize> = (0..c.clocks.len())
        .filter(|&k| {
            steps
                .iter()
                .any(|s| s.clock == k && matches!(s.op, Op::Launch(_)))
        })
        .collect();
    let several = with_timers.len() > 1;
    let suffix = |k: usize| {
        if several {
            format!("-{}", c.clocks[k].id)
        } else {
            String::new()
        }
    };
    let mut notes = Vec::new();
    // A final sync is marked on every clock, also one that launches nothing.
    let final_syncs: Vec<Option<usize>> = (0..c.clocks.len())
        .map(|k| {
            let who = (final_sync, c.clocks[k].id.as_str());
            mark_final_sync(&mut steps, k, &suffix(k), who, &mut notes)
        })
        .collect();
    let timers: Vec<Timers> = with_timers
        .iter()
        .map(|&k| timers_of(&steps, k, suffix(k), final_syncs[k]))
        .collect();
    let mut program: Vec<RawOp> = Vec::with_capacity(steps.len() + 4 * timers.len());
    for t in &timers {
        let clock = &c.clocks[t.clock].id;
        program.push(timer_op(
            true,
            &format!("all-work{}", t.suffix),
            clock,
            t.t0,
        ));
        if t.final_sync.is_some() {
            let timer = format!("before-final-sync{}", t.suffix);
            program.push(timer_op(true, &timer, clock, t.t0));
        }
    }
    for (i, step) in steps.iter().enumerate() {
        for t in timers.iter().filter(|t| t.final_sync == Some(i)) {
            if let Op::HostWait(wait) = &step.op {
                let start = wait.start;
                let timer = format!("before-final-sync{}", t.suffix);
                program.push(timer_op(false, &timer, &c.clocks[t.clock].id, start));
            }
        }
        program.push(op_of(c, step));
        for t in timers.iter().filter(|t| t.stop_all.0 == i) {
            let timer = format!("all-work{}", t.suffix);
            program.push(timer_op(false, &timer, &c.clocks[t.clock].id, t.stop_all.1));
        }
    }
    Placed {
        completion: completion_questions(c, &steps, &timers),
        launches: steps
            .iter()
            .filter(|s| matches!(s.op, Op::Launch(_)))
            .count(),
        program,
        notes,
    }
}

/// The timers of clock `k` over the sorted `steps`: `all-work` starts at the first API call
/// of the clock and stops after its last host wait (its last step when it has none), when
/// the last of its waits returned.
fn timers_of(steps: &[Step], k: usize, suffix: String, final_sync: Option<usize>) -> Timers {
    let mine = || steps.iter().enumerate().filter(|(_, s)| s.clock == k);
    // Every step carries the start of its API call: the first is the process's start.
    let t0 = mine().map(|(_, s)| s.key.2).min().unwrap_or(0);
    let last_wait = mine()
        .filter(|(_, s)| matches!(s.op, Op::HostWait(_)))
        .map(|(i, _)| i)
        .next_back();
    let last = mine().next_back().map(|(i, s)| (i, s.key.0));
    let max_return = mine()
        .filter_map(|(_, s)| match &s.op {
            Op::HostWait(wait) => Some(wait.returned),
            _ => None,
        })
        .max();
    let stop_after = last_wait.or(last.map(|l| l.0)).unwrap_or(0);
    let at = max_return.unwrap_or(last.map_or(t0, |l| l.1)).max(t0);
    Timers {
        clock: k,
        suffix,
        t0,
        stop_all: (stop_after, at),
        final_sync,
    }
}

/// The last host wait of clock `k` (id `who.1`), when it is device-wide and the clock
/// launches nothing after it: a profiler's is renamed `final-device-sync`; either way a note
/// names it.
fn mark_final_sync(
    steps: &mut [Step],
    k: usize,
    suffix: &str,
    who: (FinalSync, &str),
    notes: &mut Vec<String>,
) -> Option<usize> {
    let i = steps
        .iter()
        .rposition(|s| s.clock == k && matches!(s.op, Op::HostWait(_)))?;
    let launched_after = steps[i..]
        .iter()
        .any(|s| s.clock == k && matches!(s.op, Op::Launch(_)));
    match &mut steps[i].op {
        Op::HostWait(wait) if matches!(wait.target, Target::Device(_)) && !launched_after => {
            let id = &mut wait.id;
            match who.0 {
                FinalSync::Profiler => {
                    let new = format!("final-device-sync{suffix}");
                    notes.push(format!(
                        "`{new}` (was `{id}`) is the trace's last wait, device-wide, with nothing launched after it: most likely the PyTorch profiler's own synchronize when it stops, not the script's"
                    ));
                    *id = new;
                }
                FinalSync::Unattributed => notes.push(format!(
                    "`{id}` is the last wait of `{}`, device-wide, with nothing launched after it: `completion:before-final-sync{suffix}` asks whether the waits before it already covered the work (a final synchronize may be a harness's or a profiler's rather than the program's own)",
                    who.1
                )),
            }
            Some(i)
        }
        _ => None,
    }
}

/// The completion questions of each clock's timers.
fn completion_questions(c: &Context, steps: &[Step], timers: &[Timers]) -> Vec<RawQuestion> {
    let mut questions = Vec::new();
    for t in timers {
        // All launched work is claimed, also work launched after the last wait (then the
        // claim is honestly not covered).
        let timer = format!("all-work{}", t.suffix);
        questions.push(RawQuestion::HostCompletion {
            id: format!("completion:{timer}"),
            work: Some(last_launches(c, steps, t.clock)),
            timer,
            expect: None,
        });
        if let Some(upto) = t.final_sync {
            let timer = format!("before-final-sync{}", t.suffix);
            questions.push(RawQuestion::HostCompletion {
                id: format!("completion:{timer}"),
                work: Some(last_launches(c, &steps[..upto], t.clock)),
                timer,
                expect: None,
            });
        }
    }
    questions
}

/// The last launch of each stream among the `steps` of clock `k`, in stream order.
fn last_launches(c: &Context, steps: &[Step], k: usize) -> Vec<PhaseId> {
    let mut last: BTreeMap<usize, usize> = BTreeMap::new();
    for s in steps.iter().filter(|s| s.clock == k) {
        if let Op::Launch(w) = s.op {
            last.insert(c.work[w].stream, w);
        }
    }
    last.values().map(|&w| c.work[w].phase.clone()).collect()
}

/// Starts (`start`) or stops `timer` on `clock` at `at`.
fn timer_op(start: bool, timer: &str, clock: &str, at: i64) -> RawOp {
    let (timer, clock, at) = (timer.into(), clock.into(), ns(at));
    if start {
        RawOp::TimerStart { timer, clock, at }
    } else {
        RawOp::TimerStop { timer, clock, at }
    }
}

/// The case's op of one step.
fn op_of(c: &Context, step: &Step) -> RawOp {
    let stream_id = |s: usize| c.streams[s].id.clone();
    match &step.op {
        Op::Launch(w) => RawOp::Launch {
            phase: c.work[*w].phase.clone(),
        },
        Op::Record(event) => RawOp::Record {
            event: event.clone(),
        },
        Op::StreamWait { stream, event } => RawOp::StreamWait {
            stream: stream_id(*stream),
            event: event.clone(),
        },
        Op::HostWait(wait) => {
            let HostWait {
                id,
                target,
                returned,
                implicit,
                ..
            } = &**wait;
            let (event, stream, device) = match target {
                Target::Event(e) => (Some(e.clone()), None, None),
                Target::Stream(s) => (None, Some(stream_id(*s)), None),
                Target::Device(d) => (None, None, Some(c.devices[*d].clone())),
            };
            RawOp::HostWait(Box::new(RawHostWait {
                id: id.clone(),
                event,
                stream,
                device,
                clock: Some(c.clocks[step.clock].id.clone()),
                at: Some(ns(*returned)),
                implicit: implicit.map(|(kind, _)| kind),
                copy: implicit.map(|(_, w)| c.work[w].phase.to_string()),
            }))
        }
    }
}
