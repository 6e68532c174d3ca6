//! The label placer: the last pass over a drawn SVG, so that no two labels overlap.
//!
//! Each part of the picture places its own labels where they belong (a bar's label inside or
//! beside it, a mark's above its tick, a join's beside its arrow), and each part keeps its
//! own labels apart. Labels of *different* parts can still meet: a mark's label over a join's,
//! a caption under a neighbour's bracket label (UX review P5, P9). This pass reads every
//! `<text>` of the finished document in drawing order, measures its box with the embedded
//! font's metrics ([`super::font::width`]), and keeps the first of two labels that overlap
//! where it is. The later one is moved up or down by one or two lines, whichever is free
//! first; when none is, it is removed from view and kept as a tooltip (`<title>`) on an empty
//! group, so nothing drawn is ever unreadable and nothing said is lost.
//!
//! The boxes are exact for the glyph advances of the text as written (kerning aside, see
//! [`super::font`]); vertically a label occupies `[y − 0.8·size, y + 0.25·size]` around its
//! baseline `y`, DejaVu Sans' ascent and descent rounded up.

use super::font::width as text_w;

/// The box of one label, and where its element lies in the document.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelBox {
    /// Byte range of the whole `<text …>…</text>` element.
    pub span: (usize, usize),
    /// Byte range of the value of its `y` attribute.
    pub y_span: (usize, usize),
    /// The text as shown (entities decoded, a nested `<title>` left out).
    pub text: String,
    /// Left, top, right, bottom in px.
    pub x0: f64,
    /// Top.
    pub y0: f64,
    /// Right.
    pub x1: f64,
    /// Bottom.
    pub y1: f64,
    /// Font size in px.
    pub size: f64,
}

impl LabelBox {
    /// Whether the two boxes share any area (touching edges do not count).
    pub fn overlaps(&self, other: &LabelBox) -> bool {
        self.x0 < other.x1 && other.x0 < self.x1 && self.y0 < other.y1 && other.y0 < self.y1
    }

    fn shifted(&self, dy: f64) -> LabelBox {
        LabelBox {
            y0: self.y0 + dy,
            y1: self.y1 + dy,
            ..self.clone()
        }
    }
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<(&'a str, usize)> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let end = tag[at..].find('"')? + at;
    Some((&tag[at..end], at))
}

fn decode(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Every `<text>` element of `svg` with its box, in document (drawing) order. Elements
/// without a numeric `x`, `y` and `font-size` are left out.
pub fn label_boxes(svg: &str) -> Vec<LabelBox> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = svg[from..].find("<text ") {
        let start = from + rel;
        let Some(tag_end) = svg[start..].find('>').map(|i| start + i) else {
            break;
        };
        let Some(close) = svg[tag_end..].find("</text>").map(|i| tag_end + i) else {
            break;
        };
        let end = close + "</text>".len();
        from = end;
        let tag = &svg[start..tag_end];
        let number = |name: &str| attr(tag, name).and_then(|(v, _)| v.parse::<f64>().ok());
        let (Some(x), Some(y), Some(size)) = (number("x"), number("y"), number("font-size")) else {
            continue;
        };
        let Some((_, y_at)) = attr(tag, "y") else {
            continue;
        };
        let y_len = attr(tag, "y").map_or(0, |(v, _)| v.len());
        let mut content = &svg[tag_end + 1..close];
        let stripped;
        if let (Some(a), Some(b)) = (content.find("<title>"), content.find("</title>")) {
            stripped = format!("{}{}", &content[..a], &content[b + "</title>".len()..]);
            content = &stripped;
        }
        let text = decode(content);
        let w = text_w(&text, size);
        let x0 = match attr(tag, "text-anchor").map(|(v, _)| v) {
            Some("middle") => x - w / 2.0,
            Some("end") => x - w,
            _ => x,
        };
        out.push(LabelBox {
            span: (start, end),
            y_span: (start + y_at, start + y_at + y_len),
            text,
            x0,
            y0: y - 0.8 * size,
            x1: x0 + w,
            y1: y + 0.25 * size,
            size,
        });
    }
    out
}

/// The pairs of labels of `svg` that overlap, by their text (for tests and diagnostics).
pub fn overlapping(svg: &str) -> Vec<(String, String)> {
    let boxes = label_boxes(svg);
    let mut pairs = Vec::new();
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            if a.overlaps(b) {
                pairs.push((a.text.clone(), b.text.clone()));
            }
        }
    }
    pairs
}

/// How one label is placed.
enum Placement {
    Keep,
    Move(f64),
    Hide,
}

/// Resolves every label collision of `svg` (see the module documentation). Time:
/// O(n²) in the number of labels, which a picture keeps in the hundreds.
pub fn place(svg: String) -> String {
    let boxes = label_boxes(&svg);
    let mut placed: Vec<LabelBox> = Vec::with_capacity(boxes.len());
    let mut plan = Vec::with_capacity(boxes.len());
    for b in &boxes {
        let free = |c: &LabelBox| !placed.iter().any(|p| p.overlaps(c));
        let line = b.size + 2.0;
        let choice = if free(b) {
            Placement::Keep
        } else {
            [-line, line, -2.0 * line, 2.0 * line]
                .into_iter()
                .find(|&dy| b.y0 + dy >= 0.0 && free(&b.shifted(dy)))
                .map_or(Placement::Hide, Placement::Move)
        };
        match choice {
            Placement::Keep => placed.push(b.clone()),
            Placement::Move(dy) => placed.push(b.shifted(dy)),
            Placement::Hide => {}
        }
        plan.push(choice);
    }
    if plan.iter().all(|p| matches!(p, Placement::Keep)) {
        return svg;
    }
    let mut out = String::with_capacity(svg.len());
    let mut at = 0;
    for (b, choice) in boxes.iter().zip(&plan) {
        match choice {
            Placement::Keep => {}
            Placement::Move(dy) => {
                let y: f64 = svg[b.y_span.0..b.y_span.1].parse().unwrap_or(0.0);
                out.push_str(&svg[at..b.y_span.0]);
                out.push_str(&format!("{:.1}", y + dy));
                at = b.y_span.1;
            }
            Placement::Hide => {
                out.push_str(&svg[at..b.span.0]);
                out.push_str(&format!(
                    "<g><title>{}</title></g>",
                    super::draw::esc(&b.text)
                ));
                at = b.span.1;
            }
        }
    }
    out.push_str(&svg[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"<svg><text x="100" y="50" font-size="10">step:ProfilerStep#5:start</text><text x="120" y="50" font-size="10" text-anchor="middle">step:ProfilerStep#4:end</text></svg>"#;

    #[test]
    fn boxes_follow_the_anchor_and_the_font() {
        let b = label_boxes(TWO);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].x0, 100.0);
        assert_eq!(b[0].x1, 100.0 + text_w("step:ProfilerStep#5:start", 10.0));
        let w = text_w("step:ProfilerStep#4:end", 10.0);
        assert_eq!((b[1].x0, b[1].x1), (120.0 - w / 2.0, 120.0 + w / 2.0));
        assert_eq!((b[0].y0, b[0].y1), (42.0, 52.5));
        assert_eq!(overlapping(TWO).len(), 1);
    }

    #[test]
    fn the_later_label_moves_up_a_line_and_then_nothing_overlaps() {
        let placed = place(TWO.to_owned());
        assert!(placed.contains(r#"y="38.0""#), "{placed}");
        assert!(overlapping(&placed).is_empty(), "{placed}");
        // A label with no free line is hidden, its text kept as a tooltip.
        let crowded: String = (0..6)
            .map(|_| r#"<text x="100" y="30" font-size="10">same place</text>"#)
            .collect();
        let placed = place(format!("<svg>{crowded}</svg>"));
        assert!(overlapping(&placed).is_empty(), "{placed}");
        assert_eq!(
            placed.matches("<g><title>same place</title></g>").count(),
            2
        );
        // Nothing to do: the document is returned as it was.
        let clear = r#"<svg><text x="0" y="20" font-size="10">a</text><text x="0" y="60" font-size="10">b</text></svg>"#;
        assert_eq!(place(clear.to_owned()), clear);
    }

    #[test]
    fn a_title_inside_a_label_is_not_part_of_its_text() {
        let b = label_boxes(
            r#"<text x="12" y="40" font-size="14"><title>long explanation</title>lane &amp; co</text>"#,
        );
        assert_eq!(b[0].text, "lane & co");
    }
}
