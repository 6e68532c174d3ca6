//! `worksheet compare BASE NEW`: is NEW faster, slower or the same as BASE, and how sure is
//! that?
//!
//! Each measurement both runs share becomes a row with a verdict: `same`, `faster`,
//! `slower` or `ambiguous`, the relative change of the medians and the noise that decided it
//! (the rule, modelled on nvbench_compare, is in [`stats::decide`]). Raw samples get a
//! seeded bootstrap interval of the median ratio; one value per run gets `same` only when
//! the two are exactly equal, since nothing measures its noise. A run whose own answer is
//! unknown gives an unknown row with that reason. Two runs of different devices, clocks,
//! workloads or configurations give one row, `unknown (incomparable)`, with the difference,
//! and no number. The command returns a [`Comparison`]; `cmd/compare.rs` prints it and maps
//! `--fail-on` to the exit code.

pub mod impact;
pub mod input;
pub mod measure;
pub mod render;
pub mod stats;
pub mod steps;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::error::InputError;
use crate::units::Nanos;
use crate::verdict::Reason;
use input::{Data, Metric, Run};
use stats::{Call, Interval, Ratio};

/// The format name of the JSON report.
pub const FORMAT: &str = "worksheet-compare";
/// The version of the JSON report (see CONTRIBUTING: a version changes when a field is
/// removed, renamed or changes meaning).
pub const VERSION: u32 = 1;
/// The default threshold: 5 % (50 000 ppm).
pub const DEFAULT_THRESHOLD_PPM: i64 = 50_000;

/// A row's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowVerdict {
    /// No change beyond the threshold, with noise below it.
    Same,
    /// NEW is shorter by more than the threshold, beyond the noise.
    Faster,
    /// NEW is longer by more than the threshold, beyond the noise.
    Slower,
    /// The change is inside the noise, or the noise is above the threshold.
    Ambiguous,
    /// No comparison: a run's own answer is unknown, or the runs are incomparable.
    Unknown,
    /// Only in NEW.
    New,
    /// Only in BASE.
    Gone,
}

impl RowVerdict {
    /// The verdict seen from the other side (`compare(B, A)`).
    pub fn mirror(self) -> RowVerdict {
        match self {
            RowVerdict::Faster => RowVerdict::Slower,
            RowVerdict::Slower => RowVerdict::Faster,
            RowVerdict::New => RowVerdict::Gone,
            RowVerdict::Gone => RowVerdict::New,
            other => other,
        }
    }

    /// The word printed.
    pub fn word(self) -> &'static str {
        match self {
            RowVerdict::Same => "same",
            RowVerdict::Faster => "faster",
            RowVerdict::Slower => "slower",
            RowVerdict::Ambiguous => "ambiguous",
            RowVerdict::Unknown => "unknown",
            RowVerdict::New => "new",
            RowVerdict::Gone => "gone",
        }
    }
}

/// One side's summary in a row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Side {
    /// Number of values (samples, or 1).
    pub count: usize,
    /// Median (nearest rank, lower), exact ns; `None` when the answer is unknown.
    pub median_ns: Option<i64>,
    /// The median for people.
    pub median: Option<String>,
    /// Sum of the values, exact ns (a kernel's total time).
    pub total_ns: Option<i64>,
    /// The run's own reason when its answer is unknown.
    pub unknown: Option<Reason>,
}

/// How a row was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// A seeded bootstrap interval of the median ratio.
    Bootstrap,
    /// Too few samples for a bootstrap: only ranges that do not overlap decide.
    Ranges,
    /// One value per run.
    Single,
    /// Nothing measured (unknown, new, gone).
    None,
}

/// One compared measurement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// `boundary`, `question`, `stream`, `device`, `kernel`, or `run` for a whole-run row.
    pub group: String,
    /// The measurement's name.
    pub name: String,
    /// The verdict.
    pub verdict: RowVerdict,
    /// The reason code when the verdict is unknown.
    pub reason: Option<Reason>,
    /// BASE's summary.
    pub base: Option<Side>,
    /// NEW's summary.
    pub new: Option<Side>,
    /// How it was decided.
    pub method: Method,
    /// `median(new) / median(base) − 1` in ppm (rounded to 1 ppm).
    pub change_ppm: Option<i64>,
    /// The change for people (`+100.0 %`).
    pub change: Option<String>,
    /// The 95 % interval of the median ratio, each end in ppm of the ratio (1 000 000 = no change).
    pub interval_ppm: Option<[i64; 2]>,
    /// The noise, `max(high / r, r / low) − 1`, in ppm.
    pub noise_ppm: Option<i64>,
    /// The noise for people (`±2.1 %`).
    pub noise: Option<String>,
    /// Why this verdict, in words.
    pub why: String,
    /// `|total(NEW) − total(BASE)|`, exact ns: the time the row gained or lost in all, which
    /// the rows are sorted by ([`impact`]); `None` when a side is unknown.
    pub impact_ns: Option<i64>,
}

/// Options of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The threshold in ppm (50 000 = 5 %).
    pub threshold_ppm: i64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threshold_ppm: DEFAULT_THRESHOLD_PPM,
        }
    }
}

/// When `--fail-on` makes the exit code 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    /// A row is slower.
    Slower,
    /// A row is slower, ambiguous or unknown.
    Ambiguous,
    /// A row is anything but same.
    Any,
}

/// The whole comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// `worksheet-compare`.
    pub format: &'static str,
    /// The report version.
    pub version: u32,
    /// BASE as named.
    pub base: String,
    /// NEW as named.
    pub new: String,
    /// The threshold in ppm.
    pub threshold_ppm: i64,
    /// The threshold for people.
    pub threshold: String,
    /// How intervals were computed.
    pub method: String,
    /// Every row.
    pub rows: Vec<Row>,
    /// Rows per verdict.
    pub counts: BTreeMap<&'static str, usize>,
    /// The steps' verdicts and the few kernel rows that explain most of the difference
    /// ([`impact::headline`]); `None` when there are neither.
    pub headline: Option<impact::Headline>,
}

impl Comparison {
    /// Whether a row matches `fail_on`.
    pub fn fails(&self, fail_on: FailOn) -> bool {
        self.rows.iter().any(|r| match fail_on {
            FailOn::Slower => r.verdict == RowVerdict::Slower,
            FailOn::Ambiguous => matches!(
                r.verdict,
                RowVerdict::Slower | RowVerdict::Ambiguous | RowVerdict::Unknown
            ),
            FailOn::Any => r.verdict != RowVerdict::Same,
        })
    }
}

/// Parses a threshold such as `5`, `2.5` or `5%` (a percentage) into ppm, exactly.
///
/// # Errors
/// A message when the text is not a non-negative decimal with at most 4 decimals.
pub fn parse_threshold(text: &str) -> Result<i64, String> {
    let t = text.trim().trim_end_matches('%').trim();
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !(frac.is_empty() || digits(frac)) || frac.len() > 4 {
        return Err(format!(
            "`{text}` is not a percentage (expected a number such as 5 or 2.5)"
        ));
    }
    let w: i64 = whole
        .parse()
        .ok()
        .filter(|w| *w <= 1000)
        .ok_or_else(|| format!("`{text}` is above 1000 %"))?;
    let f: i64 = format!("{frac:0<4}").parse().unwrap_or(0);
    Ok(w * 10_000 + f)
}

/// Reads both files and compares them.
///
/// # Errors
/// An [`InputError`] for a file that cannot be read or is not a run.
pub fn compare_files(base: &Path, new: &Path, options: Options) -> Result<Comparison, InputError> {
    let base = input::load(base)?;
    let new = input::load(new)?;
    Ok(compare_runs(&base, &new, options))
}

/// Compares two loaded runs.
pub fn compare_runs(base: &Run, new: &Run, options: Options) -> Comparison {
    let mut rows = Vec::new();
    if let Some(why) = incomparable(base, new) {
        rows.push(Row {
            group: "run".into(),
            name: "all".into(),
            verdict: RowVerdict::Unknown,
            reason: Some(Reason::Incomparable),
            base: None,
            new: None,
            method: Method::None,
            change_ppm: None,
            change: None,
            interval_ppm: None,
            noise_ppm: None,
            noise: None,
            why,
            impact_ns: None,
        });
    } else {
        let key = |m: &Metric| (m.group, m.name.clone());
        let new_by: BTreeMap<_, &Metric> = new.metrics.iter().map(|m| (key(m), m)).collect();
        let base_keys: std::collections::BTreeSet<_> = base.metrics.iter().map(key).collect();
        for b in &base.metrics {
            rows.push(match new_by.get(&key(b)) {
                Some(n) => compare_metric(b, n, options),
                None => one_sided(b, RowVerdict::Gone),
            });
        }
        for n in new.metrics.iter().filter(|m| !base_keys.contains(&key(m))) {
            rows.push(one_sided(n, RowVerdict::New));
        }
    }
    for r in &mut rows {
        r.impact_ns = impact::impact_ns(r);
        if r.group == "steps" {
            let counts = (
                r.base.as_ref().map_or(0, |s| s.count),
                r.new.as_ref().map_or(0, |s| s.count),
            );
            let note = steps::steady_note(&r.name, &base.metrics, &new.metrics, counts.0, counts.1);
            r.why = if r.why.is_empty() {
                note
            } else {
                format!("{}; {note}", r.why)
            };
        }
    }
    impact::sort_by_impact(&mut rows);
    let headline = impact::headline(&rows);
    let mut counts = BTreeMap::new();
    for r in &rows {
        *counts.entry(r.verdict.word()).or_insert(0) += 1;
    }
    Comparison {
        format: FORMAT,
        version: VERSION,
        base: base.file.clone(),
        new: new.file.clone(),
        threshold_ppm: options.threshold_ppm,
        threshold: stats::percent_unsigned(options.threshold_ppm),
        method: format!(
            "median ratio new/base; {} resamples per side, seed {:#x}, 95 % percentile interval; \
             fewer than {} samples per side: ranges; one value: equal or ambiguous",
            stats::RESAMPLES,
            stats::SEED,
            stats::MIN_BOOTSTRAP
        ),
        rows,
        counts,
        headline,
    }
}

/// Why two runs cannot be compared, or `None`.
fn incomparable(base: &Run, new: &Run) -> Option<String> {
    if base.kind != new.kind {
        return Some(format!(
            "BASE is a {}, NEW is a {}",
            base.kind.name(),
            new.kind.name()
        ));
    }
    let mut diffs = Vec::new();
    let keys: std::collections::BTreeSet<&String> =
        base.context.keys().chain(new.context.keys()).collect();
    for k in keys {
        let (b, n) = (base.context.get(k), new.context.get(k));
        if b != n {
            let show =
                |v: Option<&String>| v.map_or("(not recorded)".to_owned(), |s| format!("`{s}`"));
            diffs.push(format!("{k}: {} vs {}", show(b), show(n)));
        }
    }
    let passes_differ = ["passes"]
        .iter()
        .any(|k| base.context.get(*k) != new.context.get(*k));
    if passes_differ {
        diffs.push(
            "the runs did different work (calibration chose the passes on each machine): \
             run both with the same `--passes N` to compare them"
                .to_owned(),
        );
    }
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

fn sorted(v: &[Nanos]) -> Vec<Nanos> {
    let mut v = v.to_vec();
    v.sort();
    v
}

fn side(data: &Data) -> Side {
    match data {
        Data::Instances(v) => side(&Data::Samples(sorted(v))),
        Data::Samples(v) => {
            let total: i128 = v.iter().map(|x| x.as_i64() as i128).sum();
            let median = (!v.is_empty()).then(|| stats::median(v));
            Side {
                count: v.len(),
                median_ns: median.map(Nanos::as_i64),
                median: median.map(|m| m.to_string()),
                total_ns: i64::try_from(total).ok(),
                unknown: None,
            }
        }
        Data::Single(x) => Side {
            count: 1,
            median_ns: Some(x.as_i64()),
            median: Some(x.to_string()),
            total_ns: Some(x.as_i64()),
            unknown: None,
        },
        Data::Unknown { reason, .. } => Side {
            count: 1,
            median_ns: None,
            median: None,
            total_ns: None,
            unknown: Some(*reason),
        },
    }
}

fn blank(m: &Metric, verdict: RowVerdict, why: String) -> Row {
    Row {
        group: m.group.into(),
        name: m.name.clone(),
        verdict,
        reason: None,
        base: None,
        new: None,
        method: Method::None,
        change_ppm: None,
        change: None,
        interval_ppm: None,
        noise_ppm: None,
        noise: None,
        why,
        impact_ns: None,
    }
}

fn one_sided(m: &Metric, verdict: RowVerdict) -> Row {
    let (why, s) = match verdict {
        RowVerdict::Gone => ("only in BASE", side(&m.data)),
        _ => ("only in NEW", side(&m.data)),
    };
    let mut row = blank(m, verdict, why.into());
    if verdict == RowVerdict::Gone {
        row.base = Some(s);
    } else {
        row.new = Some(s);
    }
    row
}

fn compare_metric(b: &Metric, n: &Metric, options: Options) -> Row {
    let mut row = blank(b, RowVerdict::Ambiguous, String::new());
    row.base = Some(side(&b.data));
    row.new = Some(side(&n.data));
    match (&b.data, &n.data) {
        (Data::Unknown { reason, detail }, other) | (other, Data::Unknown { reason, detail }) => {
            let which = if matches!(b.data, Data::Unknown { .. }) {
                "BASE"
            } else {
                "NEW"
            };
            row.verdict = RowVerdict::Unknown;
            row.reason = Some(*reason);
            row.why = match other {
                Data::Unknown { reason: r2, .. } if r2 == reason => {
                    format!("both runs answer unknown ({reason}): {detail}")
                }
                _ => format!("{which} answers unknown ({reason}): {detail}"),
            };
        }
        (Data::Single(x), Data::Single(y)) => single(&mut row, *x, *y),
        (Data::Samples(x), Data::Samples(y)) => samples(&mut row, x, y, None, options),
        (Data::Instances(x), Data::Instances(y)) => {
            let paired = (x.len() == y.len()).then_some((x.as_slice(), y.as_slice()));
            samples(&mut row, &sorted(x), &sorted(y), paired, options);
        }
        (Data::Instances(x), Data::Samples(y)) => samples(&mut row, &sorted(x), y, None, options),
        (Data::Samples(x), Data::Instances(y)) => samples(&mut row, x, &sorted(y), None, options),
        _ => {
            row.verdict = RowVerdict::Unknown;
            row.reason = Some(Reason::Incomparable);
            row.why = "one run has samples, the other one value".into();
        }
    }
    row
}

fn set_change(row: &mut Row, r: Ratio) {
    row.change_ppm = Some(r.change_ppm());
    row.change = Some(stats::percent(r.change_ppm()));
}

fn single(row: &mut Row, x: Nanos, y: Nanos) {
    row.method = Method::Single;
    if let Some(r) = Ratio::new(y.as_i64(), x.as_i64()) {
        set_change(row, r);
    }
    if x == y {
        row.verdict = RowVerdict::Same;
        row.why = "one value per run, exactly equal".into();
    } else {
        row.verdict = RowVerdict::Ambiguous;
        row.why = format!("one value per run ({x} vs {y}): nothing measures the noise");
    }
}

/// `x` and `y` sorted; `paired` the same values in occurrence order when the runs pair up.
fn samples(
    row: &mut Row,
    x: &[Nanos],
    y: &[Nanos],
    paired: Option<(&[Nanos], &[Nanos])>,
    options: Options,
) {
    if x.is_empty() || y.is_empty() {
        row.verdict = RowVerdict::Unknown;
        row.reason = Some(Reason::EmptySet);
        row.why = "a run has no measured samples".into();
        return;
    }
    let (mx, my) = (stats::median(x), stats::median(y));
    let Some(r) = Ratio::new(my.as_i64(), mx.as_i64()) else {
        row.verdict = if mx == my {
            RowVerdict::Same
        } else {
            RowVerdict::Ambiguous
        };
        row.why = "a median of 0 ns has no ratio".into();
        return;
    };
    set_change(row, r);
    if x == y && paired.is_none_or(|(a, b)| a == b) {
        row.method = Method::Bootstrap;
        row.verdict = RowVerdict::Same;
        row.interval_ppm = Some([1_000_000, 1_000_000]);
        row.noise_ppm = Some(0);
        row.noise = Some(format!("±{}", stats::percent_unsigned(0)));
        row.why = "identical samples".into();
        return;
    }
    let t = options.threshold_ppm;
    if x.len() < stats::MIN_BOOTSTRAP || y.len() < stats::MIN_BOOTSTRAP {
        row.method = Method::Ranges;
        ranges(row, x, y, t);
        return;
    }
    row.method = Method::Bootstrap;
    let ci = match paired {
        Some((a, b)) => stats::bootstrap_paired(a, b),
        None => stats::bootstrap(x, y),
    };
    let Some(ci) = ci else {
        row.verdict = RowVerdict::Ambiguous;
        row.why = "a resample has a median of 0 ns: no ratio".into();
        return;
    };
    let noise = stats::noise_ppm(r, ci);
    row.interval_ppm = Some([ci.low.ppm(), ci.high.ppm()]);
    row.noise_ppm = noise;
    row.noise = noise.map(|n| format!("±{}", stats::percent_unsigned(n)));
    let pairing = if paired.is_some() { ", paired" } else { "" };
    let shown = |ci: Interval| {
        format!(
            "95 % interval{pairing} of the ratio {}..{}",
            stats::percent(ci.low.change_ppm()),
            stats::percent(ci.high.change_ppm())
        )
    };
    let thr = stats::percent_unsigned(t);
    let (verdict, why) = match stats::decide(r, ci, t) {
        Call::Slower => (
            RowVerdict::Slower,
            format!("{}: all above +{thr}", shown(ci)),
        ),
        Call::Faster => (
            RowVerdict::Faster,
            format!("{}: all beyond -{thr}", shown(ci)),
        ),
        Call::Same => (RowVerdict::Same, format!("{}: within ±{thr}", shown(ci))),
        Call::NoisyAboveThreshold => (
            RowVerdict::Ambiguous,
            format!("{}: the noise is above the threshold {thr}", shown(ci)),
        ),
        Call::StraddlesThreshold => (
            RowVerdict::Ambiguous,
            format!("{}: reaches past the threshold {thr}", shown(ci)),
        ),
    };
    row.verdict = verdict;
    row.why = why;
}

/// Fewer than [`stats::MIN_BOOTSTRAP`] samples a side: slower only when every NEW value
/// exceeds every BASE value by the threshold (and the mirror for faster).
fn ranges(row: &mut Row, x: &[Nanos], y: &[Nanos], t: i64) {
    let up = 1_000_000i128 + t as i128;
    let (xmin, xmax) = (x[0].as_i64() as i128, x[x.len() - 1].as_i64() as i128);
    let (ymin, ymax) = (y[0].as_i64() as i128, y[y.len() - 1].as_i64() as i128);
    let thr = stats::percent_unsigned(t);
    if ymin * 1_000_000 >= xmax * up {
        row.verdict = RowVerdict::Slower;
        row.why =
            format!("few samples; every NEW value is above every BASE value by {thr} or more");
    } else if xmin * 1_000_000 >= ymax * up {
        row.verdict = RowVerdict::Faster;
        row.why =
            format!("few samples; every BASE value is above every NEW value by {thr} or more");
    } else {
        row.verdict = RowVerdict::Ambiguous;
        row.why = format!(
            "fewer than {} samples a side and the ranges are not {thr} apart",
            stats::MIN_BOOTSTRAP
        );
    }
}
