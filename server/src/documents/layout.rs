//! A flowing layout over the PDF canvas (`pdf`): a document is the title band every document
//! opens with (`pdf::TitleBand`, the bill's too), then headings, paragraphs (wrapped to the
//! page) and key/value tables (wrapped in their value column) running down the page, a new page when the next block does not fit
//! (or on demand), and a footer with the document's name and version and the page number.
//! Every plan document (EFL, TOS, YRAC, LOA, renewal notice) is written with it.

use super::pdf::{
    self, win_ansi, Canvas, Font, Rgb, Style, BAND_HEIGHT, HAIRLINE, INK, MUTED, PAGE_HEIGHT,
    PAGE_WIDTH,
};

const LEFT: f32 = 54.0;
const RIGHT: f32 = PAGE_WIDTH - 54.0;
const BOTTOM: f32 = 78.0;
const FOOTER_RULE: f32 = 60.0;
const KEY_WIDTH: f32 = 190.0;

const BODY: Style = Style {
    font: Font::Regular,
    size: 10.0,
    color: INK,
};
const BOLD: Style = Style {
    font: Font::Bold,
    size: 10.0,
    color: INK,
};
const SMALL: Style = Style {
    font: Font::Regular,
    size: 8.0,
    color: MUTED,
};
const LINE: f32 = 13.5;

/// One block of a document as written, kept beside its drawing so that the same text can also
/// be read as HTML (`html::document`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Heading(String),
    Paragraph(String),
    Note(String),
    Table(Vec<(String, String)>),
}

/// A document being laid out, top to bottom.
pub struct Flow {
    brand: Rgb,
    brand_name: String,
    /// The footer's left text: the document's name and version.
    footer: String,
    done: Vec<Canvas>,
    page: Canvas,
    /// The baseline of the next line.
    y: f32,
    blocks: Vec<Block>,
}

impl Flow {
    /// A first page with the title band: the brand's name on the left, `title` on the right.
    pub fn new(brand_name: &str, brand_color: Option<&str>, title: &str, footer: &str) -> Flow {
        let mut page = Canvas::new();
        let (brand, _) = pdf::TitleBand {
            color: brand_color,
            name: brand_name,
            name_size: 18.0,
            title,
            second_line: None,
            logo: None,
        }
        .draw(&mut page, LEFT, RIGHT);
        Flow {
            brand,
            brand_name: brand_name.to_owned(),
            footer: footer.to_owned(),
            done: Vec::new(),
            page,
            y: PAGE_HEIGHT - BAND_HEIGHT - 34.0,
            blocks: Vec::new(),
        }
    }

    /// Starts the next page.
    pub fn page_break(&mut self) {
        let finished = std::mem::replace(&mut self.page, Canvas::new());
        self.done.push(finished);
        let top = pdf::continued_header(
            &mut self.page,
            (LEFT, RIGHT),
            self.brand,
            &self.brand_name,
            None,
        );
        self.y = top - 30.0;
    }

    /// Breaks the page unless `height` more fits above the footer.
    fn ensure(&mut self, height: f32) {
        if self.y - height < BOTTOM {
            self.page_break();
        }
    }

    /// A section heading with a rule under it, kept with at least two lines of what follows.
    pub fn heading(&mut self, text: &str) {
        self.blocks.push(Block::Heading(text.to_owned()));
        self.ensure(18.0 + 2.0 * LINE);
        self.y -= 6.0;
        let style = BOLD.sized(12.5).colored(self.brand);
        self.page.text(
            LEFT,
            self.y,
            style,
            &style.fit(&win_ansi(text), RIGHT - LEFT),
        );
        self.page.hline(LEFT, RIGHT, self.y - 5.0, 0.75, HAIRLINE);
        self.y -= 20.0;
    }

    /// A paragraph wrapped to the page, continuing on the next page when it must.
    pub fn paragraph(&mut self, text: &str) {
        self.blocks.push(Block::Paragraph(text.to_owned()));
        self.lines(BODY, text);
        self.y -= 5.0;
    }

    /// A paragraph in the small, muted style (fine print, notes).
    pub fn note(&mut self, text: &str) {
        self.blocks.push(Block::Note(text.to_owned()));
        self.lines(SMALL.sized(8.5), text);
        self.y -= 4.0;
    }

    fn lines(&mut self, style: Style, text: &str) {
        for line in style.wrap(&win_ansi(text), RIGHT - LEFT) {
            self.ensure(LINE);
            self.page.text(LEFT, self.y, style, &line);
            self.y -= LINE;
        }
    }

    /// Rows of a key (bold, left) and its value (wrapped in the right column); a row is never
    /// split across pages.
    pub fn table<K: AsRef<str>, V: AsRef<str>>(&mut self, rows: &[(K, V)]) {
        self.blocks.push(Block::Table(
            rows.iter()
                .map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned()))
                .collect(),
        ));
        let value_x = LEFT + KEY_WIDTH;
        for (key, value) in rows {
            let keys = BOLD.wrap(&win_ansi(key.as_ref()), KEY_WIDTH - 10.0);
            let values = BODY.wrap(&win_ansi(value.as_ref()), RIGHT - value_x);
            let height = LINE * keys.len().max(values.len()) as f32;
            self.ensure(height + 4.0);
            let top = self.y;
            for (i, k) in keys.iter().enumerate() {
                self.page.text(LEFT, top - LINE * i as f32, BOLD, k);
            }
            for (i, v) in values.iter().enumerate() {
                self.page.text(value_x, top - LINE * i as f32, BODY, v);
            }
            self.y = top - height;
            self.page
                .hline(LEFT, RIGHT, self.y + LINE - 9.5, 0.4, HAIRLINE);
            self.y -= 4.0;
        }
        self.y -= 6.0;
    }

    /// What was written so far, block by block.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// The PDF: every page with its footer, titled `title`.
    #[must_use]
    pub fn finish(self, title: &str) -> Vec<u8> {
        let Flow {
            mut done,
            page,
            footer,
            brand_name,
            ..
        } = self;
        done.push(page);
        let count = done.len();
        for (index, canvas) in done.iter_mut().enumerate() {
            canvas.hline(LEFT, RIGHT, FOOTER_RULE, 0.5, HAIRLINE);
            let left = SMALL.fit(&win_ansi(&footer), RIGHT - LEFT - 90.0);
            canvas.text(LEFT, FOOTER_RULE - 14.0, SMALL, &left);
            let label = win_ansi(&format!("Page {} of {count}", index + 1));
            canvas.text_right(RIGHT, FOOTER_RULE - 14.0, SMALL, &label);
        }
        pdf::document(done, title, &brand_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_count(pdf: &[u8]) -> usize {
        let text = String::from_utf8_lossy(pdf);
        let count = text.split("/Count ").nth(1).unwrap();
        count[..count.find(|c: char| !c.is_ascii_digit()).unwrap()]
            .parse()
            .unwrap()
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    #[test]
    fn blocks_flow_down_and_onto_new_pages() {
        let mut flow = Flow::new(
            "Sunny Homes",
            Some("#ffcc00"),
            "Terms of Service",
            "TOS 2026.1",
        );
        flow.heading("One");
        flow.paragraph("A short paragraph.");
        flow.table(&[("Energy charge", "11.2 cents per kWh")]);
        let one = flow.finish("t");
        assert_eq!(page_count(&one), 1);
        assert!(contains(&one, b"A short paragraph."));
        assert!(contains(&one, b"Energy charge"));
        assert!(contains(&one, b"Page 1 of 1"));

        let mut flow = Flow::new("Sunny Homes", None, "Terms of Service", "TOS 2026.1");
        for i in 0..40 {
            flow.heading(&format!("Clause {i}"));
            flow.paragraph(&"words that wrap across the width of the page ".repeat(4));
        }
        flow.page_break();
        flow.paragraph("after the break");
        let many = flow.finish("t");
        assert!(page_count(&many) >= 5, "{}", page_count(&many));
        let pages = page_count(&many);
        assert!(contains(
            &many,
            format!("Page {pages} of {pages}").as_bytes()
        ));
    }
}
