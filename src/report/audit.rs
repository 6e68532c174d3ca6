//! The audit's findings, per-step table, kernel table, op → kernels table and HTA views as a
//! section of the HTML report.
//!
//! The section is drawn from the audit's JSON (`worksheet audit --format json`), which
//! `worksheet import` also writes into the case it makes (`provenance.audit`). So the page of
//! a trace and the page of the case imported from it hold the same section, drawn by the same
//! code from the same values, and the page never says more than the audit does.

use std::fmt::Write;

use serde_json::Value;

use super::html::Section;
use crate::render::draw::esc;
use crate::units::{parse_value, Nanos};

/// How many kernel rows the page lists (the audit's JSON has them all).
const KERNEL_ROWS: usize = 25;

/// The section of `audit` (the JSON of a [`crate::audit::Audit`]): findings, steps, kernels.
pub fn section(audit: &Value) -> Section {
    let list = |key: &str| audit[key].as_array().map_or(&[][..], Vec::as_slice);
    let (findings, steps) = (list("findings"), list("steps"));
    let mut html = String::new();
    findings_table(findings, &mut html);
    steps_table(steps, &mut html);
    kernels_table(list("kernels"), &mut html);
    super::audit_views::ops_table(audit, &mut html);
    super::audit_views::views(audit, &mut html);
    Section {
        id: "audit".into(),
        title: format!(
            "Audit: {} finding(s), {} step(s) (docs/findings.md)",
            findings.len(),
            steps.len()
        ),
        html,
    }
}

/// A string field, escaped for HTML.
fn text(v: &Value, key: &str) -> String {
    esc(v[key].as_str().unwrap_or(""))
}

/// An integer ns field as an exact duration; `—` when absent.
fn ns(v: &Value, key: &str) -> String {
    v[key]
        .as_i64()
        .map_or_else(|| "—".to_owned(), |n| Nanos::new(n).to_string())
}

fn findings_table(findings: &[Value], html: &mut String) {
    if findings.is_empty() {
        html.push_str("<p class=\"note\">No findings.</p>");
        return;
    }
    html.push_str("<table class=\"findings\"><thead><tr><th>severity</th><th>code</th><th>count</th><th>finding</th><th>evidence (a time links to the timeline)</th><th>fix</th></tr></thead><tbody>");
    for f in findings {
        let _ = write!(
            html,
            "<tr class=\"{sev}\"><td>{sev}</td><td><code>{code}</code></td><td>{count}</td><td>{msg}</td><td>{evidence}</td><td>{fix}</td></tr>",
            sev = text(f, "severity"),
            code = text(f, "code"),
            count = f["count"].as_u64().unwrap_or(0),
            msg = text(f, "message"),
            evidence = evidence_list(&f["evidence"]),
            fix = text(f, "fix"),
        );
    }
    html.push_str("</tbody></table>");
}

/// A value `<number> <unit>` at the start of `text` (`29.601167 ms`), exact ns, and the
/// length of text it took.
fn leading_value(text: &str) -> Option<(i64, usize)> {
    let number = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let rest = text[number..].strip_prefix(' ')?;
    let unit = rest
        .find(|c: char| !c.is_alphabetic())
        .unwrap_or(rest.len());
    let value = parse_value(&text[..number + 1 + unit]).ok()?.as_i64();
    Some((value, number + 1 + unit))
}

/// The time range an evidence item names, in ns after the audit's origin: from its first
/// `t+…` time to its last (`cudaEventQuery [t+713.056027 ms, t+713.065747 ms)`); one time
/// followed by `, <duration> long` is that long; any other single time is an instant.
/// `None` for an item that names no time (`order unknown between: …`).
pub fn evidence_range(item: &str) -> Option<(i64, i64)> {
    let mut times = Vec::new();
    let mut rest = item;
    let mut after_last = "";
    while let Some(at) = rest.find("t+") {
        let tail = &rest[at + 2..];
        match leading_value(tail) {
            Some((t, used)) => {
                times.push(t);
                after_last = &tail[used..];
                rest = &tail[used..];
            }
            None => rest = tail,
        }
    }
    let (&first, &last) = (times.iter().min()?, times.iter().max()?);
    if times.len() == 1 {
        let long = after_last
            .strip_prefix(", ")
            .and_then(leading_value)
            .filter(|&(_, used)| after_last[2 + used..].starts_with(" long"));
        if let Some((d, _)) = long {
            return Some((first, first.checked_add(d)?));
        }
    }
    Some((first, last))
}

/// A finding's evidence: one line per item, an item that names a time as a link that the
/// page's script turns into a zoom of the timeline to it (`data-t0`, `data-t1`: ns after
/// the audit's origin); then how many items the audit left out.
fn evidence_list(evidence: &Value) -> String {
    let items = evidence["items"].as_array().map_or(&[][..], Vec::as_slice);
    let mut html = String::new();
    for item in items.iter().filter_map(Value::as_str) {
        match evidence_range(item) {
            Some((t0, t1)) => {
                let _ = write!(
                    html,
                    "<a class=\"evidence\" href=\"#timeline\" data-t0=\"{t0}\" data-t1=\"{t1}\">{}</a><br>",
                    esc(item)
                );
            }
            None => {
                let _ = write!(html, "{}<br>", esc(item));
            }
        }
    }
    match evidence["more"].as_u64() {
        Some(more) if more > 0 => {
            let _ = write!(html, "and {more} more (the audit's JSON counts them)");
        }
        _ => {}
    }
    html
}

fn steps_table(steps: &[Value], html: &mut String) {
    if steps.is_empty() {
        html.push_str("<p class=\"note\">No step markers: the audit covers the whole window.</p>");
        return;
    }
    html.push_str("<table class=\"steps\"><thead><tr><th>step</th><th>device</th><th>host duration</th><th>device busy</th><th>idle</th><th>compute</th><th>communication</th><th>memory</th><th>syncs</th><th>launched</th><th>median launch → start</th></tr></thead><tbody>");
    for s in steps {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            text(s, "step"),
            text(s, "device"),
            ns(s, "host_ns"),
            ns(s, "busy_ns"),
            ns(s, "idle_ns"),
            ns(s, "compute_ns"),
            ns(s, "communication_ns"),
            ns(s, "memory_ns"),
            s["syncs"].as_u64().unwrap_or(0),
            s["launched"].as_u64().unwrap_or(0),
            ns(s, "launch_delay_median_ns"),
        );
    }
    html.push_str("</tbody></table>");
}

fn kernels_table(kernels: &[Value], html: &mut String) {
    if kernels.is_empty() {
        return;
    }
    let shown = kernels.len().min(KERNEL_ROWS);
    let _ = write!(
        html,
        "<h3>Kernels ({shown} of {} rows by total)</h3><table class=\"kernels\"><thead><tr><th>kernel</th><th>class</th><th>stream</th><th>count</th><th>total</th><th>mean</th><th>min</th><th>max</th><th>share of busy</th></tr></thead><tbody>",
        kernels.len()
    );
    for k in &kernels[..shown] {
        // A mean or share the audit could not know (review D10) says so, not `—`.
        let unknown = |cell: String| {
            if cell == "—" && k["unknown_why"].is_string() {
                "unknown (overflow)".to_owned()
            } else {
                cell
            }
        };
        let share = unknown(
            k["share_of_busy_permille"]
                .as_i64()
                .map_or_else(|| "—".to_owned(), |p| format!("{}.{}%", p / 10, p % 10)),
        );
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{share}</td></tr>",
            text(k, "name"),
            text(k, "class"),
            text(k, "stream"),
            k["count"].as_u64().unwrap_or(0),
            ns(k, "total_ns"),
            unknown(ns(k, "mean_ns")),
            ns(k, "min_ns"),
            ns(k, "max_ns"),
        );
    }
    html.push_str("</tbody></table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_evidence_item_s_times_are_its_range() {
        assert_eq!(
            evidence_range("ProfilerStep#4: cudaEventSynchronize at t+29.601167 ms, returned t+29.610558 ms, next GPU start t+34.81143 ms"),
            Some((29_601_167, 34_811_430))
        );
        assert_eq!(
            evidence_range("cudaEventQuery [t+713.056027 ms, t+713.065747 ms)"),
            Some((713_056_027, 713_065_747))
        );
        assert_eq!(
            evidence_range(
                "cudaDeviceSynchronize on thread 2910249 at t+696.132895 ms, 31.052 us long"
            ),
            Some((696_132_895, 696_163_947))
        );
        assert_eq!(
            evidence_range("first at t+136.601751 ms (work ends 3.259751 ms after the close)"),
            Some((136_601_751, 136_601_751))
        );
        assert_eq!(
            evidence_range("order unknown between: gpu0-s7 ↔ gpu0-s40"),
            None
        );
        assert_eq!(evidence_range("t+fast, t+"), None);
    }

    #[test]
    fn a_kernel_row_s_unknown_mean_and_share_say_so() {
        // review D10: the audit's JSON gives null with `unknown_why`, which is no `—`
        let rows = [
            serde_json::json!({"name": "wide", "class": "compute", "stream": "gpu0-s7",
                "count": 1, "total_ns": 18_446_744_073_709_551_615_u64, "mean_ns": null,
                "min_ns": 1, "max_ns": 18_446_744_073_709_551_615_u64,
                "share_of_busy_permille": null, "unknown_why": "overflow: …"}),
            serde_json::json!({"name": "idle", "class": "compute", "stream": "gpu1-s7",
                "count": 1, "total_ns": 0, "mean_ns": 0, "min_ns": 0, "max_ns": 0,
                "share_of_busy_permille": null}),
        ];
        let mut html = String::new();
        kernels_table(&rows, &mut html);
        assert!(html.contains("<td>—</td><td>unknown (overflow)</td><td>1 ns</td><td>—</td><td>unknown (overflow)</td></tr>"), "{html}");
        assert!(
            html.contains("<td>0 ns</td><td>0 ns</td><td>0 ns</td><td>0 ns</td><td>—</td></tr>"),
            "{html}"
        );
    }

    #[test]
    fn evidence_with_times_links_to_the_timeline() {
        let html = evidence_list(&serde_json::json!({
            "items": ["a <b> at t+2 us", "order unknown between: x ↔ y"], "more": 3}));
        assert_eq!(
            html,
            "<a class=\"evidence\" href=\"#timeline\" data-t0=\"2000\" data-t1=\"2000\">a &lt;b&gt; at t+2 us</a><br>order unknown between: x ↔ y<br>and 3 more (the audit's JSON counts them)"
        );
    }
}
