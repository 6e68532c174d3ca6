//! The timeline as an SVG picture (a `String`; no I/O).
//!
//! One panel per clock, each with its own time axis and units. On top of each panel, the
//! **answers** lane: the engine's answer to every duration question placed on that clock, as
//! a bracket with its value when known, hatched and outlined with its reason code when
//! unknown. Then lanes for host timers, host wait returns, each stream, loose phases,
//! ranges that are not work (annotations, steps: brackets, never counted) and marks; a
//! lane per `intervals` question with the engine's union, gaps (hatched) and overlap
//! regions (orange, with their depth). Arrows go from each wait to the work it covers, and
//! from an event to the stream that declared a join on it.
//!
//! A lane with more items than the plot has room for (more than one per 4 px) is drawn as
//! exact per-column density ([`super::density`]) instead of one rectangle per item, so
//! the picture of a 22 000-kernel trace stays small and its gaps stay visible. Labels are
//! measured with the embedded font and cut in the middle; none is drawn over another or
//! past the picture's edge. Every element carries a `<title>` tooltip with exact values.

use std::fmt::Write as _;

use super::axis::Axis;
pub use super::draw::esc;
use super::draw::{
    bar as draw_bar, density_strip, legend, Occupied, Scale, BAR_H, C_ARROW, C_EVENT, C_JOIN,
    C_MARK, C_OVERLAP, C_PHASE, C_RANGE, C_SUBMIT, C_UNION, C_WAIT, LEFT, RIGHT, ROW_H,
};
use super::font::{fit_middle, width as text_w, FONT_FAMILY};
use super::model::{Anchor, Arrow, ArrowKind, Coverage, Lane, LaneKind, Panel, TickKind, Timeline};

/// Picture options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SvgOptions {
    /// Width in pixels (at least 600).
    pub width: u32,
}

impl Default for SvgOptions {
    fn default() -> Self {
        SvgOptions { width: 1200 }
    }
}

const TICK_LANE_H: f64 = 34.0;
const SUMMARY_H: f64 = 14.0;

fn wrap(text: &str, max_w: f64, size: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_owned()
        } else {
            format!("{line} {word}")
        };
        if !line.is_empty() && text_w(&candidate, size) > max_w {
            lines.push(std::mem::take(&mut line));
            line.push_str(word);
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
        .into_iter()
        .map(|l| fit_middle(&l, size, max_w).unwrap_or_default())
        .collect()
}

/// Whether a lane is drawn as density: more bars, or coverage pieces, than room.
fn dense(lane: &Lane, s: &Scale) -> bool {
    s.crowded(lane.bars().count())
        || lane
            .coverage
            .iter()
            .any(|c| s.crowded(c.gaps.len() + c.overlaps.len() + c.union.len()))
}

fn lane_height(lane: &Lane, s: &Scale) -> f64 {
    let summaries = if lane.kind == LaneKind::Covered {
        0.0
    } else {
        lane.coverage.len() as f64 * SUMMARY_H
    };
    let rows = if dense(lane, s) && lane.kind != LaneKind::Covered {
        1
    } else {
        lane.height_rows()
    };
    summaries
        + match lane.kind {
            LaneKind::Waits | LaneKind::Marks => TICK_LANE_H,
            LaneKind::Covered => ROW_H + 16.0,
            LaneKind::Stream if !lane.ticks.is_empty() => rows as f64 * ROW_H + 14.0,
            _ => rows as f64 * ROW_H + 4.0,
        }
        .max(30.0)
}

/// The engine's summary line of one coverage, tagged with its question and clock (the
/// truth test reads these attributes).
fn summary_text(out: &mut String, cov: &Coverage, y: f64, width: f64, zoomed: bool) {
    let whole = if zoomed { " (whole question)" } else { "" };
    let text = format!("{}{whole}: {}", cov.question, cov.summary);
    let shown = fit_middle(&text, 10.0, width - LEFT - 8.0).unwrap_or_default();
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{y:.1}" font-size="10" fill="#555555" stroke="#ffffff" stroke-width="3" paint-order="stroke" data-question="{}" data-clock="{}" data-summary="{}"><title>{}</title>{}</text>"##,
        LEFT + 4.0,
        esc(&cov.question),
        esc(&cov.clock_id),
        esc(&cov.summary),
        esc(&format!(
            "question {} on clock `{}` (from eval): {}",
            cov.question, cov.clock_id, cov.summary
        )),
        esc(&shown)
    );
}

/// The covered strip of one coverage: stretches when few, density when many.
fn coverage_strip(out: &mut String, cov: &Coverage, s: &Scale, by: f64) {
    if s.crowded(cov.gaps.len() + cov.overlaps.len() + cov.union.len()) {
        density_strip(
            out,
            &cov.intervals,
            s,
            by,
            12.0,
            C_UNION,
            &format!("question {}", cov.question),
        );
        return;
    }
    for &(a, b) in &cov.union {
        let (x0, x1) = (s.x(a), s.x(b));
        let _ = write!(
            out,
            r#"<rect x="{x0:.2}" y="{by:.2}" width="{:.2}" height="12" fill="{C_UNION}"><title>covered {} … {}</title></rect>"#,
            (x1 - x0).max(1.0),
            crate::units::Nanos::new(a),
            crate::units::Nanos::new(b)
        );
    }
    for &(a, b) in &cov.gaps {
        let (x0, x1) = (s.x(a), s.x(b));
        let _ = write!(
            out,
            r##"<rect x="{x0:.2}" y="{by:.2}" width="{:.2}" height="12" fill="url(#gap)" stroke="#aaaaaa" stroke-width="0.5"><title>gap (idle) {} … {} ({})</title></rect>"##,
            (x1 - x0).max(1.0),
            crate::units::Nanos::new(a),
            crate::units::Nanos::new(b),
            crate::units::Nanos::new(b.saturating_sub(a))
        );
    }
    for &(a, b, depth) in &cov.overlaps {
        let (x0, x1) = (s.x(a), s.x(b));
        let _ = write!(
            out,
            r#"<rect x="{x0:.2}" y="{by:.2}" width="{:.2}" height="12" fill="{C_OVERLAP}"><title>overlap {} … {}, depth {depth}</title></rect>"#,
            (x1 - x0).max(1.0),
            crate::units::Nanos::new(a),
            crate::units::Nanos::new(b)
        );
        let label = format!("×{depth}");
        if text_w(&label, 10.0) + 4.0 <= x1 - x0 {
            let _ = write!(
                out,
                r##"<text x="{:.2}" y="{:.2}" font-size="10" fill="#ffffff" text-anchor="middle">{label}</text>"##,
                (x0 + x1) / 2.0,
                by + 10.0
            );
        }
    }
    out.push('\n');
}

/// Draws the ticks of one lane: markers with labels that never collide, or, when there are
/// too many, one path of plain marks without labels.
fn ticks(out: &mut String, lane: &Lane, s: &Scale, y: f64, h: f64, width: f64) -> Option<f64> {
    let mut wait_y = None;
    if s.crowded(lane.ticks.len()) {
        let mut d = String::new();
        for t in &lane.ticks {
            let _ = write!(d, "M{:.1},{:.1}v{:.1}", s.x(t.at), y + 13.0, h - 15.0);
        }
        let colour = if lane.kind == LaneKind::Marks {
            C_MARK
        } else {
            C_EVENT
        };
        let _ = writeln!(
            out,
            r#"<path d="{d}" stroke="{colour}" stroke-width="0.6"><title>{} ticks (too many to label: zoom with --window or --focus)</title></path>"#,
            lane.ticks.len()
        );
        return None;
    }
    let tick_label_y = y + 11.0;
    let mut labels = Occupied::default();
    for tick in &lane.ticks {
        let x = s.x(tick.at);
        let _ = write!(out, "<g><title>{}</title>", esc(&tick.tooltip));
        match tick.kind {
            TickKind::Wait | TickKind::WaitBound => {
                let cy = y + h / 2.0 + 4.0;
                wait_y = Some(cy);
                let fill = if tick.kind == TickKind::Wait {
                    format!(r#"fill="{C_WAIT}""#)
                } else {
                    format!(r##"fill="#ffffff" stroke="{C_WAIT}" stroke-width="1.5""##)
                };
                let _ = write!(
                    out,
                    r#"<path d="M{x:.2},{:.2} l6,6 l-6,6 l-6,-6 z" {fill}/>"#,
                    cy - 6.0
                );
            }
            TickKind::Event | TickKind::Mark => {
                let colour = if tick.kind == TickKind::Event {
                    C_EVENT
                } else {
                    C_MARK
                };
                let _ = write!(
                    out,
                    r#"<line x1="{x:.2}" y1="{:.2}" x2="{x:.2}" y2="{:.2}" stroke="{colour}" stroke-width="2"/><path d="M{:.2},{:.2} l8,0 l-4,5 z" fill="{colour}"/>"#,
                    y + 13.0,
                    y + h - 2.0,
                    x - 4.0,
                    y + 13.0
                );
            }
        }
        // The label goes right of the tick (arrows arrive from the left), else left of it,
        // else centred above; never over another label, never past the edges.
        let label = fit_middle(&tick.id, 10.0, 160.0).unwrap_or_default();
        let w = text_w(&label, 10.0);
        let spots = [
            (x + 3.0, x + 3.0 + w, "start", x + 3.0),
            (x - 3.0 - w, x - 3.0, "end", x - 3.0),
            (x - w / 2.0, x + w / 2.0, "middle", x),
        ];
        if let Some(&(x0, x1, anchor, ax)) = spots
            .iter()
            .find(|(x0, x1, _, _)| labels.free(*x0, *x1) && *x0 >= LEFT - 4.0 && *x1 <= width - 2.0)
        {
            labels.take(x0, x1);
            let _ = write!(
                out,
                r##"<text x="{ax:.2}" y="{tick_label_y:.2}" font-size="10" fill="#333333" text-anchor="{anchor}">{}</text>"##,
                esc(&label)
            );
        }
        out.push_str("</g>\n");
    }
    wait_y
}

/// Row centres, for the arrows: (panel, lane, row) → y.
type RowCentres = std::collections::HashMap<(usize, usize, usize), f64>;

/// One picture being drawn: the body so far, the pen's height, the page's geometry, and the
/// row centres the arrows are drawn between.
struct Page {
    body: String,
    y: f64,
    width: f64,
    plot_w: f64,
    max_ticks: usize,
    scales: Vec<Scale>,
    row_y: RowCentres,
}

/// Draws `timeline` as a complete SVG document.
pub fn render(timeline: &Timeline, options: &SvgOptions) -> String {
    let width = f64::from(options.width.max(600));
    let plot_w = width - LEFT - RIGHT;
    let scales: Vec<Scale> = timeline
        .panels
        .iter()
        .map(|p| Scale {
            a: p.view.0,
            b: p.view.1,
            plot_w,
        })
        .collect();
    let mut page = Page {
        body: String::new(),
        y: 28.0,
        width,
        plot_w,
        max_ticks: (plot_w / 90.0).floor().max(2.0) as usize,
        scales,
        row_y: RowCentres::new(),
    };
    heading(&mut page, timeline);
    page.y += 14.0;
    for (pi, panel) in timeline.panels.iter().enumerate() {
        draw_panel(&mut page, timeline, pi, panel);
    }
    // Arrows last, above everything else.
    draw_arrows(&mut page, timeline);
    unplaced_and_notes(&mut page, timeline);
    page.y += 20.0;
    document(&page)
}

/// The title, the focus and description lines, the legend, and the note on what several
/// panels mean.
fn heading(page: &mut Page, timeline: &Timeline) {
    let width = page.width;
    let crowded = timeline
        .panels
        .iter()
        .zip(&page.scales)
        .any(|(p, s)| p.lanes.iter().any(|l| dense(l, s)));
    let title = fit_middle(
        &format!("timeline: {}", timeline.title),
        18.0 * 1.1,
        width - 40.0,
    )
    .unwrap_or_default();
    let _ = writeln!(
        page.body,
        r##"<text x="20" y="{}" font-size="18" font-weight="bold" fill="#111111">{}</text>"##,
        page.y,
        esc(&title)
    );
    page.y += 8.0;
    if let Some(focus) = &timeline.focus {
        page.y += 16.0;
        let line = fit_middle(
            &format!("zoomed to `{focus}` on its clock (other clocks are shown whole)"),
            12.0,
            width - 40.0,
        )
        .unwrap_or_default();
        let _ = writeln!(
            page.body,
            r##"<text x="20" y="{}" font-size="12" fill="#444444">{}</text>"##,
            page.y,
            esc(&line)
        );
    }
    if let Some(d) = &timeline.description {
        for line in wrap(d, width - 40.0, 12.0).iter().take(6) {
            page.y += 16.0;
            let _ = writeln!(
                page.body,
                r##"<text x="20" y="{}" font-size="12" fill="#444444">{}</text>"##,
                page.y,
                esc(line)
            );
        }
    }
    page.y += 24.0;
    legend(&mut page.body, timeline, width, &mut page.y, crowded);
    panels_note(page, timeline);
}

/// With more than one panel: what positions in different panels mean.
fn panels_note(page: &mut Page, timeline: &Timeline) {
    if timeline.panels.len() <= 1 {
        return;
    }
    let clocks: std::collections::BTreeSet<&str> = timeline
        .panels
        .iter()
        .map(|p| p.clock_id.as_str())
        .collect();
    let note = if clocks.len() > 1 {
        format!(
            "{} clocks: each panel has its own time axis. Positions in different panels are not comparable; an arrow between panels shows what a wait covers, not when.",
            clocks.len()
        )
    } else {
        "One clock drawn in parts: each part has its own axis; the empty time between parts is left out.".to_owned()
    };
    for line in wrap(&note, page.width - 40.0, 12.0) {
        page.y += 16.0;
        let _ = writeln!(
            page.body,
            r##"<text x="20" y="{}" font-size="12" font-style="italic" fill="#7a3b00">{}</text>"##,
            page.y,
            esc(&line)
        );
    }
}

/// One clock's panel: its heading, the submission labels, the lanes on their background
/// and grid, the submission lines, and the time axis.
fn draw_panel(page: &mut Page, timeline: &Timeline, pi: usize, panel: &Panel) {
    let scale = page.scales[pi];
    let axis = Axis::with_origin(panel.view, page.max_ticks, panel.origin);
    page.y += 22.0;
    panel_heading(page, panel);
    page.y += 8.0;
    if !panel.markers.is_empty() {
        marker_labels(page, panel, &scale);
        page.y += 14.0;
    }
    let top = page.y;
    let lanes_h: f64 = panel.lanes.iter().map(|l| lane_height(l, &scale)).sum();
    let plot_w = page.plot_w;
    let _ = writeln!(
        page.body,
        r##"<rect x="{LEFT}" y="{top:.1}" width="{plot_w:.1}" height="{lanes_h:.1}" fill="#fbfbfb" stroke="#d0d0d0"/>"##
    );
    for &t in &axis.ticks {
        let x = scale.x(t);
        let _ = write!(
            page.body,
            r##"<line x1="{x:.2}" y1="{top:.1}" x2="{x:.2}" y2="{:.1}" stroke="#e6e6e6"/>"##,
            top + lanes_h
        );
    }
    page.body.push('\n');
    for (li, lane) in panel.lanes.iter().enumerate() {
        draw_lane(page, timeline, (pi, li), lane, &scale);
    }
    let y = page.y;
    for m in &panel.markers {
        let x = scale.x(m.at);
        let _ = writeln!(
            page.body,
            r#"<line x1="{x:.2}" y1="{:.1}" x2="{x:.2}" y2="{y:.1}" stroke="{C_SUBMIT}" stroke-width="1.2" stroke-dasharray="4,3"><title>{}</title></line>"#,
            top - 14.0,
            esc(&m.tooltip)
        );
    }
    time_axis(page, panel, &axis, &scale);
    page.y += 40.0;
}

/// `clock ID — domain D, instance I` (and the part, for a clock drawn in parts).
fn panel_heading(page: &mut Page, panel: &Panel) {
    let part = match panel.part {
        Some((k, n)) => {
            format!(" — part {k} of {n} (the empty time between parts is left out)")
        }
        None => String::new(),
    };
    let heading = format!(
        "clock `{}`{part} — domain {}, instance {}",
        panel.clock_id, panel.clock.domain, panel.clock.instance
    );
    // Bold DejaVu Sans is about 10 % wider than the regular metrics.
    let shown = fit_middle(&heading, 14.0 * 1.1, page.width - 24.0).unwrap_or_default();
    let _ = writeln!(
        page.body,
        r##"<text x="12" y="{}" font-size="14" font-weight="bold" fill="#111111"><title>{}</title>{}</text>"##,
        page.y,
        esc(&heading),
        esc(&shown)
    );
}

/// A strip for the submission-return labels, above the lanes: each right of its line, else
/// left of it, never over another.
fn marker_labels(page: &mut Page, panel: &Panel, scale: &Scale) {
    let width = page.width;
    let mut taken = Occupied::default();
    for m in &panel.markers {
        let x = scale.x(m.at);
        let w = text_w(&m.label, 10.0);
        let (x0, x1, anchor, tx) = if x + 3.0 + w <= width - 2.0 {
            (x + 3.0, x + 3.0 + w, "start", x + 3.0)
        } else {
            (x - 3.0 - w, x - 3.0, "end", x - 3.0)
        };
        if taken.free(x0, x1) && x0 >= 2.0 {
            taken.take(x0, x1);
            let _ = writeln!(
                page.body,
                r#"<text x="{tx:.2}" y="{:.1}" font-size="10" fill="{C_SUBMIT}" text-anchor="{anchor}">{}</text>"#,
                page.y + 10.0,
                esc(&m.label)
            );
        }
    }
}

/// One lane: its band and titles, its rows (or a density strip when crowded), its ticks and
/// its coverage summaries; records its rows' centres for the arrows.
fn draw_lane(
    page: &mut Page,
    timeline: &Timeline,
    (pi, li): (usize, usize),
    lane: &Lane,
    scale: &Scale,
) {
    let (y, width) = (page.y, page.width);
    let h = lane_height(lane, scale);
    lane_band(&mut page.body, lane, li, y, h, width);
    let rows_top = if lane.kind == LaneKind::Stream && !lane.ticks.is_empty() {
        y + 14.0
    } else {
        y + 2.0
    };
    if dense(lane, scale) && lane.kind != LaneKind::Covered {
        let intervals: Vec<(i64, i64)> = lane.bars().map(|b| (b.start, b.end)).collect();
        let ry = rows_top + (ROW_H - BAR_H) / 2.0;
        let colour = if lane.kind == LaneKind::Ranges {
            C_RANGE
        } else {
            C_PHASE
        };
        density_strip(
            &mut page.body,
            &intervals,
            scale,
            ry - 2.0,
            BAR_H + 4.0,
            colour,
            &format!("{}: {} items", lane.title, intervals.len()),
        );
        for ri in 0..lane.rows.len() {
            page.row_y.insert((pi, li, ri), ry + BAR_H / 2.0);
        }
    } else {
        for (ri, row) in lane.rows.iter().enumerate() {
            let ry = rows_top + ri as f64 * ROW_H + (ROW_H - BAR_H) / 2.0;
            page.row_y.insert((pi, li, ri), ry + BAR_H / 2.0);
            for (bi, bar) in row.iter().enumerate() {
                let next = row.get(bi + 1).map(|n| scale.x(n.start));
                draw_bar(&mut page.body, bar, next, scale, ry, width);
            }
        }
    }
    let summaries_h = lane.coverage.len() as f64 * SUMMARY_H;
    if let Some(wy) = ticks(&mut page.body, lane, scale, y, h - summaries_h, width) {
        page.row_y.insert((pi, li, 0), wy);
    }
    if lane.kind == LaneKind::Covered {
        for cov in &lane.coverage {
            coverage_strip(&mut page.body, cov, scale, y + 6.0);
            summary_text(&mut page.body, cov, y + 32.0, width, timeline.zoomed);
        }
    } else {
        let mut sy = y + h - summaries_h + 9.0;
        for cov in &lane.coverage {
            summary_text(&mut page.body, cov, sy, width, timeline.zoomed);
            sy += SUMMARY_H;
        }
    }
    page.y += h;
}

/// A lane's band: shaded on every other lane, a rule above, and its title and subtitle
/// (cut in the middle to fit, whole in the tooltip).
fn lane_band(out: &mut String, lane: &Lane, li: usize, y: f64, h: f64, width: f64) {
    if li % 2 == 1 {
        let _ = writeln!(
            out,
            r##"<rect x="0" y="{y:.1}" width="{LEFT}" height="{h:.1}" fill="#f3f3f3"/>"##
        );
    }
    let _ = writeln!(
        out,
        r##"<line x1="0" y1="{y:.1}" x2="{width:.1}" y2="{y:.1}" stroke="#dddddd"/>"##
    );
    let title = fit_middle(&lane.title, 12.0 * 1.1, LEFT - 16.0).unwrap_or_default();
    let subtitle = fit_middle(&lane.subtitle, 10.0, LEFT - 16.0).unwrap_or_default();
    let _ = writeln!(
        out,
        r##"<g><title>{} — {}</title><text x="12" y="{:.1}" font-size="12" font-weight="bold" fill="#222222">{}</text><text x="12" y="{:.1}" font-size="10" fill="#666666">{}</text></g>"##,
        esc(&lane.title),
        esc(&lane.subtitle),
        y + 14.0,
        esc(&title),
        y + 26.0,
        esc(&subtitle)
    );
}

/// The time axis under a panel: the line, its ticks, the labels that fit without touching,
/// and the caption naming the clock and the unit.
fn time_axis(page: &mut Page, panel: &Panel, axis: &Axis, scale: &Scale) {
    let (y, width, plot_w) = (page.y, page.width, page.plot_w);
    let body = &mut page.body;
    let _ = write!(
        body,
        r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#333333"/>"##,
        LEFT + plot_w
    );
    let mut taken = Occupied::default();
    for &t in &axis.ticks {
        let x = scale.x(t);
        let label = axis.label(t);
        let w = text_w(&label, 11.0);
        let _ = write!(
            body,
            r##"<line x1="{x:.2}" y1="{y:.1}" x2="{x:.2}" y2="{:.1}" stroke="#333333"/>"##,
            y + 5.0
        );
        if taken.free(x - w / 2.0, x + w / 2.0) && x + w / 2.0 <= width - 2.0 {
            taken.take(x - w / 2.0, x + w / 2.0);
            let _ = write!(
                body,
                r##"<text x="{x:.2}" y="{:.1}" font-size="11" fill="#333333" text-anchor="middle">{}</text>"##,
                y + 17.0,
                esc(&label)
            );
        }
    }
    let caption = format!(
        "time on clock `{}` ({}), {}",
        panel.clock_id,
        panel.clock,
        axis.unit_caption()
    );
    let _ = writeln!(
        body,
        r##"<text x="{:.1}" y="{:.1}" font-size="11" font-style="italic" fill="#333333" text-anchor="middle">{}</text>"##,
        LEFT + plot_w / 2.0,
        y + 32.0,
        esc(&fit_middle(&caption, 11.0, width - 24.0).unwrap_or_default())
    );
}

/// The arrows, from each wait to the work it covers and from an event to the stream that
/// joins on it, between the rows' recorded centres.
fn draw_arrows(page: &mut Page, timeline: &Timeline) {
    let (scales, row_y) = (&page.scales, &page.row_y);
    let point = |a: &Anchor| -> Option<(f64, f64)> {
        let x = scales.get(a.panel)?.x(a.at);
        let y = *row_y.get(&(a.panel, a.lane, a.row))?;
        Some((x, y))
    };
    for arrow in &timeline.arrows {
        let (Some(from), Some(to)) = (point(&arrow.from), point(&arrow.to)) else {
            continue;
        };
        if arrow.kind == ArrowKind::Join && !arrow.cross_clock {
            join_arrow(&mut page.body, arrow, from, to);
        } else {
            curved_arrow(&mut page.body, arrow, from, to);
        }
    }
}

/// A join holds the waiting stream back until the event: a straight arrow from the event's
/// lane to the waiting lane, beside the event's tick, and its name.
fn join_arrow(out: &mut String, arrow: &Arrow, (x0, y0): (f64, f64), (x1, y1): (f64, f64)) {
    let x = x0.max(x1) + 7.0;
    let (ya, yb) = if y1 > y0 {
        (y0 - 4.0, y1 - BAR_H / 2.0)
    } else {
        (y0 + 4.0, y1 + BAR_H / 2.0)
    };
    let _ = writeln!(
        out,
        r##"<g><title>{}</title><path d="M{x:.2},{ya:.2} V{yb:.2}" stroke="{C_JOIN}" stroke-width="1.8" marker-end="url(#join)"/><text x="{:.2}" y="{:.2}" font-size="9" fill="{C_JOIN}">join</text></g>"##,
        esc(&arrow.tooltip),
        x + 3.0,
        (ya + yb) / 2.0 + 3.0
    );
}

/// A wait's arrow (or a join across clocks, dashed): a curve from one row to the other.
fn curved_arrow(out: &mut String, arrow: &Arrow, (x0, y0): (f64, f64), (x1, y1): (f64, f64)) {
    let (colour, marker, x1) = match arrow.kind {
        // Aim a little inside the bar's end, clear of an event tick drawn at the same time.
        ArrowKind::Wait => (C_ARROW, "arrow", x1 - 5.0),
        ArrowKind::Join => (C_JOIN, "join", x1 + 3.0),
    };
    let dash = if arrow.cross_clock {
        r#" stroke-dasharray="5,3""#
    } else {
        ""
    };
    let (y0, y1) = if y1 > y0 {
        (y0 + 6.0, y1 - BAR_H / 2.0 - 1.0)
    } else {
        (y0 - 6.0, y1 + BAR_H / 2.0 + 1.0)
    };
    let mid = (y0 + y1) / 2.0;
    let _ = writeln!(
        out,
        r#"<path d="M{x0:.2},{y0:.2} C{x0:.2},{mid:.2} {x1:.2},{mid:.2} {x1:.2},{y1:.2}" fill="none" stroke="{colour}" stroke-width="1.4" stroke-opacity="0.85"{dash} marker-end="url(#{marker})"><title>{}</title></path>"#,
        esc(&arrow.tooltip)
    );
}

/// Under the panels: the answers with no place on one clock (at most 30 lines), then the
/// timeline's notes.
fn unplaced_and_notes(page: &mut Page, timeline: &Timeline) {
    let width = page.width;
    if !timeline.unplaced.is_empty() {
        page.y += 16.0;
        let _ = writeln!(
            page.body,
            r##"<text x="20" y="{:.1}" font-size="12" font-weight="bold" fill="#333333">answers with no place on one clock (from eval)</text>"##,
            page.y
        );
        const MAX_LINES: usize = 30;
        for line in timeline.unplaced.iter().take(MAX_LINES) {
            page.y += 14.0;
            let shown = fit_middle(line, 11.0, width - 40.0).unwrap_or_default();
            let _ = writeln!(
                page.body,
                r##"<text x="20" y="{:.1}" font-size="11" fill="#333333"><title>{}</title>{}</text>"##,
                page.y,
                esc(line),
                esc(&shown)
            );
        }
        if timeline.unplaced.len() > MAX_LINES {
            page.y += 14.0;
            let _ = writeln!(
                page.body,
                r##"<text x="20" y="{:.1}" font-size="11" fill="#666666">… and {} more: `worksheet eval` lists them all</text>"##,
                page.y,
                timeline.unplaced.len() - MAX_LINES
            );
        }
    }
    for note in &timeline.notes {
        for line in wrap(note, width - 40.0, 11.0) {
            page.y += 14.0;
            let _ = writeln!(
                page.body,
                r##"<text x="20" y="{:.1}" font-size="11" font-style="italic" fill="#666666">{}</text>"##,
                page.y,
                esc(&line)
            );
        }
    }
}

/// The SVG document around the drawn body: its size, the patterns and markers it uses, a
/// white background; labels placed last.
fn document(page: &Page) -> String {
    let height = page.y.ceil();
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" font-family="{FONT_FAMILY}, Verdana, Arial, sans-serif">
<defs>
<pattern id="gap" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="6" stroke="#b0b0b0" stroke-width="2"/></pattern>
<pattern id="unknown" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="6" height="6" fill="#fdeceb"/><line x1="0" y1="0" x2="0" y2="6" stroke="#e8a09a" stroke-width="2"/></pattern>
<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{C_ARROW}"/></marker>
<marker id="join" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{C_JOIN}"/></marker>
</defs>
<rect width="100%" height="100%" fill="#ffffff"/>"##,
        w = page.width
    );
    svg.push_str(&page.body);
    svg.push_str("</svg>\n");
    super::labels::place(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::layout::{layout, LayoutOptions};

    fn svg_of(path: &str, focus: Option<&str>) -> String {
        let case = crate::case::load_case_file(std::path::Path::new(path)).unwrap();
        let t = layout(
            &case,
            &LayoutOptions {
                focus: focus.map(str::to_owned),
                ..Default::default()
            },
        )
        .unwrap();
        render(&t, &SvgOptions::default())
    }

    #[test]
    fn escaping_covers_markup() {
        assert_eq!(
            esc(r#"a<b & "c">'d'"#),
            "a&lt;b &amp; &quot;c&quot;&gt;&apos;d&apos;"
        );
    }

    #[test]
    fn every_fixture_renders_to_well_formed_svg() {
        for dir in ["fixtures/cases", "fixtures/edge-controls"] {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let Ok(case) = crate::case::load_case_file(&path) else {
                    continue; // the malformed-on-purpose controls
                };
                let t = layout(&case, &LayoutOptions::default()).unwrap();
                let svg = render(&t, &SvgOptions::default());
                let doc = roxmltree::Document::parse(&svg)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(doc.root_element().tag_name().name(), "svg");
            }
        }
    }

    #[test]
    fn extreme_timestamps_draw_without_overflow() {
        // Phases at both ends of the i64 range, a zero-length phase and a mark.
        let text = r#"{"format": "worksheet-case", "version": 1,
          "clocks": [{"id": "c", "domain": "host", "instance": "x"}],
          "phases": [
            {"id": "low", "clock": "c", "start": "-9223372036854775808 ns", "end": "-9223372036854775000 ns"},
            {"id": "high", "clock": "c", "start": "9223372036854775000 ns", "end": "9223372036854775807 ns"},
            {"id": "zero", "clock": "c", "start": "0 ns", "end": "0 ns"}
          ],
          "marks": [{"id": "m", "clock": "c", "at": "0 ns"}]}"#;
        let case = crate::case::load_case_str(text, "extreme.json").unwrap();
        for focus in [None, Some("zero".to_owned()), Some("high".to_owned())] {
            let t = layout(
                &case,
                &LayoutOptions {
                    focus,
                    ..Default::default()
                },
            )
            .unwrap();
            let svg = render(&t, &SvgOptions::default());
            roxmltree::Document::parse(&svg).unwrap();
            let sketch = crate::render::text::render(&t, &Default::default());
            assert!(sketch.contains("clock `c`"));
        }
    }

    #[test]
    fn the_lab_case_zoomed_to_one_run_svg_snapshot() {
        let lab = crate::lab::export::tests::fake_lab();
        let text = crate::lab::export::case_file(&lab, "executor-fake", "fake").to_json_pretty();
        let case = crate::case::load_case_str(&text, "executor-fake.json").unwrap();
        let t = layout(
            &case,
            &LayoutOptions {
                focus: Some("complete-1".into()),
                ..Default::default()
            },
        )
        .unwrap();
        // The submission return is drawn as a marker across the panel.
        assert_eq!(t.panels[0].markers.len(), 1);
        let svg = render(&t, &SvgOptions::default());
        roxmltree::Document::parse(&svg).unwrap();
        insta::assert_snapshot!(svg);
    }

    #[test]
    fn three_boundaries_svg_snapshot() {
        insta::assert_snapshot!(svg_of("fixtures/cases/three-boundaries.json", None));
    }

    #[test]
    fn overlapping_phases_svg_snapshot() {
        insta::assert_snapshot!(svg_of("fixtures/cases/overlapping-phases.json", None));
    }

    #[test]
    fn no_two_labels_overlap_on_the_lab_pictures() {
        // UX P5, P9: the lab pictures, as committed in labs/ and docs/.
        for (path, focus) in [
            ("labs/executor/case.json", None),
            ("labs/executor/case.json", Some("complete-27")),
            ("labs/executor/case.json", Some("complete-23")),
            ("fixtures/captures/h200-lab-streams.json", None),
            ("fixtures/cases/three-boundaries.json", None),
        ] {
            let svg = svg_of(path, focus);
            let pairs = crate::render::labels::overlapping(&svg);
            assert!(pairs.is_empty(), "{path} {focus:?}: {pairs:?}");
            // The placer moved or hid labels only where two met: the run labels are there.
            let shown = crate::render::labels::label_boxes(&svg).len();
            assert!(shown > 20, "{path} {focus:?}: {shown} labels");
        }
    }
}
