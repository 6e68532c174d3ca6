//! What the summary says about a Kineto import: the trace's format, the facts (what was read,
//! kept, mapped, left out, with counts), the notes (every assumption, one sentence each), and
//! the case's provenance, which carries both so a later `eval` shows them too.
//!
//! Nothing here changes the case's numbers: it describes what [`super::build`] did, from
//! the same [`Read`] and [`Plan`], and what the builder reports.

use std::collections::{BTreeMap, BTreeSet};

use super::program::Plan;
use super::read::TopLevel;
use super::{device_id, Read, WorkKind, CLOCK_ID};
use crate::case::raw::RawCase;
use crate::import::Imported;

/// What the summary describes.
pub(super) struct About<'a> {
    pub(super) read: &'a Read,
    pub(super) top: &'a TopLevel,
    pub(super) base: Option<i64>,
    pub(super) plan: &'a Plan,
    /// Launches placed in the program (the builder's count).
    pub(super) launches: usize,
    /// The builder's notes (the profiler's final sync).
    pub(super) builder_notes: &'a [String],
    /// GPU activities whose call is not in the trace.
    pub(super) uncorrelated: u64,
    /// The clock's instance.
    pub(super) instance: &'a str,
    /// Devices with GPU work.
    pub(super) work_devices: &'a BTreeSet<i64>,
    /// The GPU activities by kind (`read.work` is freed before the case is built).
    pub(super) work_kinds: WorkKinds,
}

/// How many GPU activities of each kind were read.
#[derive(Clone, Copy)]
pub(super) struct WorkKinds {
    pub(super) kernels: usize,
    pub(super) copies: usize,
    pub(super) sets: usize,
}

impl WorkKinds {
    /// The kinds of `work`, counted.
    pub(super) fn of(work: &[crate::trace::kineto::GpuWork]) -> WorkKinds {
        let of_kind = |kind: WorkKind| work.iter().filter(|w| w.kind == kind).count();
        WorkKinds {
            kernels: of_kind(WorkKind::Kernel),
            copies: of_kind(WorkKind::Memcpy),
            sets: of_kind(WorkKind::Memset),
        }
    }
}

/// The case with its provenance and description, and the summary's facts and notes.
pub(super) fn finish(mut case: RawCase, about: &About) -> Imported {
    let format = format_of(about.read, about.base);
    let facts = facts(about);
    let notes = notes(about);
    case.provenance = Some(provenance(about, &format, &facts, &notes));
    case.description = Some(format!(
        "PyTorch profiler (Kineto) trace imported by `worksheet import` ({format}). GPU kernels, copies and sets are phases in their streams; \
         launches are the API calls with the same correlation, in host-time order; cuda_sync rows of blocking calls are host waits, Stream Wait Event rows stream waits. \
         Questions: intervals per stream, per device and per class of work (compute, communication, memory), and whether the trace's waits cover its work. \
         provenance.notes lists every assumption."
    ));
    Imported {
        case,
        format,
        facts,
        notes,
        work_spans: Vec::new(),
    }
}

/// Which version of the format was read, for people.
fn format_of(read: &Read, base: Option<i64>) -> String {
    let legacy = read.legacy_categories;
    match (base, legacy) {
        (Some(_), _) => "kineto: ts in µs (ns decimals) since baseTimeNanoseconds".to_owned(),
        (None, true) => "kineto 2021: integer Unix µs, capitalised categories".to_owned(),
        (None, false) if read.fractional_ts => "kineto: absolute Unix µs with decimals".to_owned(),
        (None, false) => "kineto: integer absolute Unix µs".to_owned(),
    }
}

/// `3 on a stream; 1 on a device`, or `none`.
fn list(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        "none".to_owned()
    } else {
        m.iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// What was read, kept, mapped and left out, in order.
fn facts(about: &About) -> Vec<(String, String)> {
    let (read, plan) = (about.read, about.plan);
    let WorkKinds {
        kernels,
        copies,
        sets,
    } = about.work_kinds;
    let launches = about.launches;
    let uncorrelated = about.uncorrelated;
    let mut facts: Vec<(String, String)> = vec![
        ("trace events read".into(), read.events.to_string()),
        (
            "GPU activities imported as phases".into(),
            format!("{} ({kernels} kernels, {copies} copies, {sets} sets)", kernels + copies + sets),
        ),
        (
            "GPU activities with no CPU correlation".into(),
            format!("{uncorrelated} (kept in every interval question; HTA drops them; never claimed as launched)"),
        ),
        (
            "gpu_user_annotation ranges".into(),
            format!("{} (phases without a stream, in no question: not work)", read.annotations.len()),
        ),
        ("launches placed in the program".into(), launches.to_string()),
        ("host waits".into(), list(&plan.host_waits)),
        ("stream waits (Stream Wait Event)".into(), plan.stream_waits.to_string()),
        ("sync rows and calls not mapped".into(), list(&plan.not_mapped)),
        ("other events (not imported)".into(), list(&read.ignored)),
    ];
    if read.duplicate_calls > 0 {
        facts.push((
            "API calls sharing a correlation (first kept)".into(),
            read.duplicate_calls.to_string(),
        ));
    }
    if read.rounded > 0 {
        facts.push((
            "values rounded to the nearest ns (--round-sub-ns)".into(),
            read.rounded.to_string(),
        ));
    }
    if plan.order_disagreements > 0 {
        facts.push((
            "launches whose host order disagrees with their stream's GPU order".into(),
            plan.order_disagreements.to_string(),
        ));
    }

    facts
}

/// Assumptions and caveats, one sentence each.
fn notes(about: &About) -> Vec<String> {
    let (read, plan) = (about.read, about.plan);
    let mut notes = vec![
        format!(
            "host and GPU timestamps share one clock `{CLOCK_ID}` (instance `{}`): Kineto converts CUPTI's GPU times to the host's Unix time, an approximation; another rank or process is another instance",
            about.instance
        ),
        "communication = kernels whose name contains `nccl` (HTA: `^nccl.*Kernel`); memory = copies and sets; compute = every other kernel".to_owned(),
        "a completion claim names the last launch of each stream: coverage is a per-stream prefix, so this claims all of the stream's launched work".to_owned(),
    ];
    notes.extend(about.builder_notes.iter().cloned());
    if plan.assumed_device_sync > 0 {
        notes.push(format!(
            "{} cudaDeviceSynchronize call(s) without a cuda_sync row are taken as waits on {}, the only device with GPU work in the trace (the call itself names no device)",
            plan.assumed_device_sync,
            plan.single_device.map_or_else(String::new, device_id)
        ));
    }
    if read.zero_ts_with_base > 0 {
        notes.push(format!(
            "{} GPU event(s) have `ts` 0: Kineto clamps negative relative times to 0, so their start may be an artefact",
            read.zero_ts_with_base
        ));
    }
    if read.rounded > 0 {
        notes.push(format!(
            "{} value(s) had digits below 1 ns and were rounded to the nearest ns (--round-sub-ns)",
            read.rounded
        ));
    }
    notes.extend(rank_note(about.top.distributed_info.as_ref()));
    notes
}

/// A note when `distributedInfo.rank` is there but names no rank of the job: it is not a
/// whole number from 0 below 2^32 (so a multi-rank import reads the trace as unranked), or it
/// is not below `world_size`. The clock's instance still shows the trace's words.
fn rank_note(info: Option<&serde_json::Value>) -> Option<String> {
    let rank = info?.get("rank")?;
    let world = info?.get("world_size").and_then(serde_json::Value::as_u64);
    match (rank.as_u64().filter(|r| u32::try_from(*r).is_ok()), world) {
        (None, _) => {
            let mut shown = rank.to_string();
            if shown.chars().count() > 40 {
                shown = shown.chars().take(40).chain(['…']).collect();
            }
            Some(format!(
                "distributedInfo.rank is {shown}, which is not a rank (a whole number from 0 below 2^32): a multi-rank import reads this trace as having no rank"
            ))
        }
        (Some(r), Some(w)) if r >= w => Some(format!(
            "distributedInfo.rank is {r}, not below distributedInfo.world_size {w}: the trace contradicts itself about its rank"
        )),
        _ => None,
    }
}

/// The case's provenance: the importer, the format, the trace's own metadata, the facts and
/// the notes.
fn provenance(
    about: &About,
    format: &str,
    facts: &[(String, String)],
    notes: &[String],
) -> serde_json::Map<String, serde_json::Value> {
    let (top, base) = (about.top, about.base);
    let mut provenance = serde_json::Map::new();
    provenance.insert("importer".into(), "worksheet import (kineto)".into());
    provenance.insert("trace_format".into(), format.into());
    if let Some(v) = &top.schema_version {
        provenance.insert("schemaVersion".into(), v.clone());
    }
    if let Some(v) = &top.trace_name {
        provenance.insert("traceName".into(), v.clone());
    }
    if let Some(b) = base {
        provenance.insert("baseTimeNanoseconds".into(), b.into());
    }
    if let Some(v) = &top.distributed_info {
        provenance.insert("distributedInfo".into(), v.clone());
    }
    if let Some(names) = device_names(top, about.work_devices) {
        provenance.insert("devices".into(), names);
    }
    provenance.insert(
        "facts".into(),
        serde_json::Value::Object(
            facts
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::from(v.clone())))
                .collect(),
        ),
    );
    provenance.insert("notes".into(), serde_json::Value::from(notes.to_vec()));
    provenance
}

/// `rank R of W, pid P` (or what the trace has of it).
pub(super) fn clock_instance(top: &TopLevel, read: &Read, name: &str) -> String {
    let info = top.distributed_info.as_ref();
    let field = |k: &str| {
        info.and_then(|i| i.get(k))
            .and_then(serde_json::Value::as_i64)
    };
    let pid = read
        .pids
        .iter()
        .max_by_key(|(pid, n)| (**n, std::cmp::Reverse(**pid)))
        .map(|(pid, _)| *pid);
    let mut parts = Vec::new();
    match (field("rank"), field("world_size")) {
        (Some(r), Some(w)) => parts.push(format!("rank {r} of {w}")),
        (Some(r), None) => parts.push(format!("rank {r}")),
        _ => {}
    }
    if let Some(pid) = pid {
        parts.push(format!("pid {pid}"));
    }
    if parts.is_empty() {
        format!("trace {name}")
    } else {
        parts.join(", ")
    }
}

/// `{"gpu0": "NVIDIA A100-PG509-200"}` for the devices with work, from `deviceProperties`.
fn device_names(top: &TopLevel, devices: &BTreeSet<i64>) -> Option<serde_json::Value> {
    let list = top.device_properties.as_ref()?.as_array()?;
    let mut map = serde_json::Map::new();
    for d in list {
        let (Some(id), Some(name)) = (
            d.get("id").and_then(serde_json::Value::as_i64),
            d.get("name").and_then(serde_json::Value::as_str),
        ) else {
            continue;
        };
        if devices.contains(&id) {
            map.insert(device_id(id), name.into());
        }
    }
    (!map.is_empty()).then_some(serde_json::Value::Object(map))
}
