//! Text that fits: label widths measured with the real metrics of the embedded font
//! (DejaVu Sans, `assets/fonts/`, its licence beside it), labels cut in the middle with an
//! ellipsis, and kernel names shortened to the name of the function.
//!
//! The same font file is loaded into the PNG renderer (`resvg`), so a PNG's text is laid out
//! with exactly these advances on any machine, with or without system fonts. Kerning is not
//! applied here; [`width`] adds a small margin for it.

use std::sync::OnceLock;

/// The embedded font: DejaVu Sans (Bitstream Vera licence, `assets/fonts/DejaVuSans-LICENSE.txt`).
pub const FONT_BYTES: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The family name the SVG asks for first (the embedded font's).
pub const FONT_FAMILY: &str = "DejaVu Sans";

/// Advance widths of the first 0x250 code points, in font units, and the units per em.
struct Metrics {
    advances: Vec<u16>,
    fallback: u16,
    units_per_em: f64,
}

fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        // The font is compiled in: failing to parse it is a build defect, caught by tests.
        let face = ttf_parser::Face::parse(FONT_BYTES, 0).ok();
        let advance = |c: char| -> Option<u16> {
            let face = face.as_ref()?;
            face.glyph_hor_advance(face.glyph_index(c)?)
        };
        let fallback = advance('M').unwrap_or(1_400);
        let advances = (0u32..0x2700)
            .map(|u| char::from_u32(u).and_then(advance).unwrap_or(fallback))
            .collect();
        Metrics {
            advances,
            fallback,
            units_per_em: face
                .as_ref()
                .map_or(2048.0, |f| f64::from(f.units_per_em())),
        }
    })
}

/// The width in pixels of `text` set in DejaVu Sans at `size` px (2 % margin for kerning).
pub fn width(text: &str, size: f64) -> f64 {
    let m = metrics();
    let units: u64 = text
        .chars()
        .map(|c| u64::from(m.advances.get(c as usize).copied().unwrap_or(m.fallback)))
        .sum();
    units as f64 / m.units_per_em * size * 1.02
}

/// `text` if it fits in `max` px at `size`; else its start and end around a `…`, as long as
/// fits; `None` when not even three characters and the ellipsis fit.
pub fn fit_middle(text: &str, size: f64, max: f64) -> Option<String> {
    if width(text, size) <= max {
        return Some(text.to_owned());
    }
    let chars: Vec<char> = text.chars().collect();
    // The longest cut that fits: keep `k` characters, the head one longer than the tail.
    let mut best = None;
    let (mut lo, mut hi) = (3usize, chars.len().saturating_sub(1));
    while lo <= hi {
        let k = (lo + hi) / 2;
        let head = k.div_ceil(2);
        let tail = k - head;
        let cut: String = chars[..head]
            .iter()
            .chain(std::iter::once(&'…'))
            .chain(&chars[chars.len() - tail..])
            .collect();
        if width(&cut, size) <= max {
            best = Some(cut);
            lo = k + 1;
        } else {
            hi = k - 1;
        }
    }
    best
}

/// The same cut for a fixed number of terminal columns (one column per character).
pub fn fit_middle_chars(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        return text.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let keep = max - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    chars[..head]
        .iter()
        .chain(std::iter::once(&'…'))
        .chain(&chars[chars.len() - tail..])
        .collect()
}

/// A meaningful short name for a label: a C++ kernel signature becomes the function's name
/// without namespaces, template arguments or parameters
/// (`void at::native::vectorized_elementwise_kernel<4, …>(int, …)` →
/// `vectorized_elementwise_kernel`); `Memcpy DtoH (Device -> Pinned)` → `Memcpy DtoH`;
/// anything else loses a trailing parenthesized remark. `None` when nothing shorter exists.
pub fn short_name(label: &str) -> Option<String> {
    let trimmed = label.trim();
    let mut name = String::new();
    // Drop everything inside <…> and (…), keeping the depth-0 text.
    let (mut angle, mut paren) = (0usize, 0usize);
    for ch in trimmed.chars() {
        match ch {
            '<' => angle += 1,
            '>' if angle > 0 => angle -= 1,
            '(' => paren += 1,
            ')' if paren > 0 => paren -= 1,
            c if angle == 0 && paren == 0 => name.push(c),
            _ => {}
        }
    }
    let name = name.trim();
    // The last word before the parameters is the function (after `void`, `static` …).
    let last_word = name.split_whitespace().last().unwrap_or(name);
    let candidate = if last_word.contains("::") {
        last_word
            .rsplit("::")
            .find(|s| !s.is_empty())
            .unwrap_or(last_word)
    } else if name.contains("::") || trimmed.contains('<') {
        last_word
    } else {
        name
    };
    let candidate = candidate.trim();
    (!candidate.is_empty() && candidate != trimmed).then(|| candidate.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_font_has_real_metrics() {
        // DejaVu Sans: `i` is narrow, `W` wide; 10 px of `M` ≈ 8.6 px.
        assert!(width("i", 10.0) < width("W", 10.0) / 2.0);
        let m = width("M", 10.0);
        assert!((8.4..9.0).contains(&m), "{m}");
        assert_eq!(width("", 12.0), 0.0);
    }

    #[test]
    fn long_labels_are_cut_in_the_middle() {
        let label = "stream-wait-on-phase-2-done-in-stream-b";
        let cut = fit_middle(label, 11.0, 80.0).unwrap();
        assert!(cut.contains('…'), "{cut}");
        assert!(cut.starts_with("stre") && cut.ends_with("-b"), "{cut}");
        assert!(width(&cut, 11.0) <= 80.0);
        assert_eq!(fit_middle("ok", 11.0, 80.0).as_deref(), Some("ok"));
        assert_eq!(fit_middle(label, 11.0, 4.0), None);
        assert_eq!(fit_middle_chars("gpu0-s20-abc", 6), "gpu…bc");
        assert_eq!(fit_middle_chars("abc", 6), "abc");
    }

    #[test]
    fn kernel_names_shorten_to_the_function() {
        let cases = [
            (
                "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
                Some("vectorized_elementwise_kernel"),
            ),
            (
                "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
                Some("Kernel"),
            ),
            ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", Some("ncclKernel_AllReduce_RING_LL_Sum_float")),
            ("Memcpy DtoH (Device -> Pinned)", Some("Memcpy DtoH")),
            ("job-17", None),
            ("run 3 (FAILED: wrong-digest)", Some("run 3")),
        ];
        for (label, want) in cases {
            assert_eq!(short_name(label).as_deref(), want, "{label}");
        }
    }
}
