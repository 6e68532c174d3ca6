//! The audit as text, Markdown or JSON: pure functions returning `String`.

pub mod ops;
pub mod views;

use comfy_table::{presets::ASCII_MARKDOWN, Table};

use super::index::percent;
use super::{Audit, Finding, Severity};
use crate::engine::wide;
use crate::units::Nanos;

/// `unknown (overflow)`: what a figure reads when a total it is computed from does not fit in
/// 64-bit ns, as the engine's verdicts say (review D10).
pub(super) fn unknown_overflow() -> String {
    format!("unknown ({})", crate::verdict::Reason::Overflow)
}

/// `show()` when every total in `operands` fits in 64-bit ns, else `unknown (overflow)`: a
/// figure computed from an unknown total is unknown too, never a number.
pub(super) fn derived(operands: &[i128], show: impl FnOnce() -> String) -> String {
    if operands.iter().all(|&ns| i64::try_from(ns).is_ok()) {
        show()
    } else {
        unknown_overflow()
    }
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(header.to_vec());
    t
}

/// `2 warning, 1 info` (or `none`).
fn tally(findings: &[Finding]) -> String {
    let parts: Vec<String> = [Severity::Error, Severity::Warning, Severity::Info]
        .iter()
        .filter_map(|s| {
            let n = findings.iter().filter(|f| f.severity == *s).count();
            (n > 0).then(|| format!("{n} {s}"))
        })
        .collect();
    if parts.is_empty() {
        "none".to_owned()
    } else {
        parts.join(", ")
    }
}

/// The findings as text, one block each (also what `import` prints under its summary).
pub fn findings_text(findings: &[Finding]) -> String {
    let mut s = format!("findings: {}\n", tally(findings));
    for f in findings {
        s.push_str(&format!(
            "\n{:<7} {} — {}\n",
            f.severity.word(),
            f.code,
            f.message
        ));
        for item in &f.evidence.items {
            s.push_str(&format!("        - {item}\n"));
        }
        if f.evidence.more > 0 {
            s.push_str(&format!("        - … and {} more\n", f.evidence.more));
        }
        s.push_str(&format!("        fix: {}\n", f.fix));
    }
    s
}

/// The figures of finding `code` with the sets behind them (`audit --explain CODE`): each
/// figure's value, clock and definition, then each set's measure and pieces, as `t+…` since
/// the trace's origin and as the trace's own ns. Every value can be checked by adding up the
/// pieces of the set it names.
pub fn explain(audit: &Audit, code: &str) -> String {
    let Some(f) = audit.finding(code) else {
        let present: Vec<&str> = audit.findings.iter().map(|f| f.code).collect();
        return format!(
            "no `{code}` finding in {} (its findings: {})\n",
            audit.input,
            if present.is_empty() {
                "none".to_owned()
            } else {
                present.join(", ")
            }
        );
    };
    let mut s = format!("{} {} — {}\n", f.severity.word(), f.code, f.message);
    if f.figures.is_empty() {
        s.push_str("\nthis finding states counts only: its evidence lists the events\n");
    }
    let at = |ns: i64| format!("t+{}", wide(i128::from(ns) - i128::from(audit.origin_ns)));
    for fig in &f.figures {
        s.push_str(&format!(
            "\n{} = {} ({} ns) on {}\n  = {}\n",
            fig.name, fig.display, fig.value_ns, fig.clock, fig.definition
        ));
        for (name, set) in &fig.sets {
            s.push_str(&format!(
                "  {name}: {} in {} piece(s)\n",
                wide(set.measure_ns()),
                set.pieces().len()
            ));
            for p in set.pieces() {
                let (a, b) = (p.start().as_i64(), p.end().as_i64());
                s.push_str(&format!(
                    "    [{}, {})  {}   ns [{a}, {b})\n",
                    at(a),
                    at(b),
                    wide(i128::from(b) - i128::from(a))
                ));
            }
        }
    }
    s
}

fn opt_ns(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| Nanos::new(v).to_string())
}

fn steps_table(audit: &Audit) -> Table {
    let mut t = table(&[
        "step",
        "device",
        "start",
        "host",
        "busy",
        "idle",
        "compute",
        "communication",
        "memory",
        "syncs",
        "launched",
        "launch→start median",
    ]);
    for r in &audit.steps {
        t.add_row(vec![
            r.step.clone(),
            r.device.clone(),
            format!("t+{}", Nanos::new(r.start_ns)),
            Nanos::new(r.host_ns).to_string(),
            Nanos::new(r.busy_ns).to_string(),
            Nanos::new(r.idle_ns).to_string(),
            Nanos::new(r.compute_ns).to_string(),
            Nanos::new(r.communication_ns).to_string(),
            Nanos::new(r.memory_ns).to_string(),
            r.syncs.to_string(),
            r.launched.to_string(),
            opt_ns(r.launch_delay_median_ns),
        ]);
    }
    t
}

fn breakdown_table(audit: &Audit) -> Table {
    let mut t = table(&[
        "device",
        "span",
        "exclusive compute",
        "exposed communication",
        "exposed memory",
        "idle",
        "idle %",
    ]);
    for b in &audit.breakdown {
        // The unions each part is the difference of: compute ⊆ compute ∪ communication ⊆ all.
        let compute = b.exclusive_compute_ns;
        let with_communication = compute + b.exposed_communication_ns;
        let busy = with_communication + b.exposed_memory_ns;
        t.add_row(vec![
            b.device.clone(),
            wide(b.span_ns),
            wide(compute),
            derived(&[compute, with_communication], || {
                wide(b.exposed_communication_ns)
            }),
            derived(&[with_communication, busy], || wide(b.exposed_memory_ns)),
            derived(&[b.span_ns, busy], || wide(b.idle_ns)),
            derived(&[b.span_ns, busy], || percent(b.idle_ns, b.span_ns)),
        ]);
    }
    t
}

/// `name` cut in the middle to at most `max` characters (`void gemm<…>…(float*)`): the head and
/// the tail of a templated kernel name are what tell two apart. JSON keeps the whole name.
pub(super) fn middle(name: &str, max: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= max {
        return name.to_owned();
    }
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    let mut s: String = chars[..head].iter().collect();
    s.push('…');
    s.extend(&chars[chars.len() - tail..]);
    s
}

/// How many kernel rows the text views show unless told (`--top`).
pub const DEFAULT_TOP: usize = 10;

/// The `top` largest kernel rows as a table.
pub fn kernels_table(audit: &Audit, top: usize) -> Table {
    let mut t = table(&[
        "kernel",
        "class",
        "stream",
        "count",
        "total",
        "mean",
        "min",
        "max",
        "share of busy",
    ]);
    for k in audit.kernels.iter().take(top) {
        t.add_row(vec![
            middle(&k.name, 60),
            format!("{:?}", k.class).to_ascii_lowercase(),
            k.stream.clone(),
            k.count.to_string(),
            wide(k.total_ns),
            k.mean_ns.map_or_else(unknown_overflow, wide),
            wide(k.min_ns),
            wide(k.max_ns),
            match (k.share_of_busy_permille, &k.unknown_why) {
                (Some(p), _) => format!("{}.{}%", p / 10, p % 10),
                (None, Some(_)) => unknown_overflow(),
                (None, None) => "-".to_owned(),
            },
        ]);
    }
    t
}

/// The caption of the kernel table: how many rows of how many, and what the columns mean.
pub fn kernels_caption(audit: &Audit, top: usize) -> String {
    format!(
        "kernels ({} of {} by total; mean rounded to the ns; share of the device's busy time, which overlapping streams can push past 100 % in sum)",
        top.min(audit.kernels.len()),
        audit.kernels.len()
    )
}

/// What the rows past the `top` add up to, or `None` when every row is shown.
pub fn kernels_rest(audit: &Audit, top: usize) -> Option<String> {
    let rest = &audit.kernels[top.min(audit.kernels.len())..];
    if rest.is_empty() {
        return None;
    }
    let count: u64 = rest.iter().map(|k| k.count).sum();
    let total: i128 = rest.iter().map(|k| k.total_ns).sum();
    Some(format!(
        "… and {} more row(s): {count} activities, {} in all (--top N shows more)",
        rest.len(),
        wide(total)
    ))
}

/// The kernel table as text: the caption, the `top` largest rows by total (one record per
/// line where the table does not fit the terminal), and what the rest add up to.
pub fn kernels_text(audit: &Audit, top: usize) -> String {
    if audit.kernels.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "{}\n{}\n",
        crate::table::wrap_prose(&kernels_caption(audit, top), "  "),
        crate::table::fitted_records(&kernels_table(audit, top))
    );
    if let Some(rest) = kernels_rest(audit, top) {
        s.push_str(&crate::table::wrap_prose(&rest, "  "));
        s.push('\n');
    }
    s
}

fn steady_lines(audit: &Audit) -> String {
    match &audit.steady_state {
        None => String::new(),
        Some(s) => format!(
            "steady state over steps ({} leading step(s) counted as warm-up): host duration {}; device busy {}\n",
            s.warmup_steps, s.host, s.busy
        ),
    }
}

/// The whole audit as text, with the [`DEFAULT_TOP`] largest kernel rows.
pub fn to_text(audit: &Audit) -> String {
    to_text_top(audit, DEFAULT_TOP)
}

/// The whole audit as text, with the `top` largest kernel rows.
pub fn to_text_top(audit: &Audit, top: usize) -> String {
    let mut s = fit_lines(&format!(
        "audit of {} ({}); times t+… are since the trace's first event\n\n",
        audit.input, audit.source
    ));
    s.push_str(&fit_lines(&findings_text(&audit.findings)));
    s.push('\n');
    if audit.steps.is_empty() {
        s.push_str(&fit_lines(
            "steps: no ProfilerStep markers; the whole window is audited as one\n",
        ));
    } else {
        s.push_str(&fit_lines(
            "steps (device numbers inside each step's host window; busy + idle = host)\n",
        ));
        s.push_str(&format!(
            "{}\n",
            crate::table::fitted_records(&steps_table(audit))
        ));
        s.push_str(&fit_lines(&steady_lines(audit)));
    }
    if !audit.breakdown.is_empty() {
        s.push_str(&fit_lines(
            "\nexposed-time breakdown per device (exact; the four parts sum to the span)\n",
        ));
        s.push_str(&format!(
            "{}\n",
            crate::table::fitted_records(&breakdown_table(audit))
        ));
    }
    if !audit.kernels.is_empty() {
        s.push('\n');
        s.push_str(&kernels_text(audit, top));
    }
    if !audit.ops.is_empty() {
        s.push('\n');
        s.push_str(&ops::ops_text(audit, top));
    }
    s.push_str(&views::views_text(audit));
    for n in &audit.notes {
        s.push_str(&fit_lines(&format!("note: {n}\n")));
    }
    s
}

/// `text` with each line wrapped at the output's width ([`crate::table::wrap_prose`]), its
/// continuation lines indented two past the line's own indent; unchanged when piped.
fn fit_lines(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for line in text.lines() {
        let lead = &line[..line.len() - line.trim_start().len()];
        s.push_str(&crate::table::wrap_prose(line, &format!("{lead}  ")));
        s.push('\n');
    }
    s
}

/// The whole audit as Markdown.
pub fn to_markdown(audit: &Audit) -> String {
    let mut s = format!("# Audit of `{}` ({})\n\n", audit.input, audit.source);
    s.push_str(&format!("## Findings: {}\n\n", tally(&audit.findings)));
    for f in &audit.findings {
        s.push_str(&format!(
            "### `{}` ({})\n\n{}\n\n",
            f.code, f.severity, f.message
        ));
        for item in &f.evidence.items {
            s.push_str(&format!("- {item}\n"));
        }
        if f.evidence.more > 0 {
            s.push_str(&format!("- … and {} more\n", f.evidence.more));
        }
        s.push_str(&format!("\n**Fix:** {}\n\n", f.fix));
    }
    s.push_str("## Steps\n\n");
    if audit.steps.is_empty() {
        s.push_str("No `ProfilerStep` markers: the whole window is audited as one.\n\n");
    } else {
        s.push_str(&format!(
            "{}\n\n{}\n",
            steps_table(audit),
            steady_lines(audit)
        ));
    }
    s.push_str("## Exposed-time breakdown\n\n");
    s.push_str(&format!("{}\n", breakdown_table(audit)));
    if !audit.kernels.is_empty() {
        s.push_str("\n## Kernels\n\n");
        s.push_str(&kernels_text(audit, DEFAULT_TOP));
    }
    if !audit.ops.is_empty() {
        s.push_str("\n## Ops → kernels\n\n");
        s.push_str(&ops::ops_text(audit, DEFAULT_TOP));
    }
    let views = views::views_text(audit);
    if !views.is_empty() {
        s.push_str("\n## HTA's other views, exact\n");
        s.push_str(&views);
    }
    s
}

/// The whole audit as pretty JSON (`"format": "worksheet-audit"`, `"version": 1`).
pub fn to_json(audit: &Audit) -> String {
    serde_json::to_string_pretty(audit).expect("the audit serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{audit, AuditOptions};
    use crate::trace::model::{Activity, ActivityKind, ApiCall, Trace};

    fn launched(name: &str, corr: i64, start: i64, end: i64) -> Activity {
        Activity {
            kind: ActivityKind::Kernel,
            name: name.into(),
            device: 0,
            stream: 7,
            start,
            end,
            correlation: Some(corr),
            external: None,
            copy: None,
            collective: None,
            bytes: None,
        }
    }

    fn call(corr: i64, start: i64, end: i64) -> ApiCall {
        ApiCall {
            name: "cudaLaunchKernel".into(),
            thread: Some(1),
            start,
            end,
            correlation: Some(corr),
            external: None,
            sync_recorded: false,
        }
    }

    /// The cells of `t`'s rows.
    fn cells(t: &Table) -> Vec<Vec<String>> {
        t.row_iter()
            .map(|r| r.cell_iter().map(comfy_table::Cell::content).collect())
            .collect()
    }

    const UNKNOWN: &str = "unknown (overflow)";

    #[test]
    fn no_figure_is_printed_from_a_total_past_64_bits() {
        // review D10: one kernel over i64::MIN..i64::MAX (the nsys export of the reliability
        // review) printed mean 2049638230.412184821 s, share 100.0 % and the others 0.0 %,
        // idle 0 ns (0.0%) of an unknown span, and launch means of unknown sums.
        let trace = Trace {
            activities: vec![
                launched("wide", 1, i64::MIN, i64::MAX),
                launched("small", 2, 300, 400),
            ],
            calls: vec![call(1, 100, 200), call(2, 250, 260)],
            ..Trace::default()
        };
        let a = audit(&trace, "d10", &AuditOptions::default());
        let k = cells(&kernels_table(&a, DEFAULT_TOP));
        let k: Vec<&[String]> = k.iter().map(|r| &r[4..]).collect();
        assert_eq!(
            k,
            [
                [UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN].as_slice(),
                ["100 ns", "100 ns", "100 ns", "100 ns", UNKNOWN].as_slice(),
            ]
        );
        assert_eq!(
            cells(&breakdown_table(&a)),
            [["gpu0", UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN]]
        );
        let idle = views::idle_text(&a);
        assert!(
            idle.contains(&format!("| gpu0-s7 | {UNKNOWN} | {UNKNOWN} | 0 ns ")),
            "{idle}"
        );
        let launch = views::launch_text(&a);
        // (all): 2 launches; mean call (100 + 10) / 2 = 55 ns; max delay 300 − 260 = 40 ns.
        assert!(
            launch.contains(&format!(
                "| (all)  | 2        | 55 ns     | {UNKNOWN} | {UNKNOWN} | 40 ns "
            )),
            "{launch}"
        );
        // The delay of `wide`, i64::MIN − 200, is kept exact: no saturated i64::MIN.
        let wide_row = a.launches.kernels.iter().find(|r| r.name == "wide");
        assert_eq!(
            wide_row.and_then(|r| r.sums.max_launch_delay_ns),
            Some(i128::from(i64::MIN) - 200)
        );
        assert!(
            launch.contains(&format!(
                "| wide   | 1        | 100 ns    | {UNKNOWN} | {UNKNOWN} | {UNKNOWN} "
            )),
            "{launch}"
        );
    }

    #[test]
    fn figures_inside_64_bits_are_printed() {
        let trace = Trace {
            activities: vec![launched("a", 1, 0, 30), launched("b", 2, 10, 50)],
            calls: vec![call(1, -20, -10), call(2, -5, 0)],
            ..Trace::default()
        };
        let a = audit(&trace, "d10", &AuditOptions::default());
        // busy = [0, 50) = 50 ns: b 40/50 = 80.0 %, a 30/50 = 60.0 %.
        let k = cells(&kernels_table(&a, DEFAULT_TOP));
        let k: Vec<&[String]> = k.iter().map(|r| &r[4..]).collect();
        assert_eq!(
            k,
            [
                ["40 ns", "40 ns", "40 ns", "40 ns", "80.0%"].as_slice(),
                ["30 ns", "30 ns", "30 ns", "30 ns", "60.0%"].as_slice(),
            ]
        );
        assert_eq!(
            cells(&breakdown_table(&a)),
            [["gpu0", "50 ns", "50 ns", "0 ns", "0 ns", "0 ns", "0.0%"]]
        );
    }
}
