//! The report's cross-rank section: the `straggler` finding of a multi-rank case, drawn from
//! the merged case's `provenance.stragglers` (written by the multi-rank import's one
//! computation, `import::ranks::folder`), so `report DIR`, `report` of the case `import DIR
//! -o` wrote, and `import DIR` itself state the same numbers.

use std::fmt::Write;

use serde_json::Value;

use super::html::Section;
use crate::engine::wide;
use crate::render::draw::esc;

/// The section, when `provenance` holds a multi-rank import's straggler part.
pub fn section(provenance: &serde_json::Map<String, Value>) -> Option<Section> {
    let part = provenance.get(crate::import::ranks::folder::PROVENANCE_KEY)?;
    let list = |key: &str| part[key].as_array().map_or(&[][..], Vec::as_slice);
    let (findings, per_rank) = (list("findings"), list("per_rank"));
    let mut html = String::new();
    findings_table(findings, &mut html);
    per_rank_table(per_rank, part["ambiguous_last"].as_u64(), &mut html);
    for line in list("undecided") {
        let _ = write!(
            html,
            "<p class=\"note\">{}</p>",
            esc(line.as_str().unwrap_or(""))
        );
    }
    Some(Section {
        id: "stragglers".into(),
        title: format!(
            "Stragglers across ranks: {} finding(s) (docs/findings.md, straggler)",
            findings.len()
        ),
        html,
    })
}

/// `x` for an exact range, `[lo, hi]` otherwise, from integer ns fields `lo`/`hi` of `v`.
fn range(v: &Value, lo: &str, hi: &str) -> String {
    match (v[lo].as_i64(), v[hi].as_i64()) {
        (Some(l), Some(h)) if l == h => wide(i128::from(l)),
        (Some(l), Some(h)) => format!("[{}, {}]", wide(i128::from(l)), wide(i128::from(h))),
        _ => "—".to_owned(),
    }
}

fn findings_table(findings: &[Value], html: &mut String) {
    if findings.is_empty() {
        html.push_str("<p class=\"note\">No straggler finding.</p>");
        return;
    }
    html.push_str("<table class=\"findings\"><thead><tr><th>severity</th><th>rank</th><th>certainly last</th><th>median delay</th><th>step time</th><th>assumes</th><th>finding</th></tr></thead><tbody>");
    for f in findings {
        let assumes: Vec<&str> = f["assumes"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let evidence: String = f["evidence"]["items"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|e| format!("<li>{}</li>", esc(e)))
                    .collect()
            })
            .unwrap_or_default();
        let _ = write!(
            html,
            "<tr class=\"{sev}\"><td>{sev}</td><td>{rank}</td><td>{k} of {n}</td><td>{delay}</td><td>{step}</td><td>{assumes}</td><td>{msg}<ul>{evidence}</ul></td></tr>",
            sev = esc(f["severity"].as_str().unwrap_or("")),
            rank = f["rank"].as_u64().unwrap_or(0),
            k = f["late_in"].as_u64().unwrap_or(0),
            n = f["of"].as_u64().unwrap_or(0),
            delay = range(&f["delay_ns"], "lo", "hi"),
            step = f["step_ns"].as_i64().map_or_else(|| "—".to_owned(), |s| wide(i128::from(s))),
            assumes = if assumes.is_empty() { "nothing (the evidence decides it)".to_owned() } else { esc(&assumes.join("; ")) },
            msg = esc(f["message"].as_str().unwrap_or("")),
        );
    }
    html.push_str("</tbody></table>");
}

fn per_rank_table(rows: &[Value], ambiguous: Option<u64>, html: &mut String) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        html,
        "<h3>Per rank ({} instance(s) with no certain last rank)</h3><table class=\"stragglers\"><thead><tr><th>rank</th><th>arrived last (certainly)</th><th>median delay there</th><th>delay range</th></tr></thead><tbody>",
        ambiguous.unwrap_or(0)
    );
    for r in rows {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{} of {}</td><td>{}</td><td>{}</td></tr>",
            r["rank"].as_u64().unwrap_or(0),
            r["last"].as_u64().unwrap_or(0),
            r["of"].as_u64().unwrap_or(0),
            range(&r["median_delay"], "lo_ns", "hi_ns"),
            range(&r["lateness"], "lo_ns", "hi_ns"),
        );
    }
    html.push_str("</tbody></table>");
}
