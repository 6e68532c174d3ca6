//! `worksheet import` of several traces that are ranks of one job: **one multi-rank case**.
//!
//! Each file is imported by the single-trace importer ([`crate::import::import_path`]), in
//! parallel (at most one trace per core in flight). Its rank is `distributedInfo.rank`; a
//! trace without one takes its position in the argument order, and the summary says so.
//! Every id of a rank's case is prefixed by `r<rank>.` (clock `r1.kineto`, stream
//! `r1.gpu1-s7`, question `stream:r1.gpu1-s7`): **one clock per rank**, never merged, since
//! nothing in a trace proves two ranks share a clock. The merged case is the ranks' cases one
//! after another plus the cross-rank part below, but it is not held: each rank is validated,
//! evaluated and summarised as its file finishes, and its case dropped ([`part`]), so memory
//! is bounded by the traces in flight; only `-o` and `worksheet export` keep the ranks' cases
//! to build it ([`MultiRank::take_merged`]).
//!
//! The ranks' clocks are then related by their collectives (SPEC §10,
//! [`crate::relation::collectives`]): the k-th instance of each collective (same process
//! group and collective name, from the kernels' `args`) on two ranks bounds their offset, and
//! the intersection over all instances becomes a `clock_relations` entry with `source:
//! collectives` and its evidence (width, count, which instance gave each side, and the bound
//! per window of instances, where drift shows). A collective whose instance counts differ
//! between two ranks is not used for that pair: the traces' windows may hold different
//! instances, and matching by order would then pair different operations. Evidence that
//! conflicts gives no relation, and the summary says so.
//!
//! The cross-rank case ([`MultiRank::case`]) holds every rank's clocks, these relations, and
//! per matched instance and rank, marks at the kernel's start and end,
//! `elapsed` questions from the reference rank's start to each other rank's start (the
//! arrival offsets, bounded through the relations) and `clock-offset` questions of every rank
//! against the reference. It is evaluated once; [`summary`] reads the engine's answers to
//! them: arrival skew, transfer after the last arrival, stragglers ([`merged`] puts both
//! summaries together).

pub mod arrivals;
pub mod declare;
pub mod folder;
pub mod listing;
pub mod merged;
pub mod part;
mod read;
pub mod size;
pub mod straggler;
pub mod summary;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::case::raw::{
    RawCase, RawClock, RawClockRelation, RawMark, RawQuestion, RawRelationSource, RawTime,
};
use crate::case::CaseError;
use crate::import::{ImportError, ImportOptions};
use crate::relation::collectives::{pair, Evidence, Instance, PairEvidence};

pub use merged::{summarize_all, Summaries};
pub use part::{RankOptions, RankPart, RankRows};
pub use read::{rank_facts, Collective, RankFacts};
pub use summary::{summarize_ranks, RanksSummary};

/// Up to this many ranks, every pair of ranks gets a relation; past it, every rank is related
/// to the reference rank and to the next rank (enough to join them all, O(ranks) relations).
pub const ALL_PAIRS_UP_TO: usize = 8;

/// One rank of a multi-rank import.
#[derive(Clone, Debug)]
pub struct RankTrace {
    /// The file it came from.
    pub file: String,
    /// Its rank.
    pub rank: u32,
    /// Whether the rank came from the argument order (the trace names none).
    pub rank_from_order: bool,
    /// The rank's clock id in the merged case (`r1.kineto`).
    pub clock: String,
    /// What the second pass found: collectives, kernels without a group.
    pub facts: RankFacts,
    /// The single-trace import's format line.
    pub format: String,
    /// The trace's provenance, listed per rank in the merged case's.
    pub provenance: Option<serde_json::Map<String, serde_json::Value>>,
    /// What the summary prints of this rank, computed when its file finished (the rank's
    /// case is not kept), or why its case did not validate (an importer bug).
    pub rows: Result<RankRows, CaseError>,
    /// The rank's prefixed case, only when [`RankOptions::keep_cases`] asked for it.
    pub case: Option<RawCase>,
    /// The rank's audit from its import's pass (or why its model could not be read), only
    /// when [`RankOptions::audits`] asked for it.
    pub audit: Option<Result<crate::audit::Audit, ImportError>>,
}

/// The evidence relating two ranks' clocks.
#[derive(Clone, Debug)]
pub struct PairRelation {
    /// Rank `a` (the reference side).
    pub a: u32,
    /// Rank `b`.
    pub b: u32,
    /// Matched instances, the bound over all of them and per window.
    pub evidence: PairEvidence,
    /// Collectives left out for this pair, with why.
    pub excluded: Vec<(String, String)>,
    /// The relation's id in the case, when the evidence gave one.
    pub relation: Option<String>,
}

/// One matched collective instance across the ranks that ran it.
#[derive(Clone, Debug)]
pub struct MatchedInstance {
    /// `group/name`.
    pub key: String,
    /// Its index among that collective's instances (start order), from 0.
    pub k: usize,
    /// Per rank: the rank, its instance, and the elapsed question from the reference rank's
    /// start to this rank's start (`None` for the reference itself).
    pub per_rank: Vec<(u32, Instance, Option<String>)>,
    /// The `elapsed` questions between two ranks' starts: `(a, b, id)` with `a < b` indices
    /// into `per_rank`, asking `start_b − start_a`. Every pair up to [`ALL_PAIRS_UP_TO`]
    /// ranks, else the reference's pairs only ([`arrivals`] derives the others).
    pub pairs: Vec<(usize, usize, String)>,
}

/// A multi-rank import: the cross-rank case, the ranks' summaries and what was matched.
#[derive(Clone, Debug)]
pub struct MultiRank {
    /// The cross-rank case: every rank's clocks, the clock relations, the collectives' marks,
    /// the `arrival:` and `offset:` questions, and the provenance. The ranks' own sections
    /// are not in it ([`MultiRank::take_merged`] adds them when they were kept).
    pub case: RawCase,
    /// The ranks, in rank order.
    pub ranks: Vec<RankTrace>,
    /// The reference rank (the lowest).
    pub reference: u32,
    /// Relations between pairs of ranks.
    pub pairs: Vec<PairRelation>,
    /// Collective instances matched on every rank that ran the collective.
    pub instances: Vec<MatchedInstance>,
    /// What was assumed or left out.
    pub notes: Vec<String>,
    /// What the traces suggest but the import does not assume (ranks on one host).
    pub suggestions: Vec<String>,
}

/// The trace files `paths` name: files as given, folders' regular `*.json` / `*.json.gz`
/// files (not recursive), sorted by name ([`listing::list`], which also says what it skips).
///
/// # Errors
/// `io` for a folder that cannot be listed; `bad-value` for fewer than two traces.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
    listing::list(paths).map(|l| l.files)
}

/// Which pairs of ranks (indices into the rank list) get a relation.
fn pairs_to_relate(n: usize) -> Vec<(usize, usize)> {
    if n <= ALL_PAIRS_UP_TO {
        (0..n)
            .flat_map(|a| ((a + 1)..n).map(move |b| (a, b)))
            .collect()
    } else {
        let mut out: Vec<(usize, usize)> = (1..n).map(|b| (0, b)).collect();
        out.extend((1..n.saturating_sub(1)).map(|a| (a, a + 1)));
        out
    }
}

/// Instances grouped by `group/name`, each list in start order.
fn by_key(list: &[Collective]) -> BTreeMap<String, Vec<&Collective>> {
    let mut map: BTreeMap<String, Vec<&Collective>> = BTreeMap::new();
    for c in list {
        map.entry(format!("{}/{}", c.instance.group, c.instance.name))
            .or_default()
            .push(c);
    }
    for v in map.values_mut() {
        v.sort_by_key(|c| (c.instance.start, c.instance.end));
    }
    map
}

fn t(v: crate::units::Nanos) -> RawTime {
    RawTime::from(v)
}

/// The evidence lines of a relation from collectives.
fn evidence_lines(e: &Evidence, windows: &[Evidence]) -> Vec<String> {
    let mut out = vec![
        format!(
            "{} matched collective instance(s); width {}",
            e.count,
            crate::engine::wide(e.bound.width())
        ),
        format!(
            "lo {} from {}: start on b − end on a",
            e.lo_from.value, e.lo_from.label
        ),
        format!(
            "hi {} from {}: end on b − start on a",
            e.hi_from.value, e.hi_from.label
        ),
    ];
    for (i, w) in windows.iter().enumerate() {
        out.push(format!(
            "window {} ({} instance(s)): {}{}",
            i + 1,
            w.count,
            w.bound,
            if w.bound.is_empty() {
                " (conflicts)"
            } else {
                ""
            }
        ));
    }
    out
}

/// Relations between pairs of ranks from their matched collectives, added to `case`.
fn relate_pairs(
    case: &mut RawCase,
    ranks: &[RankTrace],
    keyed: &[BTreeMap<String, Vec<&Collective>>],
    notes: &mut Vec<String>,
) -> Vec<PairRelation> {
    let mut pairs = Vec::new();
    for (ia, ib) in pairs_to_relate(ranks.len()) {
        let (ka, kb) = (&keyed[ia], &keyed[ib]);
        let mut excluded = Vec::new();
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        for (key, xa) in ka {
            match kb.get(key) {
                Some(xb) if xb.len() == xa.len() => {
                    la.extend(xa.iter().map(|c| c.instance.clone()));
                    lb.extend(xb.iter().map(|c| c.instance.clone()));
                }
                Some(xb) => excluded.push((
                    key.clone(),
                    format!(
                        "{} instance(s) on rank {}, {} on rank {}: the traces may hold different instances, so matching by order is unsafe",
                        xa.len(), ranks[ia].rank, xb.len(), ranks[ib].rank
                    ),
                )),
                None => {}
            }
        }
        let window = if la.len() >= 8 {
            la.len().div_ceil(4)
        } else {
            0
        };
        let evidence = pair(&la, &lb, window);
        let relation = match &evidence.overall {
            Some(e) if !e.bound.is_empty() => {
                let id = format!("collectives:r{}-r{}", ranks[ia].rank, ranks[ib].rank);
                case.clock_relations.push(RawClockRelation {
                    id: Some(id.clone()),
                    a: ranks[ia].clock.clone(),
                    b: ranks[ib].clock.clone(),
                    lo: t(e.bound.lo()),
                    hi: t(e.bound.hi()),
                    source: RawRelationSource::Collectives,
                    evidence: evidence_lines(e, &evidence.windows),
                });
                Some(id)
            }
            Some(e) => {
                notes.push(format!(
                    "ranks {} and {}: the collectives conflict ({} from {} is above {} from {}): no relation",
                    ranks[ia].rank, ranks[ib].rank, e.lo_from.value, e.lo_from.label, e.hi_from.value, e.hi_from.label
                ));
                None
            }
            None => None,
        };
        pairs.push(PairRelation {
            a: ranks[ia].rank,
            b: ranks[ib].rank,
            evidence,
            excluded,
            relation,
        });
    }

    pairs
}

/// Marks and questions per matched instance (the reference is the lowest rank that ran it),
/// added to `case`.
fn instance_questions(
    case: &mut RawCase,
    ranks: &[RankTrace],
    keyed: &[BTreeMap<String, Vec<&Collective>>],
) -> Vec<MatchedInstance> {
    let mut instances = Vec::new();
    let keys: std::collections::BTreeSet<&String> = keyed.iter().flat_map(BTreeMap::keys).collect();
    for key in keys {
        let holders: Vec<usize> = (0..ranks.len())
            .filter(|&i| keyed[i].contains_key(key))
            .collect();
        let counts: Vec<usize> = holders.iter().map(|&i| keyed[i][key].len()).collect();
        if holders.len() < 2 || counts.iter().any(|&c| c != counts[0]) {
            continue;
        }
        let lists: Vec<&Vec<&Collective>> = holders.iter().map(|&i| &keyed[i][key]).collect();
        for k in 0..counts[0] {
            let mut per_rank = Vec::new();
            let mut pairs = Vec::new();
            let ref_mark = format!("r{}.{key}#{k}:start", ranks[holders[0]].rank);
            for (&i, list) in holders.iter().zip(&lists) {
                let c = list[k];
                let r = ranks[i].rank;
                for (end, at) in [("start", c.instance.start), ("end", c.instance.end)] {
                    case.marks.push(RawMark {
                        id: format!("r{r}.{key}#{k}:{end}"),
                        clock: ranks[i].clock.clone(),
                        at: t(at),
                    });
                }
                let question = (i != holders[0]).then(|| {
                    let id = format!("arrival:{key}#{k}:r{r}");
                    case.questions.push(RawQuestion::Elapsed {
                        id: id.clone(),
                        from: ref_mark.clone(),
                        to: format!("r{r}.{key}#{k}:start"),
                        expect: None,
                    });
                    id
                });
                if let Some(id) = &question {
                    pairs.push((0, per_rank.len(), id.clone()));
                }
                per_rank.push((r, c.instance.clone(), question));
            }
            if holders.len() <= ALL_PAIRS_UP_TO {
                for a in 1..holders.len() {
                    for b in (a + 1)..holders.len() {
                        let (ra, rb) = (per_rank[a].0, per_rank[b].0);
                        let id = format!("arrival:{key}#{k}:r{rb}:from-r{ra}");
                        case.questions.push(RawQuestion::Elapsed {
                            id: id.clone(),
                            from: format!("r{ra}.{key}#{k}:start"),
                            to: format!("r{rb}.{key}#{k}:start"),
                            expect: None,
                        });
                        pairs.push((a, b, id));
                    }
                }
            }
            instances.push(MatchedInstance {
                key: key.clone(),
                k,
                per_rank,
                pairs,
            });
        }
    }
    instances
}

/// Imports `files` (ranks of one job) as one multi-rank import, each rank summarised and its
/// case dropped as its file finishes; see the module docs and [`import_ranks_with`].
///
/// # Errors
/// Any file's import error; `bad-value` when two files claim the same rank, or fewer than two
/// files are given.
pub fn import_ranks(files: &[PathBuf], options: &ImportOptions) -> Result<MultiRank, ImportError> {
    import_ranks_with(files, options, RankOptions::default())
}

/// Every file's [`RankPart`], in file order. A trace without `distributedInfo.rank` makes
/// every file's rank its position: files read under their own rank before that was known are
/// read again under their position (the rank is in their ids).
fn read_all(
    files: &[PathBuf],
    options: &ImportOptions,
    how: RankOptions,
) -> Result<(Vec<RankPart>, bool), ImportError> {
    let all: Vec<(usize, Option<u32>)> = (0..files.len()).map(|i| (i, None)).collect();
    let mut parts = part::read_ranks(files, &all, options, how)
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let any_without_rank = parts.iter().any(|p| p.facts.rank.is_none());
    if any_without_rank {
        let position = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        let again: Vec<(usize, Option<u32>)> = parts
            .iter()
            .enumerate()
            .filter(|(i, p)| p.rank != position(*i))
            .map(|(i, _)| (i, Some(position(i))))
            .collect();
        for ((i, _), redone) in again
            .iter()
            .zip(part::read_ranks(files, &again, options, how))
        {
            parts[*i] = redone?;
        }
    }
    Ok((parts, any_without_rank))
}

/// The cross-rank case's provenance: per rank its file, clock and trace provenance.
fn provenance(ranks: &[RankTrace]) -> serde_json::Map<String, serde_json::Value> {
    let mut provenance = serde_json::Map::new();
    provenance.insert(
        "ranks".into(),
        serde_json::Value::Array(
            ranks
                .iter()
                .map(|r| {
                    serde_json::json!({"rank": r.rank, "file": r.file, "clock": r.clock,
                        "rank_from_order": r.rank_from_order, "provenance": r.provenance})
                })
                .collect(),
        ),
    );
    provenance
}

/// The ranks of `parts` (in file order), each with its clocks; refuses two files of one rank.
fn rank_traces(
    files: &[PathBuf],
    parts: Vec<RankPart>,
    any_without_rank: bool,
) -> Result<Vec<(RankTrace, Vec<RawClock>)>, ImportError> {
    let mut ranks: Vec<(RankTrace, Vec<RawClock>)> = Vec::new();
    for (i, p) in parts.into_iter().enumerate() {
        let file = files[i].display().to_string();
        let rank = p.rank;
        if let Some((other, _)) = ranks.iter().find(|(r, _)| r.rank == rank) {
            return Err(ImportError::new(
                "distributedInfo.rank",
                "bad-value",
                format!("rank {rank} is also the rank of {}: the files are not distinct ranks of one job", other.file),
            )
            .in_file(file));
        }
        let clock = p
            .clocks
            .first()
            .map_or_else(|| format!("r{rank}.kineto"), |c| c.id.clone());
        ranks.push((
            RankTrace {
                file,
                rank,
                rank_from_order: any_without_rank,
                clock,
                facts: p.facts,
                format: p.format,
                provenance: p.provenance,
                rows: p.rows,
                case: p.case,
                audit: p.audit,
            },
            p.clocks,
        ));
    }
    Ok(ranks)
}

/// [`import_ranks`], with `how` saying whether expectations are written (`--expect`) and
/// whether the ranks' cases are kept to build the merged case ([`MultiRank::take_merged`]).
///
/// # Errors
/// As [`import_ranks`].
pub fn import_ranks_with(
    files: &[PathBuf],
    options: &ImportOptions,
    how: RankOptions,
) -> Result<MultiRank, ImportError> {
    import_ranks_declared(files, options, how, &[])
}

/// [`import_ranks_with`], with the clock relations the user declares (`--clocks-within`,
/// [`declare`]) added to the case next to the collectives' relations.
///
/// # Errors
/// As [`import_ranks`]; `bad-value` for a declaration that a collective instance contradicts
/// (naming it) or that conflicts with the collectives through a chain of ranks.
pub fn import_ranks_declared(
    files: &[PathBuf],
    options: &ImportOptions,
    how: RankOptions,
    declared: &[declare::ClocksWithin],
) -> Result<MultiRank, ImportError> {
    if files.len() < 2 {
        return Err(ImportError::new(
            "$",
            "bad-value",
            "a multi-rank import needs at least two trace files (or a folder holding them)",
        ));
    }
    let (parts, any_without_rank) = read_all(files, options, how)?;
    let mut notes = Vec::new();
    let mut ranks = rank_traces(files, parts, any_without_rank)?;
    if any_without_rank {
        notes.push(
            "at least one trace has no distributedInfo.rank: every file's rank is its position in the argument order (folders: name order)".to_owned(),
        );
    }
    ranks.sort_by_key(|(r, _)| r.rank);
    let sizes: std::collections::BTreeSet<u32> = ranks
        .iter()
        .filter_map(|(r, _)| r.facts.world_size)
        .collect();
    if sizes.len() > 1 {
        notes.push(format!(
            "the traces name different world sizes ({}): they may not be ranks of one job",
            sizes
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut case = RawCase::new("ranks");
    case.description = Some(format!(
        "{} ranks of one job, one clock per rank, related by their collectives (SPEC §10)",
        ranks.len()
    ));
    let ranks: Vec<RankTrace> = ranks
        .into_iter()
        .map(|(r, clocks)| {
            case.clocks.extend(clocks);
            r
        })
        .collect();
    case.provenance = Some(provenance(&ranks));
    let keyed: Vec<BTreeMap<String, Vec<&Collective>>> =
        ranks.iter().map(|r| by_key(&r.facts.collectives)).collect();

    let pairs = relate_pairs(&mut case, &ranks, &keyed, &mut notes);
    notes.extend(declare::declare(&mut case, &ranks, &pairs, declared)?);
    let suggestions = if declared.is_empty() {
        declare::suggestion(&ranks).into_iter().collect()
    } else {
        Vec::new()
    };
    let instances = instance_questions(&mut case, &ranks, &keyed);
    let reference = ranks.first().map_or(0, |r| r.rank);
    for r in ranks.iter().skip(1) {
        case.questions.push(RawQuestion::ClockOffset {
            id: format!("offset:r{reference}:r{}", r.rank),
            a: ranks[0].clock.clone(),
            b: r.clock.clone(),
            expect: None,
        });
    }
    drop(keyed);
    Ok(MultiRank {
        case,
        ranks,
        reference,
        pairs,
        instances,
        notes,
        suggestions,
    })
}

impl MultiRank {
    /// The merged case, as one case file: every rank's prefixed sections, in rank order,
    /// followed by `cross` (the cross-rank case [`MultiRank::case`], with expectations when
    /// they were asked for). The ranks' kept cases are moved out; `None` when they were not
    /// kept ([`RankOptions::keep_cases`]).
    pub fn take_merged(&mut self, cross: RawCase) -> Option<RawCase> {
        if self.ranks.iter().any(|r| r.case.is_none()) {
            return None;
        }
        let mut out = RawCase::new("ranks");
        for r in &mut self.ranks {
            let c = r.case.take()?;
            out.streams.extend(c.streams);
            out.events.extend(c.events);
            out.phases.extend(c.phases);
            out.marks.extend(c.marks);
            out.program.extend(c.program);
            out.series.extend(c.series);
            out.questions.extend(c.questions);
        }
        out.marks.extend(cross.marks);
        out.questions.extend(cross.questions);
        out.name = cross.name;
        out.description = cross.description;
        out.provenance = cross.provenance;
        out.clocks = cross.clocks;
        out.clock_relations = cross.clock_relations;
        out.streams.extend(cross.streams);
        out.events.extend(cross.events);
        out.phases.extend(cross.phases);
        out.program.extend(cross.program);
        out.series.extend(cross.series);
        Some(out)
    }
}

/// Whether `paths` ask for a multi-rank import: more than one path, or a folder.
pub fn is_multi(paths: &[PathBuf]) -> bool {
    paths.len() > 1 || paths.iter().any(|p| Path::is_dir(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_jobs_relate_every_pair_large_ones_a_star_and_a_chain() {
        assert_eq!(pairs_to_relate(3), vec![(0, 1), (0, 2), (1, 2)]);
        let big = pairs_to_relate(10);
        assert_eq!(big.len(), 9 + 8);
        assert!(big.contains(&(0, 9)) && big.contains(&(8, 9)));
    }
}
