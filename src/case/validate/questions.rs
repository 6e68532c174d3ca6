//! The `questions` section: each question's references resolved (timers, phases, events,
//! marks, clocks, series, earlier questions) and its expectation read. A difference names
//! only earlier duration questions.

use std::collections::HashMap;

use super::expect::{expect_duration, expect_intervals};
use super::ids::{Declared, IdTable, Result};
use super::program::Program;
use crate::case::raw::RawQuestion;
use crate::case::{Ask, CaseError, Expect, Op, PhaseIdx, Question};

/// What a question may refer to.
struct Scope<'s> {
    declared: &'s Declared<'s>,
    program: &'s Program,
    series_ids: &'s IdTable<'s>,
    /// Timer id → index in `program.timers`.
    timer_index: HashMap<&'s str, usize>,
}

/// The questions validated so far: a difference refers back to them.
struct Earlier<'q> {
    ids: IdTable<'q>,
    questions: Vec<Question>,
}

/// The validated questions. `lists` holds the phase lists already resolved by `preresolve`
/// (one per question).
pub(super) fn questions<'s>(
    raw: &[RawQuestion],
    lists: &mut [Option<Vec<PhaseIdx>>],
    declared: &'s Declared<'s>,
    program: &'s Program,
    series_ids: &'s IdTable<'s>,
) -> Result<Vec<Question>> {
    let scope = Scope {
        declared,
        program,
        series_ids,
        timer_index: program
            .timers
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.as_str(), i))
            .collect(),
    };
    let mut earlier = Earlier {
        ids: IdTable::new("question", "questions"),
        questions: Vec::with_capacity(raw.len()),
    };
    for (i, q) in raw.iter().enumerate() {
        let path = format!("questions[{i}]");
        let expect_path = format!("{path}.expect");
        let (id, ask, expect) = scope.question(q, &path, lists[i].take(), &earlier)?;
        if matches!(ask, Ask::Intervals { .. }) && matches!(expect, Some(Expect::Duration { .. })) {
            return Err(CaseError::new(
                expect_path,
                "bad-value",
                "an intervals question expects interval results",
            ));
        }
        earlier.ids.add(id, i, format!("{path}.id"))?;
        earlier.questions.push(Question {
            id: id.clone(),
            ask,
            expect,
        });
    }
    Ok(earlier.questions)
}

impl Scope<'_> {
    /// Question `q` at `path`: its id, what it asks and what it expects. `list` is its phase
    /// list when `preresolve` took it.
    fn question<'q>(
        &self,
        q: &'q RawQuestion,
        path: &str,
        list: Option<Vec<PhaseIdx>>,
        earlier: &Earlier<'_>,
    ) -> Result<(&'q String, Ask, Option<Expect>)> {
        let field = |f: &str| format!("{path}.{f}");
        let expect_path = field("expect");
        let d = self.declared;
        Ok(match q {
            RawQuestion::Submission { id, timer, expect } => (
                id,
                Ask::Submission {
                    timer: self.timer(timer, field("timer"))?,
                },
                expect_duration(expect, &expect_path)?,
            ),
            RawQuestion::HostCompletion {
                id,
                timer,
                work,
                expect,
            } => {
                let t = self.timer(timer, field("timer"))?;
                let work = self.phase_list(list, work, path, "work", || self.launched_within(t))?;
                (
                    id,
                    Ask::HostCompletion { timer: t, work },
                    expect_duration(expect, &expect_path)?,
                )
            }
            RawQuestion::DeviceInterval {
                id,
                start,
                end,
                expect,
            } => (
                id,
                self.device_interval(start, end, path)?,
                expect_duration(expect, &expect_path)?,
            ),
            RawQuestion::Elapsed {
                id,
                from,
                to,
                expect,
            } => (
                id,
                Ask::Elapsed {
                    from: d.mark_ids.resolve(from, || field("from"))?,
                    to: d.mark_ids.resolve(to, || field("to"))?,
                },
                expect_duration(expect, &expect_path)?,
            ),
            RawQuestion::ClockOffset { id, a, b, expect } => (
                id,
                Ask::ClockOffset {
                    a: d.clock_ids.resolve(a, || field("a"))?,
                    b: d.clock_ids.resolve(b, || field("b"))?,
                },
                expect_duration(expect, &expect_path)?,
            ),
            RawQuestion::Difference {
                id,
                minuend,
                subtrahend,
                expect,
            } => (
                id,
                Ask::Difference {
                    minuend: earlier.duration(minuend, path, "minuend")?,
                    subtrahend: earlier.duration(subtrahend, path, "subtrahend")?,
                },
                expect_duration(expect, &expect_path)?,
            ),
            RawQuestion::Intervals {
                id,
                phases: selection,
                expect,
            } => {
                let phases = self.phase_list(list, selection, path, "phases", || {
                    (0..d.phases.len()).collect()
                })?;
                (
                    id,
                    Ask::Intervals { phases },
                    expect_intervals(expect, &expect_path)?,
                )
            }
            RawQuestion::SteadyState {
                id,
                series: s,
                min_warmup,
                tolerance_percent,
                expect,
            } => (
                id,
                Ask::SteadyState {
                    series: self.series_ids.resolve(s, || field("series"))?,
                    min_warmup: min_warmup.unwrap_or(2),
                    tolerance_percent: tolerance_percent.unwrap_or(5),
                },
                expect_duration(expect, &expect_path)?,
            ),
        })
    }

    /// The timer named `id`, or `unknown-reference` at `path`.
    fn timer(&self, id: &str, path: String) -> Result<usize> {
        self.timer_index.get(id).copied().ok_or_else(|| {
            CaseError::new(
                path,
                "unknown-reference",
                format!("no timer `{id}` is started and stopped in `program`"),
            )
        })
    }

    /// A question's phase list (its `field`): the one `preresolve` took (`resolved`), else
    /// the phases `names` names, else `all` (what the question means when it names none).
    fn phase_list(
        &self,
        resolved: Option<Vec<PhaseIdx>>,
        names: &Option<Vec<crate::case::raw::PhaseId>>,
        path: &str,
        field: &str,
        all: impl FnOnce() -> Vec<PhaseIdx>,
    ) -> Result<Vec<PhaseIdx>> {
        match (resolved, names) {
            (Some(resolved), _) => Ok(resolved),
            (None, Some(names)) => names
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    self.declared
                        .phase_ids
                        .resolve(p, || format!("{path}.{field}[{j}]"))
                })
                .collect(),
            (None, None) => Ok(all()),
        }
    }

    /// The phases launched between timer `t`'s start and stop: a host-completion
    /// question's work when it names none.
    fn launched_within(&self, t: usize) -> Vec<PhaseIdx> {
        let timer = &self.program.timers[t];
        self.program.ops[timer.start_op..timer.stop_op]
            .iter()
            .filter_map(|op| {
                if let Op::Launch(p) = op {
                    Some(*p)
                } else {
                    None
                }
            })
            .collect()
    }

    /// A device interval from event `start` to event `end`: in one stream, the end is not
    /// recorded before the start.
    fn device_interval(&self, start: &str, end: &str, path: &str) -> Result<Ask> {
        let d = self.declared;
        let (a, b) = (
            d.event_ids.resolve(start, || format!("{path}.start"))?,
            d.event_ids.resolve(end, || format!("{path}.end"))?,
        );
        let recorded = &self.program.recorded;
        if let (Some(ra), Some(rb)) = (recorded[a], recorded[b]) {
            if d.events[a].stream == d.events[b].stream && rb < ra {
                return Err(CaseError::new(
                    format!("{path}.end"),
                    "reversed-interval",
                    format!(
                        "the end event `{end}` is recorded before the start event `{start}` in stream `{}`: a device interval runs from an earlier position of a stream to a later one",
                        d.streams[d.events[a].stream].id
                    ),
                ));
            }
        }
        Ok(Ask::DeviceInterval { start: a, end: b })
    }
}

impl Earlier<'_> {
    /// The earlier duration question `name`, named by the difference's field `f`.
    fn duration(&self, name: &str, path: &str, f: &str) -> Result<usize> {
        let found = self
            .ids
            .resolve(name, || format!("{path}.{f}"))
            .map_err(|mut e| {
                e.message = format!("{} (a difference names an earlier question)", e.message);
                e
            })?;
        if !self.questions[found].ask.is_duration() {
            return Err(CaseError::new(
                format!("{path}.{f}"),
                "bad-value",
                format!("question `{name}` is not a duration, so it cannot be subtracted"),
            ));
        }
        Ok(found)
    }
}
