//! SVG primitives shared by the picture ([`super::svg`]): colours, the horizontal scale,
//! label placement, bars and brackets, exact per-column density, and the legend.

use std::fmt::Write as _;

use super::density;
use super::font::{fit_middle, short_name, width as text_w};
use super::model::{Bar, BarKind, TickKind, Timeline};

/// Left margin: the lane labels' column.
pub const LEFT: f64 = 190.0;
/// Right margin.
pub const RIGHT: f64 = 44.0;
/// Height of one row of bars.
pub const ROW_H: f64 = 24.0;
/// Height of a bar.
pub const BAR_H: f64 = 16.0;

pub const C_PHASE: &str = "#4e79a7";
pub const C_SUBMIT: &str = "#e15759";
pub const C_COMPLETE: &str = "#59a14f";
pub const C_TIMER: &str = "#9c9c9c";
pub const C_EVENT: &str = "#222222";
pub const C_WAIT: &str = "#b07aa1";
pub const C_MARK: &str = "#9c755f";
pub const C_UNION: &str = "#76b7b2";
pub const C_OVERLAP: &str = "#f28e2b";
pub const C_ARROW: &str = "#6b4c9a";
pub const C_JOIN: &str = "#1b7f79";
pub const C_RANGE: &str = "#8a8a8a";
pub const C_KNOWN: &str = "#2f6f2f";
pub const C_UNKNOWN: &str = "#b3261e";

/// Escapes text for XML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Horizontal scale of one panel.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    /// View start (ns).
    pub a: i64,
    /// View end (ns).
    pub b: i64,
    /// Plot width (px).
    pub plot_w: f64,
}

impl Scale {
    /// The x of time `t`.
    pub fn x(&self, t: i64) -> f64 {
        // In f64: the difference of two extreme i64 values does not fit in i64.
        let span = (self.b as f64 - self.a as f64).max(1.0);
        LEFT + (t as f64 - self.a as f64) / span * self.plot_w
    }

    /// Whole pixel columns of the plot.
    pub fn columns(&self) -> usize {
        self.plot_w.floor().max(1.0) as usize
    }

    /// Whether `n` items are too many to draw one by one: more than one per 4 px column.
    pub fn crowded(&self, n: usize) -> bool {
        n as f64 > self.plot_w / 4.0
    }
}

/// Occupied horizontal ranges of one text line, to keep labels from overlapping.
#[derive(Default)]
pub struct Occupied(Vec<(f64, f64)>);

impl Occupied {
    /// Whether `[x0, x1]` is free (3 px apart from everything taken).
    pub fn free(&self, x0: f64, x1: f64) -> bool {
        self.0.iter().all(|&(a, b)| x1 + 3.0 <= a || x0 >= b + 3.0)
    }
    /// Takes `[x0, x1]`.
    pub fn take(&mut self, x0: f64, x1: f64) {
        self.0.push((x0, x1));
    }
}

fn bar_colour(kind: BarKind) -> (&'static str, &'static str) {
    match kind {
        BarKind::Phase => (C_PHASE, "#ffffff"),
        BarKind::SubmissionTimer => (C_SUBMIT, "#ffffff"),
        BarKind::CompletionTimer => (C_COMPLETE, "#ffffff"),
        BarKind::Timer => (C_TIMER, "#ffffff"),
        BarKind::Range => (C_RANGE, "#333333"),
        BarKind::Known => (C_KNOWN, "#1d401d"),
        BarKind::Unknown => (C_UNKNOWN, "#7a1a14"),
    }
}

/// The label candidates of a bar, best first: the whole label, its short name, then the
/// longer of the two cut in the middle to `room` px.
fn label_in(label: &str, size: f64, room: f64, answer: bool) -> Option<String> {
    if text_w(label, size) <= room {
        return Some(label.to_owned());
    }
    // An answer (`id: value`) keeps its value whole, or is not cut at all.
    if let (true, Some((_, value))) = (answer, label.split_once(": ")) {
        return (text_w(value, size) <= room).then(|| value.to_owned());
    }
    let short = short_name(label);
    if let Some(s) = &short {
        if text_w(s, size) <= room {
            return Some(s.clone());
        }
    }
    fit_middle(short.as_deref().unwrap_or(label), size, room)
        .filter(|s| s.chars().count() >= 8)
        .or_else(|| run_number(label).filter(|n| text_w(n, size) <= room))
}

/// The run number ending a label (`run 7` → `7`, `warm-up w1` → `w1`): a last word of at
/// most 4 letters and digits with a digit in it. What a narrow bar of a lab shows (UX N16).
fn run_number(label: &str) -> Option<String> {
    let last = label.split_whitespace().last()?;
    (last != label.trim()
        && last.chars().count() <= 4
        && last.chars().all(|c| c.is_ascii_alphanumeric())
        && last.chars().any(|c| c.is_ascii_digit()))
    .then(|| last.to_owned())
}

/// Draws one bar (or bracket) with its tooltip and, where it fits, its label.
pub fn bar(out: &mut String, bar: &Bar, next_start: Option<f64>, s: &Scale, y: f64, right: f64) {
    let x0 = s.x(bar.start);
    let x1 = s.x(bar.end).max(x0 + 1.5);
    let (fill, ink) = bar_colour(bar.kind);
    let _ = write!(out, "<g><title>{}</title>", esc(&bar.tooltip));
    let w = x1 - x0;
    let bracket = matches!(bar.kind, BarKind::Range | BarKind::Known | BarKind::Unknown);
    let answer = matches!(bar.kind, BarKind::Known | BarKind::Unknown);
    match bar.kind {
        BarKind::Range | BarKind::Known => {
            // A bracket: a line with two end ticks, the label above the line.
            let (ly, sw) = (
                y + BAR_H - 3.0,
                if bar.kind == BarKind::Known { 2.0 } else { 1.2 },
            );
            let _ = write!(
                out,
                r#"<path d="M{x0:.2},{:.2} V{ly:.2} H{x1:.2} V{:.2}" fill="none" stroke="{fill}" stroke-width="{sw}"/>"#,
                ly - 7.0,
                ly - 7.0
            );
        }
        BarKind::Unknown => {
            let _ = write!(
                out,
                r#"<rect x="{x0:.2}" y="{:.2}" width="{w:.2}" height="{:.2}" fill="url(#unknown)" stroke="{fill}" stroke-width="1.2" stroke-dasharray="4,2"/>"#,
                y + 1.0,
                BAR_H - 2.0
            );
        }
        _ => {
            let _ = write!(
                out,
                r#"<rect x="{x0:.2}" y="{y:.2}" width="{w:.2}" height="{BAR_H}" rx="2" fill="{fill}"/>"#
            );
        }
    }
    // A clipped end is shown as a ragged edge.
    for (clipped, x) in [(bar.clipped.0, x0), (bar.clipped.1, x1)] {
        if clipped && !bracket {
            let _ = write!(
                out,
                r##"<path d="M{x:.2},{y:.2} l-3,4 l3,4 l-3,4 l3,4" fill="none" stroke="#ffffff" stroke-width="1.5"/>"##
            );
        }
    }
    let size = 11.0;
    let ty = if bar.kind == BarKind::Known || bar.kind == BarKind::Range {
        y + BAR_H - 6.0
    } else {
        y + BAR_H - 4.0
    };
    let (text_ink, bg) = if bracket { (ink, true) } else { (ink, false) };
    if let Some(label) = label_in(&bar.label, size, w - 8.0, answer) {
        let _ = write!(
            out,
            r#"<text x="{:.2}" y="{ty:.2}" font-size="{size}" fill="{text_ink}" text-anchor="middle"{}>{}</text>"#,
            x0 + w / 2.0,
            if bg { r#" font-weight="bold""# } else { "" },
            esc(&label)
        );
    } else {
        // Beside the bar, if the row is free up to the next bar (or the picture's edge).
        let limit = next_start.unwrap_or(f64::MAX).min(right - 4.0);
        let room = limit - (x1 + 4.0) - 4.0;
        if let Some(label) = label_in(&bar.label, size, room, answer) {
            let colour = if bracket { ink } else { "#333333" };
            let _ = write!(
                out,
                r#"<text x="{:.2}" y="{ty:.2}" font-size="{size}" fill="{colour}">{}</text>"#,
                x1 + 4.0,
                esc(&label)
            );
        }
    }
    out.push_str("</g>\n");
}

/// Draws `intervals` as exact per-column density between `y` and `y + h`: each pixel
/// column's height is its busy fraction, and its time at depth ≥ 2 is drawn in orange
/// from the bottom up (see [`density`]). Two paths, whatever the number of intervals.
pub fn density_strip(
    out: &mut String,
    intervals: &[(i64, i64)],
    s: &Scale,
    y: f64,
    h: f64,
    colour: &str,
    title: &str,
) {
    let cols = density::columns(intervals, (s.a, s.b), s.columns());
    let px = s.plot_w / cols.len() as f64;
    // Heights in 1/16 px steps, so that equal neighbours merge into one run.
    let units = (h * 16.0).round() as i128;
    let path = |value: &dyn Fn(&density::Column) -> i128| -> String {
        let mut d = String::new();
        let mut k = 0;
        while k < cols.len() {
            let v = value(&cols[k]);
            let mut j = k + 1;
            while j < cols.len() && value(&cols[j]) == v {
                j += 1;
            }
            if v > 0 {
                let hh = v as f64 / 16.0;
                let _ = write!(
                    d,
                    "M{:.2},{:.2}h{:.2}v{:.2}h{:.2}z",
                    LEFT + k as f64 * px,
                    y + h - hh,
                    (j - k) as f64 * px,
                    hh,
                    -((j - k) as f64 * px)
                );
            }
            k = j;
        }
        d
    };
    let busy = path(&|c| c.busy_units(units));
    let over = path(&|c| c.overlap_units(units));
    let deepest = cols.iter().map(|c| c.max_depth).max().unwrap_or(0);
    let _ = write!(
        out,
        r##"<g><title>{}</title><rect x="{LEFT}" y="{y:.2}" width="{:.2}" height="{h:.2}" fill="#ffffff" stroke="#e0e0e0" stroke-width="0.5"/><path d="{busy}" fill="{colour}"/>"##,
        esc(&format!(
            "{title}: exact density, one pixel column = {} of clock time; a column's height is its busy fraction (union of the intervals clipped to the column), orange its time at depth ≥ 2 (deepest: {deepest})",
            crate::units::Nanos::new(cols.first().map_or(0, |c| c.end.saturating_sub(c.start)))
        )),
        s.plot_w
    );
    if !over.is_empty() {
        let _ = write!(out, r#"<path d="{over}" fill="{C_OVERLAP}"/>"#);
    }
    out.push_str("</g>\n");
}

/// Which legend entries the picture uses, in legend order.
fn used_entries(t: &Timeline, crowded: bool) -> Vec<bool> {
    let lanes = || t.panels.iter().flat_map(|p| &p.lanes);
    let bar = |k: BarKind| lanes().flat_map(|l| l.bars()).any(|b| b.kind == k);
    let tick = |k: TickKind| lanes().flat_map(|l| &l.ticks).any(|x| x.kind == k);
    let covs = || lanes().flat_map(|l| &l.coverage);
    let arrow = |k| t.arrows.iter().any(|a| a.kind == k);
    use super::model::ArrowKind;
    vec![
        bar(BarKind::Known),
        bar(BarKind::Unknown),
        bar(BarKind::Phase),
        bar(BarKind::Range),
        bar(BarKind::SubmissionTimer),
        t.panels.iter().any(|p| !p.markers.is_empty()),
        bar(BarKind::CompletionTimer),
        bar(BarKind::Timer),
        tick(TickKind::Event),
        tick(TickKind::Mark),
        tick(TickKind::Wait),
        tick(TickKind::WaitBound),
        arrow(ArrowKind::Wait),
        arrow(ArrowKind::Join),
        covs().next().is_some(),
        covs().any(|c| !c.overlaps.is_empty()),
        covs().any(|c| !c.gaps.is_empty()),
        crowded,
    ]
}

/// The legend, wrapped to `width`; `crowded` adds the density entry.
pub fn legend(out: &mut String, timeline: &Timeline, width: f64, y: &mut f64, crowded: bool) {
    let items: [(&str, &str, &str); 18] = [
        ("bracket", C_KNOWN, "known answer (value)"),
        ("unknown", C_UNKNOWN, "unknown answer (reason)"),
        ("rect", C_PHASE, "phase (work)"),
        ("bracket", C_RANGE, "range (annotation, not work)"),
        ("rect", C_SUBMIT, "submission timer"),
        ("dash", C_SUBMIT, "submission returned"),
        ("rect", C_COMPLETE, "completion timer"),
        ("rect", C_TIMER, "other timer"),
        ("tick", C_EVENT, "event"),
        ("tick", C_MARK, "mark"),
        ("diamond", C_WAIT, "host wait returned"),
        ("hollow", C_WAIT, "wait returned by (no time)"),
        ("arrow", C_ARROW, "wait → work it covers"),
        ("join", C_JOIN, "declared join (stream-wait)"),
        ("rect", C_UNION, "covered (union)"),
        ("rect", C_OVERLAP, "overlap (depth ≥ 2)"),
        ("hatch", "", "gap (idle)"),
        (
            "density",
            C_PHASE,
            "density: column height = exact busy fraction",
        ),
    ];
    let used = used_entries(timeline, crowded);
    let mut x = 20.0;
    for (_, (shape, colour, label)) in items.into_iter().enumerate().filter(|(i, _)| used[*i]) {
        let w = 18.0 + 6.0 + text_w(label, 11.0) + 18.0;
        if x + w > width - 10.0 {
            x = 20.0;
            *y += 18.0;
        }
        let cy = *y - 4.0;
        let _ = match shape {
            "rect" => write!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="18" height="10" rx="2" fill="{colour}"/>"#,
                cy - 5.0
            ),
            "density" => write!(
                out,
                r#"<path d="M{x:.1},{:.1}h4v-4h4v-9h4v6h6v7z" fill="{colour}"/>"#,
                cy + 5.0
            ),
            "bracket" => write!(
                out,
                r#"<path d="M{x:.1},{:.1} v7 h18 v-7" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                cy - 3.0
            ),
            "unknown" => write!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="18" height="10" fill="url(#unknown)" stroke="{colour}" stroke-dasharray="4,2"/>"#,
                cy - 5.0
            ),
            "hatch" => write!(
                out,
                r##"<rect x="{x:.1}" y="{:.1}" width="18" height="10" fill="url(#gap)" stroke="#aaaaaa" stroke-width="0.5"/>"##,
                cy - 5.0
            ),
            "tick" => write!(
                out,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="2"/>"#,
                x + 9.0,
                cy - 7.0,
                x + 9.0,
                cy + 7.0
            ),
            "diamond" => write!(
                out,
                r#"<path d="M{:.1},{:.1} l6,6 l-6,6 l-6,-6 z" fill="{colour}"/>"#,
                x + 9.0,
                cy - 6.0
            ),
            "dash" => write!(
                out,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="1.2" stroke-dasharray="4,3"/>"#,
                x + 9.0,
                cy - 7.0,
                x + 9.0,
                cy + 7.0
            ),
            "hollow" => write!(
                out,
                r##"<path d="M{:.1},{:.1} l6,6 l-6,6 l-6,-6 z" fill="#ffffff" stroke="{colour}" stroke-width="1.5"/>"##,
                x + 9.0,
                cy - 6.0
            ),
            "join" => write!(
                out,
                r#"<line x1="{x:.1}" y1="{cy:.1}" x2="{:.1}" y2="{cy:.1}" stroke="{colour}" stroke-width="1.8" marker-end="url(#join)"/>"#,
                x + 16.0
            ),
            _ => write!(
                out,
                r#"<line x1="{x:.1}" y1="{cy:.1}" x2="{:.1}" y2="{cy:.1}" stroke="{colour}" stroke-width="1.5" marker-end="url(#arrow)"/>"#,
                x + 16.0
            ),
        };
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#333333">{}</text>"##,
            x + 24.0,
            *y,
            esc(label)
        );
        x += w;
    }
    *y += 10.0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_run_bar_keeps_its_run_number() {
        // 20 px: neither `run 30` nor a middle cut fits; the number does.
        assert_eq!(label_in("run 30", 11.0, 20.0, false), Some("30".to_owned()));
        assert_eq!(
            label_in("warm-up w1", 11.0, 20.0, false),
            Some("w1".to_owned())
        );
        // Room enough: the whole label.
        assert_eq!(
            label_in("run 30", 11.0, 200.0, false),
            Some("run 30".to_owned())
        );
        // Not a number, or no room even for it: nothing.
        assert_eq!(label_in("copy-in of it)", 11.0, 20.0, false), None);
        assert_eq!(label_in("run 30", 11.0, 5.0, false), None);
        assert_eq!(run_number("12345"), None);
    }
}
