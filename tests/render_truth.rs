//! Pictures and engine agree: on every fixture and every real trace in `tests/data`, each
//! union, sum, span, overlap, gap count and depth printed in the SVG and in the text sketch
//! equals `eval`'s, every `intervals` answer is shown on each of its clocks, and every
//! duration answer is drawn (or listed) with the engine's verdict.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use worksheet::case::{load_case_file, load_case_str, Case};
use worksheet::engine::{evaluate, wide, Outcome};
use worksheet::import::{import_path, ImportOptions};
use worksheet::interval::SetAnalysis;
use worksheet::render::{layout, model, svg, text};

fn files(dir: &str, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| keep(p))
        .collect();
    out.sort();
    out
}

/// Every fixture that loads (the malformed-on-purpose edge controls do not) and every
/// real trace, imported.
fn all_cases() -> Vec<(String, Case)> {
    let json = |p: &Path| p.extension().is_some_and(|e| e == "json");
    let mut cases = Vec::new();
    for dir in ["fixtures/cases", "fixtures/captures"] {
        for p in files(dir, json) {
            let case = load_case_file(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            cases.push((p.display().to_string(), case));
        }
    }
    for p in files("fixtures/edge-controls", json) {
        if let Ok(case) = load_case_file(&p) {
            cases.push((p.display().to_string(), case));
        }
    }
    let traces = files("tests/data/traces", |p| {
        p.to_string_lossy().ends_with(".json.gz")
    });
    let nsys = files("tests/data/nsys", |p| {
        p.extension().is_some_and(|e| e == "sqlite")
    });
    assert!(traces.len() >= 8 && nsys.len() >= 5, "{traces:?} {nsys:?}");
    for p in traces.into_iter().chain(nsys) {
        let imported = import_path(&p, &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let name = p.display().to_string();
        let case = load_case_str(&imported.case.to_json_pretty(), &name).unwrap();
        cases.push((name, case));
    }
    cases
}

/// `(question, clock id)` → the engine's analysis, for every `intervals` answer.
fn expected(case: &Case) -> BTreeMap<(String, String), SetAnalysis> {
    let report = evaluate(case);
    let mut out = BTreeMap::new();
    for answer in &report.answers {
        if let Outcome::Intervals(ia) = &answer.outcome {
            for set in &ia.per_clock {
                out.insert(
                    (answer.id.clone(), set.clock_id.clone()),
                    set.analysis.clone(),
                );
            }
        }
    }
    out
}

/// Checks a printed summary, field by field, against the engine's analysis.
fn agrees(where_: &str, printed: &str, a: &SetAnalysis) {
    let mut fields = BTreeMap::new();
    for part in printed.split(", ") {
        let (name, value) = if let Some(n) = part.strip_suffix(" gap(s)") {
            ("gaps", n)
        } else if let Some(d) = part.strip_prefix("max depth ") {
            ("max depth", d)
        } else {
            part.split_once(' ').unwrap_or((part, ""))
        };
        fields.insert(name.to_owned(), value.to_owned());
    }
    let want = [
        ("union", wide(a.union_ns)),
        ("sum", wide(a.sum_ns)),
        (
            "span",
            a.span_ns().map_or("unknown (empty-set)".to_owned(), wide),
        ),
        ("overlap", wide(a.sum_ns - a.union_ns)),
        ("gaps", a.gaps.len().to_string()),
        ("max depth", a.max_depth.to_string()),
    ];
    for (name, value) in want {
        assert_eq!(
            fields.get(name),
            Some(&value),
            "{where_}: `{name}` printed as {:?}, eval says {value} (line: {printed})",
            fields.get(name)
        );
    }
}

fn check_svg(name: &str, case: &Case, want: &BTreeMap<(String, String), SetAnalysis>) {
    let t = layout::layout(case, &layout::LayoutOptions::default()).unwrap();
    let picture = svg::render(&t, &svg::SvgOptions::default());
    assert!(
        picture.len() < 2_000_000,
        "{name}: the SVG is {} bytes",
        picture.len()
    );
    let doc = roxmltree::Document::parse(&picture).unwrap();
    let mut seen = BTreeSet::new();
    for node in doc
        .descendants()
        .filter(|n| n.has_attribute("data-question"))
    {
        let q = node.attribute("data-question").unwrap().to_owned();
        let clock = node.attribute("data-clock").unwrap().to_owned();
        let a = want.get(&(q.clone(), clock.clone())).unwrap_or_else(|| {
            panic!("{name}: the picture shows {q} on {clock}, eval has no such answer")
        });
        let summary = node.attribute("data-summary").unwrap();
        agrees(&format!("{name} svg {q}@{clock}"), summary, a);
        // The visible line is that summary (unless cut in the middle to fit).
        let shown: String = node
            .children()
            .filter(|c| c.is_text())
            .filter_map(|c| c.text())
            .collect();
        if !shown.contains('…') {
            assert_eq!(shown, format!("{q}: {summary}"), "{name}");
        }
        seen.insert((q, clock));
    }
    let missing: Vec<_> = want.keys().filter(|k| !seen.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "{name}: intervals answers not drawn: {missing:?}"
    );

    // Duration answers: a bracket whose tooltip carries the engine's headline, or a line
    // in the list of answers with no place.
    let report = evaluate(case);
    let titles: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text().map(str::to_owned))
        .collect();
    for (k, answer) in report.answers.iter().enumerate() {
        if answer.outcome.verdict().is_none() {
            continue;
        }
        let bracket = format!(
            "question {} ({}): {}",
            answer.id,
            answer.kind,
            answer.headline()
        );
        let listed = format!("{} ({}): {}", answer.id, answer.kind, answer.headline());
        let drawn = titles.iter().any(|t| t.starts_with(&bracket))
            || (k < 30 && titles.iter().any(|t| t == &listed))
            || t.unplaced.iter().any(|l| l == &listed);
        assert!(
            drawn,
            "{name}: answer {} ({}) is not in the picture",
            answer.id,
            answer.headline()
        );
    }
}

fn check_text(name: &str, case: &Case, want: &BTreeMap<(String, String), SetAnalysis>) {
    let t = layout::layout(case, &layout::LayoutOptions::default()).unwrap();
    // Wide enough that no summary wraps.
    let sketch = text::render(&t, &text::TextOptions { width: 400 });
    let mut clock = String::new();
    let mut seen = BTreeSet::new();
    for line in sketch.lines() {
        if let Some(rest) = line.strip_prefix("clock `") {
            clock = rest.split('`').next().unwrap().to_owned();
            continue;
        }
        let trimmed = line.trim_start();
        if line.len() == trimmed.len() {
            continue;
        }
        let Some((q, summary)) = trimmed.split_once(": union ") else {
            continue;
        };
        // A panel is one clock, named by all of its ids (`pid144 = pid145`, an nsys
        // export's processes); the engine names a set by the id of its first phase.
        let ids: Vec<&str> = clock.split(" = ").collect();
        let (key, a) = want
            .iter()
            .find(|((wq, wc), _)| wq == q && ids.contains(&wc.as_str()))
            .unwrap_or_else(|| panic!("{name}: the sketch shows {q} on {clock}: {line}"));
        agrees(
            &format!("{name} text {q}@{clock}"),
            &format!("union {summary}"),
            a,
        );
        seen.insert(key.clone());
    }
    let missing: Vec<_> = want.keys().filter(|k| !seen.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "{name}: intervals answers not in the sketch: {missing:?}"
    );
}

#[test]
fn every_number_in_every_picture_is_evals() {
    let cases = all_cases();
    assert!(cases.len() >= 30, "{}", cases.len());
    for (name, case) in &cases {
        let want = expected(case);
        check_svg(name, case, &want);
        check_text(name, case, &want);
    }
}

/// nccl_data: the engine says device:gpu0 is busy 157.500014 ms with 7.685824 ms of
/// overlap; the picture used to count the annotation ranges as work (439.5 ms, 95.5 ms).
#[test]
fn annotations_are_not_work_in_the_nccl_picture() {
    let p = Path::new("tests/data/traces/nccl_data.json.gz");
    let imported = import_path(p, &ImportOptions::default()).unwrap();
    let case = load_case_str(&imported.case.to_json_pretty(), "nccl_data").unwrap();
    let t = layout::layout(&case, &layout::LayoutOptions::default()).unwrap();
    let picture = svg::render(&t, &svg::SvgOptions::default());
    assert!(picture.contains(
        r#"data-summary="union 157.500014 ms, sum 165.185838 ms, span 660.551005 ms, overlap 7.685824 ms, 3480 gap(s), max depth 2""#
    ));
    let ranges = t.panels[0]
        .lanes
        .iter()
        .find(|l| l.kind == model::LaneKind::Ranges)
        .expect("a ranges lane");
    assert!(ranges.bars().all(|b| b.kind == model::BarKind::Range));
    assert!(ranges.bars().count() > 10);
    assert!(t.panels[0]
        .lanes
        .iter()
        .filter(|l| l.kind != model::LaneKind::Ranges)
        .flat_map(|l| l.bars())
        .all(|b| !b.id.starts_with("annotation-")));
}
