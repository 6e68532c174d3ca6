//! The `straggler` finding of a multi-rank import (docs/findings.md, `straggler`): one rank
//! arrives last at most collectives, by a delay that matters against the step time.
//!
//! Rule, on the bounds of [`super::arrivals`] (relations ∩ clock-free):
//!
//! ```text
//!   K = instances where rank r is certainly last (every pair puts it strictly after)
//!   N = instances rank r ran (matched on at least two ranks)
//!   fires when  2K > N  and  median-delay lo ≥ 5 % of the step time
//! ```
//!
//! The median delay is `[median of lo, median of hi]` of r's delay over the first arrival in
//! those K instances (lower median for an even K): the true median lies inside. The step time
//! is the median host `ProfilerStep#N` duration of r's trace; without steps, the largest
//! median period (start to start, one clock) of one collective on r, labelled as such.
//!
//! Where the evidence leaves the order open but one rank **reads** last at most instances on
//! the clocks as recorded, the summary says which declaration would decide it: with
//! `--clocks-within W`, pair `(q, r)` puts `r` after `q` once `W` is below the readings' gap.

use serde::Serialize;

use super::arrivals::{CollectiveRow, Split};
use super::MultiRank;
use crate::engine::wide;

/// The finding's code (one of `crate::audit::CODES`).
pub const CODE: &str = "straggler";

/// A delay at least this many per mille of the step time is significant.
pub const SIGNIFICANT_PER_MILLE: i128 = 50;

/// At most this many evidence items are listed.
const EVIDENCE_CAP: usize = 8;

/// `[lo, hi]` in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DelayNs {
    /// Lower end.
    pub lo: i128,
    /// Upper end.
    pub hi: i128,
}

/// The instances behind a finding: the first few, and how many more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// One line per instance.
    pub items: Vec<String>,
    /// How many were left out.
    pub more: usize,
}

/// A `straggler` finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StragglerFinding {
    /// Always `straggler`.
    pub code: &'static str,
    /// `warning`: the other ranks wait for this one.
    pub severity: &'static str,
    /// The rank that arrives last.
    pub rank: u32,
    /// Instances where it certainly arrived last.
    pub late_in: usize,
    /// Instances it ran.
    pub of: usize,
    /// The median of its delay over the first arrival there (bounded).
    pub delay_ns: DelayNs,
    /// The step time the delay is weighed against.
    pub step_ns: i64,
    /// Where the step time comes from.
    pub step_from: String,
    /// The declared relations the bounds assume (empty: the evidence alone decides it).
    pub assumes: Vec<String>,
    /// One line, with the numbers.
    pub message: String,
    /// The instances where it was last.
    pub evidence: Evidence,
}

fn median(xs: &mut [i64]) -> Option<i64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_unstable();
    Some(xs[(xs.len() - 1) / 2])
}

/// The step time of `rank`: its median `ProfilerStep#N`, else the largest median period of
/// one collective on it; with where it comes from.
fn step_time(m: &MultiRank, rank: u32) -> Option<(i64, String)> {
    let trace = m.ranks.iter().find(|r| r.rank == rank)?;
    let mut steps = trace.facts.steps_ns.clone();
    if let Some(s) = median(&mut steps).filter(|s| *s > 0) {
        return Some((
            s,
            format!(
                "median of {} ProfilerStep ranges on rank {rank}",
                steps.len()
            ),
        ));
    }
    let mut by_key: std::collections::BTreeMap<&str, Vec<i64>> = Default::default();
    for inst in &m.instances {
        if let Some((_, c, _)) = inst.per_rank.iter().find(|(r, _, _)| *r == rank) {
            by_key.entry(&inst.key).or_default().push(c.start.as_i64());
        }
    }
    by_key
        .into_iter()
        .filter_map(|(key, mut starts)| {
            starts.sort_unstable();
            let mut gaps: Vec<i64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
            Some((median(&mut gaps)?, key))
        })
        .max()
        .filter(|(s, _)| *s > 0)
        .map(|(s, key)| {
            (
                s,
                format!("median period of {key} on rank {rank} (no ProfilerStep ranges)"),
            )
        })
}

/// `x` for an exact range, `[lo, hi]` otherwise.
fn shown(lo: i128, hi: i128) -> String {
    if lo == hi {
        wide(lo)
    } else {
        format!("[{}, {}]", wide(lo), wide(hi))
    }
}

/// `v / step` as a percentage with one decimal (rounded down).
fn percent(v: i128, step: i64) -> String {
    let per_mille = v * 1000 / i128::from(step);
    format!("{}.{} %", per_mille / 10, per_mille % 10)
}

fn range(s: &Split) -> Option<(i128, i128)> {
    match s {
        Split::Bounded { lo_ns, hi_ns } => Some((*lo_ns, *hi_ns)),
        Split::Unknown { .. } => None,
    }
}

/// The findings, and for ranks the evidence leaves open, what would decide them.
pub fn stragglers(m: &MultiRank, rows: &[CollectiveRow]) -> (Vec<StragglerFinding>, Vec<String>) {
    let mut findings = Vec::new();
    let mut undecided = Vec::new();
    for trace in &m.ranks {
        let r = trace.rank;
        let ran: Vec<&CollectiveRow> = rows
            .iter()
            .filter(|c| c.arrivals.ranks.iter().any(|x| x.rank == r))
            .collect();
        let of = ran.len();
        let last: Vec<(&CollectiveRow, (i128, i128))> = ran
            .iter()
            .filter(|c| c.last == Some(r))
            .filter_map(|c| Some((*c, range(c.lateness.as_ref()?)?)))
            .collect();
        let late_in = last.len();
        if of >= 2 && 2 * late_in > of {
            let mut lo: Vec<i128> = last.iter().map(|(_, d)| d.0).collect();
            let mut hi: Vec<i128> = last.iter().map(|(_, d)| d.1).collect();
            lo.sort_unstable();
            hi.sort_unstable();
            let mid = (late_in - 1) / 2;
            let delay = DelayNs {
                lo: lo[mid],
                hi: hi[mid],
            };
            let Some((step, step_from)) = step_time(m, r) else {
                undecided.push(format!(
                    "rank {r} arrived last at {late_in} of {of} collectives (median delay {}), but no step time is known to weigh it against",
                    shown(delay.lo, delay.hi)
                ));
                continue;
            };
            if delay.lo * 1000 < SIGNIFICANT_PER_MILLE * i128::from(step) {
                undecided.push(format!(
                    "not a straggler finding: rank {r} arrived last at {late_in} of {of} collectives, but its median delay {} is {} of the {} step ({step_from}), below the {} % the finding asks",
                    shown(delay.lo, delay.hi),
                    percent(delay.lo, step),
                    wide(i128::from(step)),
                    SIGNIFICANT_PER_MILLE / 10
                ));
                continue;
            }
            let mut assumes: Vec<String> = last
                .iter()
                .flat_map(|(c, _)| c.arrivals.assumes.iter().cloned())
                .collect();
            assumes.sort_unstable();
            assumes.dedup();
            let items: Vec<String> = last
                .iter()
                .map(|(c, d)| {
                    format!(
                        "{}: rank {r} last, {} after the first arrival",
                        c.instance,
                        shown(d.0, d.1)
                    )
                })
                .collect();
            let share = if delay.lo == delay.hi {
                percent(delay.lo, step)
            } else {
                format!("{} to {}", percent(delay.lo, step), percent(delay.hi, step))
            };
            findings.push(StragglerFinding {
                code: CODE,
                severity: "warning",
                rank: r,
                late_in,
                of,
                delay_ns: delay,
                step_ns: step,
                step_from: step_from.clone(),
                message: format!(
                    "rank {r} arrived last at {late_in} of {of} collectives, a median {} after the first rank ({share} of the {} step, {step_from}): the other ranks wait for it{}",
                    shown(delay.lo, delay.hi),
                    wide(i128::from(step)),
                    if assumes.is_empty() {
                        String::new()
                    } else {
                        format!("; assumes {}", assumes.join(", "))
                    }
                ),
                assumes,
                evidence: Evidence {
                    more: items.len().saturating_sub(EVIDENCE_CAP),
                    items: items.into_iter().take(EVIDENCE_CAP).collect(),
                },
            });
        } else if let Some(line) = what_would_decide(m, rows, r, late_in, of) {
            undecided.push(line);
        }
    }
    (findings, undecided)
}

/// Where rank `r` reads last at most instances on the recorded clocks but the evidence decides
/// fewer: the widest `--clocks-within` that would decide most of them.
fn what_would_decide(
    m: &MultiRank,
    rows: &[CollectiveRow],
    r: u32,
    late_in: usize,
    of: usize,
) -> Option<String> {
    let mut needs: Vec<i128> = Vec::new();
    let mut reads_last = 0;
    for (inst, row) in m.instances.iter().zip(rows) {
        let Some((_, mine, _)) = inst.per_rank.iter().find(|(x, _, _)| *x == r) else {
            continue;
        };
        if row.last == Some(r) {
            needs.push(i128::MAX);
            reads_last += 1;
            continue;
        }
        let gap = inst
            .per_rank
            .iter()
            .filter(|(q, _, _)| *q != r)
            .map(|(_, c, _)| i128::from(mine.start.as_i64()) - i128::from(c.start.as_i64()))
            .min()?;
        if gap > 0 {
            reads_last += 1;
            needs.push(gap);
        } else {
            needs.push(0);
        }
    }
    if of < 2 || 2 * reads_last <= of {
        return None;
    }
    needs.sort_unstable_by(|a, b| b.cmp(a));
    let decide = needs[of / 2];
    (decide > 0).then(|| {
        format!(
            "undecided: rank {r} reads last at {reads_last} of {of} collectives on the clocks as recorded, but the evidence decides only {late_in}: the collectives cannot tell a constant delay from a clock offset. A declaration `--clocks-within W` with W below {} (e.g. `--clocks-within 0` for ranks of one host) would decide most of them, if the clocks agree that well",
            wide(decide)
        )
    })
}
