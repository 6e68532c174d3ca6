//! Names in a Kineto case: phase ids and labels from kernel names, and what an API call's
//! name says it does.
//!
//! Kernel names are long C++ signatures (`void at::native::vectorized_elementwise_kernel<4,
//! ...>(int, ...)`): a phase id keeps a readable short form ([`short_name`]) and the label the
//! name cut to a bounded length ([`cut`]). Call names carry per-thread-stream and version
//! suffixes (`cudaStreamSynchronize_ptsz`, `cuCtxSynchronize_v2`) that the predicates here
//! strip before deciding whether a call blocks the host, joins streams or only polls.

/// Longest short name used in a phase id.
pub(crate) const SHORT_NAME_CHARS: usize = 48;

/// Longest phase label.
pub(crate) const LABEL_CHARS: usize = 120;

/// A call name without the per-thread-stream and version suffixes (`_ptsz`, `_v2`).
pub(crate) fn base_call_name(name: &str) -> &str {
    let mut n = name;
    for suffix in ["_ptsz", "_ptds", "_v2", "_v3"] {
        n = n.strip_suffix(suffix).unwrap_or(n);
    }
    n
}

pub(crate) fn is_blocking_stream_sync(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaStreamSynchronize" | "cuStreamSynchronize"
    )
}

pub(crate) fn is_blocking_event_sync(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaEventSynchronize" | "cuEventSynchronize"
    )
}

pub(crate) fn is_blocking_device_sync(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaDeviceSynchronize" | "cuCtxSynchronize"
    )
}

pub(crate) fn is_stream_wait_call(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaStreamWaitEvent" | "cuStreamWaitEvent"
    )
}

pub(crate) fn is_query(name: &str) -> bool {
    matches!(
        base_call_name(name),
        "cudaEventQuery" | "cuEventQuery" | "cudaStreamQuery" | "cuStreamQuery"
    )
}

/// Where [`cut`] cuts `text` to keep `max` characters (a byte index); `None` when it fits.
fn cut_point(text: &str, max: usize) -> Option<usize> {
    if text.len() <= max {
        return None; // no more bytes than `max`, so no more characters
    }
    text.char_indices().nth(max).map(|(i, _)| i)
}

/// Whether `text` has at most `max` characters: [`cut`] would keep it whole.
pub(crate) fn fits(text: &str, max: usize) -> bool {
    cut_point(text, max).is_none()
}

/// `text` cut to `max` characters, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match cut_point(text, max) {
        None => text.to_owned(),
        Some(i) => format!("{}…", &text[..i]),
    }
}

/// A readable short form of a kernel name for ids: no `void `, no template or argument
/// list, whitespace as `_`.
pub(crate) fn short_name(name: &str) -> String {
    let n = name.trim().replace("(anonymous namespace)::", "");
    let n = n.strip_prefix("void ").unwrap_or(&n);
    let cut_at = n.find(['<', '(']).unwrap_or(n.len());
    let s = n[..cut_at].trim();
    let s = if s.is_empty() { n } else { s };
    let s: String = s
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    let s = cut(&s, SHORT_NAME_CHARS);
    if s.is_empty() {
        "gpu-work".to_owned()
    } else {
        s
    }
}
