//! An export → the case: the rows are joined ([`super::join`]), become the format-neutral
//! intermediate ([`super::activities`]), and the one builder ([`crate::import::build`])
//! makes the case; the file's own facts, notes, description and provenance are added here.

use super::activities::activities;
use super::error::NsysError;
use super::facts::{ExportFacts, ProcessFacts};
use super::join::join;
use super::read::{Export, SessionStart};
use super::NsysImport;

/// What the summary says about the classes of work and the completion questions.
const NOTES: [&str; 2] = [
    "communication = kernels whose name contains `nccl` (HTA: `^nccl.*Kernel`); memory = memcpy and memset rows; compute = every other kernel",
    "completion:all-work: a host timer from the start of the process's first call in the program (a launch, record or wait) to the return of its last host wait; its claim names the last launch of each stream: coverage is a per-stream prefix, so this claims all of the stream's launched work",
];

/// Reads everything and builds the case and the facts about the file.
pub(crate) fn build(
    export: &mut Export,
    file_name: &str,
    name: &str,
) -> Result<NsysImport, NsysError> {
    let mut joined = join(export)?;
    let session = export.session_start()?;
    let (activities, processes) = activities(export, &mut joined, session, file_name)?;
    let streams = activities.streams.len();
    let built = crate::import::build::build(activities, name);
    let processes = processes
        .into_iter()
        .map(|(p, clock)| ProcessFacts {
            pid: p.pid(),
            global_pid: p.0,
            clock,
            api_calls: joined.api.iter().filter(|c| c.proc == p).count(),
            gpu_rows: joined.gpu.iter().filter(|r| r.key.proc == p).count(),
        })
        .collect();
    let export_info = export.export_info()?;
    let mut notes = joined.skipped.notes();
    match session {
        SessionStart::Utc(_) => {}
        SessionStart::Absent => notes.insert(0, "the file has no TARGET_INFO_SESSION_START_TIME (nsys 2021.2 wrote none): times are session-relative only, and each clock's instance says its start is unknown".to_owned()),
        SessionStart::Ambiguous(n) => notes.insert(0, format!("TARGET_INFO_SESSION_START_TIME holds {n} different values: none is used, and each clock's instance says its start is unknown")),
    }
    if !export_info.derived.is_empty() {
        notes.insert(0, format!(
            "the export metadata says the file was derived from another ({}): totals describe what was kept, not the whole run",
            export_info.derived.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
        ));
    }
    notes.extend(NOTES.iter().map(|n| (*n).to_owned()));
    notes.extend(built.notes);
    let facts = ExportFacts {
        file: file_name.to_owned(),
        export: export_info,
        session_start_utc_ns: match session {
            SessionStart::Utc(ns) => Some(ns),
            _ => None,
        },
        gpus: export.gpus()?,
        processes,
        streams,
        launches: built.launches,
        counts: joined.counts,
        notes,
    };
    let mut case = built.case;
    case.description = Some(facts.describe());
    case.provenance = Some(facts.provenance());
    Ok(NsysImport {
        case,
        facts,
        work_spans: built.work_spans,
    })
}
