//! The multi-rank part of the import summary: clock relations, per collective the arrival
//! skew and the transfer after the last arrival (bounded), and stragglers.
//!
//! Every cross-rank number here is a **bounded** answer of the engine (the `arrival:` elapsed
//! questions and `offset:` clock-offset questions of the merged case), combined by interval
//! arithmetic, which stays sound (the truth stays inside):
//!
//! ```text
//!  arrival of rank r, relative to the reference rank's start:  A_r ∈ [lo_r, hi_r], A_ref = 0
//!  last arrival  L = max_r A_r ∈ [max lo_r, max hi_r]     first arrival F = min_r A_r
//!  arrival skew  L − F ∈ [max(0, L.lo − F.hi), min(L.hi − F.lo, longest kernel)]
//!                (the first rank to arrive cannot end before the last one arrived)
//!  transfer      D − L, D = the reference rank's kernel duration (exact, one clock),
//!                clamped to [0, D]: no rank can finish before the last one arrived
//! ```
//!
//! When the skew bound is as wide as the collective itself (width ≥ `D`), the
//! collective time cannot be split: skew and transfer are reported as unknown, with the
//! widths that make it so. A rank is the straggler of an instance when its arrival is later
//! than every other rank's under every offset the relations allow (`lo_r > max hi_q`);
//! otherwise the instance's last rank is ambiguous and counted as such.

use std::collections::BTreeMap;

use comfy_table::{presets::ASCII_MARKDOWN, Table};
use serde::Serialize;

use super::MultiRank;
use crate::case::{validate, CaseError};
use crate::engine::{evaluate, wide, Report};
use crate::verdict::Verdict;

/// A bounded amount `[lo, hi]` in ns, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Split {
    /// The value lies in `[lo_ns, hi_ns]`.
    Bounded {
        /// Lower end (ns).
        lo_ns: i128,
        /// Upper end (ns).
        hi_ns: i128,
    },
    /// No bound worth splitting, and why.
    Unknown {
        /// Why.
        why: String,
    },
}

impl Split {
    fn text(&self) -> String {
        match self {
            Split::Bounded { lo_ns, hi_ns } => {
                format!("bounded [{}, {}]", wide(*lo_ns), wide(*hi_ns))
            }
            Split::Unknown { .. } => "unknown".to_owned(),
        }
    }
}

/// One pair of ranks' relation, as printed.
#[derive(Clone, Debug, Serialize)]
pub struct RelationRow {
    /// Rank `a`.
    pub a: u32,
    /// Rank `b`.
    pub b: u32,
    /// `bounded [lo, hi]` on offset(b) − offset(a), or why there is none.
    pub bound: Split,
    /// The bound's width, when there is one.
    pub width: Option<String>,
    /// How many matched instances gave it.
    pub count: usize,
    /// Which instance gave the lower side, and its value.
    pub lo_from: Option<String>,
    /// Which instance gave the upper side, and its value.
    pub hi_from: Option<String>,
    /// The bound per window of instances (drift shows here).
    pub windows: Vec<String>,
    /// Collectives not used for this pair, with why.
    pub excluded: Vec<String>,
}

/// One matched collective instance, split into skew and transfer.
#[derive(Clone, Debug, Serialize)]
pub struct CollectiveRow {
    /// `group/name#k`.
    pub instance: String,
    /// Ranks that ran it.
    pub ranks: usize,
    /// The reference rank's kernel duration (exact, one clock).
    pub duration_ns: i64,
    /// Arrival skew: last arrival − first arrival.
    pub skew: Split,
    /// Transfer: from the last arrival to the reference rank's end.
    pub transfer: Split,
    /// The rank that certainly arrived last, or `None` when the bounds leave it open.
    pub last: Option<u32>,
    /// By how much it was last (its arrival − the latest other arrival), when it was.
    pub lateness: Option<Split>,
}

/// How often one rank was the straggler.
#[derive(Clone, Debug, Serialize)]
pub struct StragglerRow {
    /// The rank.
    pub rank: u32,
    /// Instances where it certainly arrived last.
    pub last: usize,
    /// The smallest and largest lateness bound over those instances (`[min lo, max hi]`).
    pub lateness: Option<Split>,
}

/// One rank's device, broken down as `worksheet audit` breaks it down.
#[derive(Clone, Debug, Serialize)]
pub struct BreakdownRow {
    /// The rank.
    pub rank: u32,
    /// The device's breakdown (its id prefixed `r<rank>.`).
    #[serde(flatten)]
    pub breakdown: crate::audit::Breakdown,
}

/// The multi-rank summary.
#[derive(Clone, Debug, Serialize)]
pub struct RanksSummary {
    /// Ranks in the case, with their files and clocks.
    pub ranks: Vec<(u32, String, String)>,
    /// The reference rank.
    pub reference: u32,
    /// Offsets of every rank against the reference, as the engine answers them.
    pub offsets: Vec<(String, String)>,
    /// Relations between pairs of ranks.
    pub relations: Vec<RelationRow>,
    /// Matched collective instances.
    pub collectives: Vec<CollectiveRow>,
    /// Instances whose last rank the bounds leave open.
    pub ambiguous_last: usize,
    /// Per rank: how often it was the straggler.
    pub stragglers: Vec<StragglerRow>,
    /// Per rank and device: the audit's exposed-time breakdown (exclusive compute, exposed
    /// communication, exposed memory, idle; they add up to the span).
    pub breakdown: Vec<BreakdownRow>,
    /// Why some collectives gave no evidence at all.
    pub unusable: Vec<String>,
    /// Assumptions and caveats.
    pub notes: Vec<String>,
}

fn range(report: &Report, id: &str) -> Result<(i128, i128), String> {
    match report.answer(id).and_then(|a| a.outcome.verdict()) {
        Some(v @ (Verdict::Known { .. } | Verdict::Bounded { .. })) => {
            let (lo, hi) = v.range().expect("known or bounded");
            Ok((i128::from(lo.as_i64()), i128::from(hi.as_i64())))
        }
        Some(v) => Err(format!("`{id}` is {v}")),
        None => Err(format!("`{id}` was not answered")),
    }
}

fn bounded(lo: i128, hi: i128) -> Split {
    Split::Bounded {
        lo_ns: lo,
        hi_ns: hi,
    }
}

/// Builds the multi-rank summary from the engine's answers on the merged case.
///
/// # Errors
/// [`CaseError`] when the merged case does not validate (an importer bug).
pub fn summarize_ranks(m: &MultiRank) -> Result<RanksSummary, CaseError> {
    let case = validate(m.case.clone(), "ranks")?;
    let report = evaluate(&case);
    Ok(from_report(m, &report))
}

fn relation_rows(m: &MultiRank) -> Vec<RelationRow> {
    m.pairs
        .iter()
        .map(|p| {
            let e = p.evidence.overall.as_ref();
            let bound = match e {
                Some(e) if !e.bound.is_empty() => bounded(
                    i128::from(e.bound.lo().as_i64()),
                    i128::from(e.bound.hi().as_i64()),
                ),
                Some(e) => Split::Unknown {
                    why: format!(
                        "inconsistent-relation: lo {} from {} is above hi {} from {}",
                        e.lo_from.value, e.lo_from.label, e.hi_from.value, e.hi_from.label
                    ),
                },
                None => Split::Unknown {
                    why: "no collective instance matched on both ranks".to_owned(),
                },
            };
            RelationRow {
                a: p.a,
                b: p.b,
                width: e
                    .filter(|e| !e.bound.is_empty())
                    .map(|e| wide(e.bound.width())),
                count: e.map_or(0, |e| e.count),
                lo_from: e.map(|e| format!("{} ({})", e.lo_from.label, e.lo_from.value)),
                hi_from: e.map(|e| format!("{} ({})", e.hi_from.label, e.hi_from.value)),
                windows: p
                    .evidence
                    .windows
                    .iter()
                    .map(|w| {
                        format!(
                            "{} instance(s): {}{}",
                            w.count,
                            w.bound,
                            if w.bound.is_empty() {
                                " (conflicts)"
                            } else {
                                ""
                            }
                        )
                    })
                    .collect(),
                excluded: p
                    .excluded
                    .iter()
                    .map(|(k, why)| format!("{k}: {why}"))
                    .collect(),
                bound,
            }
        })
        .collect()
}

fn collective_row(inst: &super::MatchedInstance, report: &Report) -> CollectiveRow {
    let (_, reference, _) = &inst.per_rank[0];
    let d = i128::from(reference.end.as_i64()) - i128::from(reference.start.as_i64());
    let mut arrivals: Vec<(u32, (i128, i128))> = Vec::new();
    let mut missing = None;
    for (r, _, q) in &inst.per_rank {
        match q {
            None => arrivals.push((*r, (0, 0))),
            Some(id) => match range(report, id) {
                Ok(b) => arrivals.push((*r, b)),
                Err(why) => missing = Some(why),
            },
        }
    }
    let label = format!("{}#{}", inst.key, inst.k);
    let unknown = |why: &str| Split::Unknown {
        why: why.to_owned(),
    };
    let mut row = CollectiveRow {
        instance: label,
        ranks: inst.per_rank.len(),
        duration_ns: i64::try_from(d).unwrap_or(i64::MAX),
        skew: unknown(""),
        transfer: unknown(""),
        last: None,
        lateness: None,
    };
    if let Some(why) = missing {
        let why = format!("a rank's arrival is not bounded: {why}");
        row.skew = unknown(&why);
        row.transfer = unknown(&why);
        return row;
    }
    let l = (
        arrivals.iter().map(|(_, b)| b.0).max().unwrap_or(0),
        arrivals.iter().map(|(_, b)| b.1).max().unwrap_or(0),
    );
    let f = (
        arrivals.iter().map(|(_, b)| b.0).min().unwrap_or(0),
        arrivals.iter().map(|(_, b)| b.1).min().unwrap_or(0),
    );
    // The first rank to arrive ends no earlier than the last arrival, so the skew is at most
    // the longest kernel (durations are clock-free).
    let longest = inst
        .per_rank
        .iter()
        .map(|(_, c, _)| i128::from(c.end.as_i64()) - i128::from(c.start.as_i64()))
        .max()
        .unwrap_or(d);
    let skew = ((l.0 - f.1).max(0), (l.1 - f.0).min(longest));
    if skew.1 - skew.0 >= d {
        let why = format!(
            "the arrival skew is only known within {} and the collective lasts {} on rank {}: the clock bound is too wide to split skew from transfer",
            wide(skew.1 - skew.0),
            wide(d),
            inst.per_rank[0].0
        );
        row.skew = unknown(&why);
        row.transfer = unknown(&why);
    } else {
        row.skew = bounded(skew.0, skew.1);
        row.transfer = bounded((d - l.1).max(0), (d - l.0).min(d));
    }
    for (r, (lo, hi)) in &arrivals {
        let others = arrivals.iter().filter(|(q, _)| q != r);
        let max_hi = others.clone().map(|(_, b)| b.1).max();
        let max_lo = others.map(|(_, b)| b.0).max();
        if let (Some(max_hi), Some(max_lo)) = (max_hi, max_lo) {
            if *lo > max_hi {
                row.last = Some(*r);
                row.lateness = Some(bounded(lo - max_hi, hi - max_lo));
            }
        }
    }
    row
}

/// The multi-rank summary from the engine's `report` on `m.case` (already evaluated).
pub fn from_report(m: &MultiRank, report: &Report) -> RanksSummary {
    let offsets = m
        .ranks
        .iter()
        .skip(1)
        .map(|r| {
            let id = format!("offset:r{}:r{}", m.reference, r.rank);
            let answer = report
                .answer(&id)
                .and_then(|a| a.outcome.verdict())
                .map_or_else(|| "not asked".to_owned(), ToString::to_string);
            (id, answer)
        })
        .collect();
    let collectives: Vec<CollectiveRow> = m
        .instances
        .iter()
        .map(|i| collective_row(i, report))
        .collect();
    let mut per_rank: BTreeMap<u32, (usize, Option<(i128, i128)>)> = BTreeMap::new();
    let mut ambiguous_last = 0;
    for c in &collectives {
        match (c.last, &c.lateness) {
            (Some(r), Some(Split::Bounded { lo_ns, hi_ns })) => {
                let e = per_rank.entry(r).or_insert((0, None));
                e.0 += 1;
                e.1 = Some(match e.1 {
                    None => (*lo_ns, *hi_ns),
                    Some((a, b)) => (a.min(*lo_ns), b.max(*hi_ns)),
                });
            }
            _ => ambiguous_last += 1,
        }
    }
    let stragglers = m
        .ranks
        .iter()
        .map(|r| {
            let (last, lateness) = per_rank.get(&r.rank).copied().unwrap_or((0, None));
            StragglerRow {
                rank: r.rank,
                last,
                lateness: lateness.map(|(lo, hi)| bounded(lo, hi)),
            }
        })
        .collect();
    let mut unusable = Vec::new();
    for r in &m.ranks {
        if r.facts.without_group > 0 {
            unusable.push(format!(
                "rank {}: {} NCCL kernel(s) ({}) carry no \"Process Group Name\" / \"Collective name\" args (newer PyTorch profilers write them): their instances cannot be matched across ranks by process group, so they give no clock relation",
                r.rank,
                r.facts.without_group,
                r.facts.ungrouped_names.join(", ")
            ));
        }
        if r.facts.point_to_point > 0 {
            unusable.push(format!(
                "rank {}: {} point-to-point kernel(s) (send / recv) left out: a send or receive involves two peers only, so the k-th one on two ranks need not be one operation",
                r.rank, r.facts.point_to_point
            ));
        }
        if r.facts.without_phase > 0 {
            unusable.push(format!(
                "rank {}: {} collective kernel(s) not found in the rank's case (no correlation or stream)",
                r.rank, r.facts.without_phase
            ));
        }
    }
    let mut notes = m.notes.clone();
    notes.push("offset(b) − offset(a) is bounded by the collectives alone (SPEC §10): each instance only says that no rank finishes before every rank has started, so a bound is at least as wide as the shortest kernels on both sides".to_owned());
    notes.push("kernel times are CUPTI's GPU timestamps as Kineto places them on each rank's host timeline: a bound is only as good as that placement".to_owned());
    RanksSummary {
        ranks: m
            .ranks
            .iter()
            .map(|r| (r.rank, r.file.clone(), r.clock.clone()))
            .collect(),
        reference: m.reference,
        offsets,
        relations: relation_rows(m),
        collectives,
        ambiguous_last,
        stragglers,
        breakdown: m
            .ranks
            .iter()
            .filter_map(|r| Some((r.rank, r.rows.as_ref().ok()?)))
            .flat_map(|(rank, rows)| {
                rows.breakdown.iter().map(move |b| BreakdownRow {
                    rank,
                    breakdown: b.clone(),
                })
            })
            .collect(),
        unusable,
        notes,
    }
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(header.to_vec());
    t
}

impl RanksSummary {
    /// The multi-rank summary as text: tables for people.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "{} ranks, one clock each; reference rank {}\n",
            self.ranks.len(),
            self.reference
        );
        for (r, file, clock) in &self.ranks {
            s.push_str(&format!("  rank {r}: clock `{clock}` ({file})\n"));
        }
        let mut t = table(&[
            "ranks",
            "offset(b) − offset(a)",
            "width",
            "instances",
            "lo from",
            "hi from",
        ]);
        for r in &self.relations {
            t.add_row(vec![
                format!("{} → {}", r.a, r.b),
                match &r.bound {
                    Split::Unknown { why } => format!("no relation: {why}"),
                    b => b.text(),
                },
                r.width.clone().unwrap_or_default(),
                r.count.to_string(),
                r.lo_from.clone().unwrap_or_default(),
                r.hi_from.clone().unwrap_or_default(),
            ]);
        }
        s.push_str(&format!(
            "\nclock relations from collectives (SPEC §10)\n{t}\n"
        ));
        for r in &self.relations {
            for w in &r.windows {
                s.push_str(&format!("  {} → {} window: {w}\n", r.a, r.b));
            }
            for x in &r.excluded {
                s.push_str(&format!("  {} → {} not used: {x}\n", r.a, r.b));
            }
        }
        for (id, answer) in &self.offsets {
            s.push_str(&format!("  {id}: {answer}\n"));
        }
        if !self.collectives.is_empty() {
            let mut t = table(&[
                "collective",
                "ranks",
                "duration (ref)",
                "arrival skew",
                "transfer after last arrival",
                "last rank",
                "late by",
            ]);
            for c in &self.collectives {
                t.add_row(vec![
                    c.instance.clone(),
                    c.ranks.to_string(),
                    wide(i128::from(c.duration_ns)),
                    c.skew.text(),
                    c.transfer.text(),
                    c.last
                        .map_or_else(|| "ambiguous".to_owned(), |r| r.to_string()),
                    c.lateness.as_ref().map_or_else(String::new, Split::text),
                ]);
            }
            s.push_str(&format!("\ncollectives: arrival skew and transfer (bounded; unknown where the bound is too wide to split)\n{t}\n"));
            let mut whys: Vec<&str> = self
                .collectives
                .iter()
                .flat_map(|c| [&c.skew, &c.transfer])
                .filter_map(|x| match x {
                    Split::Unknown { why } => Some(why.as_str()),
                    Split::Bounded { .. } => None,
                })
                .collect();
            whys.dedup();
            for why in whys.iter().take(3) {
                s.push_str(&format!("  unknown: {why}\n"));
            }
            let mut t = table(&["rank", "arrived last (certainly)", "late by"]);
            for r in &self.stragglers {
                t.add_row(vec![
                    r.rank.to_string(),
                    format!("{} of {}", r.last, self.collectives.len()),
                    r.lateness.as_ref().map_or_else(String::new, Split::text),
                ]);
            }
            s.push_str(&format!(
                "\nstragglers ({} instance(s) with no certain last rank)\n{t}\n",
                self.ambiguous_last
            ));
        }
        if !self.breakdown.is_empty() {
            let mut t = table(&[
                "rank",
                "device",
                "span",
                "exclusive compute",
                "exposed communication",
                "exposed memory",
                "idle",
            ]);
            for r in &self.breakdown {
                let b = &r.breakdown;
                t.add_row(vec![
                    r.rank.to_string(),
                    b.device.clone(),
                    wide(b.span_ns),
                    wide(b.exclusive_compute_ns),
                    wide(b.exposed_communication_ns),
                    wide(b.exposed_memory_ns),
                    wide(b.idle_ns),
                ]);
            }
            s.push_str(&format!(
                "\nper rank: exposed-time breakdown (as `worksheet audit`; the four parts add up to the span)\n{t}\n"
            ));
        }
        for u in &self.unusable {
            s.push_str(&format!("unusable: {u}\n"));
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s
    }
}
