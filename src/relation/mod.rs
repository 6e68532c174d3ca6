//! Relations between clocks, and the bounds they give (SPEC §10).
//!
//! Two clocks are never comparable by default. A **relation** says that readings `t_a` on
//! clock `a` and `t_b` on clock `b` name the same instant when `t_b − t_a ∈ [lo, hi]`: a closed
//! bound on `offset(b) − offset(a)`. This module answers, for any two clocks, what the
//! relations together imply about their offset:
//!
//! - a chain composes by interval addition: `a→b [l1, h1]` and `b→c [l2, h2]` give
//!   `a→c [l1 + l2, h1 + h2]`;
//! - several relations (or several chains) between one pair intersect;
//! - no chain at all: unrelated (the caller answers `cross-instance` / `cross-domain`);
//! - an empty intersection anywhere on the way: inconsistent, naming the relations.
//!
//! Both rules are one computation. Each relation is two difference constraints,
//! `off_b − off_a ≤ hi` and `off_a − off_b ≤ −lo`: edges `a→b` of weight `hi` and `b→a` of
//! weight `−lo`. The tightest upper bound on `off_y − off_x` is the shortest path from `x` to
//! `y` (a path adds its edges: interval addition; the shortest of several paths is the
//! intersection), the tightest lower bound is minus the shortest path from `y` to `x`, and
//! conflicting evidence is exactly a cycle of negative weight (Bellman–Ford). Removing a
//! relation removes edges, so no shortest path gets shorter: a bound never narrows when
//! evidence is removed, and never widens when consistent evidence is added.
//!
//! Cost: O(clocks × relations) per question. All sums are `i128`: no overflow inside.
//!
//! [`collectives`] derives relations from matched collective kernels on two ranks.

pub mod collectives;

use std::fmt;

use crate::units::Nanos;

/// A closed range `[lo, hi]` of nanoseconds; empty when `lo > hi` (conflicting evidence).
///
/// ```text
///      lo                 hi
///  ─────[==================]─────►  offset(b) − offset(a)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    lo: Nanos,
    hi: Nanos,
}

impl Bound {
    /// `[lo, hi]`, kept as given (an `lo > hi` bound is empty, and says so).
    pub fn new(lo: Nanos, hi: Nanos) -> Self {
        Bound { lo, hi }
    }

    /// The exact value `[v, v]`.
    pub fn point(v: Nanos) -> Self {
        Bound { lo: v, hi: v }
    }

    /// Lower end, inclusive.
    pub fn lo(self) -> Nanos {
        self.lo
    }

    /// Upper end, inclusive.
    pub fn hi(self) -> Nanos {
        self.hi
    }

    /// Whether no value lies in the bound (`lo > hi`).
    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    /// `hi − lo`, exact (negative for an empty bound).
    pub fn width(self) -> i128 {
        i128::from(self.hi.as_i64()) - i128::from(self.lo.as_i64())
    }

    /// Whether `v` lies in the bound.
    pub fn contains(self, v: Nanos) -> bool {
        self.lo <= v && v <= self.hi
    }

    /// The intersection (possibly empty).
    pub fn intersect(self, other: Bound) -> Bound {
        Bound {
            lo: self.lo.max(other.lo),
            hi: self.hi.min(other.hi),
        }
    }

    /// Interval addition `[l1 + l2, h1 + h2]`; `None` past `i64` nanoseconds.
    pub fn plus(self, other: Bound) -> Option<Bound> {
        Some(Bound {
            lo: self.lo.checked_add(other.lo)?,
            hi: self.hi.checked_add(other.hi)?,
        })
    }
}

impl fmt::Display for Bound {
    /// `[-1 us, 2.5 us]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.lo, self.hi)
    }
}

/// Where a relation comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The user vouches for it.
    Declared,
    /// Derived from matched collectives on the two clocks ([`collectives`]).
    Collectives,
}

impl Source {
    /// The kebab-case word used in case files.
    pub fn word(self) -> &'static str {
        match self {
            Source::Declared => "declared",
            Source::Collectives => "collectives",
        }
    }
}

/// One relation: `offset(b) − offset(a) ∈ bound`, between two nodes (clock indices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    /// How messages name it (`r01`, or `clock_relations[3]`).
    pub name: String,
    /// Clock `a`.
    pub a: usize,
    /// Clock `b`.
    pub b: usize,
    /// The bound on `offset(b) − offset(a)`; may be empty (then it conflicts with itself).
    pub bound: Bound,
    /// Where it comes from.
    pub source: Source,
}

/// What the relations imply about `offset(y) − offset(x)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Related {
    /// Bounded by `[lo, hi]` (`i128`: a chain may leave `i64`), through these relations
    /// (indices into the slice given, in order of first use).
    Bounded {
        /// Tightest lower bound.
        lo: i128,
        /// Tightest upper bound.
        hi: i128,
        /// The relations on the two tightest chains.
        via: Vec<usize>,
    },
    /// No chain of relations joins the two clocks.
    Unrelated,
    /// The relations joined to the two clocks admit no offset at all; these form a cycle of
    /// conflicting bounds (indices into the slice given).
    Inconsistent {
        /// The conflicting relations.
        conflicting: Vec<usize>,
    },
}

/// One directed constraint edge: `off[to] − off[from] ≤ weight`, from relation `rel`.
#[derive(Clone, Copy, Debug)]
struct Edge {
    from: usize,
    to: usize,
    weight: i128,
    rel: usize,
}

fn edges(relations: &[Relation]) -> Vec<Edge> {
    let mut out = Vec::with_capacity(relations.len() * 2);
    for (k, r) in relations.iter().enumerate() {
        out.push(Edge {
            from: r.a,
            to: r.b,
            weight: i128::from(r.bound.hi.as_i64()),
            rel: k,
        });
        out.push(Edge {
            from: r.b,
            to: r.a,
            weight: -i128::from(r.bound.lo.as_i64()),
            rel: k,
        });
    }
    out
}

/// Distances from a source (`None`: unreachable) and the edge that reached each node.
type Paths = (Vec<Option<i128>>, Vec<Option<usize>>);

/// Shortest paths from `source`: distances and the edge that reached each node; or the
/// relations of a negative cycle reachable from `source`.
fn shortest(nodes: usize, edges: &[Edge], source: usize) -> Result<Paths, Vec<usize>> {
    let mut dist: Vec<Option<i128>> = vec![None; nodes];
    let mut pred: Vec<Option<usize>> = vec![None; nodes];
    dist[source] = Some(0);
    // Bellman–Ford: `nodes` rounds; a relaxation in the last one proves a negative cycle.
    let mut last_relaxed = None;
    for _ in 0..nodes.max(1) {
        last_relaxed = None;
        for (k, e) in edges.iter().enumerate() {
            let Some(d) = dist[e.from] else { continue };
            let candidate = d + e.weight;
            if dist[e.to].is_none_or(|cur| candidate < cur) {
                dist[e.to] = Some(candidate);
                pred[e.to] = Some(k);
                last_relaxed = Some(e.to);
            }
        }
        if last_relaxed.is_none() {
            return Ok((dist, pred));
        }
    }
    let Some(mut v) = last_relaxed else {
        return Ok((dist, pred));
    };
    // Walk back `nodes` steps to land on the cycle, then collect it.
    for _ in 0..nodes {
        match pred[v] {
            Some(k) => v = edges[k].from,
            None => break,
        }
    }
    let start = v;
    let mut cycle = Vec::new();
    for _ in 0..=nodes {
        let Some(k) = pred[v] else { break };
        if !cycle.contains(&edges[k].rel) {
            cycle.push(edges[k].rel);
        }
        v = edges[k].from;
        if v == start {
            break;
        }
    }
    cycle.sort_unstable();
    Err(cycle)
}

/// The relations on the tightest chain from the search's source to `to`.
fn chain(edges: &[Edge], pred: &[Option<usize>], to: usize, via: &mut Vec<usize>) {
    let mut v = to;
    for _ in 0..pred.len() {
        let Some(k) = pred[v] else { break };
        if !via.contains(&edges[k].rel) {
            via.push(edges[k].rel);
        }
        v = edges[k].from;
    }
}

/// The relations among `nodes` clocks as a constraint graph, answering many questions: the
/// shortest paths from each clock are computed once, on first use.
#[derive(Clone, Debug)]
pub struct Graph {
    nodes: usize,
    edges: Vec<Edge>,
    /// Index in the caller's relation slice of each relation kept (ends in range).
    original: Vec<usize>,
    from: Vec<std::sync::OnceLock<Result<Paths, Vec<usize>>>>,
}

impl Graph {
    /// The graph of `relations` among `nodes` clocks (indices `0..nodes`); relations whose
    /// ends are out of range are ignored.
    pub fn new(nodes: usize, relations: &[Relation]) -> Self {
        let kept: Vec<(usize, &Relation)> = relations
            .iter()
            .enumerate()
            .filter(|(_, r)| r.a < nodes && r.b < nodes)
            .collect();
        let usable: Vec<Relation> = kept.iter().map(|(_, r)| (*r).clone()).collect();
        Graph {
            nodes,
            edges: edges(&usable),
            original: kept.iter().map(|(k, _)| *k).collect(),
            from: (0..nodes).map(|_| std::sync::OnceLock::new()).collect(),
        }
    }

    fn paths(&self, source: usize) -> &Result<Paths, Vec<usize>> {
        self.from[source].get_or_init(|| shortest(self.nodes, &self.edges, source))
    }

    fn back(&self, list: &[usize]) -> Vec<usize> {
        list.iter().map(|&k| self.original[k]).collect()
    }

    /// What the relations imply about `offset(y) − offset(x)`. `x == y` is `[0, 0]` unless
    /// the relations conflict.
    ///
    /// Time: O(nodes × relations) for the first question from each of `x` and `y`, then
    /// O(nodes) (the chains named in the answer).
    pub fn relate(&self, x: usize, y: usize) -> Related {
        if x >= self.nodes || y >= self.nodes {
            return Related::Unrelated;
        }
        let (from_x, pred_x) = match self.paths(x) {
            Ok(found) => found,
            Err(cycle) => {
                return Related::Inconsistent {
                    conflicting: self.back(cycle),
                }
            }
        };
        let Some(hi) = from_x[y] else {
            return Related::Unrelated;
        };
        // y is reachable from x and every relation gives edges both ways, so x is reachable
        // from y and the same component has no negative cycle.
        let (from_y, pred_y) = match self.paths(y) {
            Ok(found) => found,
            Err(cycle) => {
                return Related::Inconsistent {
                    conflicting: self.back(cycle),
                }
            }
        };
        let Some(back_dist) = from_y[x] else {
            return Related::Unrelated;
        };
        let mut via = Vec::new();
        chain(&self.edges, pred_x, y, &mut via);
        chain(&self.edges, pred_y, x, &mut via);
        Related::Bounded {
            lo: -back_dist,
            hi,
            via: self.back(&via),
        }
    }
}

/// What `relations` among `nodes` clocks (indices `0..nodes`) imply about
/// `offset(y) − offset(x)`: [`Graph::relate`] on a graph used once.
pub fn relate(nodes: usize, relations: &[Relation], x: usize, y: usize) -> Related {
    Graph::new(nodes, relations).relate(x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(name: &str, a: usize, b: usize, lo: i64, hi: i64) -> Relation {
        Relation {
            name: name.into(),
            a,
            b,
            bound: Bound::new(Nanos::new(lo), Nanos::new(hi)),
            source: Source::Declared,
        }
    }

    fn bounded(r: Related) -> (i128, i128) {
        match r {
            Related::Bounded { lo, hi, .. } => (lo, hi),
            other => panic!("expected bounded, got {other:?}"),
        }
    }

    #[test]
    fn one_relation_read_both_ways() {
        let rs = [rel("r", 0, 1, -5, 20)];
        assert_eq!(bounded(relate(2, &rs, 0, 1)), (-5, 20));
        assert_eq!(bounded(relate(2, &rs, 1, 0)), (-20, 5));
        assert_eq!(bounded(relate(2, &rs, 0, 0)), (0, 0));
    }

    #[test]
    fn a_chain_adds_its_bounds() {
        //  a ──[1, 3]──► b ──[10, 20]──► c   ⇒   a→c [11, 23]
        let rs = [rel("ab", 0, 1, 1, 3), rel("bc", 1, 2, 10, 20)];
        match relate(3, &rs, 0, 2) {
            Related::Bounded { lo, hi, via } => {
                assert_eq!((lo, hi), (11, 23));
                assert_eq!(via.len(), 2);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn two_relations_on_one_pair_intersect() {
        let rs = [rel("wide", 0, 1, -100, 100), rel("narrow", 1, 0, -30, 10)];
        // narrow says off0 − off1 ∈ [-30, 10], i.e. off1 − off0 ∈ [-10, 30].
        assert_eq!(bounded(relate(2, &rs, 0, 1)), (-10, 30));
    }

    #[test]
    fn a_chain_and_a_direct_relation_intersect() {
        let rs = [
            rel("ab", 0, 1, 0, 10),
            rel("bc", 1, 2, 0, 10),
            rel("ac", 0, 2, 5, 50),
        ];
        assert_eq!(bounded(relate(3, &rs, 0, 2)), (5, 20));
    }

    #[test]
    fn unrelated_clocks_stay_unrelated() {
        let rs = [rel("ab", 0, 1, 0, 10)];
        assert_eq!(relate(3, &rs, 0, 2), Related::Unrelated);
        assert_eq!(relate(3, &[], 0, 1), Related::Unrelated);
    }

    #[test]
    fn conflicting_relations_are_named() {
        let rs = [
            rel("ab", 0, 1, 0, 10),
            rel("other", 2, 3, 0, 1),
            rel("ab-again", 0, 1, 20, 30),
        ];
        assert_eq!(
            relate(4, &rs, 0, 1),
            Related::Inconsistent {
                conflicting: vec![0, 2]
            }
        );
        // The conflict does not reach an unrelated component.
        assert_eq!(bounded(relate(4, &rs, 2, 3)), (0, 1));
    }

    #[test]
    fn a_reversed_relation_conflicts_with_itself() {
        let rs = [rel("bad", 0, 1, 10, 5)];
        assert_eq!(
            relate(2, &rs, 0, 1),
            Related::Inconsistent {
                conflicting: vec![0]
            }
        );
    }

    #[test]
    fn a_conflicting_triangle_is_found() {
        // a→b [0,1], b→c [0,1], a→c [5,6]: a→c through b is at most 2 < 5.
        let rs = [
            rel("ab", 0, 1, 0, 1),
            rel("bc", 1, 2, 0, 1),
            rel("ac", 0, 2, 5, 6),
        ];
        match relate(3, &rs, 0, 1) {
            Related::Inconsistent { conflicting } => assert_eq!(conflicting, vec![0, 1, 2]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn extreme_bounds_do_not_overflow() {
        let rs = [
            rel("ab", 0, 1, i64::MIN, i64::MAX),
            rel("bc", 1, 2, i64::MIN, i64::MAX),
        ];
        let (lo, hi) = bounded(relate(3, &rs, 0, 2));
        assert_eq!(lo, 2 * i128::from(i64::MIN));
        assert_eq!(hi, 2 * i128::from(i64::MAX));
    }

    #[test]
    fn bound_arithmetic() {
        let a = Bound::new(Nanos::new(1), Nanos::new(3));
        let b = Bound::new(Nanos::new(2), Nanos::new(10));
        assert_eq!(a.plus(b), Some(Bound::new(Nanos::new(3), Nanos::new(13))));
        assert_eq!(a.intersect(b), Bound::new(Nanos::new(2), Nanos::new(3)));
        assert!(a.intersect(Bound::point(Nanos::new(5))).is_empty());
        assert_eq!(b.width(), 8);
        assert!(b.contains(Nanos::new(10)) && !b.contains(Nanos::new(11)));
        assert_eq!(a.to_string(), "[1 ns, 3 ns]");
    }
}
