//! A small PDF canvas: US Letter pages drawn with text, lines and filled or stroked rectangles
//! in RGB colours, and the text measured, cut and wrapped to a width.
//!
//! Text is set in the PDF standard fonts Helvetica and Helvetica-Bold with `WinAnsiEncoding`,
//! so no font is embedded and a document stays a few kilobytes. The fonts' widths are kept here
//! so that text can be right-aligned and long lines wrapped. Content streams are left
//! uncompressed: they are small, and the printed text stays searchable in the file.

use std::io::{Cursor, Write};

use pdf_writer::{Content, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

use crate::domain::apps;

/// US Letter, in points.
pub const PAGE_WIDTH: f32 = 612.0;
pub const PAGE_HEIGHT: f32 = 792.0;

/// The pages as a PDF with the two standard fonts, titled `title` by `author`.
#[must_use]
pub fn document(pages: Vec<Canvas>, title: &str, author: &str) -> Vec<u8> {
    document_with_image(pages, title, author, None)
}

/// The pages as a PDF, with `image` available to every page's `Canvas::image`.
#[must_use]
pub fn document_with_image(
    pages: Vec<Canvas>,
    title: &str,
    author: &str,
    image: Option<&Image>,
) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let mut ids = Ref::new(1);
    let catalog_id = ids.bump();
    let tree_id = ids.bump();
    let regular_id = ids.bump();
    let bold_id = ids.bump();
    let info_id = ids.bump();
    let page_ids: Vec<(Ref, Ref)> = pages.iter().map(|_| (ids.bump(), ids.bump())).collect();
    let image_ids = image.map(|_| (ids.bump(), ids.bump()));

    pdf.catalog(catalog_id).pages(tree_id);
    pdf.pages(tree_id)
        .kids(page_ids.iter().map(|&(page, _)| page))
        .count(i32::try_from(page_ids.len()).unwrap_or(i32::MAX));
    for (font_id, base) in [(regular_id, "Helvetica"), (bold_id, "Helvetica-Bold")] {
        pdf.type1_font(font_id)
            .base_font(Name(base.as_bytes()))
            .encoding_predefined(Name(b"WinAnsiEncoding"));
    }
    for (canvas, &(page_id, content_id)) in pages.into_iter().zip(&page_ids) {
        let mut page = pdf.page(page_id);
        page.media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT))
            .parent(tree_id)
            .contents(content_id);
        let mut resources = page.resources();
        resources
            .fonts()
            .pair(Font::Regular.name(), regular_id)
            .pair(Font::Bold.name(), bold_id);
        if let Some((image_id, _)) = image_ids {
            resources.x_objects().pair(IMAGE, image_id);
        }
        resources.finish();
        page.finish();
        pdf.stream(content_id, &canvas.0.finish());
    }
    if let (Some(image), Some((image_id, mask_id))) = (image, image_ids) {
        let mut xobject = pdf.image_xobject(image_id, &image.rgb);
        xobject.filter(Filter::FlateDecode);
        xobject.width(image.width).height(image.height);
        xobject.color_space().device_rgb();
        xobject.bits_per_component(8);
        if image.alpha.is_some() {
            xobject.s_mask(mask_id);
        }
        xobject.finish();
        if let Some(alpha) = &image.alpha {
            let mut mask = pdf.image_xobject(mask_id, alpha);
            mask.filter(Filter::FlateDecode);
            mask.width(image.width).height(image.height);
            mask.color_space().device_gray();
            mask.bits_per_component(8);
            mask.finish();
        }
    }
    pdf.document_info(info_id)
        .title(TextStr(title))
        .author(TextStr(author));
    pdf.finish()
}

/// The text in `WinAnsiEncoding`, the encoding the standard fonts are declared with. Characters it
/// cannot show become `?` rather than a wrong glyph.
pub fn win_ansi(text: &str) -> Vec<u8> {
    text.chars().map(win_ansi_byte).collect()
}

fn win_ansi_byte(c: char) -> u8 {
    match c {
        ' '..='~' | '\u{a0}'..='\u{ff}' => u8::try_from(c).unwrap_or(b'?'),
        '\t' | '\n' | '\r' | '\u{2000}'..='\u{200a}' | '\u{202f}' => b' ',
        '\u{2212}' => b'-',
        '€' => 0x80,
        '‚' => 0x82,
        'ƒ' => 0x83,
        '„' => 0x84,
        '…' => 0x85,
        '†' => 0x86,
        '‡' => 0x87,
        'ˆ' => 0x88,
        '‰' => 0x89,
        'Š' => 0x8a,
        '‹' => 0x8b,
        'Œ' => 0x8c,
        'Ž' => 0x8e,
        '‘' => 0x91,
        '’' => 0x92,
        '“' => 0x93,
        '”' => 0x94,
        '•' => 0x95,
        '–' => 0x96,
        '—' => 0x97,
        '˜' => 0x98,
        '™' => 0x99,
        'š' => 0x9a,
        '›' => 0x9b,
        'œ' => 0x9c,
        'ž' => 0x9e,
        'Ÿ' => 0x9f,
        _ => b'?',
    }
}

pub const ELLIPSIS: u8 = 0x85;

#[derive(Debug, Clone, Copy)]
pub enum Font {
    Regular,
    Bold,
}

impl Font {
    pub fn name(self) -> Name<'static> {
        match self {
            Font::Regular => Name(b"F1"),
            Font::Bold => Name(b"F2"),
        }
    }

    /// Advance widths in thousandths of the font size, indexed by character code minus 32.
    fn widths(self) -> &'static [u16; 224] {
        match self {
            Font::Regular => &HELVETICA,
            Font::Bold => &HELVETICA_BOLD,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Rgb(pub f32, pub f32, pub f32);

/// The colours every document shares: text, secondary text, rules, and the blue that stands
/// in for a missing or malformed brand colour.
pub const INK: Rgb = Rgb(0.12, 0.13, 0.15);
pub const MUTED: Rgb = Rgb(0.40, 0.42, 0.46);
pub const HAIRLINE: Rgb = Rgb(0.80, 0.81, 0.83);
pub const WHITE: Rgb = Rgb(1.0, 1.0, 1.0);
pub const DEFAULT_BRAND: Rgb = Rgb(0.12, 0.34, 0.59);

/// The app's brand colour as a document draws it, and whether text on it is dark (a pale
/// brand colour would swallow white text): the same choice the flows and e-mails make.
pub fn brand(color: Option<&str>) -> (Rgb, bool) {
    let color = color.and_then(apps::brand_color);
    (
        color.and_then(Rgb::parse).unwrap_or(DEFAULT_BRAND),
        color.is_some_and(|c| apps::text_on(c) == "#000000"),
    )
}

impl Rgb {
    /// `#rrggbb` or `#rgb`.
    pub fn parse(text: &str) -> Option<Rgb> {
        let hex = text.trim().strip_prefix('#')?;
        if !hex.is_ascii() {
            return None;
        }
        let channel = |s: &str| u8::from_str_radix(s, 16).ok().map(|v| f32::from(v) / 255.0);
        match hex.len() {
            6 => Some(Rgb(
                channel(&hex[0..2])?,
                channel(&hex[2..4])?,
                channel(&hex[4..6])?,
            )),
            3 => {
                let short = |s: &str| channel(&s.repeat(2));
                Some(Rgb(
                    short(&hex[0..1])?,
                    short(&hex[1..2])?,
                    short(&hex[2..3])?,
                ))
            }
            _ => None,
        }
    }

    /// This colour blended towards white; `amount` 1.0 is white.
    pub fn lighten(self, amount: f32) -> Rgb {
        let mix = |c: f32| c + (1.0 - c) * amount;
        Rgb(mix(self.0), mix(self.1), mix(self.2))
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub font: Font,
    pub size: f32,
    pub color: Rgb,
}

impl Style {
    pub fn width(self, text: &[u8]) -> f32 {
        let widths = self.font.widths();
        let units: f32 = text
            .iter()
            .map(|&b| {
                usize::from(b)
                    .checked_sub(32)
                    .and_then(|i| widths.get(i))
                    .map_or(0.0, |&w| f32::from(w))
            })
            .sum();
        units * self.size / 1000.0
    }

    pub fn colored(self, color: Rgb) -> Style {
        Style { color, ..self }
    }

    pub fn sized(self, size: f32) -> Style {
        Style { size, ..self }
    }

    /// The text cut to `max_width`, ending in an ellipsis when it was cut.
    pub fn fit(self, text: &[u8], max_width: f32) -> Vec<u8> {
        if self.width(text) <= max_width {
            return text.to_vec();
        }
        let budget = max_width - self.width(&[ELLIPSIS]);
        let mut out = Vec::with_capacity(text.len());
        let mut used = 0.0;
        for &b in text {
            let w = self.width(&[b]);
            if used + w > budget {
                break;
            }
            used += w;
            out.push(b);
        }
        while out.last() == Some(&b' ') {
            out.pop();
        }
        out.push(ELLIPSIS);
        out
    }

    /// The text broken into lines no wider than `max_width`, at spaces; a single word too wide
    /// for a line is cut.
    pub fn wrap(self, text: &[u8], max_width: f32) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        let mut line: Vec<u8> = Vec::new();
        for word in text.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
            let mut candidate = line.clone();
            if !candidate.is_empty() {
                candidate.push(b' ');
            }
            candidate.extend_from_slice(word);
            if line.is_empty() || self.width(&candidate) <= max_width {
                line = candidate;
            } else {
                lines.push(self.fit(&line, max_width));
                line = word.to_vec();
            }
        }
        if !line.is_empty() || lines.is_empty() {
            lines.push(self.fit(&line, max_width));
        }
        lines
    }
}

/// The height of the band across the top of a document's first page.
pub const BAND_HEIGHT: f32 = 64.0;
/// The logo's room in the band: its widest, its margin from the band's edges, and the white
/// tile's margin around it.
const LOGO_MAX_WIDTH: f32 = 150.0;
const LOGO_INSET: f32 = 12.0;
const LOGO_PAD: f32 = 6.0;

/// The band across the top of a document's first page, in the brand's colour: the partner's
/// logo (on a white tile, so that it reads on any colour) and name on the left, the document's
/// title on the right with an optional line under it (a bill's number). Every document, bill or
/// plan document, opens with it.
pub struct TitleBand<'a> {
    pub color: Option<&'a str>,
    pub name: &'a str,
    pub name_size: f32,
    pub title: &'a str,
    pub second_line: Option<&'a str>,
    /// Drawn when the document carries the image (`document_with_image`).
    pub logo: Option<&'a Image>,
}

impl TitleBand<'_> {
    /// Draws the band on `page`, its text between `left` and `right`; returns the brand's
    /// colour and whether text on it is dark, for the rest of the document.
    pub fn draw(&self, page: &mut Canvas, left: f32, right: f32) -> (Rgb, bool) {
        let (color, dark_text) = brand(self.color);
        let bottom = PAGE_HEIGHT - BAND_HEIGHT;
        page.fill_rect(0.0, bottom, PAGE_WIDTH, BAND_HEIGHT, color);
        // A pale brand colour (yellow, say) would swallow white text.
        let on_band = if dark_text { INK } else { WHITE };
        let bold = |size: f32| Style {
            font: Font::Bold,
            size,
            color: on_band,
        };
        let title_style = bold(13.0);
        let title = title_style.fit(&win_ansi(self.title), (right - left) / 2.0);
        match self.second_line {
            Some(line) => {
                page.text_right(right, bottom + 34.0, title_style, &title);
                let small = Style {
                    font: Font::Regular,
                    size: 8.0,
                    color: on_band,
                };
                page.text_right(right, bottom + 20.0, small, &win_ansi(line));
            }
            None => page.text_right(right, bottom + 26.0, title_style, &title),
        }
        let mut name_left = left;
        if let Some(logo) = self.logo {
            let (width, height) = logo.fit(LOGO_MAX_WIDTH, BAND_HEIGHT - 2.0 * LOGO_INSET);
            page.fill_rect(
                left - LOGO_PAD,
                bottom + LOGO_INSET / 2.0,
                width + 2.0 * LOGO_PAD,
                BAND_HEIGHT - LOGO_INSET,
                WHITE,
            );
            page.image(left, bottom + (BAND_HEIGHT - height) / 2.0, width, height);
            name_left = left + width + LOGO_PAD + 14.0;
        }
        let name_style = bold(self.name_size);
        let name = name_style.fit(
            &win_ansi(self.name),
            right - name_left - title_style.width(&title) - 24.0,
        );
        page.text(name_left, bottom + 25.0, name_style, &name);
        (color, dark_text)
    }
}

/// The head of every page after the first: the brand's name in its colour, an optional note on
/// the right, and a rule. Returns the baseline of that line.
pub fn continued_header(
    page: &mut Canvas,
    (left, right): (f32, f32),
    color: Rgb,
    name: &str,
    aside: Option<&str>,
) -> f32 {
    let top = PAGE_HEIGHT - 48.0;
    let style = Style {
        font: Font::Bold,
        size: 10.0,
        color,
    };
    page.text(left, top, style, &win_ansi(name));
    if let Some(aside) = aside {
        let small = Style {
            font: Font::Regular,
            size: 8.0,
            color: MUTED,
        };
        page.text_right(right, top, small, &win_ansi(aside));
    }
    page.hline(left, right, top - 8.0, 1.0, color);
    top
}

/// The name pages give the document's one image.
const IMAGE: Name<'static> = Name(b"Im1");

/// A raster image ready for a PDF: 8-bit RGB samples and, when it has transparency, 8-bit
/// alpha samples, each deflated.
#[derive(Debug, Clone)]
pub struct Image {
    pub width: i32,
    pub height: i32,
    rgb: Vec<u8>,
    alpha: Option<Vec<u8>>,
}

/// The most a PNG's decoding may allocate: a 2,000 by 2,000 logo with 16-bit samples, and room.
const PNG_DECODE_LIMIT: usize = 40 << 20;

impl Image {
    /// A PNG's pixels, whatever its colour type and depth (palettes, greyscale and 16-bit
    /// samples are expanded to 8-bit RGB, and an alpha channel kept apart as the soft mask).
    pub fn from_png(bytes: &[u8]) -> Result<Image, String> {
        let mut decoder = png::Decoder::new_with_limits(
            Cursor::new(bytes),
            png::Limits {
                bytes: PNG_DECODE_LIMIT,
            },
        );
        decoder.set_transformations(png::Transformations::normalize_to_color8());
        let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
        let size = reader
            .output_buffer_size()
            .ok_or("the image is too large")?;
        let mut pixels = vec![0; size];
        let info = reader.next_frame(&mut pixels).map_err(|e| e.to_string())?;
        pixels.truncate(info.buffer_size());
        let channels = match info.color_type {
            png::ColorType::Grayscale => 1,
            png::ColorType::GrayscaleAlpha => 2,
            png::ColorType::Rgb => 3,
            png::ColorType::Rgba => 4,
            png::ColorType::Indexed => return Err("the palette was not expanded".to_owned()),
        };
        let has_alpha = channels == 2 || channels == 4;
        let mut rgb = Vec::with_capacity(pixels.len() / channels * 3);
        let mut alpha = Vec::with_capacity(if has_alpha {
            pixels.len() / channels
        } else {
            0
        });
        for px in pixels.chunks_exact(channels) {
            match px {
                [g] | [g, _] => rgb.extend_from_slice(&[*g, *g, *g]),
                [r, g, b] | [r, g, b, _] => rgb.extend_from_slice(&[*r, *g, *b]),
                _ => {}
            }
            if has_alpha {
                alpha.push(px[channels - 1]);
            }
        }
        // A fully opaque image needs no mask.
        let alpha = (has_alpha && alpha.iter().any(|&a| a != 255)).then_some(alpha);
        Ok(Image {
            width: i32::try_from(info.width).map_err(|_| "the image is too wide")?,
            height: i32::try_from(info.height).map_err(|_| "the image is too tall")?,
            rgb: deflate(&rgb)?,
            alpha: alpha.map(|a| deflate(&a)).transpose()?,
        })
    }

    /// The width and height of the largest box of `max_width` by `max_height` that keeps the
    /// image's proportions.
    pub fn fit(&self, max_width: f32, max_height: f32) -> (f32, f32) {
        #[allow(clippy::cast_precision_loss)] // at most a few thousand pixels a side
        let (w, h) = (self.width as f32, self.height as f32);
        let scale = (max_width / w).min(max_height / h);
        (w * scale, h * scale)
    }
}

fn deflate(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).map_err(|e| e.to_string())?;
    encoder.finish().map_err(|e| e.to_string())
}

/// One page's content stream, with the few drawing operations a document needs.
pub struct Canvas(Content);

impl Canvas {
    pub fn new() -> Canvas {
        Canvas(Content::new())
    }

    pub fn text(&mut self, x: f32, y: f32, style: Style, text: &[u8]) {
        let Rgb(red, green, blue) = style.color;
        self.0
            .set_fill_rgb(red, green, blue)
            .begin_text()
            .set_font(style.font.name(), style.size)
            .next_line(x, y)
            .show(Str(text))
            .end_text();
    }

    /// Draws the document's image (`document_with_image`) in the box whose lower left corner is
    /// at `x`, `y`.
    pub fn image(&mut self, x: f32, y: f32, width: f32, height: f32) {
        self.0
            .save_state()
            .transform([width, 0.0, 0.0, height, x, y])
            .x_object(IMAGE)
            .restore_state();
    }

    pub fn text_right(&mut self, right: f32, y: f32, style: Style, text: &[u8]) {
        self.text(right - style.width(text), y, style, text);
    }

    pub fn text_center(&mut self, center: f32, y: f32, style: Style, text: &[u8]) {
        self.text(center - style.width(text) / 2.0, y, style, text);
    }

    pub fn fill_rect(&mut self, x: f32, y: f32, width: f32, height: f32, color: Rgb) {
        let Rgb(red, green, blue) = color;
        self.0
            .set_fill_rgb(red, green, blue)
            .rect(x, y, width, height)
            .fill_nonzero();
    }

    pub fn stroke_rect(&mut self, x: f32, y: f32, width: f32, height: f32, line: f32, color: Rgb) {
        let Rgb(red, green, blue) = color;
        self.0
            .set_stroke_rgb(red, green, blue)
            .set_line_width(line)
            .rect(x, y, width, height)
            .stroke();
    }

    pub fn hline(&mut self, x1: f32, x2: f32, y: f32, line: f32, color: Rgb) {
        let Rgb(red, green, blue) = color;
        self.0
            .set_stroke_rgb(red, green, blue)
            .set_line_width(line)
            .move_to(x1, y)
            .line_to(x2, y)
            .stroke();
    }
}

/// Adobe's published advance widths of the standard Helvetica fonts, in `WinAnsiEncoding` order
/// from code 32; codes the encoding leaves undefined carry the bullet's width that readers show.
#[rustfmt::skip]
const HELVETICA: [u16; 224] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, 350,
    556, 350, 222, 556, 333, 1000, 556, 556, 333, 1000, 667, 333, 1000, 350, 611, 350,
    350, 222, 222, 333, 333, 350, 556, 1000, 333, 1000, 500, 333, 944, 350, 500, 667,
    278, 333, 556, 556, 556, 556, 260, 556, 333, 737, 370, 556, 584, 333, 737, 333,
    400, 584, 333, 333, 333, 556, 537, 278, 333, 333, 365, 556, 834, 834, 834, 611,
    667, 667, 667, 667, 667, 667, 1000, 722, 667, 667, 667, 667, 278, 278, 278, 278,
    722, 722, 778, 778, 778, 778, 778, 584, 778, 722, 722, 722, 722, 667, 667, 611,
    556, 556, 556, 556, 556, 556, 889, 500, 556, 556, 556, 556, 278, 278, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 584, 611, 556, 556, 556, 556, 500, 556, 500,
];

#[rustfmt::skip]
const HELVETICA_BOLD: [u16; 224] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,
    975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,
    333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584, 350,
    556, 350, 278, 556, 500, 1000, 556, 556, 333, 1000, 667, 333, 1000, 350, 611, 350,
    350, 278, 278, 500, 500, 350, 556, 1000, 333, 1000, 556, 333, 944, 350, 500, 667,
    278, 333, 556, 556, 556, 556, 280, 556, 333, 737, 370, 556, 584, 333, 737, 333,
    400, 584, 333, 333, 333, 611, 556, 278, 333, 333, 365, 556, 834, 834, 834, 611,
    722, 722, 722, 722, 722, 722, 1000, 722, 667, 667, 667, 667, 278, 278, 278, 278,
    722, 722, 778, 778, 778, 778, 778, 584, 778, 722, 722, 722, 722, 667, 667, 611,
    556, 556, 556, 556, 556, 556, 889, 556, 556, 556, 556, 556, 278, 278, 278, 278,
    611, 611, 611, 611, 611, 611, 611, 584, 611, 611, 611, 611, 611, 556, 611, 556,
];

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: Style = Style {
        font: Font::Regular,
        size: 9.0,
        color: Rgb(0.0, 0.0, 0.0),
    };

    #[test]
    fn text_is_encoded_as_win_ansi() {
        assert_eq!(win_ansi("14.2¢"), b"14.2\xa2");
        assert_eq!(win_ansi("a–b—c"), b"a\x96b\x97c");
        assert_eq!(win_ansi("O’Neil • é"), b"O\x92Neil \x95 \xe9");
        assert_eq!(win_ansi("€5 ™"), b"\x805 \x99");
        assert_eq!(win_ansi("日本 ✓"), b"?? ?");
        assert_eq!(win_ansi("a\tb"), b"a b");
    }

    #[test]
    fn colours_parse_from_hex() {
        let close = |a: Rgb, b: (f32, f32, f32)| {
            (a.0 - b.0).abs() < 1e-3 && (a.1 - b.1).abs() < 1e-3 && (a.2 - b.2).abs() < 1e-3
        };
        assert!(close(
            Rgb::parse("#ff8000").unwrap(),
            (1.0, 128.0 / 255.0, 0.0)
        ));
        assert!(close(
            Rgb::parse("#F80").unwrap(),
            (1.0, 136.0 / 255.0, 0.0)
        ));
        for bad in ["ff8000", "#ff80", "#gg0000", "blue", "#ééé", ""] {
            assert!(Rgb::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn long_lines_are_cut_and_wrapped_to_width() {
        let long = win_ansi(&"word ".repeat(40));
        let lines = BODY.wrap(&long, 100.0);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| BODY.width(l) <= 100.0));
        let cut = BODY.fit(&[b'W'; 80], 50.0);
        assert!(BODY.width(&cut) <= 50.0);
        assert_eq!(cut.last(), Some(&ELLIPSIS));
        assert_eq!(BODY.wrap(b"", 100.0), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn a_document_has_its_pages_fonts_and_title() {
        let mut first = Canvas::new();
        first.text(10.0, 10.0, BODY, b"one");
        let pdf = document(vec![first, Canvas::new()], "A title", "An author");
        assert!(pdf.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&pdf);
        for part in [
            "/Count 2",
            "/Helvetica-Bold",
            "/WinAnsiEncoding",
            "(A title)",
            "(An author)",
            "(one)",
        ] {
            assert!(text.contains(part), "{part}");
        }
    }

    #[test]
    fn a_png_logo_becomes_rgb_samples_and_a_soft_mask() {
        let logo = include_bytes!("../../tests/api/fixtures/logo.png");
        let image = Image::from_png(logo).unwrap();
        assert_eq!((image.width, image.height), (64, 32));
        assert!(image.alpha.is_some(), "its transparent corners are kept");
        let (w, h) = image.fit(150.0, 40.0);
        assert!(
            (w - 80.0).abs() < 0.01 && (h - 40.0).abs() < 0.01,
            "{w} {h}"
        );
        assert!(Image::from_png(b"not a png").is_err());
        assert!(
            Image::from_png(&logo[..60]).is_err(),
            "a cut file is refused"
        );

        let mut page = Canvas::new();
        page.image(48.0, 700.0, w, h);
        let pdf = document_with_image(vec![page], "t", "a", Some(&image));
        let text = String::from_utf8_lossy(&pdf);
        for part in [
            "/XObject",
            "/Im1 Do",
            "/Subtype /Image",
            "/SMask",
            "/FlateDecode",
        ] {
            assert!(text.contains(part), "{part}");
        }
        let plain = String::from_utf8_lossy(&document(vec![Canvas::new()], "t", "a")).into_owned();
        assert!(!plain.contains("/XObject"));
    }
}
