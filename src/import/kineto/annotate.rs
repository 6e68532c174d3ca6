//! What the audit learned, added to the case `import` writes from the same trace: the stream
//! pairs whose joins the trace did not record, and each `ProfilerStep#N` as questions.

use std::collections::{HashMap, HashSet};

use crate::audit::index::Index;
use crate::audit::Audit;
use crate::case::raw::{RawCase, RawMark, RawQuestion, RawTime, RawUnrecordedJoin};
use crate::trace::model::{CallRole, Trace};
use crate::units::{parse_value, Nanos};

/// Adds what the audit learned to the case `import` writes from the same trace: the stream
/// pairs whose joins the trace did not record (`unrecorded_joins`, so cross-stream questions
/// answer `dependency-unrecorded`), and each step as questions: `step:<name>:host` (elapsed
/// time between the marks `step:<name>:start` and `step:<name>:end`) and
/// `step:<name>:launched` (the interval algebra of the work launched in the step).
pub fn annotate_case(case: &mut RawCase, trace: &Trace, audit: &Audit) {
    let declared: HashSet<&str> = case.streams.iter().map(|s| s.id.as_str()).collect();
    let waits = trace
        .calls
        .iter()
        .filter(|c| CallRole::of(&c.name) == CallRole::StreamWait && !c.sync_recorded)
        .count();
    let mut joins = Vec::new();
    for (a, b) in &audit.unrecorded_pairs {
        let (a, b) = (super::stream_id(*a), super::stream_id(*b));
        if declared.contains(a.as_str()) && declared.contains(b.as_str()) {
            joins.push(RawUnrecordedJoin {
                streams: vec![a, b],
                why: Some(format!(
                    "{waits} cudaStreamWaitEvent call(s) without cuda_sync rows: the trace does not say which streams they join"
                )),
            });
        }
    }
    case.unrecorded_joins = joins;

    // Phase ids by (stream, start, end), to name the work launched in each step.
    let mut phase_of: HashMap<(String, i64, i64), Vec<String>> = HashMap::new();
    for p in &case.phases {
        let (Some(stream), RawTime::Text(s), RawTime::Text(e)) = (&p.stream, &p.start, &p.end)
        else {
            continue;
        };
        if let (Ok(s), Ok(e)) = (parse_value(s), parse_value(e)) {
            phase_of
                .entry((stream.clone(), s.as_i64(), e.as_i64()))
                .or_default()
                .push(p.id.clone());
        }
    }
    let index = Index::new(trace);
    let mut seen = HashSet::new();
    for step in &trace.steps {
        if !seen.insert(step.name.clone()) {
            continue;
        }
        let mark = |end: &str, at: i64| RawMark {
            id: format!("step:{}:{end}", step.name),
            clock: super::CLOCK_ID.into(),
            at: RawTime::from(Nanos::new(at)),
        };
        case.marks.push(mark("start", step.start));
        case.marks.push(mark("end", step.end));
        case.questions.push(RawQuestion::Elapsed {
            id: format!("step:{}:host", step.name),
            from: format!("step:{}:start", step.name),
            to: format!("step:{}:end", step.name),
            expect: None,
        });
        let mut phases: Vec<String> = Vec::new();
        for (a, call) in index.launch.iter().enumerate() {
            let Some(call) = call else { continue };
            let t = trace.calls[*call].start;
            if t < step.start || t >= step.end {
                continue;
            }
            let act = &trace.activities[a];
            let key = (
                super::stream_id((act.device, act.stream)),
                act.start,
                act.end,
            );
            if let Some(ids) = phase_of.get(&key) {
                phases.extend(ids.iter().cloned());
            }
        }
        phases.sort();
        phases.dedup();
        if !phases.is_empty() {
            case.questions.push(RawQuestion::Intervals {
                id: format!("step:{}:launched", step.name),
                phases: Some(phases),
                expect: None,
            });
        }
    }
}
