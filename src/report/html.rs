//! The report page as one `String` (no I/O): tables, then one timeline panel per clock with
//! its intervals embedded as JSON for the inline script (`report.js`, hand-written, no
//! library) to draw and zoom.
//!
//! Every value in the verdict table is the engine's; per-stream and per-device rows come
//! from the engine when an `intervals` question is exactly that stream's or device's
//! phases, else from the same interval algebra ([`crate::interval::analyze`]), and the
//! table says which.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde_json::json;

use crate::case::Case;
use crate::clock::ClockId;
use crate::engine::{evaluate, wide, Outcome, Report};
use crate::interval::{analyze, Interval, SetAnalysis};
use crate::render::layout;
use crate::render::model::{BarKind, Lane, LaneKind, Timeline};
use crate::render::svg::esc;
use crate::units::Nanos;
use crate::verdict::Verdict;

use super::steps::Step;
use super::Source;

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");

/// A section another command adds to the page (the audit's findings and per-step table):
/// a title, and HTML that the caller has escaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The `id` of the `<section>` (`audit`).
    pub id: String,
    /// Its heading.
    pub title: String,
    /// Its body, already HTML.
    pub html: String,
}

/// What the page is made of.
#[derive(Debug)]
pub struct ReportInput<'a> {
    /// The case (read, or imported from a trace).
    pub case: &'a Case,
    /// What the input was.
    pub source: &'a Source,
    /// The input's name, as given.
    pub input_name: &'a str,
    /// Extra sections, after the tables (the audit's findings go here).
    pub sections: Vec<Section>,
    /// The stretch of one clock the timeline shows (`--window`), as `render` takes it.
    pub window: Option<layout::Window>,
}

fn verdict_rows(report: &Report) -> String {
    let mut rows = String::new();
    for a in &report.answers {
        let (verdict, value, detail) = match &a.outcome {
            Outcome::Duration(v) | Outcome::Difference { verdict: v, .. } => match v {
                Verdict::Known { value, notes } => ("known", value.to_string(), notes.join("; ")),
                Verdict::Bounded { lo, hi, notes } => {
                    ("bounded", format!("[{lo}, {hi}]"), notes.join("; "))
                }
                Verdict::Unknown { reason, detail } => {
                    ("unknown", format!("({reason})"), detail.clone())
                }
            },
            Outcome::Intervals(ia) => match ia.combined_unknown {
                Some(reason) => (
                    "unknown",
                    format!("({reason})"),
                    format!("{} clocks: reported per clock", ia.per_clock.len()),
                ),
                None => ("known", a.headline(), String::new()),
            },
        };
        let detail = match &a.outcome {
            Outcome::Difference { attribution, .. } => {
                format!("{detail} attribution unknown ({attribution})")
            }
            _ => detail,
        };
        let _ = writeln!(
            rows,
            r#"<tr class="{verdict}"><td>{}</td><td>{}</td><td class="v">{verdict}</td><td>{}</td><td>{}</td></tr>"#,
            esc(&a.id),
            a.kind,
            esc(&value),
            esc(detail.trim())
        );
    }
    rows
}

/// The engine's analysis for a phase set, when some `intervals` question is exactly it.
fn from_eval(
    case: &Case,
    report: &Report,
    phases: &[usize],
    clock_id: &str,
) -> Option<(String, SetAnalysis)> {
    let mut want: Vec<usize> = phases.to_vec();
    want.sort_unstable();
    for (q, a) in case.questions.iter().zip(&report.answers) {
        let (crate::case::Ask::Intervals { phases: qp }, Outcome::Intervals(ia)) =
            (&q.ask, &a.outcome)
        else {
            continue;
        };
        let mut mine: Vec<usize> = qp
            .iter()
            .copied()
            .filter(|&p| case.clocks[case.phases[p].clock].id == clock_id)
            .collect();
        mine.sort_unstable();
        mine.dedup();
        if mine == want {
            if let Some(set) = ia.per_clock.iter().find(|s| s.clock_id == clock_id) {
                return Some((format!("eval: {}", q.id), set.analysis.clone()));
            }
        }
    }
    None
}

fn algebra_row(
    case: &Case,
    report: &Report,
    name: &str,
    extra: &str,
    phases: &[usize],
    clock: usize,
) -> String {
    let clock_id = &case.clocks[clock].id;
    let (source, a) = from_eval(case, report, phases, clock_id).unwrap_or_else(|| {
        let ivs: Vec<Interval> = phases.iter().map(|&p| case.phases[p].interval).collect();
        ("interval algebra".to_owned(), analyze(&ivs))
    });
    format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        esc(name),
        esc(extra),
        esc(clock_id),
        a.count,
        wide(a.union_ns),
        wide(a.sum_ns),
        a.span_ns().map_or("unknown (empty-set)".to_owned(), wide),
        a.gaps.len(),
        wide(a.overlap_ns()),
        a.max_depth,
        esc(&source)
    )
}

fn stream_and_device_rows(case: &Case, report: &Report) -> (String, String) {
    let mut streams = String::new();
    let mut devices: BTreeMap<(String, usize), (Vec<usize>, Vec<String>)> = BTreeMap::new();
    for (s, stream) in case.streams.iter().enumerate() {
        let phases: Vec<usize> = (0..case.phases.len())
            .filter(|&p| case.phases[p].stream == Some(s))
            .collect();
        streams.push_str(&algebra_row(
            case,
            report,
            &stream.id,
            &stream.device,
            &phases,
            stream.clock,
        ));
        let d = devices
            .entry((stream.device.clone(), stream.clock))
            .or_default();
        d.0.extend(&phases);
        d.1.push(stream.id.clone());
    }
    let mut rows = String::new();
    for ((device, clock), (phases, ids)) in &devices {
        rows.push_str(&algebra_row(
            case,
            report,
            device,
            &ids.join(", "),
            phases,
            *clock,
        ));
    }
    (streams, rows)
}

/// Names interned per panel: a lane ships one index per interval.
#[derive(Default)]
struct Names {
    list: Vec<String>,
    index: HashMap<String, usize>,
}

impl Names {
    fn intern(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.list.push(name.to_owned());
        self.index.insert(name.to_owned(), self.list.len() - 1);
        self.list.len() - 1
    }
}

/// One lane of a panel as the script's data, times relative to `base`.
fn lane_json(lane: &Lane, base: i64, names: &mut Names) -> serde_json::Value {
    let rel = |x: i64| -> i64 { x.saturating_sub(base) };
    let mut v = json!({"title": lane.title, "subtitle": lane.subtitle});
    match lane.kind {
        LaneKind::Answers | LaneKind::Timers => {
            v["kind"] = json!("items");
            v["rows"] = json!(lane.rows.len());
            v["items"] = lane
                .rows
                .iter()
                .enumerate()
                .flat_map(|(r, row)| row.iter().map(move |b| (r, b)))
                .map(|(r, b)| {
                    let (kind, colour) = match b.kind {
                        BarKind::Known => ("known", ""),
                        BarKind::Unknown => ("unknown", ""),
                        BarKind::SubmissionTimer => ("bar", "#e15759"),
                        BarKind::CompletionTimer => ("bar", "#59a14f"),
                        _ => ("bar", "#9c9c9c"),
                    };
                    json!({"s": rel(b.start), "e": rel(b.end), "row": r, "label": b.label, "kind": kind, "colour": colour, "title": b.tooltip})
                })
                .collect();
        }
        LaneKind::Waits | LaneKind::Marks => {
            v["kind"] = json!("ticks");
            v["colour"] = json!(if lane.kind == LaneKind::Waits {
                "#b07aa1"
            } else {
                "#9c755f"
            });
            v["t"] = lane.ticks.iter().map(|k| rel(k.at)).collect();
        }
        LaneKind::Covered => {
            v["kind"] = json!("covered");
            if let Some(cov) = lane.coverage.first() {
                v["title"] = json!(cov.question);
                v["subtitle"] = json!("intervals question (eval)");
                v["iv"] = cov
                    .intervals
                    .iter()
                    .flat_map(|&(s, e)| [rel(s), rel(e)])
                    .collect();
            }
        }
        kind => {
            v["kind"] = json!(if kind == LaneKind::Ranges {
                "ranges"
            } else {
                "bars"
            });
            v["iv"] = lane
                .bars()
                .flat_map(|b| [rel(b.start), rel(b.end)])
                .collect();
            v["ni"] = lane.bars().map(|b| names.intern(&b.label)).collect();
        }
    }
    v
}

/// The steps lane of a panel: each step of its clock that meets its view, as a bracket with
/// its exact start and end after the panel's origin and its duration as the engine prints
/// it; `None` when no step does.
fn steps_lane(
    steps: &[Step],
    clock: &ClockId,
    view: (i64, i64),
    base: i64,
) -> Option<serde_json::Value> {
    let mine: Vec<&Step> = steps
        .iter()
        .filter(|s| &s.clock == clock && s.end >= view.0 && s.start <= view.1)
        .collect();
    if mine.is_empty() {
        return None;
    }
    let spans: Vec<(i64, i64)> = mine.iter().map(|s| (s.start, s.end)).collect();
    let rows = super::steps::rows(&spans);
    let items: Vec<serde_json::Value> = mine
        .iter()
        .zip(&rows)
        .map(|(s, row)| {
            json!({"s": s.start.saturating_sub(base), "e": s.end.saturating_sub(base), "row": row,
                   "name": s.name, "d": Nanos::new(s.end.saturating_sub(s.start)).to_string(),
                   "from": s.source})
        })
        .collect();
    Some(json!({
        "kind": "steps",
        "title": "steps",
        "subtitle": "brackets: click to zoom",
        "rows": rows.iter().max().map_or(1, |r| r + 1),
        "steps": items,
    }))
}

/// The timeline's panels as the script's data: times relative to each panel's clock origin,
/// the one `render` names on its axis and `--window +A..+B` counts from. A panel on the
/// audit's clock carries `audit`: the audit's origin after the panel's, so that the audit's
/// `t+…` times (its evidence's) land on the panel exactly.
fn timeline_json(case: &Case, t: &Timeline) -> serde_json::Value {
    let steps = super::steps::steps(case);
    let audit = super::steps::audit_origin(case);
    let panels: Vec<serde_json::Value> = t
        .panels
        .iter()
        .map(|p| {
            let base = p.origin;
            let mut names = Names::default();
            let mut lanes: Vec<serde_json::Value> = steps_lane(&steps, &p.clock, p.view, base)
                .into_iter()
                .collect();
            lanes.extend(p.lanes.iter().map(|lane| lane_json(lane, base, &mut names)));
            let mut v = json!({
                "clock": p.clock_id,
                "domain": p.clock.domain.to_string(),
                "instance": p.clock.instance,
                "base": base.to_string(),
                "from": p.view.0.saturating_sub(base),
                "names": names.list,
                "span": p.view.1.saturating_sub(p.view.0),
                "lanes": lanes,
            });
            if let Some((clock, origin)) = &audit {
                if clock == &p.clock {
                    v["audit"] = json!(origin.saturating_sub(base));
                }
            }
            v
        })
        .collect();
    json!({ "panels": panels })
}

/// The layout of `case` (in `window`), or no panels where it has nothing to draw.
fn layout_or_empty(case: &Case, window: Option<layout::Window>) -> Timeline {
    layout::layout(
        case,
        &layout::LayoutOptions {
            focus: None,
            window,
        },
    )
    .unwrap_or_else(|_| Timeline {
        title: case.name.clone(),
        description: None,
        panels: Vec::new(),
        arrows: Vec::new(),
        notes: Vec::new(),
        unplaced: Vec::new(),
        focus: None,
        zoomed: false,
    })
}

/// How many answers are known or bounded, and how many unknown.
fn known_and_unknown(report: &Report) -> (usize, usize) {
    report.answers.iter().fold((0, 0), |(k, u), a| {
        let is_unknown = match &a.outcome {
            Outcome::Intervals(ia) => ia.combined_unknown.is_some(),
            o => matches!(o.verdict(), Some(Verdict::Unknown { .. })),
        };
        if is_unknown {
            (k, u + 1)
        } else {
            (k + 1, u)
        }
    })
}

/// The page's head, header and tables (answers, per stream, per device).
fn head_and_tables(input: &ReportInput<'_>, report: &Report) -> String {
    let case = input.case;
    let (known, unknown) = known_and_unknown(report);
    let source = match input.source {
        Source::Case => "a case file".to_owned(),
        Source::Trace(format) => format!("a trace, imported ({format})"),
    };
    let (streams, devices) = stream_and_device_rows(case, report);
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>worksheet report: {name}</title>
<style>{CSS}</style></head>
<body>
<header><h1>worksheet report: {name}</h1>
<p class="meta">{input} — {source}. {n} question(s): {known} known or bounded, {unknown} unknown. Every value below is exact (integer nanoseconds, printed exactly).</p>
{desc}</header>
<section id="verdicts"><h2>Answers</h2>
<table class="verdicts"><thead><tr><th>question</th><th>kind</th><th>verdict</th><th>value / reason</th><th>detail</th></tr></thead><tbody>
{verdicts}</tbody></table></section>
<section id="streams"><h2>Per stream</h2>
<table class="algebra"><thead><tr><th>stream</th><th>device</th><th>clock</th><th>phases</th><th>union (busy)</th><th>sum</th><th>span</th><th>gaps</th><th>overlap</th><th>max depth</th><th>from</th></tr></thead><tbody>
{streams}</tbody></table></section>
<section id="devices"><h2>Per device</h2>
<table class="algebra"><thead><tr><th>device</th><th>streams</th><th>clock</th><th>phases</th><th>union (busy)</th><th>sum</th><th>span</th><th>gaps</th><th>overlap</th><th>max depth</th><th>from</th></tr></thead><tbody>
{devices}</tbody></table></section>
"#,
        name = esc(&case.name),
        input = esc(input.input_name),
        n = report.answers.len(),
        desc = case
            .description
            .as_ref()
            .map(|d| format!("<p class=\"desc\">{}</p>", esc(d)))
            .unwrap_or_default(),
        verdicts = verdict_rows(report),
    )
}

/// The other commands' sections (the audit's findings and steps).
fn sections_html(sections: &[Section], page: &mut String) {
    page.push_str("<!-- sections: worksheet audit adds its findings here -->\n");
    for s in sections {
        let _ = writeln!(
            page,
            r#"<section id="{}"><h2>{}</h2>{}</section>"#,
            esc(&s.id),
            esc(&s.title),
            s.html
        );
    }
}

/// The timeline section: one panel per clock (stretch), the engine's interval answers under
/// them, and the layout's notes.
fn timeline_html(timeline: &Timeline, page: &mut String) {
    page.push_str(r#"<section id="timeline"><h2>Timeline</h2><p class="note">One panel per clock, each with its own axis: positions in different panels are not comparable. Each pixel column shows the exact busy fraction of the intervals clipped to it (orange: time at depth ≥ 2). Wheel or +/− to zoom, drag to pan, double-click to reset; hover a column for its exact figures, click a bar or a step's bracket to keep its figures (a bracket zooms to its step). An audit finding's evidence links here: it zooms to the evidence's times and marks them.</p>"#);
    page.push('\n');
    for p in &timeline.panels {
        let _ = writeln!(
            page,
            r#"<div class="panel" data-clock="{}"><h3>clock `{}` — domain {}, instance {}</h3><div class="tools"><button class="zin">+</button><button class="zout">−</button><button class="reset">reset</button> <span class="view"></span> <span class="base">origin: {} on this clock</span></div><div class="picked"></div><div class="wrap"><canvas></canvas><div class="tip"></div></div></div>"#,
            esc(&p.clock_id),
            esc(&p.clock_id),
            esc(&p.clock.domain.to_string()),
            esc(&p.clock.instance),
            Nanos::new(p.origin)
        );
    }
    // The engine's interval answers per clock, under the panels.
    let summaries: Vec<String> = timeline
        .panels
        .iter()
        .flat_map(|p| p.lanes.iter().flat_map(|l| &l.coverage))
        .map(|c| {
            format!(
                r#"<li data-question="{}" data-clock="{}"><b>{}</b> on `{}`: {}</li>"#,
                esc(&c.question),
                esc(&c.clock_id),
                esc(&c.question),
                esc(&c.clock_id),
                esc(&c.summary)
            )
        })
        .collect();
    if !summaries.is_empty() {
        let _ = write!(
            page,
            "<h3>Interval answers (eval)</h3><ul class=\"summaries\">{}</ul>",
            summaries.concat()
        );
    }
    if !timeline.notes.is_empty() || !timeline.unplaced.is_empty() {
        page.push_str("<ul class=\"notes\">");
        for n in timeline.unplaced.iter().chain(&timeline.notes) {
            let _ = write!(page, "<li>{}</li>", esc(n));
        }
        page.push_str("</ul>");
    }
    page.push_str("</section>\n");
}

/// The whole page.
pub fn render(input: &ReportInput<'_>) -> String {
    let case = input.case;
    let report = evaluate(case);
    let timeline = layout_or_empty(case, input.window.clone());
    let mut page = head_and_tables(input, &report);
    sections_html(&input.sections, &mut page);
    timeline_html(&timeline, &mut page);
    // JSON inside <script>: `</` must not close the element.
    let data = timeline_json(case, &timeline)
        .to_string()
        .replace("</", "<\\/");
    let _ = write!(
        page,
        "<script type=\"application/json\" id=\"timeline-data\">{data}</script>\n<script>{JS}</script>\n</body></html>\n"
    );
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_report_has_its_tables_panels_and_data() {
        let case = crate::case::load_case_file(std::path::Path::new(
            "fixtures/cases/three-boundaries.json",
        ))
        .unwrap();
        let page = render(&ReportInput {
            case: &case,
            source: &Source::Case,
            input_name: "three-boundaries.json",
            window: None,
            sections: vec![Section {
                id: "audit".into(),
                title: "Findings".into(),
                html: "<p>none</p>".into(),
            }],
        });
        assert!(page.contains(r#"<section id="verdicts">"#));
        assert!(page.contains(r#"<tr class="known"><td>host-completion</td><td>host-completion</td><td class="v">known</td><td>140 us</td>"#), "{page}");
        assert_eq!(page.matches(r#"<div class="panel""#).count(), 2);
        assert!(page.contains(r#"<section id="audit"><h2>Findings</h2><p>none</p></section>"#));
        // Stream A's row: phase 1 only, 80 us; device gpu0: union 100 us, overlap 40 us (eval's).
        assert!(
            page.contains("<td>A</td><td>gpu0</td><td>gpu</td><td>1</td><td>80 us</td>"),
            "{page}"
        );
        assert!(page.contains("<td>gpu0</td><td>A, B</td><td>gpu</td><td>2</td><td>100 us</td><td>140 us</td><td>100 us</td><td>0</td><td>40 us</td><td>2</td><td>eval: phases</td>"), "{page}");
        // No network: nothing is fetched.
        for needle in ["http://", "https://", "src=", "<link"] {
            assert!(!page.contains(needle), "{needle}");
        }
    }
}
