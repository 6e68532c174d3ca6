//! Who arrived when at one collective instance: **one computation** of every cross-rank figure
//! the multi-rank summary prints (arrival skew, the last rank and its delay, wait and transfer
//! per rank), from two pieces of evidence per pair of ranks (SPEC §10; docs/ranks.md):
//!
//! - **offset-based**: the engine's answer to the case's `arrival:` elapsed question from rank
//!   `a`'s kernel start to rank `b`'s (bounded through the clock relations, collectives and
//!   declared ones). `worksheet eval` of the imported case gives exactly this answer.
//! - **clock-free**: every rank's kernel is still running when the last rank arrives, so in
//!   true time `start_b − start_a ∈ [−dur_b, +dur_a]`, whatever the clocks (durations are
//!   read on one clock each: exact).
//!
//! The pair's bound is their intersection. When the instance itself gave the pair's
//! collectives relation, the offset-based bound already lies inside the clock-free one (the
//! relation's rule at that instance is the same inequality), so the two agree; the clock-free
//! bound is what is left when there is no relation (conflicting evidence, a clock that
//! jumped) or only a chain through other ranks. It always contains 0: alone it can bound a
//! delay but never say who was last.
//!
//! From the bounds `B(q, r) ∋ start_r − start_q` (true time) of every ordered pair:
//!
//! ```text
//!   delay of r over the first arrival   D_r = max_q (start_r − start_q)  ∈ [max(0, max_q lo), max(0, max_q hi)]
//!   wait of r for the last arrival      W_r = max_q (start_q − start_r)  (same rule on B(r, q))
//!   transfer of r                       dur_r − W_r                       (dur_r exact)
//!   arrival skew                        max_r D_r                         ∈ [max_r D_r.lo, max_r D_r.hi]
//!   certainly last                      r with B(q, r).lo > 0 for every q ≠ r
//! ```
//!
//! Each rule is sound: the true value lies inside whatever values in the bounds are true.

use std::collections::HashMap;

use serde::Serialize;

use super::MatchedInstance;
use crate::engine::wide;
use crate::engine::Report;
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
    /// `bounded [lo, hi]`, or `unknown`.
    pub(super) fn text(&self) -> String {
        match self {
            Split::Bounded { lo_ns, hi_ns } => {
                format!("bounded [{}, {}]", wide(*lo_ns), wide(*hi_ns))
            }
            Split::Unknown { .. } => "unknown".to_owned(),
        }
    }
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
    /// Its delay over the first arrival, when there is a certain last rank.
    pub lateness: Option<Split>,
    /// Why the skew bound, though sound, cannot split the collective (as wide as it).
    pub wide: Option<String>,
    /// Every pair's bounds (offset-based, clock-free, intersected) and every rank's delay,
    /// wait and transfer: the one computation the figures above come from (this module).
    pub arrivals: InstanceArrivals,
}

/// A closed range `[lo, hi]` of ns (`i128`: sums and differences stay exact).
pub type Range = (i128, i128);

/// One pair of ranks at one instance: `start_b − start_a` in true time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PairArrival {
    /// Rank `a`.
    pub a: u32,
    /// Rank `b`.
    pub b: u32,
    /// The case's `elapsed` question from `a`'s start to `b`'s start (`None`: not asked;
    /// then the offset-based bound is derived through the reference rank's questions).
    pub question: Option<String>,
    /// What the clock relations give: the engine's answer (as `worksheet eval` prints it).
    pub offset_based: Split,
    /// `[−dur_b, +dur_a]`: what causality alone gives, whatever the clocks.
    pub clock_free: Split,
    /// The intersection of the two: the bound every figure below uses.
    pub bound: Split,
}

/// One rank at one instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankArrival {
    /// The rank.
    pub rank: u32,
    /// Its kernel's duration (exact, one clock).
    pub duration_ns: i64,
    /// Its arrival after the first arrival (0 when it arrived first).
    pub delay: Split,
    /// Its kernel time spent waiting for the last arrival.
    pub wait: Split,
    /// Its kernel time after the last arrival (transferring).
    pub transfer: Split,
}

/// Every cross-rank figure of one instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InstanceArrivals {
    /// Every pair of ranks that ran it.
    pub pairs: Vec<PairArrival>,
    /// Every rank that ran it, in rank order.
    pub ranks: Vec<RankArrival>,
    /// Last arrival − first arrival.
    pub skew: Split,
    /// The rank that certainly arrived last, when the bounds decide it.
    pub last: Option<u32>,
    /// The declared relations the offset-based bounds assume (`clocks-within 0 ns
    /// (declared)`), from the engine's notes.
    pub assumes: Vec<String>,
}

/// The engine's answers by question id (built once per report).
pub type Answers<'r> = HashMap<&'r str, &'r Verdict>;

/// Every answer of `report` by id.
pub fn answers(report: &Report) -> Answers<'_> {
    report
        .answers
        .iter()
        .filter_map(|a| Some((a.id.as_str(), a.outcome.verdict()?)))
        .collect()
}

/// `[lo, hi]` as a [`Split`].
pub fn bounded((lo, hi): Range) -> Split {
    Split::Bounded {
        lo_ns: lo,
        hi_ns: hi,
    }
}

fn range_of(split: &Split) -> Option<Range> {
    match split {
        Split::Bounded { lo_ns, hi_ns } => Some((*lo_ns, *hi_ns)),
        Split::Unknown { .. } => None,
    }
}

/// The engine's answer to `id` as a range, or why there is none.
fn answer(answers: &Answers<'_>, id: &str) -> Result<(Range, Vec<String>), String> {
    match answers.get(id) {
        Some(v @ (Verdict::Known { .. } | Verdict::Bounded { .. })) => {
            let (lo, hi) = v.range().ok_or_else(|| format!("`{id}` has no range"))?;
            let assumes = v
                .notes()
                .iter()
                .filter_map(|n| n.strip_prefix("assumes "))
                .map(str::to_owned)
                .collect();
            Ok(((i128::from(lo.as_i64()), i128::from(hi.as_i64())), assumes))
        }
        Some(v) => Err(format!("`{id}` is {v}")),
        None => Err(format!("`{id}` was not answered")),
    }
}

/// The bound on `start_r − start_q` for every ordered pair (indices into `per_rank`).
struct Matrix {
    n: usize,
    cells: Vec<Range>,
}

impl Matrix {
    fn get(&self, q: usize, r: usize) -> Range {
        self.cells[q * self.n + r]
    }
}

fn durations(inst: &MatchedInstance) -> Vec<i128> {
    inst.per_rank
        .iter()
        .map(|(_, c, _)| i128::from(c.end.as_i64()) - i128::from(c.start.as_i64()))
        .collect()
}

/// The offset-based bound of every ordered pair: asked questions as answered; pairs not
/// asked through the reference (index 0): `(start_r − start_0) − (start_q − start_0)`.
fn offset_based(
    inst: &MatchedInstance,
    answers: &Answers<'_>,
) -> (Vec<Option<Range>>, Vec<String>) {
    let n = inst.per_rank.len();
    let mut cells: Vec<Option<Range>> = vec![None; n * n];
    let mut assumes: Vec<String> = Vec::new();
    for q in 0..n {
        cells[q * n + q] = Some((0, 0));
    }
    for (q, r, id) in &inst.pairs {
        if let Ok((b, why)) = answer(answers, id) {
            cells[q * n + r] = Some(b);
            cells[r * n + q] = Some((-b.1, -b.0));
            for a in why {
                if !assumes.contains(&a) {
                    assumes.push(a);
                }
            }
        }
    }
    for q in 1..n {
        for r in 1..n {
            if cells[q * n + r].is_none() {
                if let (Some(to_r), Some(to_q)) = (cells[r], cells[q]) {
                    cells[q * n + r] = Some((to_r.0 - to_q.1, to_r.1 - to_q.0));
                }
            }
        }
    }
    (cells, assumes)
}

/// `max(0, max over xs)` of each end: the bound of a maximum that includes 0.
fn max_with_zero(xs: impl Iterator<Item = Range>) -> Range {
    xs.fold((0, 0), |(lo, hi), (l, h)| (lo.max(l), hi.max(h)))
}

/// Every cross-rank figure of `inst` from the engine's `answers` (see the module docs).
pub fn of_instance(inst: &MatchedInstance, answers: &Answers<'_>) -> InstanceArrivals {
    let n = inst.per_rank.len();
    let dur = durations(inst);
    let (offset, assumes) = offset_based(inst, answers);
    let mut cells = Vec::with_capacity(n * n);
    let mut conflicts: Vec<String> = Vec::new();
    for q in 0..n {
        for r in 0..n {
            let free = (-dur[r], dur[q]);
            let both = offset[q * n + r].map_or(free, |o| (o.0.max(free.0), o.1.min(free.1)));
            if both.0 > both.1 {
                conflicts.push(format!(
                    "ranks {} and {}: the clock relations give [{}, {}], causality [{}, {}]",
                    inst.per_rank[q].0,
                    inst.per_rank[r].0,
                    crate::engine::wide(offset[q * n + r].map_or(0, |o| o.0)),
                    crate::engine::wide(offset[q * n + r].map_or(0, |o| o.1)),
                    crate::engine::wide(free.0),
                    crate::engine::wide(free.1)
                ));
            }
            cells.push(both);
        }
    }
    let m = Matrix { n, cells };
    let mut pairs = Vec::new();
    for q in 0..n {
        for r in (q + 1)..n {
            let question = inst
                .pairs
                .iter()
                .find(|(x, y, _)| (*x, *y) == (q, r))
                .map(|(_, _, id)| id.clone());
            let b = m.get(q, r);
            pairs.push(PairArrival {
                a: inst.per_rank[q].0,
                b: inst.per_rank[r].0,
                offset_based: offset[q * n + r].map_or_else(
                    || Split::Unknown {
                        why: "no clock relation joins the two ranks".to_owned(),
                    },
                    bounded,
                ),
                clock_free: bounded((-dur[r], dur[q])),
                bound: if b.0 > b.1 {
                    Split::Unknown {
                        why: "inconsistent-relation: the clock relations and causality conflict"
                            .to_owned(),
                    }
                } else {
                    bounded(b)
                },
                question,
            });
        }
    }
    if !conflicts.is_empty() {
        let why = format!(
            "inconsistent-relation: {}",
            conflicts.first().cloned().unwrap_or_default()
        );
        let unknown = || Split::Unknown { why: why.clone() };
        return InstanceArrivals {
            pairs,
            ranks: inst
                .per_rank
                .iter()
                .zip(&dur)
                .map(|((rank, _, _), d)| RankArrival {
                    rank: *rank,
                    duration_ns: i64::try_from(*d).unwrap_or(i64::MAX),
                    delay: unknown(),
                    wait: unknown(),
                    transfer: unknown(),
                })
                .collect(),
            skew: unknown(),
            last: None,
            assumes,
        };
    }
    let ranks: Vec<RankArrival> = (0..n)
        .map(|r| {
            let delay = max_with_zero((0..n).map(|q| m.get(q, r)));
            let wait = max_with_zero((0..n).map(|q| m.get(r, q)));
            let wait = (wait.0.min(dur[r]), wait.1.min(dur[r]));
            RankArrival {
                rank: inst.per_rank[r].0,
                duration_ns: i64::try_from(dur[r]).unwrap_or(i64::MAX),
                delay: bounded(delay),
                wait: bounded(wait),
                transfer: bounded((dur[r] - wait.1, dur[r] - wait.0)),
            }
        })
        .collect();
    let skew = ranks
        .iter()
        .filter_map(|r| range_of(&r.delay))
        .fold((0, 0), |(lo, hi), (l, h)| (lo.max(l), hi.max(h)));
    let last = (0..n)
        .find(|&r| (0..n).filter(|&q| q != r).all(|q| m.get(q, r).0 > 0))
        .map(|r| inst.per_rank[r].0);
    InstanceArrivals {
        pairs,
        ranks,
        skew: bounded(skew),
        last,
        assumes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relation::collectives::Instance;
    use crate::units::Nanos;

    fn inst(ranks: &[(u32, i64, i64)], pairs: &[(usize, usize, &str)]) -> MatchedInstance {
        MatchedInstance {
            key: "0/allreduce".into(),
            k: 0,
            per_rank: ranks
                .iter()
                .map(|&(r, s, e)| {
                    (
                        r,
                        Instance {
                            group: "0".into(),
                            name: "allreduce".into(),
                            start: Nanos::new(s),
                            end: Nanos::new(e),
                        },
                        None,
                    )
                })
                .collect(),
            pairs: pairs
                .iter()
                .map(|&(q, r, id)| (q, r, id.to_owned()))
                .collect(),
        }
    }

    #[test]
    fn without_any_relation_the_clock_free_bound_bounds_the_delay_but_names_no_last_rank() {
        // r0 runs 100 ns, r1 runs 40 ns: start_1 − start_0 ∈ [−40, 100].
        let i = inst(&[(0, 1_000, 1_100), (1, 9_000, 9_040)], &[(0, 1, "q")]);
        let a = of_instance(&i, &HashMap::new());
        assert_eq!(a.pairs[0].clock_free, bounded((-40, 100)));
        assert_eq!(a.pairs[0].bound, bounded((-40, 100)));
        assert!(matches!(a.pairs[0].offset_based, Split::Unknown { .. }));
        assert_eq!(a.skew, bounded((0, 100)));
        assert_eq!(a.last, None);
        // r0 waits at most its whole kernel; r1 at most 40.
        assert_eq!(a.ranks[0].wait, bounded((0, 100)));
        assert_eq!(a.ranks[1].wait, bounded((0, 40)));
        assert_eq!(a.ranks[1].transfer, bounded((0, 40)));
    }

    #[test]
    fn a_rank_is_last_only_when_every_pair_puts_it_after() {
        // Three ranks; the engine's answers are given through a report-free map.
        let v01 = Verdict::bounded(Nanos::new(10), Nanos::new(30));
        let v02 = Verdict::bounded(Nanos::new(50), Nanos::new(60));
        let v12 = Verdict::bounded(Nanos::new(5), Nanos::new(45));
        let answers: Answers<'_> = [("a01", &v01), ("a02", &v02), ("a12", &v12)]
            .into_iter()
            .collect();
        let i = inst(
            &[(0, 0, 1_000), (1, 0, 1_000), (2, 0, 1_000)],
            &[(0, 1, "a01"), (0, 2, "a02"), (1, 2, "a12")],
        );
        let a = of_instance(&i, &answers);
        assert_eq!(a.last, Some(2));
        // Delay of r2 over the first arrival (r0): max over q of [lo, hi] = [50, 60].
        assert_eq!(a.ranks[2].delay, bounded((50, 60)));
        assert_eq!(a.skew, bounded((50, 60)));
        // r0 waits for the last arrival: [50, 60]; transfers the rest of 1000.
        assert_eq!(a.ranks[0].wait, bounded((50, 60)));
        assert_eq!(a.ranks[0].transfer, bounded((940, 950)));
        // r1 waits max(start_2 − start_1) = [5, 45].
        assert_eq!(a.ranks[1].wait, bounded((5, 45)));
    }

    #[test]
    fn pairs_not_asked_are_bounded_through_the_reference() {
        let v01 = Verdict::bounded(Nanos::new(10), Nanos::new(30));
        let v02 = Verdict::bounded(Nanos::new(50), Nanos::new(60));
        let answers: Answers<'_> = [("a01", &v01), ("a02", &v02)].into_iter().collect();
        let i = inst(
            &[(0, 0, 1_000), (1, 0, 1_000), (2, 0, 1_000)],
            &[(0, 1, "a01"), (0, 2, "a02")],
        );
        let a = of_instance(&i, &answers);
        // start_2 − start_1 ∈ [50 − 30, 60 − 10] = [20, 50].
        assert_eq!(a.pairs[2].offset_based, bounded((20, 50)));
        assert_eq!(a.pairs[2].question, None);
        assert_eq!(a.last, Some(2));
    }

    #[test]
    fn relations_that_conflict_with_causality_leave_every_figure_unknown() {
        let v = Verdict::bounded(Nanos::new(500), Nanos::new(600));
        let answers: Answers<'_> = [("a01", &v)].into_iter().collect();
        let i = inst(&[(0, 0, 100), (1, 0, 100)], &[(0, 1, "a01")]);
        let a = of_instance(&i, &answers);
        assert!(matches!(a.skew, Split::Unknown { .. }));
        assert!(matches!(a.pairs[0].bound, Split::Unknown { .. }));
        assert_eq!(a.last, None);
    }

    /// One generated job: per instance and rank, the true arrival and end (true time), and
    /// per rank its clock's offset (a reading is true time + offset).
    #[derive(Debug)]
    struct Job {
        truth: Vec<Vec<(i64, i64)>>,
        offsets: Vec<i64>,
    }

    fn job() -> impl proptest::strategy::Strategy<Value = Job> {
        use proptest::prelude::*;
        (2usize..5, 1usize..5).prop_flat_map(|(n, k)| {
            (
                proptest::collection::vec(
                    proptest::collection::vec((0i64..1_000_000, 0i64..100_000), n),
                    k,
                ),
                proptest::collection::vec(-1_000_000_000_000i64..1_000_000_000_000, n),
            )
                .prop_map(|(draws, offsets)| {
                    let truth = draws
                        .iter()
                        .enumerate()
                        .map(|(i, ranks)| {
                            let base = i64::try_from(i).unwrap() * 10_000_000;
                            let last = ranks.iter().map(|(a, _)| base + a).max().unwrap();
                            // Every kernel ends after the last arrival: end = last + transfer.
                            ranks.iter().map(|(a, t)| (base + a, last + t)).collect()
                        })
                        .collect();
                    Job { truth, offsets }
                })
        })
    }

    /// The instances of `job` as the ranks' clocks read them, every pair asked (`a<q><r>`).
    fn read(job: &Job) -> Vec<MatchedInstance> {
        let n = job.offsets.len();
        job.truth
            .iter()
            .enumerate()
            .map(|(k, ranks)| {
                let ranks: Vec<(u32, i64, i64)> = ranks
                    .iter()
                    .zip(&job.offsets)
                    .enumerate()
                    .map(|(r, ((s, e), o))| (u32::try_from(r).unwrap(), s + o, e + o))
                    .collect();
                let ids: Vec<String> = (0..n)
                    .flat_map(|q| ((q + 1)..n).map(move |r| format!("a{q}{r}")))
                    .collect();
                let pairs: Vec<(usize, usize, &str)> = (0..n)
                    .flat_map(|q| ((q + 1)..n).map(move |r| (q, r)))
                    .zip(&ids)
                    .map(|((q, r), id)| (q, r, id.as_str()))
                    .collect();
                let mut m = inst(&ranks, &pairs);
                m.k = k;
                m
            })
            .collect()
    }

    /// Checks every figure of `a` against the truth of one instance.
    fn contains_truth(a: &InstanceArrivals, truth: &[(i64, i64)]) -> Result<(), String> {
        let inside = |s: &Split, v: i64, what: &str| match range_of(s) {
            Some((lo, hi)) if lo <= i128::from(v) && i128::from(v) <= hi => Ok(()),
            _ => Err(format!("{what}: {s:?} misses {v}")),
        };
        let first = truth.iter().map(|t| t.0).min().unwrap();
        let last = truth.iter().map(|t| t.0).max().unwrap();
        for p in &a.pairs {
            let d = truth[p.b as usize].0 - truth[p.a as usize].0;
            inside(&p.clock_free, d, "clock-free")?;
            inside(&p.bound, d, "bound")?;
        }
        for r in &a.ranks {
            let (s, e) = truth[r.rank as usize];
            inside(&r.delay, s - first, "delay")?;
            inside(&r.wait, last - s, "wait")?;
            inside(&r.transfer, e - last, "transfer")?;
        }
        inside(&a.skew, last - first, "skew")?;
        if let Some(l) = a.last {
            let s = truth[l as usize].0;
            if truth
                .iter()
                .enumerate()
                .any(|(q, t)| q != l as usize && t.0 >= s)
            {
                return Err(format!("rank {l} named last but is not"));
            }
        }
        Ok(())
    }

    proptest::proptest! {
        /// Generated collectives with known true arrivals and arbitrary clock offsets: the
        /// clock-free bound, the collectives' bound and their intersection always contain the
        /// truth, and where the instance gave its pair's relation the collectives' bound lies
        /// inside the clock-free one.
        #[test]
        fn every_bound_contains_the_true_arrivals(job in job()) {
            let instances = read(&job);
            let n = job.offsets.len();
            // The relations the collectives give (crate::relation::collectives), then the
            // engine's rule: start_b − start_a ∈ [read − hi, read − lo].
            let mut verdicts: Vec<(String, Verdict)> = Vec::new();
            for q in 0..n {
                for r in (q + 1)..n {
                    let side = |x: usize| -> Vec<crate::relation::collectives::Instance> {
                        instances.iter().map(|m| m.per_rank[x].1.clone()).collect()
                    };
                    let e = crate::relation::collectives::pair(&side(q), &side(r), 0);
                    let bound = e.overall.unwrap().bound;
                    proptest::prop_assert!(bound.contains(Nanos::new(job.offsets[r] - job.offsets[q])));
                    for m in &instances {
                        let read = m.per_rank[r].1.start.as_i64() - m.per_rank[q].1.start.as_i64();
                        verdicts.push((
                            format!("{}:a{q}{r}", m.k),
                            Verdict::bounded(
                                Nanos::new(read - bound.hi().as_i64()),
                                Nanos::new(read - bound.lo().as_i64()),
                            ),
                        ));
                    }
                }
            }
            for (m, truth) in instances.iter().zip(&job.truth) {
                let prefix = format!("{}:", m.k);
                let answers: Answers<'_> = verdicts
                    .iter()
                    .filter_map(|(id, v)| Some((id.strip_prefix(&prefix)?, v)))
                    .collect();
                let with = of_instance(m, &answers);
                let checked = contains_truth(&with, truth);
                proptest::prop_assert!(checked.is_ok(), "{:?}", checked);
                for p in &with.pairs {
                    let (o, f) = (range_of(&p.offset_based).unwrap(), range_of(&p.clock_free).unwrap());
                    proptest::prop_assert!(f.0 <= o.0 && o.1 <= f.1, "{:?} not inside {:?}", o, f);
                }
                let without = of_instance(m, &HashMap::new());
                let checked = contains_truth(&without, truth);
                proptest::prop_assert!(checked.is_ok(), "{:?}", checked);
                proptest::prop_assert_eq!(without.last, None);
            }
        }
    }
}
