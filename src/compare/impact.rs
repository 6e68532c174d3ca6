//! Which rows explain the difference (issue 26 §7, review N9): rows are sorted by impact,
//! and the headline names the few that explain most of it.
//!
//! A row's **impact** is `|total(NEW) − total(BASE)|`, the time its measurement gained or
//! lost in all, exact ns (a row only in one run: that run's total; a `steps` row: the median
//! step's change times BASE's steady steps). For a row whose share of
//! the run's time is `s` and whose change is `Δ`, that is `|Δ| × s` of the run's time, so
//! sorting by it puts a 2 % change of a kernel that fills the GPU above a 60 % change of a
//! kernel that runs for a microsecond.
//!
//! The **headline** covers the `kernel` rows (their totals add up to the GPU time the kernels
//! took; streams, devices and questions overlap them and one another): the fewest rows, at
//! most [`HEADLINE_MAX`], whose impacts sum to [`HEADLINE_SHARE_PCT`] % of the kernels' summed
//! impact, or all five when five do not reach it; and every `steps` row, with its verdict.

use serde::Serialize;

use super::Row;

/// At most this many rows are named in the headline.
pub const HEADLINE_MAX: usize = 5;
/// The share of the kernels' summed impact the headline's rows should explain.
pub const HEADLINE_SHARE_PCT: i128 = 80;

/// What the comparison says first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Headline {
    /// The `steps` rows (`step:ProfilerStep#*:host`): `name`, verdict and change.
    pub steps: Vec<HeadlineRow>,
    /// The kernel rows that explain most of the kernels' change, largest impact first.
    pub kernels: Vec<HeadlineRow>,
    /// Their impacts summed, exact ns.
    pub explained_ns: i64,
    /// Every kernel row's impact summed, exact ns.
    pub kernels_impact_ns: i64,
    /// The kernels' total in BASE and NEW, exact ns (`None` when a side has no kernel row).
    pub kernels_total_ns: [Option<i64>; 2],
}

/// One row the headline names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HeadlineRow {
    /// `group name`.
    pub what: String,
    /// The row's verdict word.
    pub verdict: String,
    /// The change for people, when there is one.
    pub change: Option<String>,
    /// `total(NEW) − total(BASE)`, exact ns, signed.
    pub delta_ns: Option<i64>,
}

/// `total(NEW) − total(BASE)` of `row`: a missing side counts 0, an unknown one makes it
/// unknown. A `steps` row, whose runs may keep different numbers of steady steps, counts
/// `(median(NEW) − median(BASE)) × BASE's steady steps`: BASE's steps at NEW's pace.
pub fn delta_ns(row: &Row) -> Option<i64> {
    if row.group == "steps" {
        let (b, n) = (row.base.as_ref()?, row.new.as_ref()?);
        let d =
            (i128::from(n.median_ns?) - i128::from(b.median_ns?)) * i128::try_from(b.count).ok()?;
        return i64::try_from(d).ok();
    }
    let total = |side: Option<&super::Side>| match side {
        None => Some(0i128),
        Some(s) => s.total_ns.map(i128::from),
    };
    let d = total(row.new.as_ref())? - total(row.base.as_ref())?;
    i64::try_from(d).ok()
}

/// The row's impact, `|delta_ns|`.
pub fn impact_ns(row: &Row) -> Option<i64> {
    delta_ns(row).map(i64::saturating_abs)
}

/// Sorts `rows` by impact, largest first; rows without one (unknown) last; ties by group
/// and name, so the order is the same on every run.
pub fn sort_by_impact(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        b.impact_ns
            .cmp(&a.impact_ns)
            .then_with(|| a.group.cmp(&b.group))
            .then_with(|| a.name.cmp(&b.name))
    });
}

fn named(r: &Row) -> HeadlineRow {
    HeadlineRow {
        what: format!("{} {}", r.group, r.name),
        verdict: r.verdict.word().to_owned(),
        change: r.change.clone(),
        delta_ns: delta_ns(r),
    }
}

/// The headline of `rows` (sorted by impact), or `None` when there are no steps and no
/// kernel changed.
pub fn headline(rows: &[Row]) -> Option<Headline> {
    let steps: Vec<HeadlineRow> = rows
        .iter()
        .filter(|r| r.group == "steps")
        .map(named)
        .collect();
    let kernels: Vec<&Row> = rows.iter().filter(|r| r.group == "kernel").collect();
    let all: i128 = kernels
        .iter()
        .filter_map(|r| r.impact_ns)
        .map(i128::from)
        .sum();
    let mut chosen = Vec::new();
    let mut explained: i128 = 0;
    for r in &kernels {
        let Some(impact) = r.impact_ns.filter(|i| *i > 0) else {
            continue;
        };
        if chosen.len() == HEADLINE_MAX || explained * 100 >= all * HEADLINE_SHARE_PCT {
            break;
        }
        explained += i128::from(impact);
        chosen.push(named(r));
    }
    if steps.is_empty() && chosen.is_empty() {
        return None;
    }
    let side_total = |new: bool| -> Option<i64> {
        let totals: Vec<i128> = kernels
            .iter()
            .filter_map(|r| if new { r.new.as_ref() } else { r.base.as_ref() })
            .filter_map(|s| s.total_ns.map(i128::from))
            .collect();
        (!totals.is_empty()).then(|| i64::try_from(totals.iter().sum::<i128>()).ok())?
    };
    Some(Headline {
        steps,
        kernels: chosen,
        explained_ns: i64::try_from(explained).unwrap_or(i64::MAX),
        kernels_impact_ns: i64::try_from(all).unwrap_or(i64::MAX),
        kernels_total_ns: [side_total(false), side_total(true)],
    })
}

/// Rows the text summary shows (largest impact first); `--all` shows every row.
pub const SUMMARY_ROWS: usize = 15;

/// `text` cut to `width` characters, ending in `…` when cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn signed(ns: i64) -> String {
    let n = crate::units::Nanos::new(ns);
    if ns > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

/// The headline as text lines, each at most `width` characters.
pub fn headline_lines(h: &Headline, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for s in &h.steps {
        out.push(fit(
            &format!(
                "{}: {}{}",
                s.what,
                s.verdict,
                s.change
                    .as_ref()
                    .map(|c| format!(" ({c} median)"))
                    .unwrap_or_default()
            ),
            width,
        ));
    }
    if !h.kernels.is_empty() {
        let pct = if h.kernels_impact_ns > 0 {
            i128::from(h.explained_ns) * 100 / i128::from(h.kernels_impact_ns)
        } else {
            0
        };
        let totals = match h.kernels_total_ns {
            [Some(b), Some(n)] => format!(
                "; kernels in all {} → {}",
                crate::units::Nanos::new(b),
                crate::units::Nanos::new(n)
            ),
            _ => String::new(),
        };
        out.push(fit(
            &format!(
                "{} kernel row(s) explain {pct} % of the kernels' summed |Δ total| ({} of {}){totals}:",
                h.kernels.len(),
                crate::units::Nanos::new(h.explained_ns),
                crate::units::Nanos::new(h.kernels_impact_ns)
            ),
            width,
        ));
        for k in &h.kernels {
            let delta = k.delta_ns.map(signed).unwrap_or_default();
            let name = k.what.trim_start_matches("kernel ");
            out.push(fit(
                &format!("  {delta:>12}  {:<9} {name}", k.verdict),
                width,
            ));
        }
    }
    out
}

/// The summary table: the [`SUMMARY_ROWS`] rows of largest impact, one line each (at most
/// `width` characters: a long name is cut, marked `…`; `--all` and the JSON have it whole).
pub fn summary_lines(rows: &[Row], width: usize) -> Vec<String> {
    let mut out = vec![fit(
        &format!(
            "The {} of {} rows of largest |Δ total| (--all: every row, names whole):",
            rows.len().min(SUMMARY_ROWS),
            rows.len()
        ),
        width,
    )];
    out.push(fit("  Δ total       change    verdict    what", width));
    for r in rows.iter().take(SUMMARY_ROWS) {
        let delta = delta_ns(r).map(signed).unwrap_or_else(|| "-".into());
        let verdict = match (r.verdict, r.reason) {
            (super::RowVerdict::Unknown, Some(_)) => "unknown".to_owned(),
            (v, _) => v.word().to_owned(),
        };
        out.push(fit(
            &format!(
                "  {delta:>12}  {:>8}  {verdict:<9}  {} {}",
                r.change.clone().unwrap_or_default(),
                r.group,
                crate::escape::printable(&r.name)
            ),
            width,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Method, RowVerdict, Side};
    use super::*;

    fn row(
        group: &str,
        name: &str,
        base: Option<(usize, i64, i64)>,
        new: Option<(usize, i64, i64)>,
    ) -> Row {
        let side = |(count, median, total): (usize, i64, i64)| Side {
            count,
            median_ns: Some(median),
            median: None,
            total_ns: Some(total),
            unknown: None,
        };
        let mut r = Row {
            group: group.into(),
            name: name.into(),
            verdict: RowVerdict::Ambiguous,
            reason: None,
            base: base.map(side),
            new: new.map(side),
            method: Method::None,
            change_ppm: None,
            change: None,
            interval_ppm: None,
            noise_ppm: None,
            noise: None,
            why: String::new(),
            impact_ns: None,
        };
        r.impact_ns = impact_ns(&r);
        r
    }

    #[test]
    fn rows_sort_by_the_time_they_gained_or_lost_and_the_headline_names_the_few() {
        // big: 2 % of 1 s = 20 ms; small: +60 % of 10 us = 6 us; gone: 5 ms; steps: 6 steps
        // of 100 ms at 70 ms = −180 ms.
        let mut rows = vec![
            row(
                "kernel",
                "small",
                Some((10, 1_000, 10_000)),
                Some((10, 1_600, 16_000)),
            ),
            row(
                "kernel",
                "big",
                Some((100, 10_000_000, 1_000_000_000)),
                Some((100, 10_200_000, 1_020_000_000)),
            ),
            row("kernel", "gone", Some((5, 1_000_000, 5_000_000)), None),
            row(
                "steps",
                "step:S#*:host",
                Some((6, 100_000_000, 600_000_000)),
                Some((5, 70_000_000, 350_000_000)),
            ),
        ];
        sort_by_impact(&mut rows);
        let order: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(order, ["step:S#*:host", "big", "gone", "small"]);
        assert_eq!(rows[0].impact_ns, Some(180_000_000));
        let h = headline(&rows).unwrap();
        assert_eq!(h.steps[0].delta_ns, Some(-180_000_000));
        // 20 ms of 25.006 ms is 79.98 %: the second row is needed to pass 80 %.
        let named: Vec<&str> = h.kernels.iter().map(|k| k.what.as_str()).collect();
        assert_eq!(named, ["kernel big", "kernel gone"]);
        assert_eq!(
            (h.explained_ns, h.kernels_impact_ns),
            (25_000_000, 25_006_000)
        );
        assert_eq!(
            h.kernels_total_ns,
            [Some(1_005_010_000), Some(1_020_016_000)]
        );
    }
}
