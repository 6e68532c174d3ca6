//! The tables `worksheet export` writes, as plain columns (no Parquet here): built from the
//! validated case, the engine's report on it, and the summaries `worksheet import` prints,
//! so every number in a table is one `worksheet` prints too. Schema: `docs/parquet.md`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::audit::{Audit, AuditOptions};
use crate::case::raw::RawCase;
use crate::case::{validate, Ask, Case};
use crate::engine::{evaluate, Report};
use crate::error::Refusal;
use crate::import::ranks::summary::{from_report, RanksSummary, Split};
use crate::import::ranks::{declare, import_ranks_declared, is_multi, MultiRank, RankOptions};
use crate::import::{import_path_with, read_audit_trace, summarize, ImportOptions, Imported};
use crate::verdict::Verdict;

mod breakdowns;

/// The tables, in the order they are written.
pub const NAMES: [&str; 8] = [
    "phases",
    "steps",
    "collectives",
    "relations",
    "findings",
    "summary",
    "kernels",
    "ops",
];

/// One column's values; `None` is a null.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Values {
    /// INT64 (times in integer ns, counts, ranks).
    Int(Vec<Option<i64>>),
    /// UTF-8 text.
    Text(Vec<Option<String>>),
}

/// One column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Its name.
    pub name: &'static str,
    /// Whether it may hold nulls (Parquet `OPTIONAL`; else `REQUIRED`).
    pub nullable: bool,
    /// Its values.
    pub values: Values,
}

/// One table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// Its name (the file is `<name>.parquet`).
    pub name: &'static str,
    /// Its columns, all of the same length.
    pub columns: Vec<Column>,
}

/// A cell, as a row is pushed.
enum Cell {
    I(Option<i64>),
    S(Option<String>),
}

/// Column kinds, for a table's spec.
#[derive(Clone, Copy)]
enum Kind {
    Int,
    Text,
}

impl Table {
    /// An empty table with columns `spec` (name, kind, nullable).
    fn new(name: &'static str, spec: &[(&'static str, Kind, bool)]) -> Self {
        Table {
            name,
            columns: spec
                .iter()
                .map(|&(name, kind, nullable)| Column {
                    name,
                    nullable,
                    values: match kind {
                        Kind::Int => Values::Int(Vec::new()),
                        Kind::Text => Values::Text(Vec::new()),
                    },
                })
                .collect(),
        }
    }

    /// Appends a row (one cell per column, in order, of the column's kind).
    fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len());
        for (col, cell) in self.columns.iter_mut().zip(row) {
            match (&mut col.values, cell) {
                (Values::Int(v), Cell::I(x)) => v.push(x),
                (Values::Text(v), Cell::S(x)) => v.push(x),
                _ => debug_assert!(false, "cell of the wrong kind for `{}`", col.name),
            }
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| match &c.values {
            Values::Int(v) => v.len(),
            Values::Text(v) => v.len(),
        })
    }
}

/// What is exported: the case, the multi-rank import when there was one, and the audits.
pub struct Input {
    /// The case (with its notes), as `import` would summarise it.
    pub imported: Imported,
    /// The multi-rank import (several traces, or a folder).
    pub multi: Option<MultiRank>,
    /// The rank of a single trace or case file: its `distributedInfo.rank`, when it names one.
    pub rank: Option<i64>,
    /// The audit of each input file (`worksheet audit`'s), with the file's rank: one per rank
    /// of a multi-rank import, else one.
    pub audits: Vec<(Option<i64>, Audit)>,
    /// Folder entries not read, with the reason (`not read: PATH: why`).
    pub skipped: Vec<String>,
}

/// Loads `paths`: several traces or a folder (one multi-rank case), one trace, or a case
/// file (a single file the trace importers refuse, that parses as a case).
///
/// `clocks_within`: `--clocks-within` values (several ranks only).
///
/// # Errors
/// The import's error (exit 2) when nothing reads the input, or a bad `--clocks-within`.
pub fn load(
    paths: &[PathBuf],
    round_sub_ns: bool,
    clocks_within: &[String],
) -> Result<Input, Refusal> {
    // A folder holding one trace is that trace (review N14).
    let one = crate::import::folder::one_trace(paths)?.map(|p| vec![p]);
    let paths = one.as_deref().unwrap_or(paths);
    let options = ImportOptions { round_sub_ns };
    let declared = clocks_within
        .iter()
        .map(|t| declare::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    if !is_multi(paths) && !declared.is_empty() {
        return Err(declare::option_error(
            "--clocks-within relates the clocks of several ranks; give two or more traces (or a folder of them)".to_owned(),
        )
        .into());
    }
    if is_multi(paths) {
        let listing = crate::import::ranks::listing::list(paths)?;
        let files = listing.files.clone();
        // Every phase is exported: the ranks' cases are kept and merged (memory grows with
        // the ranks, as the output does).
        // Each rank's audit is made in its import pass from the model it records, so no
        // file is read twice (issue 23, "one pass").
        let how = RankOptions {
            expect: false,
            keep_cases: true,
            progress: true,
            audits: true,
        };
        let mut multi = import_ranks_declared(&files, &options, how, &declared)?;
        crate::import::folder::refuse_unranked(paths, &listing, &multi)?;
        let merged = multi
            .take_merged(multi.case.clone())
            .ok_or_else(|| internal("the ranks' cases were not kept for the merged case"))?;
        let mut imported =
            Imported::from_case(merged, format!("{} ranks of one job", multi.ranks.len()));
        imported.notes.clone_from(&multi.notes);
        // Every folder entry not read is said (review D5).
        let skipped = listing.notes();
        imported.notes.extend(skipped.iter().cloned());
        let audits = multi
            .ranks
            .iter_mut()
            .map(|r| {
                let audit = match r.audit.take() {
                    Some(made) => made?,
                    None => {
                        return Err(Refusal {
                            message: format!(
                                "error[internal]: rank {}'s audit was not made in its import pass; please report this",
                                r.rank
                            ),
                        })
                    }
                };
                Ok((Some(i64::from(r.rank)), audit))
            })
            .collect::<Result<Vec<_>, Refusal>>()?;
        return Ok(Input {
            imported,
            multi: Some(multi),
            rank: None,
            audits,
            skipped,
        });
    }
    let path = &paths[0];
    let (imported, audit) = load_one(path, &options)?;
    let rank = declared_rank(&imported.case);
    Ok(Input {
        imported,
        multi: None,
        rank,
        audits: vec![(rank, audit)],
        skipped: Vec::new(),
    })
}

/// One input file: the case and the audit from one pass over the file. A trace is read and
/// decompressed once, for both ([`import_path_with`] with the audit's model); the file is
/// read again only on an error path (the import refused it: a case file, or an error to
/// word; or the audit's model could not be made from the import's pass), where it is read
/// as before so that every error stays the same.
fn load_one(path: &Path, options: &ImportOptions) -> Result<(Imported, Audit), Refusal> {
    match import_path_with(path, options, true) {
        Ok((imported, Some(Ok(trace)))) => {
            let audit = audit_trace(&trace, path);
            Ok((imported, audit))
        }
        Ok((imported, _)) => Ok((imported, audit_of(path, options)?)),
        Err(e) => {
            let case = crate::case::read_case_text(path)
                .ok()
                .and_then(|text| crate::case::parse_raw(&text).ok());
            match case {
                Some(raw) => Ok((
                    Imported::from_case(raw, "case file"),
                    audit_of(path, options)?,
                )),
                None => Err(e.into()),
            }
        }
    }
}

/// `distributedInfo.rank` in a case's provenance (the Kineto importer copies it there).
fn declared_rank(case: &RawCase) -> Option<i64> {
    case.provenance
        .as_ref()?
        .get("distributedInfo")?
        .get("rank")?
        .as_i64()
}

/// The audit `worksheet audit FILE` prints.
fn audit_of(path: &Path, options: &ImportOptions) -> Result<Audit, Refusal> {
    let trace = read_audit_trace(path, options)?;
    Ok(audit_trace(&trace, path))
}

/// The audit of `trace`, read from `path`.
fn audit_trace(trace: &crate::trace::model::Trace, path: &Path) -> Audit {
    crate::audit::audit(trace, &path.display().to_string(), &AuditOptions::default())
}

fn internal(e: impl std::fmt::Display) -> Refusal {
    Refusal {
        message: format!("error[internal]: the case to export does not validate ({e})"),
    }
}

fn ns(v: i128) -> Result<i64, Refusal> {
    i64::try_from(v).map_err(|_| Refusal {
        message: format!("error[out-of-range]: {v} ns does not fit a Parquet INT64"),
    })
}

/// The rank a clock belongs to: in a multi-rank import the rank whose clock it is, else the
/// single input's declared rank.
fn rank_of(input: &Input, clock: &str) -> Option<i64> {
    match &input.multi {
        Some(m) => m
            .ranks
            .iter()
            .find(|r| r.clock == clock)
            .map(|r| i64::from(r.rank)),
        None => input.rank,
    }
}

/// The rank an id names: prefixed `r<rank>.` (after an optional `kind:`) in a multi-rank
/// case, else the single input's declared rank.
fn rank_of_id(input: &Input, id: &str) -> Option<i64> {
    if input.multi.is_none() {
        return input.rank;
    }
    let rest = id.split_once(':').map_or(id, |(_, r)| r);
    rest.strip_prefix('r')?.split_once('.')?.0.parse().ok()
}

/// Builds every table (in [`NAMES`] order).
///
/// # Errors
/// `internal` when the case does not validate; `out-of-range` for a value past INT64.
pub fn build(input: &Input) -> Result<Vec<Table>, Refusal> {
    let raw: &RawCase = &input.imported.case;
    let case = validate(raw.clone(), "export").map_err(internal)?;
    let report = evaluate(&case);
    let multi = input.multi.as_ref();
    let ranks = multi.map(|m| from_report(m, &report));
    Ok(vec![
        phases(&case, input)?,
        steps(&case, input)?,
        collectives(multi.zip(ranks.as_ref()), &report)?,
        relations(&case, input)?,
        findings(input, ranks.as_ref())?,
        summary(input)?,
        breakdowns::kernels(input)?,
        breakdowns::ops(input)?,
    ])
}

/// The class of each phase from the importers' `compute:` / `communication:` / `memory:`
/// interval questions.
fn classes(case: &Case) -> HashMap<usize, &'static str> {
    let mut out = HashMap::new();
    for q in &case.questions {
        let class = ["compute", "communication", "memory"]
            .into_iter()
            .find(|c| q.id.starts_with(&format!("{c}:")));
        if let (Some(class), Ask::Intervals { phases }) = (class, &q.ask) {
            for &p in phases {
                out.entry(p).or_insert(class);
            }
        }
    }
    out
}

fn phases(case: &Case, input: &Input) -> Result<Table, Refusal> {
    use Kind::{Int, Text};
    let mut t = Table::new(
        "phases",
        &[
            ("rank", Int, true),
            ("clock", Text, false),
            ("stream", Text, true),
            ("device", Text, true),
            ("kind", Text, false),
            ("id", Text, false),
            ("name", Text, false),
            ("start_ns", Int, false),
            ("end_ns", Int, false),
        ],
    );
    let classes = classes(case);
    for (i, p) in case.phases.iter().enumerate() {
        let clock = &case.clocks[p.clock].id;
        let stream = p.stream.map(|s| &case.streams[s]);
        let kind = match (classes.get(&i), stream) {
            (Some(c), _) => *c,
            (None, Some(_)) => "work",
            (None, None) => "range",
        };
        t.push(vec![
            Cell::I(rank_of(input, clock)),
            Cell::S(Some(clock.clone())),
            Cell::S(stream.map(|s| s.id.clone())),
            Cell::S(stream.map(|s| s.device.clone())),
            Cell::S(Some(kind.to_owned())),
            Cell::S(Some(p.id.to_string())),
            Cell::S(Some(p.label.to_string())),
            Cell::I(Some(ns(i128::from(p.interval.start().as_i64()))?)),
            Cell::I(Some(ns(i128::from(p.interval.end().as_i64()))?)),
        ]);
    }
    Ok(t)
}

/// Steps: the audit's per-step table (`worksheet audit`), one row per `ProfilerStep#N` and
/// device, with its window placed on the rank's clock (`origin + start`).
fn steps(case: &Case, input: &Input) -> Result<Table, Refusal> {
    use Kind::{Int, Text};
    let mut t = Table::new(
        "steps",
        &[
            ("rank", Int, true),
            ("clock", Text, true),
            ("step", Int, true),
            ("name", Text, false),
            ("device", Text, false),
            ("start_ns", Int, false),
            ("end_ns", Int, false),
            ("host_ns", Int, false),
            ("busy_ns", Int, false),
            ("idle_ns", Int, false),
            ("compute_ns", Int, false),
            ("communication_ns", Int, false),
            ("memory_ns", Int, false),
            ("syncs", Int, false),
            ("launched", Int, false),
        ],
    );
    for (rank, audit) in &input.audits {
        // The rank's clock, or the single case's only clock; null when a single case has
        // several (the audit's step rows do not say which process they are on).
        let (clock, prefix) = match (&input.multi, rank) {
            (Some(m), Some(r)) => (
                m.ranks
                    .iter()
                    .find(|x| i64::from(x.rank) == *r)
                    .map(|x| x.clock.clone()),
                format!("r{r}."),
            ),
            _ => (
                (case.clocks.len() == 1).then(|| case.clocks[0].id.clone()),
                String::new(),
            ),
        };
        for row in &audit.steps {
            let n = row
                .step
                .strip_prefix("ProfilerStep#")
                .and_then(|d| d.parse::<i64>().ok());
            let start = audit.origin_ns.checked_add(row.start_ns);
            let end = start.and_then(|s| s.checked_add(row.host_ns));
            let (Some(start), Some(end)) = (start, end) else {
                return Err(ns(i128::from(audit.origin_ns) + i128::from(row.start_ns))
                    .err()
                    .unwrap_or_else(|| internal("a step's end is past INT64")));
            };
            t.push(vec![
                Cell::I(*rank),
                Cell::S(clock.clone()),
                Cell::I(n),
                Cell::S(Some(row.step.clone())),
                Cell::S(Some(format!("{prefix}{}", row.device))),
                Cell::I(Some(start)),
                Cell::I(Some(end)),
                Cell::I(Some(row.host_ns)),
                Cell::I(Some(row.busy_ns)),
                Cell::I(Some(row.idle_ns)),
                Cell::I(Some(row.compute_ns)),
                Cell::I(Some(row.communication_ns)),
                Cell::I(Some(row.memory_ns)),
                Cell::I(Some(ns(row.syncs as i128)?)),
                Cell::I(Some(ns(row.launched as i128)?)),
            ]);
        }
    }
    Ok(t)
}

fn split(s: &Split) -> (Option<i64>, Option<i64>) {
    match s {
        Split::Bounded { lo_ns, hi_ns } => (i64::try_from(*lo_ns).ok(), i64::try_from(*hi_ns).ok()),
        Split::Unknown { .. } => (None, None),
    }
}

/// Per matched collective instance and rank: its kernel on the rank's own clock, its arrival
/// relative to the reference rank's start (bounded through the relations), the instance's
/// skew and transfer (repeated on each of its rows), and the rank's own delay over the first
/// arrival, wait for the last arrival and transfer after it (`arrivals.rs`).
fn collectives(
    multi: Option<(&MultiRank, &RanksSummary)>,
    report: &Report,
) -> Result<Table, Refusal> {
    use Kind::{Int, Text};
    let mut t = Table::new(
        "collectives",
        &[
            ("instance", Text, false),
            ("collective", Text, false),
            ("k", Int, false),
            ("rank", Int, false),
            ("start_ns", Int, false),
            ("end_ns", Int, false),
            ("arrival_lo_ns", Int, true),
            ("arrival_hi_ns", Int, true),
            ("skew_lo_ns", Int, true),
            ("skew_hi_ns", Int, true),
            ("transfer_lo_ns", Int, true),
            ("transfer_hi_ns", Int, true),
            ("last_rank", Int, true),
            ("delay_lo_ns", Int, true),
            ("delay_hi_ns", Int, true),
            ("wait_lo_ns", Int, true),
            ("wait_hi_ns", Int, true),
            ("rank_transfer_lo_ns", Int, true),
            ("rank_transfer_hi_ns", Int, true),
        ],
    );
    let Some((m, summary)) = multi else {
        return Ok(t);
    };
    let answers: HashMap<&str, &Verdict> = report
        .answers
        .iter()
        .filter_map(|a| a.outcome.verdict().map(|v| (a.id.as_str(), v)))
        .collect();
    for (inst, row) in m.instances.iter().zip(&summary.collectives) {
        let (skew_lo, skew_hi) = split(&row.skew);
        let (tr_lo, tr_hi) = split(&row.transfer);
        for (rank, c, question) in &inst.per_rank {
            let arrival = match question {
                None => Some((0, 0)),
                Some(id) => answers
                    .get(id.as_str())
                    .and_then(|v| v.range())
                    .map(|(lo, hi)| (lo.as_i64(), hi.as_i64())),
            };
            let mine = row.arrivals.ranks.iter().find(|x| x.rank == *rank);
            let (delay_lo, delay_hi) = mine.map_or((None, None), |x| split(&x.delay));
            let (wait_lo, wait_hi) = mine.map_or((None, None), |x| split(&x.wait));
            let (own_lo, own_hi) = mine.map_or((None, None), |x| split(&x.transfer));
            t.push(vec![
                Cell::S(Some(row.instance.clone())),
                Cell::S(Some(inst.key.clone())),
                Cell::I(Some(ns(inst.k as i128)?)),
                Cell::I(Some(i64::from(*rank))),
                Cell::I(Some(c.start.as_i64())),
                Cell::I(Some(c.end.as_i64())),
                Cell::I(arrival.map(|a| a.0)),
                Cell::I(arrival.map(|a| a.1)),
                Cell::I(skew_lo),
                Cell::I(skew_hi),
                Cell::I(tr_lo),
                Cell::I(tr_hi),
                Cell::I(row.last.map(i64::from)),
                Cell::I(delay_lo),
                Cell::I(delay_hi),
                Cell::I(wait_lo),
                Cell::I(wait_hi),
                Cell::I(own_lo),
                Cell::I(own_hi),
            ]);
        }
    }
    Ok(t)
}

fn relations(case: &Case, input: &Input) -> Result<Table, Refusal> {
    use Kind::{Int, Text};
    let mut t = Table::new(
        "relations",
        &[
            ("id", Text, false),
            ("a_clock", Text, false),
            ("b_clock", Text, false),
            ("a_rank", Int, true),
            ("b_rank", Int, true),
            ("lo_ns", Int, false),
            ("hi_ns", Int, false),
            ("source", Text, false),
            ("evidence", Text, false),
        ],
    );
    for r in &case.relations {
        let (a, b) = (&case.clocks[r.a].id, &case.clocks[r.b].id);
        t.push(vec![
            Cell::S(Some(r.id.clone())),
            Cell::S(Some(a.clone())),
            Cell::S(Some(b.clone())),
            Cell::I(rank_of(input, a)),
            Cell::I(rank_of(input, b)),
            Cell::I(Some(r.bound.lo().as_i64())),
            Cell::I(Some(r.bound.hi().as_i64())),
            Cell::S(Some(r.source.word().to_owned())),
            Cell::S(Some(r.evidence.join("\n"))),
        ]);
    }
    Ok(t)
}

/// Findings: the audit's (`worksheet audit`), per input file, in its order (most severe
/// first), then the multi-rank import's `straggler` findings (count: the instances where the
/// rank was certainly last).
fn findings(input: &Input, ranks: Option<&RanksSummary>) -> Result<Table, Refusal> {
    use Kind::{Int, Text};
    let mut t = Table::new(
        "findings",
        &[
            ("rank", Int, true),
            ("code", Text, false),
            ("severity", Text, false),
            ("count", Int, false),
            ("message", Text, false),
            ("evidence", Text, false),
            ("evidence_more", Int, false),
            ("fix", Text, false),
        ],
    );
    for (rank, audit) in &input.audits {
        for f in &audit.findings {
            t.push(vec![
                Cell::I(*rank),
                Cell::S(Some(f.code.to_owned())),
                Cell::S(Some(f.severity.word().to_owned())),
                Cell::I(Some(ns(i128::from(f.count))?)),
                Cell::S(Some(f.message.clone())),
                Cell::S(Some(f.evidence.items.join("\n"))),
                Cell::I(Some(ns(f.evidence.more as i128)?)),
                Cell::S(Some(f.fix.clone())),
            ]);
        }
    }
    for f in ranks.map_or(&[][..], |r| r.findings.as_slice()) {
        t.push(vec![
            Cell::I(Some(i64::from(f.rank))),
            Cell::S(Some(f.code.to_owned())),
            Cell::S(Some(f.severity.to_owned())),
            Cell::I(Some(ns(f.late_in as i128)?)),
            Cell::S(Some(f.message.clone())),
            Cell::S(Some(f.evidence.items.join("\n"))),
            Cell::I(Some(ns(f.evidence.more as i128)?)),
            Cell::S(Some(
                "find what this rank does before the collective that the others do not (docs/findings.md, `straggler`)".to_owned(),
            )),
        ]);
    }
    Ok(t)
}

/// The interval rows `worksheet import` prints (streams, devices, classes of work).
fn summary(input: &Input) -> Result<Table, Refusal> {
    use Kind::{Int, Text};
    let mut t = Table::new(
        "summary",
        &[
            ("rank", Int, true),
            ("question", Text, false),
            ("count", Int, false),
            ("union_ns", Int, false),
            ("sum_ns", Int, false),
            ("gaps", Int, false),
            ("gap_total_ns", Int, false),
            ("max_depth", Int, false),
            ("span_ns", Int, true),
        ],
    );
    let s = summarize(&input.imported, false).map_err(internal)?;
    for row in &s.sets {
        t.push(vec![
            Cell::I(rank_of_id(input, &row.question)),
            Cell::S(Some(row.question.clone())),
            Cell::I(Some(ns(row.count as i128)?)),
            Cell::I(Some(ns(row.ns.busy)?)),
            Cell::I(Some(ns(row.ns.sum)?)),
            Cell::I(Some(ns(row.gaps as i128)?)),
            Cell::I(Some(ns(row.ns.gap_total)?)),
            Cell::I(Some(i64::from(row.max_depth))),
            Cell::I(row.ns.span.map(ns).transpose()?),
        ]);
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(t: &Table, col: &str) -> Vec<Option<String>> {
        match &t.columns.iter().find(|c| c.name == col).unwrap().values {
            Values::Text(v) => v.clone(),
            Values::Int(_) => panic!("`{col}` is an integer column"),
        }
    }

    /// `"ts": 5195546165311.485` (µs with three decimals) in ns, read as text.
    fn micros_text_ns(text: &str, key: &str, from: usize) -> i64 {
        let at = text[from..].find(key).unwrap() + from + key.len();
        let end = at + text[at..].find([',', '\n', '}']).unwrap();
        let (whole, frac) = text[at..end].trim().split_once('.').unwrap();
        whole.parse::<i64>().unwrap() * 1000 + format!("{frac:0<3}").parse::<i64>().unwrap()
    }

    /// A single trace that names its rank exports it; its steps are the audit's, placed on
    /// the trace's clock exactly where the trace's `ProfilerStep#2` range is; its findings are
    /// `worksheet audit`'s.
    #[test]
    fn a_single_rank_trace_exports_its_rank_steps_and_findings() {
        let path = PathBuf::from("tests/data/ranks/rank1.json.gz");
        let input = load(std::slice::from_ref(&path), false, &[]).expect("loads");
        assert_eq!(input.rank, Some(1));
        let tables = build(&input).expect("tables");
        assert!(ints(&tables[0], "rank").iter().all(|r| *r == Some(1)));
        assert!(ints(&tables[5], "rank").iter().all(|r| *r == Some(1)));
        // The trace itself, read as text: base + ts × 1000 and dur × 1000, exactly.
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
            &mut text,
        )
        .unwrap();
        let base: i64 = {
            let key = "\"baseTimeNanoseconds\": ";
            let at = text.find(key).unwrap() + key.len();
            let end = at + text[at..].find(|c: char| !c.is_ascii_digit()).unwrap();
            text[at..end].parse().unwrap()
        };
        let step2 = text.find("\"name\": \"ProfilerStep#2\"").unwrap();
        let ts = micros_text_ns(&text, "\"ts\":", step2);
        let dur = micros_text_ns(&text, "\"dur\":", step2);
        let steps = &tables[1];
        assert_eq!(steps.rows(), 8, "ProfilerStep#2..#9 on one device");
        assert_eq!(ints(steps, "step")[0], Some(2));
        assert_eq!(ints(steps, "start_ns")[0], Some(base + ts));
        assert_eq!(ints(steps, "end_ns")[0], Some(base + ts + dur));
        assert_eq!(texts(steps, "clock")[0].as_deref(), Some("kineto"));
        assert!(ints(steps, "rank").iter().all(|r| *r == Some(1)));
        // Busy = idle complement, per row.
        let (host, busy, idle) = (
            ints(steps, "host_ns"),
            ints(steps, "busy_ns"),
            ints(steps, "idle_ns"),
        );
        for i in 0..steps.rows() {
            assert_eq!(host[i].unwrap() - busy[i].unwrap(), idle[i].unwrap());
        }
        let audit = &input.audits[0].1;
        let findings = &tables[4];
        assert_eq!(findings.rows(), audit.findings.len());
        assert!(findings.rows() > 0, "the real trace has findings");
        let codes: Vec<Option<String>> = audit
            .findings
            .iter()
            .map(|f| Some(f.code.to_owned()))
            .collect();
        assert_eq!(texts(findings, "code"), codes);
    }

    fn ints(t: &Table, col: &str) -> Vec<Option<i64>> {
        match &t.columns.iter().find(|c| c.name == col).unwrap().values {
            Values::Int(v) => v.clone(),
            Values::Text(_) => panic!("`{col}` is text"),
        }
    }

    /// The `kernels` table is `worksheet audit`'s kernel breakdown, row for row, and its
    /// counts and totals add up to the trace's own GPU events (kernels, copies, sets), read
    /// from the trace text: 72 + 8 + 56 = 136 events, Σ `dur` in ns.
    #[test]
    fn the_kernels_table_is_the_audits_breakdown_and_adds_up_to_the_trace() {
        let path = PathBuf::from("tests/data/ranks/rank1.json.gz");
        let input = load(std::slice::from_ref(&path), false, &[]).expect("loads");
        let tables = build(&input).expect("tables");
        let t = tables
            .iter()
            .find(|t| t.name == "kernels")
            .expect("kernels");
        let audit = &input.audits[0].1;
        assert_eq!(t.rows(), audit.kernels.len());
        let names: Vec<Option<String>> =
            audit.kernels.iter().map(|k| Some(k.name.clone())).collect();
        assert_eq!(texts(t, "name"), names);
        let totals: Vec<Option<i64>> = audit
            .kernels
            .iter()
            .map(|k| Some(i64::try_from(k.total_ns).unwrap()))
            .collect();
        assert_eq!(ints(t, "total_ns"), totals);
        assert!(ints(t, "rank").iter().all(|r| *r == Some(1)));
        // The trace's GPU events, independently of the reader.
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
            &mut text,
        )
        .unwrap();
        let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
        let gpu: Vec<&serde_json::Value> = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                matches!(
                    e["cat"].as_str(),
                    Some("kernel" | "gpu_memcpy" | "gpu_memset")
                )
            })
            .collect();
        assert_eq!(gpu.len(), 136);
        // `dur` has three decimals of µs; below 10⁶ µs an f64 rounds back to the exact ns.
        let dur_ns: i64 = gpu
            .iter()
            .map(|e| (e["dur"].as_f64().unwrap() * 1000.0).round() as i64)
            .sum();
        let count: i64 = ints(t, "count").iter().map(|c| c.unwrap()).sum();
        let total: i64 = ints(t, "total_ns").iter().map(|c| c.unwrap()).sum();
        assert_eq!(count, 136);
        assert_eq!(total, dur_ns);
        // Each row's mean lies between its min and max; the class words are the audit's.
        let (min, mean, max) = (ints(t, "min_ns"), ints(t, "mean_ns"), ints(t, "max_ns"));
        for i in 0..t.rows() {
            assert!(min[i] <= mean[i] && mean[i] <= max[i], "row {i}");
        }
        let classes = texts(t, "class");
        assert!(classes
            .iter()
            .all(|c| matches!(c.as_deref(), Some("compute" | "communication" | "memory"))));
        assert!(classes.contains(&Some("communication".to_owned())));
    }

    #[test]
    fn a_case_file_exports_its_phases_summary_and_empty_collectives() {
        let input = load(
            &[PathBuf::from("fixtures/cases/phases-with-gap.json")],
            false,
            &[],
        )
        .expect("a case file loads");
        let tables = build(&input).expect("tables");
        let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
        assert_eq!(names, NAMES.to_vec());
        assert_eq!(
            ints(&tables[0], "start_ns"),
            vec![Some(7_000_000), Some(7_060_000)]
        );
        assert_eq!(ints(&tables[0], "rank"), vec![None, None]);
        assert_eq!(tables[2].rows(), 0);
        assert_eq!(tables[4].rows(), 0);
        // union 80 us, span 100 us, one 20 us gap (the case's own expectations).
        assert_eq!(ints(&tables[5], "union_ns"), vec![Some(80_000)]);
        assert_eq!(ints(&tables[5], "span_ns"), vec![Some(100_000)]);
        assert_eq!(ints(&tables[5], "gap_total_ns"), vec![Some(20_000)]);
    }

    /// With one host clock declared, the straggler finding of the real pair is a row of
    /// `findings`, and each rank's wait in `collectives` is exact.
    #[test]
    fn a_declared_clock_exports_the_straggler_and_exact_waits() {
        let input = load(
            &[PathBuf::from("tests/data/ranks")],
            false,
            &["0".to_owned()],
        )
        .expect("loads");
        let tables = build(&input).expect("tables");
        let findings = &tables[4];
        let codes = match &findings
            .columns
            .iter()
            .find(|c| c.name == "code")
            .unwrap()
            .values
        {
            Values::Text(v) => v.clone(),
            Values::Int(_) => panic!("text"),
        };
        let at = codes
            .iter()
            .position(|c| c.as_deref() == Some("straggler"))
            .expect("a straggler row");
        assert_eq!(ints(findings, "rank")[at], Some(1));
        assert_eq!(ints(findings, "count")[at], Some(7));
        let c = &tables[2];
        assert_eq!(ints(c, "wait_lo_ns"), ints(c, "wait_hi_ns"));
        let rank0_wait: i64 = ints(c, "rank")
            .iter()
            .zip(ints(c, "wait_lo_ns"))
            .filter(|(r, _)| **r == Some(0))
            .map(|(_, w)| w.unwrap())
            .sum();
        assert_eq!(rank0_wait, 3_628_716);
        assert!(load(
            &[PathBuf::from("tests/data/ranks")],
            false,
            &["soon".to_owned()]
        )
        .is_err());
    }

    #[test]
    fn a_declared_relation_is_exported_with_its_bound() {
        let input = load(
            &[PathBuf::from(
                "fixtures/edge-controls/40-point-relation-is-exact.json",
            )],
            false,
            &[],
        )
        .expect("loads");
        let t = build(&input).expect("tables").remove(3);
        assert_eq!(ints(&t, "lo_ns"), vec![Some(250_000)]);
        assert_eq!(ints(&t, "hi_ns"), vec![Some(250_000)]);
    }
}
