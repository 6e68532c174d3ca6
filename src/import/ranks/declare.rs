//! `--clocks-within`: clock relations the user declares between ranks (SPEC §10, source
//! `declared`), checked against the collectives, and the trace evidence that suggests one.
//!
//! Syntax (docs/ranks.md), repeatable:
//!
//! ```text
//!   --clocks-within DURATION              every pair of ranks: |offset(b) − offset(a)| ≤ DURATION
//!   --clocks-within RANKS=DURATION        only pairs inside RANKS (a host group): 0-7=0, 0,2,4=1us
//! ```
//!
//! `DURATION` is `0` or a number with a unit (`ns`, `us`, `ms`, `s`): `0` is one host clock,
//! `1ms` fits NTP, `1us` fits PTP. Several declarations on one pair: the tightest holds (the
//! relations intersect anyway). Each pair becomes a relation `clocks-within:r<a>-r<b>` with
//! bound `[−DURATION, +DURATION]`, next to the collectives' relation; the engine then intersects
//! them and names the declaration in every answer it uses (`assumes clocks-within 0 ns
//! (declared)`). A declaration that no offset satisfies together with one collective instance
//! is refused, naming that instance.

use crate::case::raw::{RawCase, RawClockRelation, RawRelationSource, RawTime};
use crate::import::ImportError;
use crate::relation::{Bound, Graph, Related, Relation, Source};
use crate::units::{parse_value, Nanos};

use super::{PairRelation, RankTrace, ALL_PAIRS_UP_TO};

/// What `--clocks-within` accepts, for error messages.
pub const ACCEPTED: &str = "accepted forms: DURATION or RANKS=DURATION, where DURATION is 0 or a non-negative number with a unit (ns, us, ms, s), e.g. 0, 500ns, 10us, 1ms; and RANKS is a comma list of ranks or ranges, e.g. 0-7 or 0,2,4";

/// One `--clocks-within` declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClocksWithin {
    /// The ranks it covers (`None`: every rank).
    pub ranks: Option<Vec<u32>>,
    /// The bound on `|offset(b) − offset(a)|`.
    pub within: Nanos,
}

/// An error in the `--clocks-within` option (`command line: --clocks-within: error[bad-value]`).
pub fn option_error(message: String) -> ImportError {
    ImportError::new("--clocks-within", "bad-value", message).in_file("command line")
}

fn bad(text: &str, why: &str) -> ImportError {
    option_error(format!("`{text}`: {why}; {ACCEPTED}"))
}

fn duration(text: &str, whole: &str) -> Result<Nanos, ImportError> {
    let t = text.trim();
    let v = if !t.is_empty() && t.chars().all(|c| c == '0' || c == '.') && t.contains('0') {
        Nanos::ZERO
    } else {
        parse_value(t).map_err(|e| bad(whole, &e.to_string()))?
    };
    if v < Nanos::ZERO {
        return Err(bad(whole, "a duration cannot be negative"));
    }
    Ok(v)
}

fn rank_list(text: &str, whole: &str) -> Result<Vec<u32>, ImportError> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let num = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| bad(whole, &format!("`{s}` is not a rank")))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(bad(whole, &format!("the range `{part}` is reversed")));
                }
                if b - a > 1_000_000 {
                    return Err(bad(whole, &format!("the range `{part}` is too long")));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Parses one `--clocks-within` value.
///
/// # Errors
/// `bad-value` naming the value and the accepted forms.
pub fn parse(text: &str) -> Result<ClocksWithin, ImportError> {
    match text.split_once('=') {
        Some((ranks, d)) => Ok(ClocksWithin {
            ranks: Some(rank_list(ranks, text)?),
            within: duration(d, text)?,
        }),
        None => Ok(ClocksWithin {
            ranks: None,
            within: duration(text, text)?,
        }),
    }
}

/// The tightest declared bound per pair of rank indices `(i, j)`, `i < j`.
fn declared_pairs(ranks: &[RankTrace], decls: &[ClocksWithin]) -> Vec<(usize, usize, Nanos)> {
    let mut out: Vec<(usize, usize, Nanos)> = Vec::new();
    for d in decls {
        let members: Vec<usize> = (0..ranks.len())
            .filter(|&i| d.ranks.as_ref().is_none_or(|l| l.contains(&ranks[i].rank)))
            .collect();
        let pairs: Vec<(usize, usize)> = if members.len() <= ALL_PAIRS_UP_TO {
            members
                .iter()
                .enumerate()
                .flat_map(|(x, &i)| members[x + 1..].iter().map(move |&j| (i, j)))
                .collect()
        } else {
            // A star and a chain: O(ranks) relations that join them all (a pair off them is
            // bounded by 2 × DURATION through the star, never by less than the truth).
            let mut p: Vec<(usize, usize)> =
                members[1..].iter().map(|&j| (members[0], j)).collect();
            p.extend(members[1..].windows(2).map(|w| (w[0], w[1])));
            p
        };
        for (i, j) in pairs {
            match out.iter_mut().find(|(a, b, _)| (*a, *b) == (i, j)) {
                Some(e) => e.2 = e.2.min(d.within),
                None => out.push((i, j, d.within)),
            }
        }
    }
    out
}

/// Checks one declared pair against every instance matched on it: the first instance whose
/// own bound `[start_b − end_a, end_b − start_a]` misses `[−w, w]` is a contradiction.
fn check_pair(p: &PairRelation, w: Nanos) -> Result<(), ImportError> {
    let declared = Bound::new(Nanos::new(-w.as_i64()), w);
    for (label, x, y) in &p.evidence.matched {
        let (Some(lo), Some(hi)) = (y.start.checked_sub(x.end), y.end.checked_sub(x.start)) else {
            continue;
        };
        let own = Bound::new(lo, hi);
        if own.intersect(declared).is_empty() {
            return Err(option_error(format!(
                    "the declared clocks-within {w} for ranks {} and {} contradicts collective {label}: that instance alone puts offset(r{}) − offset(r{}) in {own} (rank {}'s kernel cannot end before rank {}'s starts, nor start after it ends), outside [−{w}, {w}]; the clocks differ by more than declared, or these are not one job's ranks",
                    p.a, p.b, p.b, p.a, p.b, p.a
                )));
        }
    }
    Ok(())
}

/// Adds the declared relations to `case`, after checking each against the collectives.
/// Returns a note per declaration.
///
/// # Errors
/// `bad-value` naming the collective that contradicts a declaration, or the relations that
/// conflict through a chain of ranks.
pub(super) fn declare(
    case: &mut RawCase,
    ranks: &[RankTrace],
    pairs: &[PairRelation],
    decls: &[ClocksWithin],
) -> Result<Vec<String>, ImportError> {
    let mut notes = Vec::new();
    for d in decls {
        if let Some(list) = &d.ranks {
            let missing: Vec<String> = list
                .iter()
                .filter(|r| !ranks.iter().any(|t| t.rank == **r))
                .map(ToString::to_string)
                .collect();
            if !missing.is_empty() && missing.len() == list.len() {
                return Err(bad(
                    &format!(
                        "{}={}",
                        list.iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(","),
                        d.within
                    ),
                    "none of these ranks is in the import",
                ));
            }
        }
    }
    for (i, j, w) in declared_pairs(ranks, decls) {
        let (a, b) = (&ranks[i], &ranks[j]);
        if let Some(p) = pairs.iter().find(|p| (p.a, p.b) == (a.rank, b.rank)) {
            check_pair(p, w)?;
        }
        case.clock_relations.push(RawClockRelation {
            id: Some(format!("clocks-within:r{}-r{}", a.rank, b.rank)),
            a: a.clock.clone(),
            b: b.clock.clone(),
            lo: RawTime::from(Nanos::new(-w.as_i64())),
            hi: RawTime::from(w),
            source: RawRelationSource::Declared,
            evidence: vec![format!("clocks-within {w}")],
        });
    }
    check_graph(case, ranks)?;
    for d in decls {
        notes.push(format!(
            "declared (--clocks-within): the clocks of {} agree within {}: an assumption you vouch for, named in every answer that uses it",
            d.ranks.as_ref().map_or_else(
                || "every rank".to_owned(),
                |l| format!("ranks {}", l.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
            ),
            d.within
        ));
    }
    Ok(notes)
}

/// Refuses relations (declared and collectives) that admit no offsets together through a
/// chain of ranks.
fn check_graph(case: &RawCase, ranks: &[RankTrace]) -> Result<(), ImportError> {
    let index = |clock: &str| ranks.iter().position(|r| r.clock == clock);
    let relations: Vec<Relation> = case
        .clock_relations
        .iter()
        .filter_map(|r| {
            let time = |t: &RawTime| match t {
                RawTime::Text(s) => parse_value(s).ok(),
                RawTime::Exact(value) => Some(*value),
                RawTime::Number(_) => None,
            };
            Some(Relation {
                name: r.id.clone().unwrap_or_default(),
                a: index(&r.a)?,
                b: index(&r.b)?,
                bound: Bound::new(time(&r.lo)?, time(&r.hi)?),
                source: match r.source {
                    RawRelationSource::Declared => Source::Declared,
                    RawRelationSource::Collectives => Source::Collectives,
                },
            })
        })
        .collect();
    let graph = Graph::new(ranks.len(), &relations);
    for i in 0..ranks.len() {
        if let Related::Inconsistent { conflicting } = graph.relate(i, i) {
            return Err(option_error(format!(
                    "the declared relations and the collectives admit no clock offsets together: {} conflict through a chain of ranks",
                    conflicting
                        .iter()
                        .map(|&k| format!("`{}` {}", relations[k].name, relations[k].bound))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
        }
    }
    Ok(())
}

/// What the traces say about the ranks sharing one host, as a suggestion (never assumed):
/// every trace carries the same `baseTimeNanoseconds` and the ranks ran on different GPUs.
pub(super) fn suggestion(ranks: &[RankTrace]) -> Option<String> {
    if ranks.len() < 2 {
        return None;
    }
    let base: Vec<Option<u64>> = ranks
        .iter()
        .map(|r| r.provenance.as_ref()?.get("baseTimeNanoseconds")?.as_u64())
        .collect();
    let first = base[0]?;
    if base.iter().any(|b| *b != Some(first)) {
        return None;
    }
    let devices: Vec<Vec<String>> = ranks
        .iter()
        .map(|r| {
            r.provenance
                .as_ref()
                .and_then(|p| p.get("devices"))
                .and_then(serde_json::Value::as_object)
                .map(|d| d.keys().cloned().collect())
                .unwrap_or_default()
        })
        .collect();
    let mut all: Vec<&String> = devices.iter().flatten().collect();
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    if total == 0 || all.len() != total {
        return None;
    }
    Some(format!(
        "suggestion (not assumed): the traces look like processes of one host: each carries baseTimeNanoseconds {first} and the ranks ran on different GPUs ({}). Ranks of one host read one host clock; if that is so, `--clocks-within 0` declares it and decides who arrived last (docs/ranks.md)",
        all.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_groups_parse() {
        assert_eq!(
            parse("0").unwrap(),
            ClocksWithin {
                ranks: None,
                within: Nanos::ZERO
            }
        );
        assert_eq!(parse("1ms").unwrap().within, Nanos::new(1_000_000));
        assert_eq!(parse(" 10 us").unwrap().within, Nanos::new(10_000));
        let g = parse("0-2,5=1us").unwrap();
        assert_eq!(g.ranks, Some(vec![0, 1, 2, 5]));
        assert_eq!(g.within, Nanos::new(1_000));
    }

    #[test]
    fn bad_values_name_the_accepted_forms() {
        for text in ["", "1", "abc", "-1ms", "1 parsec", "3-1=0", "x=0", "0=1"] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.code, "bad-value", "{text}");
            assert!(e.to_string().contains("accepted forms"), "{text}: {e}");
        }
    }
}
