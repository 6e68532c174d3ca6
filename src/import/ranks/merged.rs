//! What `worksheet import` prints for a multi-rank import: the single-trace summary of the
//! merged case, assembled from the ranks' rows ([`super::part`]), and the ranks' part
//! ([`super::summary`]), both from one evaluation of the small cross-rank case.
//!
//! The merged case is the ranks' prefixed sections followed by the cross-rank case's, and no
//! question of one rank names another rank's ids, so the engine's answers on it are the
//! ranks' answers (in rank order) followed by the cross-rank ones: the summary is the ranks'
//! rows one after another, its counts are sums, and its JSON size is counted per section
//! ([`super::size`]). `worksheet eval` on the merged case (`-o`) states the same numbers;
//! tests compare them.

use super::summary::{from_report, RanksSummary};
use super::{size, MultiRank};
use crate::case::{validate, CaseError};
use crate::engine::evaluate;
use crate::import::summary::{clock_line, embed_expectations, json_of, CaseSize, Rows};
use crate::import::Summary;

/// Both parts of a multi-rank import's summary, and the merged case when it was built.
#[derive(Debug)]
pub struct Summaries {
    /// The single-trace summary of the merged case (per-rank rows with prefixed ids).
    pub case: Summary,
    /// Relations, collectives, stragglers.
    pub ranks: RanksSummary,
    /// The merged case (with expectations when asked), when `merged` was asked and the ranks'
    /// cases were kept.
    pub merged: Option<crate::case::raw::RawCase>,
}

/// Evaluates the cross-rank case once and builds both summaries; with `expect`, the answers
/// are the cross-rank case's expectations (the ranks' were written as they were read); with
/// `merged`, the merged case is built from the kept rank cases (moved out of `m`).
///
/// # Errors
/// [`CaseError`] when a rank's case or the cross-rank case does not validate (an importer
/// bug).
pub fn summarize_all(
    m: &mut MultiRank,
    expect: bool,
    merged: bool,
) -> Result<Summaries, CaseError> {
    let case = validate(m.case.clone(), "ranks")?;
    let report = evaluate(&case);
    let ranks = from_report(m, &report);
    // The straggler part travels in the merged case (`report` of it draws it): added before
    // any size is counted.
    m.case
        .provenance
        .get_or_insert_with(Default::default)
        .insert(
            super::folder::PROVENANCE_KEY.to_owned(),
            super::folder::provenance_entry(&ranks),
        );
    // The cross-rank case as written: with the answers as expectations when asked.
    let expected = expect.then(|| {
        let mut c = m.case.clone();
        embed_expectations(&mut c, &report);
        c
    });
    let cross = expected.as_ref().unwrap_or(&m.case);
    let (_, cross_bytes) = json_of(cross, false);
    let mut rows = Rows::default();
    let mut size = CaseSize {
        phases: case.phases.len(),
        program_ops: case.program.len(),
        questions: case.questions.len(),
        json_bytes: 0,
    };
    let mut sections = Vec::with_capacity(m.ranks.len());
    for r in &m.ranks {
        let part = r.rows.as_ref().map_err(|e| e.clone().in_file(&r.file))?;
        rows.sets.extend(part.rows.sets.iter().cloned());
        rows.overlaps.extend(part.rows.overlaps.iter().cloned());
        rows.hta.extend(part.rows.hta.iter().cloned());
        rows.completion.extend(part.rows.completion.iter().cloned());
        size.phases += part.phases;
        size.program_ops += part.program_ops;
        size.questions += part.questions;
        sections.push(&part.json);
    }
    size.json_bytes = size::merged_bytes(cross, cross_bytes, sections);
    let summary = Summary {
        case: "ranks".to_owned(),
        format: format!("{} ranks of one job", m.ranks.len()),
        clock: clock_line(&case),
        sets: rows.sets,
        overlaps: rows.overlaps,
        hta: rows.hta,
        completion: rows.completion,
        facts: Vec::new(),
        notes: m.notes.clone(),
        size,
        written: None,
        case_json: String::new(),
        audit: None,
    };
    Ok(Summaries {
        case: summary,
        ranks,
        merged: if merged {
            let cross = expected.unwrap_or_else(|| m.case.clone());
            m.take_merged(cross)
        } else {
            None
        },
    })
}
