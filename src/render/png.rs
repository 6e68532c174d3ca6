//! SVG → PNG through `resvg`, with the embedded font ([`super::font::FONT_BYTES`]) as the
//! only font: the PNG's text looks the same on a fresh machine without system fonts.

use resvg::{tiny_skia, usvg};

use super::font::{FONT_BYTES, FONT_FAMILY};

/// Rasterises `svg` at its own size (1 px per user unit) on a white background, as PNG bytes.
///
/// # Errors
/// A message when the SVG cannot be parsed (a renderer defect) or is too large to rasterise.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, String> {
    let mut options = usvg::Options {
        font_family: FONT_FAMILY.to_owned(),
        ..usvg::Options::default()
    };
    let fonts = options.fontdb_mut();
    fonts.load_font_data(FONT_BYTES.to_vec());
    fonts.set_sans_serif_family(FONT_FAMILY);
    fonts.set_serif_family(FONT_FAMILY);
    fonts.set_monospace_family(FONT_FAMILY);
    let tree =
        usvg::Tree::from_str(svg, &options).map_err(|e| format!("the SVG does not parse: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        format!(
            "a {} × {} px picture is too large to rasterise",
            size.width(),
            size.height()
        )
    })?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap
        .encode_png()
        .map_err(|e| format!("PNG encoding failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_picture_with_text_becomes_a_png_with_ink() {
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="30" font-family="DejaVu Sans"><text x="4" y="20" font-size="16" fill="#000000">known 140 us</text></svg>"##;
        let png = svg_to_png(svg).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let pixmap = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((pixmap.width(), pixmap.height()), (120, 30));
        // The text was drawn with the embedded font: some pixels are dark.
        let dark = pixmap
            .pixels()
            .iter()
            .filter(|p| p.red() < 100 && p.alpha() > 0)
            .count();
        assert!(dark > 50, "{dark} dark pixels");
    }
}
