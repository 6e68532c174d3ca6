//! The audit's findings, per-step table, kernel table and HTA views as a section of the HTML
//! report.
//!
//! The section is drawn from the audit's JSON (`worksheet audit --format json`), which
//! `worksheet import` also writes into the case it makes (`provenance.audit`). So the page of
//! a trace and the page of the case imported from it hold the same section, drawn by the same
//! code from the same values, and the page never says more than the audit does.

use std::fmt::Write;

use serde_json::Value;

use super::html::Section;
use crate::render::draw::esc;
use crate::units::Nanos;

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
    html.push_str("<table class=\"findings\"><thead><tr><th>severity</th><th>code</th><th>count</th><th>finding</th><th>fix</th></tr></thead><tbody>");
    for f in findings {
        let _ = write!(
            html,
            "<tr class=\"{sev}\"><td>{sev}</td><td><code>{code}</code></td><td>{count}</td><td>{msg}</td><td>{fix}</td></tr>",
            sev = text(f, "severity"),
            code = text(f, "code"),
            count = f["count"].as_u64().unwrap_or(0),
            msg = text(f, "message"),
            fix = text(f, "fix"),
        );
    }
    html.push_str("</tbody></table>");
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
        let share = k["share_of_busy_permille"]
            .as_i64()
            .map_or_else(|| "—".to_owned(), |p| format!("{}.{}%", p / 10, p % 10));
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{share}</td></tr>",
            text(k, "name"),
            text(k, "class"),
            text(k, "stream"),
            k["count"].as_u64().unwrap_or(0),
            ns(k, "total_ns"),
            ns(k, "mean_ns"),
            ns(k, "min_ns"),
            ns(k, "max_ns"),
        );
    }
    html.push_str("</tbody></table>");
}
