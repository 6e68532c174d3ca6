//! `worksheet audit DIR`: a folder of ranks' traces audited rank by rank, then across ranks.
//!
//! Each rank's trace gets the audit `worksheet audit FILE` gives it, made in the rank's import
//! pass from the model that pass records (each file is read once); the cross-rank part is the
//! `straggler` finding of the multi-rank import (`import::ranks::folder`, the one computation
//! `import DIR`, `report DIR` and the Parquet `findings` table use), with the same
//! `--clocks-within` declarations. JSON: `worksheet-audit-ranks` v1 (schemas/).

use std::io::Write;

use serde::Serialize;

use super::{AuditArgs, AuditError, AuditFormat, AuditOutcome};
use crate::audit::{render, Audit, Severity};
use crate::error::InputError;
use crate::import::ranks::folder::{import_folder_audited, provenance_entry};
use crate::import::ImportOptions;

/// One rank's audit.
#[derive(Serialize)]
struct RankAudit {
    rank: u32,
    file: String,
    audit: Audit,
}

/// The JSON report.
#[derive(Serialize)]
struct FolderReport {
    format: &'static str,
    version: u32,
    ranks: Vec<RankAudit>,
    /// The multi-rank import's straggler part (`provenance.stragglers` of the merged case).
    stragglers: serde_json::Value,
    notes: Vec<String>,
}

/// Audits the folder `args.input`.
///
/// # Errors
/// [`AuditError::Input`] for a malformed trace, a bad `--clocks-within`, or an option that
/// applies to one trace only (`--explain`, `--compat`); [`AuditError::Io`] when writing
/// fails.
pub fn run(args: &AuditArgs, out: &mut dyn Write) -> Result<AuditOutcome, AuditError> {
    let one_trace = |what: &str| {
        InputError::new(
            what,
            "bad-value",
            format!("{what} applies to one trace: audit the ranks' files one at a time for it"),
        )
        .in_file("command line")
    };
    if args.explain.is_some() {
        return Err(one_trace("--explain").into());
    }
    if args.compat.is_some() {
        return Err(one_trace("--compat").into());
    }
    let options = ImportOptions {
        round_sub_ns: args.round_sub_ns,
    };
    // Each rank's audit is made in its import pass, from the model that pass records: every
    // file is read once (issue 23, "one pass").
    let mut folder = import_folder_audited(
        std::slice::from_ref(&args.input),
        &args.clocks_within,
        &options,
    )?;
    let mut ranks = Vec::with_capacity(folder.files.len());
    let audits = std::mem::take(&mut folder.audits);
    for ((rank, path), audit) in folder.files.iter().zip(audits) {
        ranks.push(RankAudit {
            rank: *rank,
            audit: audit?,
            file: path.display().to_string(),
        });
    }
    let straggler_fails = |f: Severity| {
        folder
            .ranks
            .findings
            .iter()
            .any(|s| severity(s.severity) >= f)
    };
    let failed = args.fail_on.is_some_and(|f| {
        ranks.iter().any(|r| r.audit.fails(f.into())) || straggler_fails(f.into())
    });
    let text = match args.format {
        AuditFormat::Text | AuditFormat::Markdown => {
            let md = args.format == AuditFormat::Markdown;
            let mut s = String::new();
            for r in &ranks {
                let body = if md {
                    render::to_markdown(&r.audit)
                } else {
                    render::to_text_top(&r.audit, args.top)
                };
                s.push_str(&if md {
                    format!("# rank {}: {}\n\n{body}\n", r.rank, r.file)
                } else {
                    format!("== rank {}: {}\n{body}\n", r.rank, r.file)
                });
            }
            let across = folder.ranks.findings_text();
            s.push_str(&if md {
                format!("# across ranks\n\n```text\n{across}```\n")
            } else {
                format!("== across ranks ({} ranks)\n{across}", ranks.len())
            });
            for n in &folder.notes {
                s.push_str(&format!("note: {n}\n"));
            }
            s
        }
        AuditFormat::Json => {
            let report = FolderReport {
                format: "worksheet-audit-ranks",
                version: 1,
                stragglers: provenance_entry(&folder.ranks),
                ranks,
                notes: folder.notes,
            };
            serde_json::to_string_pretty(&report).map_err(std::io::Error::from)? + "\n"
        }
    };
    out.write_all(crate::escape::printable(&text).as_bytes())?;
    Ok(AuditOutcome { failed })
}

/// The severity of a straggler finding's `severity` text.
fn severity(s: &str) -> Severity {
    match s {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        _ => Severity::Info,
    }
}
