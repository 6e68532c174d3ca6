//! Views: which stretch of each clock a panel shows. A `--window` names a range on one
//! clock; a clock whose items form stretches far apart is cut into parts, one panel each,
//! so that a serial run and a concurrent one minutes later both get the full width.
//!
//! A window counts from the clock's origin (the one the picture's axis names, see
//! [`super::axis::clock_origin`]): `+100 ms..+110 ms`, or `100 ms..110 ms`. The clock's own
//! readings are written `@1716423322.5 s..@1716423322.51 s`. A window that selects nothing
//! drawn on its clock is an error naming the clock's range.

use std::collections::BTreeMap;

use crate::case::Case;
use crate::units::Nanos;

/// A time range on one clock to zoom into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The clock's id; `None` means the focused item's clock, or the only clock.
    pub clock: Option<String>,
    /// Start (ns after the clock's origin, or on the clock when `absolute`).
    pub start: i64,
    /// End, after the start (same reference as the start).
    pub end: i64,
    /// `true` when start and end are the clock's own readings (`@…`), `false` when they
    /// count from its origin (`+…` or a bare value).
    pub absolute: bool,
}

impl Window {
    /// Parses `START..END`: two values with units, both counted from the clock's origin
    /// (`+100 ms..+110 ms`, or without the `+`), or both the clock's own readings
    /// (`@1716423322.5 s..@1716423322.51 s`).
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub fn parse(text: &str, clock: Option<String>) -> Result<Window, String> {
        let (a, b) = text.split_once("..").ok_or_else(|| {
            format!("`{text}` is not START..END (for example `+7 ms..+7.5 ms`, or `@7 ms..@7.5 ms` for the clock's own readings)")
        })?;
        let side = |v: &str| -> Result<(bool, i64), String> {
            let v = v.trim();
            let (absolute, rest) = match v.strip_prefix('@') {
                Some(rest) => (true, rest),
                None => (false, v.strip_prefix('+').unwrap_or(v)),
            };
            crate::units::parse_value(rest)
                .map(|n| (absolute, n.as_i64()))
                .map_err(|e| format!("`{v}`: {e}"))
        };
        let ((abs_a, start), (abs_b, end)) = (side(a)?, side(b)?);
        if abs_a != abs_b {
            return Err(format!(
                "`{text}` mixes a clock reading (`@…`) with a time after the origin: write both ends the same way"
            ));
        }
        Ok(Window {
            clock,
            start,
            end,
            absolute: abs_a,
        })
    }

    /// `[start, end]` on the clock whose origin is `origin`.
    pub fn on_clock(&self, origin: i64) -> (i64, i64) {
        if self.absolute {
            (self.start, self.end)
        } else {
            (
                origin.saturating_add(self.start),
                origin.saturating_add(self.end),
            )
        }
    }
}

/// Writes `at` both ways: `+100 ms (@1716423322.5 s)`.
fn both_ways(at: i64, origin: i64) -> String {
    format!(
        "+{} (@{})",
        Nanos::new(at.saturating_sub(origin)),
        Nanos::new(at)
    )
}

/// The error for a window on `clock_id` that overlaps none of `items` (the clock's drawn
/// items), or `None` when it selects something.
pub(super) fn empty_window(
    clock_id: &str,
    window: (i64, i64),
    origin: i64,
    items: &[(i64, i64)],
) -> Option<LayoutError> {
    if items.iter().any(|&(s, e)| e >= window.0 && s <= window.1) {
        return None;
    }
    let from = items.iter().map(|i| i.0).min()?;
    let to = items.iter().map(|i| i.1).max()?;
    Some(LayoutError::Window(format!(
        "the window {} .. {} selects nothing on clock `{clock_id}`: what it draws lies from {} to {} (origin {})",
        both_ways(window.0, origin),
        both_ways(window.1, origin),
        both_ways(from, origin),
        both_ways(to, origin),
        Nanos::new(origin)
    )))
}

/// An id given to `focus` that the case does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("nothing in case `{case}` has id `{id}` with a position in time (phases, timers, host waits with a return time, marks, timed events)")]
pub struct UnknownFocus {
    /// The case name.
    pub case: String,
    /// The id given.
    pub id: String,
}

/// A layout that cannot be made from the options given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// `--focus` names nothing drawable.
    #[error(transparent)]
    UnknownFocus(#[from] UnknownFocus),
    /// `--window` names no clock of the case, or needs one.
    #[error("{0}")]
    Window(String),
}

impl LayoutError {
    /// The stable error code: `unknown-focus` or `bad-window`.
    pub fn code(&self) -> &'static str {
        match self {
            LayoutError::UnknownFocus(_) => "unknown-focus",
            LayoutError::Window(_) => "bad-window",
        }
    }
}

/// The stretches of one clock worth a panel each: where nothing happens on the clock for
/// more than a third of its whole span, it is cut there (at most 4 stretches, at the widest
/// empty stretches). Items are `[start, end]`; the result is in time order.
pub(super) fn split_parts(mut items: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    items.sort_unstable();
    let mut clusters: Vec<(i64, i64)> = Vec::new();
    for (s, e) in items {
        match clusters.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => clusters.push((s, e)),
        }
    }
    let (Some(first), Some(last)) = (clusters.first(), clusters.last()) else {
        return Vec::new();
    };
    let span = i128::from(last.1) - i128::from(first.0);
    let mut cuts: Vec<(i128, usize)> = clusters
        .windows(2)
        .enumerate()
        .map(|(k, w)| (i128::from(w[1].0) - i128::from(w[0].1), k))
        .filter(|(gap, _)| gap * 3 > span)
        .collect();
    cuts.sort_unstable_by(|a, b| b.cmp(a));
    cuts.truncate(3);
    let mut at: Vec<usize> = cuts.into_iter().map(|(_, k)| k).collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0usize;
    for k in at.into_iter().chain(std::iter::once(clusters.len() - 1)) {
        out.push((
            clusters[from].0,
            clusters[from..=k]
                .iter()
                .map(|c| c.1)
                .max()
                .unwrap_or(clusters[k].1),
        ));
        from = k + 1;
    }
    out
}

/// The clock a window applies to: the one named, else the focused item's, else the only
/// clock with something to draw.
pub(super) fn window_clock(
    case: &Case,
    w: &Window,
    focus_clock: Option<usize>,
    views: &BTreeMap<usize, (i64, i64)>,
) -> Result<usize, LayoutError> {
    if w.end <= w.start {
        return Err(LayoutError::Window(format!(
            "the window {} .. {} is empty or reversed: its end must follow its start",
            Nanos::new(w.start),
            Nanos::new(w.end)
        )));
    }
    let ids = || {
        case.clocks
            .iter()
            .map(|k| format!("`{}`", k.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (&w.clock, focus_clock) {
        // A clock id names its clock's panel, shared with the clock's other ids.
        (Some(id), _) => case
            .clocks
            .iter()
            .position(|k| &k.id == id)
            .map(|i| case.relation_graph().0[i])
            .ok_or_else(|| {
                LayoutError::Window(format!(
                    "case `{}` has no clock `{id}` (its clocks: {})",
                    case.name,
                    ids()
                ))
            }),
        (None, Some(c)) => Ok(c),
        (None, None) if views.len() == 1 => Ok(*views.keys().next().unwrap_or(&0)),
        (None, None) => Err(LayoutError::Window(format!(
            "case `{}` draws {} clocks: name one with --clock ({})",
            case.name,
            views.len(),
            ids()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    ///  [a][b]                                   [c]  → two stretches, cut at the wide gap
    ///  [a]   [b]   [c]                                → one
    #[test]
    fn a_window_counts_from_the_origin_unless_written_as_clock_readings() {
        let w = Window::parse("+100ms..+110 ms", None).unwrap();
        assert_eq!(
            (w.start, w.end, w.absolute),
            (100_000_000, 110_000_000, false)
        );
        assert_eq!(w.on_clock(5_000_000_000), (5_100_000_000, 5_110_000_000));
        let bare = Window::parse("7 ms..7.5 ms", None).unwrap();
        assert_eq!(bare.on_clock(0), (7_000_000, 7_500_000));
        let abs = Window::parse("@5.1 s..@5.11 s", Some("k".into())).unwrap();
        assert!(abs.absolute);
        assert_eq!(abs.on_clock(5_000_000_000), (5_100_000_000, 5_110_000_000));
        assert!(Window::parse("@5 s..+6 s", None)
            .unwrap_err()
            .contains("mixes"));
        assert!(Window::parse("7 ms", None)
            .unwrap_err()
            .contains("START..END"));
        assert!(Window::parse("7..8 ms", None).is_err());
    }

    #[test]
    fn an_empty_window_names_the_clocks_range_both_ways() {
        let e = empty_window("k", (10, 20), 0, &[(30, 40), (50, 60)]).unwrap();
        assert_eq!(
            e.to_string(),
            "the window +10 ns (@10 ns) .. +20 ns (@20 ns) selects nothing on clock `k`: what it draws lies from +30 ns (@30 ns) to +60 ns (@60 ns) (origin 0 ns)"
        );
        assert!(empty_window("k", (10, 30), 0, &[(30, 40)]).is_none());
    }

    #[test]
    fn a_clock_is_cut_only_where_it_is_empty_for_a_third_of_its_span() {
        assert_eq!(
            split_parts(vec![(0, 10), (10, 20), (900, 1000)]),
            vec![(0, 20), (900, 1000)]
        );
        assert_eq!(
            split_parts(vec![(0, 10), (40, 50), (80, 100)]),
            vec![(0, 100)]
        );
        assert_eq!(split_parts(vec![(5, 5)]), vec![(5, 5)]);
        assert!(split_parts(Vec::new()).is_empty());
    }
}
