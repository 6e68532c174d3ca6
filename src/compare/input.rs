//! What `worksheet compare` reads: a case (hand-written, a capture, a lab's case file or an
//! imported trace), a raw trace or a folder of traces (imported in memory, as
//! [`crate::import::input::load_input`] reads them), or a lab executor report, turned into named measurements and the context
//! that must match for two runs to be comparable.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::case::{load_case_str, read_case_text, Case};
use crate::engine::{evaluate, Outcome};
use crate::error::InputError;
use crate::units::Nanos;
use crate::verdict::{Reason, Verdict};

pub use super::measure::{Data, Kind, Metric, Run};

/// Reads BASE or NEW.
///
/// # Errors
/// An [`InputError`] naming the file: unreadable, not JSON, or a file of another kind (with
/// the command to use instead).
pub fn load(path: &Path) -> Result<Run, InputError> {
    let file = path.display().to_string();
    // A folder or a trace is imported in memory, as every command reads one.
    let imported = |path: &Path| -> Result<Run, InputError> {
        let (case, _) = crate::import::input::load_input(path)?;
        Ok(from_case(&case, path.display().to_string()))
    };
    if path.is_dir() || crate::import::input::is_sqlite(path) {
        return imported(path);
    }
    let text = match read_case_text(path) {
        Ok(text) => text,
        Err(e) if e.code == "too-large" => return imported(path),
        Err(e) => return Err(e),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        InputError::new("$", "bad-syntax", format!("not JSON: {e}"))
            .at_line(e.line())
            .in_file(&file)
    })?;
    let format = value.get("format").and_then(Value::as_str).unwrap_or("");
    if format.is_empty() && value.get("traceEvents").is_some() {
        drop(text);
        return imported(path);
    }
    if format == "worksheet-case" {
        let case = load_case_str(&text, &file)?;
        return Ok(from_case(&case, file));
    }
    if format == "worksheet-lab-executor"
        || value.get("lab").and_then(Value::as_str) == Some("executor")
    {
        return from_lab_executor(&value, file);
    }
    let hint = match format {
        "worksheet-form" => {
            "this is a worksheet-form: compare answers runs, not forms (see `worksheet form check`)"
                .to_owned()
        }
        "" => "expected a worksheet case (a capture, a lab's case file, an imported trace) or a `worksheet lab executor --export-json` report".to_owned(),
        other => format!(
            "a `{other}` report is not a run; compare the case files or lab reports it came from"
        ),
    };
    Err(InputError::new("format", "wrong-kind", hint).in_file(&file))
}

fn context_of_case(case: &Case) -> BTreeMap<String, String> {
    let mut ctx = BTreeMap::new();
    let mut domains: Vec<String> = case.clocks.iter().map(|c| c.clock.domain.clone()).collect();
    domains.sort();
    domains.dedup();
    ctx.insert("clock domains".into(), domains.join(", "));
    let Some(prov) = &case.provenance else {
        return ctx;
    };
    if let Some(name) = prov.pointer_str("device/name") {
        ctx.insert("device".into(), name);
    }
    if let Some(Value::Object(devices)) = prov.get("devices") {
        let mut names: Vec<String> = devices
            .values()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        names.sort();
        ctx.insert("devices".into(), names.join(", "));
    }
    if let Some(sim) = prov.get("simulated") {
        ctx.insert("simulated".into(), sim.to_string());
    }
    if let Some(Value::Object(options)) = prov.get("options") {
        // Repetitions change the sample count, not the workload.
        let shown: Vec<String> = options
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "reps" | "runs" | "warmup"))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        ctx.insert("options".into(), shown.join(" "));
    }
    if let Some(tool) = prov.get("tool").and_then(Value::as_str) {
        // The program that measured, without its version: `worksheet 0.1.0` → `worksheet`.
        let name = tool.split_whitespace().next().unwrap_or(tool);
        ctx.insert("tool".into(), name.to_owned());
    }
    for key in [
        "work",
        "passes",
        "threads",
        "reference_digest",
        "importer",
        "kernel",
    ] {
        if let Some(v) = prov.get(key) {
            ctx.insert(
                key.into(),
                v.as_str().map_or_else(|| v.to_string(), str::to_owned),
            );
        }
    }
    ctx
}

trait PointerStr {
    fn pointer_str(&self, path: &str) -> Option<String>;
}

impl PointerStr for serde_json::Map<String, Value> {
    fn pointer_str(&self, path: &str) -> Option<String> {
        let mut parts = path.split('/');
        let mut v = self.get(parts.next()?)?;
        for p in parts {
            v = v.get(p)?;
        }
        v.as_str().map(str::to_owned)
    }
}

fn sorted(mut v: Vec<Nanos>) -> Vec<Nanos> {
    v.sort();
    v
}

/// The measurements of a case: its series (raw samples), its questions (one value each),
/// and its streams' phases grouped by label (kernel instances as samples).
pub fn from_case(case: &Case, file: String) -> Run {
    let mut metrics = Vec::new();
    for s in &case.series {
        metrics.push(Metric {
            group: "boundary",
            name: s.id.clone(),
            data: Data::Samples(sorted(s.measured.clone())),
        });
    }
    let report = evaluate(case);
    for a in &report.answers {
        let group = match a.id.split_once(':') {
            Some(("stream", _)) => "stream",
            Some(("device", _)) => "device",
            _ => "question",
        };
        let data = match &a.outcome {
            Outcome::Duration(v) | Outcome::Difference { verdict: v, .. } => match v {
                Verdict::Known { value, .. } => Data::Single(*value),
                Verdict::Bounded { lo, hi, .. } if lo == hi => Data::Single(*lo),
                // A range across two related clocks is not one value: the comparison of two
                // ranges is not measured (its clocks are those of two instances).
                Verdict::Bounded { lo, hi, .. } => Data::Unknown {
                    reason: Reason::CrossInstance,
                    detail: format!(
                        "bounded [{lo}, {hi}] across related clocks: compare needs one exact value per run"
                    ),
                },
                Verdict::Unknown { reason, detail } => Data::Unknown {
                    reason: *reason,
                    detail: detail.clone(),
                },
            },
            Outcome::Intervals(set) => match (set.combined_unknown, set.single()) {
                (None, Some(analysis)) => match i64::try_from(analysis.union_ns) {
                    Ok(ns) => Data::Single(Nanos::new(ns)),
                    Err(_) => Data::Unknown {
                        reason: Reason::Overflow,
                        detail: "the union does not fit in 64-bit nanoseconds".into(),
                    },
                },
                (reason, _) => Data::Unknown {
                    reason: reason.unwrap_or(Reason::CrossDomain),
                    detail: format!("{} clocks, reported per clock", set.per_clock.len()),
                },
            },
        };
        metrics.push(Metric {
            group,
            name: a.id.clone(),
            data,
        });
    }
    // The steps of a training run, as one sample each (the one-step rows stay as detail).
    let series = super::steps::step_series(&metrics);
    metrics.extend(series);
    let mut kernels: BTreeMap<&str, Vec<Nanos>> = BTreeMap::new();
    let mut phases: Vec<_> = case.phases.iter().filter(|p| p.stream.is_some()).collect();
    phases.sort_by_key(|p| p.interval.start());
    for p in phases {
        if let Ok(len) = i64::try_from(p.interval.length_wide()) {
            kernels.entry(&*p.label).or_default().push(Nanos::new(len));
        }
    }
    // A label seen once per run is a phase, not a repeated kernel: it is already in the
    // questions when it matters. Kernels are rows when a label repeats.
    for (label, durations) in kernels {
        if durations.len() > 1 {
            metrics.push(Metric {
                group: "kernel",
                name: label.to_owned(),
                data: Data::Instances(durations),
            });
        }
    }
    Run {
        file,
        kind: Kind::Case,
        context: context_of_case(case),
        metrics,
    }
}

/// The intervals of the executor lab, as pairs of run fields.
const LAB_INTERVALS: [(&str, &str, &str); 7] = [
    ("submission", "submit_start_ns", "submit_return_ns"),
    ("wait", "wait_start_ns", "result_ready_ns"),
    ("total", "submit_start_ns", "result_ready_ns"),
    ("work", "work_start_ns", "work_end_ns"),
    ("pickup", "submit_start_ns", "work_start_ns"),
    ("handoff", "work_end_ns", "result_ready_ns"),
    ("digest_check", "result_ready_ns", "digest_checked_ns"),
];

fn from_lab_executor(v: &Value, file: String) -> Result<Run, InputError> {
    let bad = |path: String, what: &str| {
        InputError::new(path, "missing-field", what.to_owned()).in_file(&file)
    };
    let runs = v
        .get("runs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("runs".into(), "expected the array of runs"))?;
    let mut samples: Vec<Vec<Nanos>> = vec![Vec::new(); LAB_INTERVALS.len()];
    for (i, r) in runs.iter().enumerate() {
        let measured = r.get("phase").and_then(Value::as_str) == Some("measured");
        let ok = r.get("status").and_then(Value::as_str) == Some("ok")
            && r.get("digest_ok").and_then(Value::as_bool) == Some(true);
        if !(measured && ok) {
            continue;
        }
        for (k, (_, start, stop)) in LAB_INTERVALS.iter().enumerate() {
            let field = |name: &str| {
                r.get(name)
                    .and_then(Value::as_i64)
                    .ok_or_else(|| bad(format!("runs[{i}].{name}"), "expected integer ns"))
            };
            let d = field(stop)? - field(start)?;
            samples[k].push(Nanos::new(d));
        }
    }
    let mut context = BTreeMap::new();
    for (key, ptr) in [
        ("clock domain", "/clock/domain"),
        ("work", "/work"),
        ("threads", "/config/threads"),
        // The work is its pass count (and the digest it implies), not the target it was
        // calibrated for: two runs pinned to the same passes compare at any target.
        ("passes", "/calibration/passes"),
        ("reference digest", "/reference/digest"),
    ] {
        if let Some(x) = v.pointer(ptr) {
            context.insert(
                key.into(),
                x.as_str().map_or_else(|| x.to_string(), str::to_owned),
            );
        }
    }
    let metrics = LAB_INTERVALS
        .iter()
        .zip(samples)
        .map(|((name, _, _), s)| Metric {
            group: "boundary",
            name: (*name).to_owned(),
            data: Data::Samples(sorted(s)),
        })
        .collect();
    Ok(Run {
        file,
        kind: Kind::LabExecutor,
        context,
        metrics,
    })
}
