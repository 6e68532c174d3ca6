//! What a multi-rank import needs from each rank's trace beyond the single-trace import: the
//! rank, and which kernels are collectives of which process group.
//!
//! The single-trace import ([`crate::import::import_path`]) makes the rank's case; this pass
//! reads the trace once more for the kernels' `args` (`"Collective name"`,
//! `"Process Group Name"`, `correlation`, `device`, `stream`), which the case does not keep,
//! and finds each collective's phase in the case by its correlation and stream. It streams
//! the events as the import's fast path cuts them (never the whole text), and reads the
//! whole text only when that path cannot follow it. The phase's
//! exact times are the case's, so both passes agree to the nanosecond.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::case::raw::{RawCase, RawTime};
use crate::import::{ImportError, MAX_TRACE_BYTES};
use crate::relation::collectives::Instance;
use crate::trace::model::{ActivityKind, CollectiveArgs, Trace};
use crate::units::{parse_value, Nanos};

/// One collective kernel of one rank, placed on the rank's clock.
#[derive(Clone, Debug)]
pub struct Collective {
    /// Process group, name and exact times.
    pub instance: Instance,
    /// The phase id in the rank's case (before the rank prefix).
    pub phase: String,
}

/// What the multi-rank import needs of one trace beyond its case.
#[derive(Clone, Debug, Default)]
pub struct RankFacts {
    /// `distributedInfo.rank`, when the trace says.
    pub rank: Option<u32>,
    /// `distributedInfo.world_size`, when the trace says.
    pub world_size: Option<u32>,
    /// Collective kernels with a process group name, in trace order.
    pub collectives: Vec<Collective>,
    /// NCCL kernels without `"Process Group Name"` / `"Collective name"` in their args.
    pub without_group: usize,
    /// Point-to-point kernels (send / recv), left out: only two peers take part in each.
    pub point_to_point: usize,
    /// NCCL kernels whose phase was not found in the case (no correlation, or skipped).
    pub without_phase: usize,
    /// The names of the NCCL kernels without a group, a few of them, for the message.
    pub ungrouped_names: Vec<String>,
    /// Host `ProfilerStep#N` durations (ns, from the trace's µs `dur`, rounded): the step time
    /// the straggler finding weighs a delay against.
    pub steps_ns: Vec<i64>,
}

#[derive(Deserialize)]
struct Top<'a> {
    #[serde(rename = "traceEvents", borrow, default)]
    trace_events: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct Ev<'a> {
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    args: Option<KernelArgs>,
    #[serde(default)]
    dur: Option<f64>,
}

#[derive(Deserialize)]
struct KernelArgs {
    #[serde(default)]
    correlation: Option<i64>,
    #[serde(default)]
    device: Option<i64>,
    #[serde(default)]
    stream: Option<i64>,
    #[serde(rename = "Collective name", default)]
    collective: Option<String>,
    #[serde(rename = "Process Group Name", default)]
    group: Option<String>,
}

/// The trace's text, gunzipped, with the single-trace import's size cap.
fn text_of(path: &Path) -> Result<String, ImportError> {
    let file = path.display().to_string();
    let io = |e: std::io::Error| {
        ImportError::new("$", "io", format!("cannot read the file: {e}")).in_file(&file)
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_TRACE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let bytes = if crate::case::is_gzip(&bytes) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .take(MAX_TRACE_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(io)?;
        out
    } else {
        bytes
    };
    if bytes.len() as u64 > MAX_TRACE_BYTES {
        return Err(ImportError::new(
            "$",
            "too-large",
            format!("the trace text is larger than {MAX_TRACE_BYTES} bytes"),
        )
        .in_file(&file));
    }
    String::from_utf8(bytes).map_err(|e| {
        ImportError::new("$", "bad-syntax", format!("the trace is not UTF-8 ({e})")).in_file(&file)
    })
}

fn time(t: &RawTime) -> Option<Nanos> {
    match t {
        RawTime::Text(text) => parse_value(text).ok(),
        RawTime::Exact(value) => Some(*value),
        RawTime::Number(_) => None,
    }
}

/// The correlation a Kineto phase id carries: `name#232` or `name#232.2` → 232.
fn correlation_of(phase_id: &str) -> Option<i64> {
    let (_, tail) = phase_id.rsplit_once('#')?;
    tail.split('.').next()?.parse().ok()
}

/// Reads `path` again for its collectives and finds them in `case` (the rank's imported case).
///
/// # Errors
/// The file cannot be read again, or is not a JSON object with `traceEvents` (the
/// single-trace import has accepted it, so this means it changed in between).
pub fn rank_facts(path: &Path, case: &RawCase) -> Result<RankFacts, ImportError> {
    let mut facts = distributed_info(case);
    let phase_by_corr = phases_by_correlation(case);
    // The events streamed, as the import's fast path cuts them; else the whole text.
    let streamed = {
        let mut streamed = RankFacts {
            rank: facts.rank,
            world_size: facts.world_size,
            ..RankFacts::default()
        };
        stream_events(path, |event| {
            if let Ok(ev) = serde_json::from_slice::<Ev<'_>>(event) {
                tally(&mut streamed, ev, &phase_by_corr);
            }
        })?
        .map(|()| streamed)
    };
    if let Some(streamed) = streamed {
        return Ok(streamed);
    }
    let text = text_of(path)?;
    let file = path.display().to_string();
    let top: Top<'_> = serde_json::from_str(&text)
        .map_err(|e| ImportError::new("traceEvents", "bad-syntax", e.to_string()).in_file(&file))?;
    for raw in top.trace_events {
        if let Ok(ev) = serde_json::from_str::<Ev<'_>>(raw.get()) {
            tally(&mut facts, ev, &phase_by_corr);
        }
    }
    Ok(facts)
}

/// What the multi-rank import needs of one rank, from the recorded model the rank's import
/// pass gathered ([`Trace`]): the file is not read again. The same facts as [`rank_facts`]
/// (`every_rank_reads_the_same_from_the_model_and_from_the_file`), with the steps of every
/// category the audit reads as `ProfilerStep#N` (exact ns).
pub fn rank_facts_recorded(trace: &Trace, case: &RawCase) -> RankFacts {
    let mut facts = distributed_info(case);
    let phase_by_corr = phases_by_correlation(case);
    facts.steps_ns = trace.steps.iter().map(|s| s.end - s.start).collect();
    for act in &trace.activities {
        if act.kind != ActivityKind::Kernel || !act.name.to_ascii_lowercase().contains("nccl") {
            continue;
        }
        let stream = format!("gpu{}-s{}", act.device, act.stream);
        count_collective(
            &mut facts,
            &act.name,
            act.collective.clone(),
            act.correlation,
            Some(stream),
            &phase_by_corr,
        );
    }
    facts
}

/// The rank and world size the case's provenance keeps from `distributedInfo`.
fn distributed_info(case: &RawCase) -> RankFacts {
    let mut facts = RankFacts::default();
    if let Some(info) = case
        .provenance
        .as_ref()
        .and_then(|p| p.get("distributedInfo"))
    {
        let num = |k: &str| {
            info.get(k)
                .and_then(serde_json::Value::as_u64)
                .and_then(|v| u32::try_from(v).ok())
        };
        facts.rank = num("rank");
        facts.world_size = num("world_size");
    }
    facts
}

/// The rank's phases by (correlation, stream).
fn phases_by_correlation(case: &RawCase) -> PhaseByCorrelation<'_> {
    case.phases
        .iter()
        .filter_map(|p| Some(((correlation_of(&p.id)?, p.stream.as_deref()?), p)))
        .collect()
}

/// The rank's phases by (correlation, stream).
type PhaseByCorrelation<'c> =
    std::collections::HashMap<(i64, &'c str), &'c crate::case::raw::RawPhase>;

/// Streams the events of the trace at `path` to `each` ([`kineto::for_each_event`]);
/// `Ok(None)` when that cannot follow the text.
fn stream_events(path: &Path, each: impl FnMut(&[u8])) -> Result<Option<()>, ImportError> {
    let (handle, head) = crate::import::open_with_head(path)?;
    let text = crate::trace::source::open(head, handle, MAX_TRACE_BYTES);
    Ok(crate::trace::kineto::for_each_event(text, each))
}

/// Counts one event into `facts`: an NCCL kernel's collective, found in the case.
fn tally(facts: &mut RankFacts, ev: Ev<'_>, phase_by_corr: &PhaseByCorrelation<'_>) {
    if ev.cat.as_deref() == Some("user_annotation")
        && ev
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with("ProfilerStep#"))
    {
        if let Some(d) = ev.dur.filter(|d| d.is_finite() && *d >= 0.0 && *d < 1e12) {
            // µs with ns digits; rounded to ns (a threshold's input, not a printed figure).
            #[allow(clippy::cast_possible_truncation)]
            facts.steps_ns.push((d * 1000.0).round() as i64);
        }
        return;
    }
    let is_nccl_kernel = ev
        .cat
        .as_deref()
        .is_some_and(|c| c.eq_ignore_ascii_case("kernel"))
        && ev
            .name
            .as_deref()
            .is_some_and(|n| n.to_ascii_lowercase().contains("nccl"));
    if !is_nccl_kernel {
        return;
    }
    let name = ev.name.as_deref().unwrap_or("?");
    let Some(args) = ev.args else {
        facts.without_group += 1;
        return;
    };
    let stream = match (args.device, args.stream) {
        (Some(d), Some(s)) => Some(format!("gpu{d}-s{s}")),
        _ => None,
    };
    let collective = CollectiveArgs::of(args.group, args.collective);
    count_collective(
        facts,
        name,
        collective,
        args.correlation,
        stream,
        phase_by_corr,
    );
}

/// Counts one NCCL kernel named `kernel` into `facts`: its collective found in the case by
/// its correlation and stream, or why not.
fn count_collective(
    facts: &mut RankFacts,
    kernel: &str,
    collective: Option<Box<CollectiveArgs>>,
    correlation: Option<i64>,
    stream: Option<String>,
    phase_by_corr: &PhaseByCorrelation<'_>,
) {
    let Some(collective) = collective else {
        facts.without_group += 1;
        if facts.ungrouped_names.len() < 3 {
            let short = kernel.split('(').next().unwrap_or(kernel).to_owned();
            if !facts.ungrouped_names.contains(&short) {
                facts.ungrouped_names.push(short);
            }
        }
        return;
    };
    let CollectiveArgs { group, name } = *collective;
    let lower = name.to_ascii_lowercase();
    if lower.contains("send") || lower.contains("recv") {
        facts.point_to_point += 1;
        return;
    }
    let Some(stream) = stream else {
        facts.without_phase += 1;
        return;
    };
    let found = correlation
        .and_then(|c| phase_by_corr.get(&(c, stream.as_str())))
        .and_then(|p| Some((p.id.to_string(), time(&p.start)?, time(&p.end)?)));
    match found {
        Some((phase, start, end)) => facts.collectives.push(Collective {
            instance: Instance {
                group,
                name,
                start,
                end,
            },
            phase,
        }),
        None => facts.without_phase += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events streamed are exactly the elements of `traceEvents` read whole, on the
    /// multi-rank traces the project keeps.
    #[test]
    fn streamed_events_are_the_whole_texts_elements() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let mut files = 0;
        for dir in ["ranks", "ranks-sync", "traces"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if !path.to_string_lossy().ends_with(".json.gz") {
                    continue;
                }
                let text = text_of(&path).unwrap();
                let top: Top<'_> = serde_json::from_str(&text).unwrap();
                let whole: Vec<&str> = top.trace_events.iter().map(|r| r.get()).collect();
                let mut streamed = Vec::new();
                let done = stream_events(&path, |e| {
                    streamed.push(String::from_utf8(e.to_vec()).unwrap());
                })
                .unwrap();
                assert_eq!(done, Some(()), "{}", path.display());
                assert_eq!(streamed, whole, "{}", path.display());
                files += 1;
            }
        }
        assert!(files >= 10, "{files} files");
    }

    /// The facts from the import pass's recorded model equal the facts read from the file
    /// again, on every Kineto trace the project keeps (steps, collectives, counts).
    #[test]
    fn every_rank_reads_the_same_from_the_model_and_from_the_file() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let options = crate::import::ImportOptions::default();
        let mut collectives = 0;
        for dir in ["ranks", "ranks-sync", "traces"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if !path.to_string_lossy().ends_with(".json.gz") {
                    continue;
                }
                let (imported, trace) =
                    crate::import::import_path_with(&path, &options, true).unwrap();
                let trace = trace.unwrap().unwrap();
                let again = rank_facts(&path, &imported.case).unwrap();
                let once = rank_facts_recorded(&trace, &imported.case);
                let show = |f: &RankFacts| {
                    let c: Vec<_> = f
                        .collectives
                        .iter()
                        .map(|c| {
                            (
                                c.phase.clone(),
                                c.instance.group.clone(),
                                c.instance.name.clone(),
                                c.instance.start,
                                c.instance.end,
                            )
                        })
                        .collect();
                    format!(
                        "{:?} {:?} {c:?} {} {} {} {:?} {:?}",
                        f.rank,
                        f.world_size,
                        f.without_group,
                        f.point_to_point,
                        f.without_phase,
                        f.ungrouped_names,
                        f.steps_ns
                    )
                };
                // The one deliberate difference: the second pass took only `user_annotation`
                // steps, the recorded model also the `cpu_op` `ProfilerStep#N` of 2021 traces.
                if !again.steps_ns.is_empty() {
                    assert_eq!(show(&once), show(&again), "{}", path.display());
                } else {
                    let mut once = once.clone();
                    once.steps_ns.clear();
                    assert_eq!(show(&once), show(&again), "{}", path.display());
                }
                collectives += once.collectives.len();
            }
        }
        assert!(collectives > 50, "{collectives} collectives");
    }

    #[test]
    fn correlations_are_read_from_phase_ids() {
        assert_eq!(correlation_of("ncclDevKernel_AllReduce#232"), Some(232));
        assert_eq!(correlation_of("x#232.2"), Some(232));
        assert_eq!(correlation_of("x#u7"), None);
        assert_eq!(correlation_of("annotation-1:x"), None);
    }
}
