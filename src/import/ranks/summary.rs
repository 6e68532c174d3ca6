//! The multi-rank part of the import summary: clock relations, per collective the arrival
//! skew, the last rank and its delay, wait and transfer (bounded), and stragglers.
//!
//! Every cross-rank figure comes from one computation, [`super::arrivals`]: per pair of
//! ranks, the engine's answer to the case's `arrival:` question (what `worksheet eval` of the
//! imported case prints) intersected with the clock-free bound `[−dur_b, +dur_a]`, then
//! combined by interval rules that keep the truth inside. A skew bound as wide as the
//! collective is still printed as the bound it is, with a note saying it cannot split the
//! collective (the width quoted is that bound's width). A rank is the instance's last when
//! every pair puts its arrival strictly after the other rank's (`lo > 0`); otherwise the
//! instance's last rank is ambiguous and counted as such.

use comfy_table::{presets::ASCII_MARKDOWN, Table};
use serde::Serialize;

use super::arrivals::{answers, bounded, of_instance, Answers};
pub use super::arrivals::{CollectiveRow, Split};
use super::MultiRank;
use crate::case::{validate, CaseError};
use crate::engine::{evaluate, wide, Report};

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

/// How often one rank was the straggler.
#[derive(Clone, Debug, Serialize)]
pub struct StragglerRow {
    /// The rank.
    pub rank: u32,
    /// Instances where it certainly arrived last.
    pub last: usize,
    /// Instances it ran (matched on at least two ranks).
    pub of: usize,
    /// The median of its delay over the first arrival in the instances where it was last
    /// (`[median lo, median hi]`, lower median for an even count).
    pub median_delay: Option<Split>,
    /// The smallest and largest delay bound over those instances (`[min lo, max hi]`).
    pub lateness: Option<Split>,
}

/// One rank's collective kernel time, split into waiting for the last arrival and
/// transferring after it (sums of per-instance bounds: the truth lies inside).
#[derive(Clone, Debug, Serialize)]
pub struct CommSplitRow {
    /// The rank.
    pub rank: u32,
    /// Matched instances it ran.
    pub instances: usize,
    /// Their kernel time on the rank (exact, one clock).
    pub kernel_ns: i128,
    /// Of it, waiting for the last rank to arrive.
    pub wait: Split,
    /// Of it, after the last arrival.
    pub transfer: Split,
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
    /// Per rank: collective kernel time split into wait and transfer.
    pub comm_split: Vec<CommSplitRow>,
    /// `straggler` findings (docs/findings.md): a rank last at most collectives, by a delay
    /// significant against the step time.
    pub findings: Vec<super::straggler::StragglerFinding>,
    /// Where the evidence leaves the order open: what declaration would decide it.
    pub undecided: Vec<String>,
    /// Per rank and device: the audit's exposed-time breakdown (exclusive compute, exposed
    /// communication, exposed memory, idle; they add up to the span).
    pub breakdown: Vec<BreakdownRow>,
    /// Why some collectives gave no evidence at all.
    pub unusable: Vec<String>,
    /// Assumptions and caveats.
    pub notes: Vec<String>,
    /// What the traces suggest but the import does not assume.
    pub suggestions: Vec<String>,
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
                Some(e) if !e.bound.is_empty() => bounded((
                    i128::from(e.bound.lo().as_i64()),
                    i128::from(e.bound.hi().as_i64()),
                )),
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

fn collective_row(inst: &super::MatchedInstance, answers: &Answers<'_>) -> CollectiveRow {
    let arrivals = of_instance(inst, answers);
    let reference = &arrivals.ranks[0];
    let d = i128::from(reference.duration_ns);
    let wide_note = match &arrivals.skew {
        Split::Bounded { lo_ns, hi_ns } if hi_ns - lo_ns >= d => Some(format!(
            "the arrival skew is only known within {} (the bound shown) and the collective lasts {} on rank {}: the bound is too wide to tell skew from transfer",
            wide(hi_ns - lo_ns),
            wide(d),
            reference.rank
        )),
        _ => None,
    };
    let lateness = arrivals.last.and_then(|r| {
        arrivals
            .ranks
            .iter()
            .find(|x| x.rank == r)
            .map(|x| x.delay.clone())
    });
    CollectiveRow {
        instance: format!("{}#{}", inst.key, inst.k),
        ranks: inst.per_rank.len(),
        duration_ns: reference.duration_ns,
        skew: arrivals.skew.clone(),
        transfer: reference.transfer.clone(),
        last: arrivals.last,
        lateness,
        wide: wide_note,
        arrivals,
    }
}

/// `[median lo, median hi]` of `xs` (the lower median for an even count): the median of
/// values each inside its bound lies inside this bound (the median is monotone in every value).
fn median_bound(xs: &[(i128, i128)]) -> Option<(i128, i128)> {
    if xs.is_empty() {
        return None;
    }
    let mid = (xs.len() - 1) / 2;
    let mut lo: Vec<i128> = xs.iter().map(|x| x.0).collect();
    let mut hi: Vec<i128> = xs.iter().map(|x| x.1).collect();
    lo.sort_unstable();
    hi.sort_unstable();
    Some((lo[mid], hi[mid]))
}

/// Per rank: the sum over its instances of the kernel time, the wait and the transfer.
fn comm_split(m: &MultiRank, collectives: &[CollectiveRow]) -> Vec<CommSplitRow> {
    m.ranks
        .iter()
        .map(|r| {
            let mut row = CommSplitRow {
                rank: r.rank,
                instances: 0,
                kernel_ns: 0,
                wait: bounded((0, 0)),
                transfer: bounded((0, 0)),
            };
            let add = |sum: &mut Split, x: &Split| {
                *sum = match (&*sum, x) {
                    (Split::Bounded { lo_ns, hi_ns }, Split::Bounded { lo_ns: l, hi_ns: h }) => {
                        bounded((lo_ns + l, hi_ns + h))
                    }
                    (Split::Unknown { why }, _) | (_, Split::Unknown { why }) => {
                        Split::Unknown { why: why.clone() }
                    }
                };
            };
            for c in collectives {
                if let Some(x) = c.arrivals.ranks.iter().find(|x| x.rank == r.rank) {
                    row.instances += 1;
                    row.kernel_ns += i128::from(x.duration_ns);
                    add(&mut row.wait, &x.wait);
                    add(&mut row.transfer, &x.transfer);
                }
            }
            row
        })
        .filter(|row| row.instances > 0)
        .collect()
}

/// Per rank: how often it was certainly last, and the median of its delay there.
fn straggler_rows(m: &MultiRank, collectives: &[CollectiveRow]) -> Vec<StragglerRow> {
    m.ranks
        .iter()
        .map(|r| {
            let ran: Vec<&CollectiveRow> = collectives
                .iter()
                .filter(|c| c.arrivals.ranks.iter().any(|x| x.rank == r.rank))
                .collect();
            let delays: Vec<(i128, i128)> = ran
                .iter()
                .filter(|c| c.last == Some(r.rank))
                .filter_map(|c| match &c.lateness {
                    Some(Split::Bounded { lo_ns, hi_ns }) => Some((*lo_ns, *hi_ns)),
                    _ => None,
                })
                .collect();
            let range = delays
                .iter()
                .copied()
                .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
            StragglerRow {
                rank: r.rank,
                last: delays.len(),
                of: ran.len(),
                median_delay: median_bound(&delays).map(bounded),
                lateness: range.map(bounded),
            }
        })
        .collect()
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
                .map_or_else(
                    || "not asked".to_owned(),
                    |v| {
                        let assumes: Vec<&str> = v
                            .notes()
                            .iter()
                            .filter(|n| n.starts_with("assumes "))
                            .map(String::as_str)
                            .collect();
                        if assumes.is_empty() {
                            v.to_string()
                        } else {
                            format!("{v}; {}", assumes.join("; "))
                        }
                    },
                );
            (id, answer)
        })
        .collect();
    let answers = answers(report);
    let collectives: Vec<CollectiveRow> = m
        .instances
        .iter()
        .map(|i| collective_row(i, &answers))
        .collect();
    let ambiguous_last = collectives.iter().filter(|c| c.last.is_none()).count();
    let stragglers = straggler_rows(m, &collectives);
    let (findings, undecided) = super::straggler::stragglers(m, &collectives);
    let comm_split = comm_split(m, &collectives);
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
    if m.case
        .clock_relations
        .iter()
        .all(|r| r.source == crate::case::raw::RawRelationSource::Collectives)
    {
        notes.push("offset(b) − offset(a) is bounded by the collectives alone (SPEC §10): each instance only says that no rank finishes before every rank has started, so a bound is at least as wide as the shortest kernels on both sides".to_owned());
    }
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
        comm_split,
        findings,
        undecided,
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
        suggestions: m.suggestions.clone(),
    }
}

/// `eval` / clock-free / intersected bounds of a two-rank instance's one pair, as cells.
fn pair_cells(c: &CollectiveRow) -> [String; 2] {
    match c.arrivals.pairs.as_slice() {
        [p] => [
            format!(
                "{}{}",
                p.offset_based.text(),
                p.question
                    .as_ref()
                    .map_or_else(String::new, |_| " (eval)".to_owned())
            ),
            p.clock_free.text(),
        ],
        many => [
            format!("{} pairs (JSON)", many.len()),
            format!("{} pairs (JSON)", many.len()),
        ],
    }
}

impl RanksSummary {
    fn collectives_text(&self) -> String {
        let mut s = String::new();
        let mut t = table(&[
            "collective",
            "ranks",
            "duration (ref)",
            "start b − start a: relations",
            "clock-free",
            "arrival skew",
            "transfer after last arrival (ref)",
            "last rank",
            "late by (over first)",
        ]);
        for c in &self.collectives {
            let [offset, free] = pair_cells(c);
            t.add_row(vec![
                c.instance.clone(),
                c.ranks.to_string(),
                wide(i128::from(c.duration_ns)),
                offset,
                free,
                c.skew.text(),
                c.transfer.text(),
                c.last
                    .map_or_else(|| "ambiguous".to_owned(), |r| r.to_string()),
                c.lateness.as_ref().map_or_else(String::new, Split::text),
            ]);
        }
        s.push_str(&format!("\ncollectives: arrival skew and transfer (bounded: the relations' bound, which `worksheet eval` of the case states, intersected with the clock-free bound [−dur_b, +dur_a])\n{t}\n"));
        let mut whys: Vec<&str> = self
            .collectives
            .iter()
            .flat_map(|c| [&c.skew, &c.transfer])
            .filter_map(|x| match x {
                Split::Unknown { why } => Some(why.as_str()),
                Split::Bounded { .. } => None,
            })
            .chain(self.collectives.iter().filter_map(|c| c.wide.as_deref()))
            .collect();
        whys.dedup();
        for why in whys.iter().take(3) {
            s.push_str(&format!("  {why}\n"));
        }
        let mut assumes: Vec<&str> = self
            .collectives
            .iter()
            .flat_map(|c| c.arrivals.assumes.iter().map(String::as_str))
            .collect();
        assumes.sort_unstable();
        assumes.dedup();
        for a in assumes {
            s.push_str(&format!("  assumes {a}\n"));
        }
        let mut t = table(&[
            "rank",
            "arrived last (certainly)",
            "median delay there",
            "delay range",
        ]);
        for r in &self.stragglers {
            t.add_row(vec![
                r.rank.to_string(),
                format!("{} of {}", r.last, r.of),
                r.median_delay
                    .as_ref()
                    .map_or_else(String::new, Split::text),
                r.lateness.as_ref().map_or_else(String::new, Split::text),
            ]);
        }
        s.push_str(&format!(
            "\nstragglers ({} instance(s) with no certain last rank)\n{t}\n",
            self.ambiguous_last
        ));
        let mut t = table(&[
            "rank",
            "instances",
            "collective kernel time",
            "waiting for the last arrival",
            "transferring",
        ]);
        for r in &self.comm_split {
            t.add_row(vec![
                r.rank.to_string(),
                r.instances.to_string(),
                wide(r.kernel_ns),
                r.wait.text(),
                r.transfer.text(),
            ]);
        }
        s.push_str(&format!(
            "\nper rank: collective kernel time split into waiting and transfer (sums of the per-instance bounds; a profiler counts it all as communication)\n{t}\n"
        ));
        s.push_str(&self.findings_text());
        s
    }

    /// The `straggler` findings with their evidence, or that there is none, and what
    /// declaration would decide the open ones: the lines `import`, `audit DIR` and the
    /// report state.
    pub fn findings_text(&self) -> String {
        let mut s = String::new();
        for f in &self.findings {
            s.push_str(&format!("{} {}: {}\n", f.severity, f.code, f.message));
            for e in &f.evidence.items {
                s.push_str(&format!("  {e}\n"));
            }
            if f.evidence.more > 0 {
                s.push_str(&format!("  ... and {} more\n", f.evidence.more));
            }
        }
        if self.findings.is_empty() {
            s.push_str("no straggler finding (docs/findings.md, `straggler`)\n");
        }
        for u in &self.undecided {
            s.push_str(&format!("{u}\n"));
        }
        s
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
            s.push_str(&self.collectives_text());
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
        for n in &self.suggestions {
            s.push_str(&format!("{n}\n"));
        }
        s
    }
}
