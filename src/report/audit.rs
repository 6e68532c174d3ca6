//! The audit's findings and per-step table as a section of the HTML report: the same
//! [`crate::audit::Audit`] that `worksheet audit` prints, so the page never says more than
//! the audit does.

use std::fmt::Write;

use super::html::Section;
use crate::audit::Audit;
use crate::render::draw::esc;
use crate::units::Nanos;

/// The findings (severity, code, count, message, fix) and the per-step table of `audit`.
pub fn section(audit: &Audit) -> Section {
    let mut html = String::new();
    if audit.findings.is_empty() {
        html.push_str("<p class=\"note\">No findings.</p>");
    } else {
        html.push_str("<table class=\"findings\"><thead><tr><th>severity</th><th>code</th><th>count</th><th>finding</th><th>fix</th></tr></thead><tbody>");
        for f in &audit.findings {
            let _ = write!(
                html,
                "<tr class=\"{sev}\"><td>{sev}</td><td><code>{code}</code></td><td>{count}</td><td>{msg}</td><td>{fix}</td></tr>",
                sev = esc(&f.severity.to_string()),
                code = esc(f.code),
                count = f.count,
                msg = esc(&f.message),
                fix = esc(&f.fix),
            );
        }
        html.push_str("</tbody></table>");
    }
    if audit.steps.is_empty() {
        html.push_str("<p class=\"note\">No step markers: the audit covers the whole window.</p>");
    } else {
        html.push_str("<table class=\"steps\"><thead><tr><th>step</th><th>device</th><th>host duration</th><th>device busy</th><th>idle</th><th>compute</th><th>communication</th><th>memory</th><th>syncs</th><th>launched</th><th>median launch → start</th></tr></thead><tbody>");
        for s in &audit.steps {
            let ns = |v: i64| Nanos::new(v).to_string();
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&s.step),
                esc(&s.device),
                ns(s.host_ns),
                ns(s.busy_ns),
                ns(s.idle_ns),
                ns(s.compute_ns),
                ns(s.communication_ns),
                ns(s.memory_ns),
                s.syncs,
                s.launched,
                s.launch_delay_median_ns.map_or_else(|| "—".to_string(), ns),
            );
        }
        html.push_str("</tbody></table>");
    }
    kernels_table(audit, &mut html);
    Section {
        id: "audit".into(),
        title: format!(
            "Audit: {} finding(s), {} step(s) (docs/findings.md)",
            audit.findings.len(),
            audit.steps.len()
        ),
        html,
    }
}

/// The kernel table (the 25 largest rows by total; the JSON of `worksheet audit` has them all).
fn kernels_table(audit: &Audit, html: &mut String) {
    if audit.kernels.is_empty() {
        return;
    }
    let shown = audit.kernels.len().min(25);
    let _ = write!(
        html,
        "<h3>Kernels ({shown} of {} rows by total)</h3><table class=\"kernels\"><thead><tr><th>kernel</th><th>class</th><th>stream</th><th>count</th><th>total</th><th>mean</th><th>min</th><th>max</th><th>share of busy</th></tr></thead><tbody>",
        audit.kernels.len()
    );
    for k in &audit.kernels[..shown] {
        let ns = |v: i64| Nanos::new(v).to_string();
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&k.name),
            format!("{:?}", k.class).to_ascii_lowercase(),
            esc(&k.stream),
            k.count,
            ns(k.total_ns),
            ns(k.mean_ns),
            ns(k.min_ns),
            ns(k.max_ns),
            k.share_of_busy_permille
                .map_or_else(|| "—".to_owned(), |p| format!("{}.{}%", p / 10, p % 10)),
        );
    }
    html.push_str("</tbody></table>");
}
