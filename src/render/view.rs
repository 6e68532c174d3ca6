//! Views: which stretch of each clock a panel shows. A `--window` names a range on one
//! clock; a clock whose items form stretches far apart is cut into parts, one panel each,
//! so that a serial run and a concurrent one minutes later both get the full width.

use std::collections::BTreeMap;

use crate::case::Case;
use crate::units::Nanos;

/// A time range on one clock to zoom into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The clock's id; `None` means the focused item's clock, or the only clock.
    pub clock: Option<String>,
    /// Start (ns on the clock).
    pub start: i64,
    /// End (ns on the clock), after the start.
    pub end: i64,
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
