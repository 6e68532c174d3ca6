//! Raw mirror → validated [`Case`]: every reference resolved, every value exact, every
//! error located by its JSON path.
//!
//! One file per section of the case, in the order [`validate`] runs them (the first error
//! found is the one reported): [`clocks`], [`relations`], [`streams`], [`events`],
//! [`phases`], [`marks`], [`program`], [`series`], [`questions`], then the streams'
//! unrecorded joins. They share the id tables and exact values of [`ids`] (a leaf), and the
//! questions read their expectations through [`expect`].

use super::raw::RawCase;
use super::{Case, CaseError, FORMAT_NAME, FORMAT_VERSION};
use ids::{Declared, Result};

mod clocks;
mod events;
mod expect;
mod ids;
mod marks;
mod phases;
mod preresolve;
mod program;
mod questions;
mod relations;
mod series;
mod streams;
#[cfg(test)]
mod tests;

/// Validates a raw case into a [`Case`]. `default_name` is used when the file names none.
///
/// # Errors
/// The first [`CaseError`] found, with its JSON path and code (not yet attributed to a file).
pub fn validate(mut raw: RawCase, default_name: &str) -> Result<Case> {
    format_and_version(&raw)?;
    let (clock_ids, clocks) = clocks::clocks(&raw.clocks)?;
    let relations = relations::relations(&raw.clock_relations, &clock_ids)?;
    let (stream_ids, streams) = streams::streams(&raw.streams, &clock_ids)?;
    let (event_ids, events) = events::events(&raw.events, &stream_ids)?;
    // Phase labels are moved, not copied, and the references to phases taken out as indices
    // first (`preresolve`): a large case holds each name and label once.
    let labels: Vec<Option<crate::case::raw::Label>> =
        raw.phases.iter_mut().map(|p| p.label.take()).collect();
    let mut pre = preresolve::preresolve(&raw.phases, &mut raw.program, &mut raw.questions);
    let (phase_ids, phases) = phases::phases(
        &raw.phases,
        labels,
        &clock_ids,
        &clocks,
        &stream_ids,
        &streams,
    )?;
    let (mark_ids, marks) = marks::marks(&raw.marks, &clock_ids)?;
    let declared = Declared {
        clock_ids,
        clocks,
        stream_ids,
        streams,
        event_ids,
        events,
        phase_ids,
        phases,
        mark_ids,
        marks,
    };
    let program = program::program(&raw.program, &pre.launches, &declared)?;
    let (series_ids, series) = series::series(&raw.series)?;
    let questions = questions::questions(
        &raw.questions,
        &mut pre.lists,
        &declared,
        &program,
        &series_ids,
    )?;
    let unrecorded_joins = streams::unrecorded_joins(&raw.unrecorded_joins, &declared.stream_ids)?;
    Ok(Case {
        name: raw.name.clone().unwrap_or_else(|| default_name.to_owned()),
        description: raw.description.clone(),
        provenance: raw.provenance.clone(),
        clocks: declared.clocks,
        relations,
        relation_graph: std::sync::OnceLock::new(),
        streams: declared.streams,
        events: declared.events,
        phases: declared.phases,
        marks: declared.marks,
        program: program.ops,
        timers: program.timers,
        series,
        questions,
        unrecorded_joins,
    })
}

/// The file is a case file of the version this build reads.
fn format_and_version(raw: &RawCase) -> Result<()> {
    if raw.format != FORMAT_NAME {
        return Err(CaseError::new(
            "format",
            "unsupported-format",
            format!(
                "`{}` is not a case file format: expected \"{FORMAT_NAME}\"",
                raw.format
            ),
        ));
    }
    if raw.version != FORMAT_VERSION {
        return Err(CaseError::new(
            "version",
            "unsupported-version",
            format!("case format version {} is not supported: this build reads version {FORMAT_VERSION}", raw.version),
        ));
    }
    Ok(())
}
