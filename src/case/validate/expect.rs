//! The expectations a question carries (`expect`): a duration's verdict (known, bounded or
//! unknown, with its reason and attribution) and an intervals question's results.

use super::ids::{interval, time, Result};
use crate::case::raw::{RawExpectDuration, RawExpectIntervals, RawSpanExpect, RawTime};
use crate::case::{CaseError, Expect, ExpectIntervals, ExpectVerdict};
use crate::interval::OverlapRegion;
use crate::verdict::Reason;

/// A reason code, or `unknown-variant` at `path`.
fn reason(code: &str, path: impl Into<String>) -> Result<Reason> {
    Reason::from_code(code).ok_or_else(|| {
        let known: Vec<&str> = Reason::ALL.iter().map(|r| r.code()).collect();
        CaseError::new(
            path,
            "unknown-variant",
            format!(
                "`{code}` is not a reason code (known: {})",
                known.join(", ")
            ),
        )
    })
}

/// The verdict of a duration expectation at `path`.
fn expect_verdict(raw: &RawExpectDuration, path: &str) -> Result<ExpectVerdict> {
    match raw.verdict.as_str() {
        "known" => {
            let value = raw.value.as_ref().ok_or_else(|| {
                CaseError::new(
                    format!("{path}.value"),
                    "missing-field",
                    "a known expectation needs a `value`",
                )
            })?;
            Ok(ExpectVerdict::Known(time(value, || {
                format!("{path}.value")
            })?))
        }
        "bounded" => {
            let end = |v: &Option<RawTime>, name: &str| {
                let v = v.as_ref().ok_or_else(|| {
                    CaseError::new(
                        format!("{path}.{name}"),
                        "missing-field",
                        format!("a bounded expectation needs `lo` and `hi` (`{name}` is missing)"),
                    )
                })?;
                time(v, || format!("{path}.{name}"))
            };
            let (lo, hi) = (end(&raw.lo, "lo")?, end(&raw.hi, "hi")?);
            if lo > hi {
                return Err(CaseError::new(
                    format!("{path}.hi"),
                    "bad-value",
                    format!("a bounded expectation needs lo ≤ hi (lo {lo}, hi {hi})"),
                ));
            }
            Ok(ExpectVerdict::Bounded(lo, hi))
        }
        "unknown" => {
            let code = raw.reason.as_deref().ok_or_else(|| {
                CaseError::new(
                    format!("{path}.reason"),
                    "missing-field",
                    "an unknown expectation needs a `reason`",
                )
            })?;
            Ok(ExpectVerdict::Unknown(reason(
                code,
                format!("{path}.reason"),
            )?))
        }
        other => Err(CaseError::new(
            format!("{path}.verdict"),
            "unknown-variant",
            format!("`{other}` is not a verdict: expected `known`, `bounded` or `unknown`"),
        )),
    }
}

/// A duration question's expectation at `path`, when it has one.
pub(super) fn expect_duration(
    raw: &Option<RawExpectDuration>,
    path: &str,
) -> Result<Option<Expect>> {
    let Some(raw) = raw else { return Ok(None) };
    let verdict = expect_verdict(raw, path)?;
    let attribution = match &raw.attribution {
        Some(code) => Some(reason(code, format!("{path}.attribution"))?),
        None => None,
    };
    Ok(Some(Expect::Duration {
        verdict,
        attribution,
    }))
}

/// An intervals question's expectation at `path`, when it has one.
pub(super) fn expect_intervals(
    raw: &Option<RawExpectIntervals>,
    path: &str,
) -> Result<Option<Expect>> {
    let Some(raw) = raw else { return Ok(None) };
    let mut out = ExpectIntervals::default();
    match (raw.verdict.as_deref(), raw.reason.as_deref()) {
        (None, None) | (Some("known"), None) => {}
        (Some("unknown"), Some(code)) => {
            out.unknown = Some(reason(code, format!("{path}.reason"))?)
        }
        (Some("unknown"), None) => {
            return Err(CaseError::new(
                format!("{path}.reason"),
                "missing-field",
                "an unknown expectation needs a `reason`",
            ))
        }
        (Some(other), _) if other != "known" && other != "unknown" => {
            return Err(CaseError::new(
                format!("{path}.verdict"),
                "unknown-variant",
                format!("`{other}` is not a verdict: expected `known`, `bounded` or `unknown`"),
            ))
        }
        _ => {
            return Err(CaseError::new(
                format!("{path}.reason"),
                "bad-value",
                "a `reason` goes with `\"verdict\": \"unknown\"`",
            ))
        }
    }
    out.count = raw.count;
    out.max_depth = raw.max_depth;
    out.sum = raw
        .sum
        .as_ref()
        .map(|v| time(v, || format!("{path}.sum")))
        .transpose()?;
    out.union = raw
        .union
        .as_ref()
        .map(|v| time(v, || format!("{path}.union")))
        .transpose()?;
    out.overlap = raw
        .overlap
        .as_ref()
        .map(|v| time(v, || format!("{path}.overlap")))
        .transpose()?;
    out.span = match &raw.span {
        None => None,
        Some(RawSpanExpect::Value(v)) => {
            Some(ExpectVerdict::Known(time(v, || format!("{path}.span"))?))
        }
        Some(RawSpanExpect::Unknown(u)) => Some(expect_verdict(u, &format!("{path}.span"))?),
    };
    if let Some(gaps) = &raw.gaps {
        let mut list = Vec::with_capacity(gaps.len());
        for (i, [s, e]) in gaps.iter().enumerate() {
            let p = format!("{path}.gaps[{i}]");
            list.push(interval(
                time(s, || format!("{p}[0]"))?,
                time(e, || format!("{p}[1]"))?,
                &format!("{p}[1]"),
            )?);
        }
        out.gaps = Some(list);
    }
    if let Some(regions) = &raw.overlap_regions {
        let mut list = Vec::with_capacity(regions.len());
        for (i, r) in regions.iter().enumerate() {
            let p = format!("{path}.overlap_regions[{i}]");
            let span = interval(
                time(&r.start, || format!("{p}.start"))?,
                time(&r.end, || format!("{p}.end"))?,
                &format!("{p}.end"),
            )?;
            list.push(OverlapRegion {
                span,
                max_depth: r.max_depth,
            });
        }
        out.overlap_regions = Some(list);
    }
    Ok(Some(Expect::Intervals(Box::new(out))))
}
