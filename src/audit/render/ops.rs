//! The op → kernels view as text ([`crate::audit::ops`]): the `top` largest rows, what the
//! rest add up to, and how the kernels were joined to their ops.

use comfy_table::{presets::ASCII_MARKDOWN, Table};

use super::{middle, unknown_overflow};
use crate::audit::ops::OpLinks;
use crate::audit::Audit;
use crate::engine::wide;

/// The `top` largest op rows as a table.
pub fn ops_table(audit: &Audit, top: usize) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(vec![
        "op",
        "device",
        "kernels",
        "launches",
        "total",
        "mean",
        "min",
        "max",
        "share of kernel busy",
        "top kernel",
    ]);
    for r in audit.ops.iter().take(top) {
        t.add_row(vec![
            middle(&r.name, 48),
            r.device.clone(),
            r.kernels.to_string(),
            r.launches.to_string(),
            wide(r.total_ns),
            r.mean_ns.map_or_else(unknown_overflow, wide),
            wide(r.min_ns),
            wide(r.max_ns),
            match (r.share_of_busy_permille, &r.unknown_why) {
                (Some(p), _) => format!("{}.{}%", p / 10, p % 10),
                (None, Some(_)) => unknown_overflow(),
                (None, None) => "-".to_owned(),
            },
            r.top_kernels.first().map_or_else(String::new, |k| {
                format!("{} ×{}", middle(&k.name, 40), k.count)
            }),
        ]);
    }
    t
}

/// How the kernels were joined, in one sentence.
pub fn links_line(links: &OpLinks) -> String {
    let parts: Vec<String> = [
        (links.no_launch_call, "without a launch call"),
        (links.no_external_id, "whose launch call has no External id"),
        (
            links.no_such_op,
            "whose launch call's External id names no cpu_op",
        ),
        (
            links.op_does_not_hold_call,
            "whose named op does not hold the launch call (an id that is not a link)",
        ),
        (
            links.kernel_disagrees,
            "whose own External id differs from the launch call's",
        ),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    let rest = if parts.is_empty() {
        String::new()
    } else {
        format!("; in {}: {}", crate::audit::ops::NO_OP, parts.join(", "))
    };
    format!(
        "op links: {} of {} kernels joined to the op that launched them{rest}",
        links.linked,
        links.kernels()
    )
}

/// The op view as text: the caption, the `top` largest rows, what the rest add up to and
/// the links; for an input without host ops, why the view is unknown.
pub fn ops_text(audit: &Audit, top: usize) -> String {
    if audit.ops.is_empty() {
        return String::new();
    }
    if let Some(why) = &audit.op_links.unknown_why {
        return format!(
            "{}\n",
            crate::table::wrap_prose(
                &format!(
                    "op → kernels: unknown ({why}; {} kernels)",
                    audit.op_links.kernels()
                ),
                "  "
            )
        );
    }
    let caption = format!(
        "op → kernels ({} of {} rows by total; the link as the trace records it: kernel → launch call by correlation → its External id → the cpu_op, whose span must hold the call; mean rounded to the ns; share of the device's kernel busy time)",
        top.min(audit.ops.len()),
        audit.ops.len()
    );
    let mut s = format!(
        "{}\n{}\n",
        crate::table::wrap_prose(&caption, "  "),
        crate::table::fitted_records(&ops_table(audit, top))
    );
    let rest = &audit.ops[top.min(audit.ops.len())..];
    if !rest.is_empty() {
        let kernels: u64 = rest.iter().map(|r| r.kernels).sum();
        let total: i128 = rest.iter().map(|r| r.total_ns).sum();
        s.push_str(&crate::table::wrap_prose(
            &format!(
                "… and {} more row(s): {kernels} kernels, {} in all (--top N shows more)",
                rest.len(),
                wide(total)
            ),
            "  ",
        ));
        s.push('\n');
    }
    s.push_str(&crate::table::wrap_prose(
        &links_line(&audit.op_links),
        "  ",
    ));
    s.push('\n');
    s
}
