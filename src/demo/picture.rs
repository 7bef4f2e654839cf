//! Pictures of the demo: colour-mapped PNG maps with a title and a numbered colour bar (text
//! in the bitmap font of `font.rs`), and SVG line plots, written without a plotting library.

use super::font::{self, GLYPH};
use std::fmt::Write as _;
use std::path::Path;

/// An RGB colour.
pub type Rgb = [u8; 3];

/// Colour for "no value" (NaN) pixels.
pub const NO_VALUE: Rgb = [200, 200, 200];

/// A continuous colour map: colours at evenly spaced stops, interpolated linearly.
pub struct ColourMap(pub &'static [Rgb]);

/// Dark blue → green → yellow (perceptually ordered, like viridis).
pub const SEQUENTIAL: ColourMap = ColourMap(&[
    [68, 1, 84],
    [59, 82, 139],
    [33, 145, 140],
    [94, 201, 98],
    [253, 231, 37],
]);

/// Brown → white → green (negative → positive).
pub const DIVERGING: ColourMap = ColourMap(&[
    [140, 81, 10],
    [216, 179, 101],
    [245, 245, 245],
    [90, 180, 172],
    [1, 102, 94],
]);

impl ColourMap {
    /// The colour of `x` in `[lo, hi]` (clamped); NaN gives [`NO_VALUE`].
    pub fn colour(&self, x: f64, lo: f64, hi: f64) -> Rgb {
        if x.is_nan() {
            return NO_VALUE;
        }
        let t = ((x - lo) / (hi - lo)).clamp(0.0, 1.0) * (self.0.len() - 1) as f64;
        let i = (t as usize).min(self.0.len() - 2);
        let f = t - i as f64;
        let (a, b) = (self.0[i], self.0[i + 1]);
        [0, 1, 2].map(|k| (a[k] as f64 * (1.0 - f) + b[k] as f64 * f).round() as u8)
    }

    /// A CSS linear gradient of the map (for legends in the HTML report).
    pub fn css_gradient(&self) -> String {
        let stops: Vec<String> = self
            .0
            .iter()
            .map(|[r, g, b]| format!("rgb({r},{g},{b})"))
            .collect();
        format!("linear-gradient(to right, {})", stops.join(", "))
    }
}

/// Colours of categorical maps (land-cover classes), by class index.
pub const CATEGORIES: [Rgb; 6] = [
    [27, 120, 55],
    [230, 171, 2],
    [117, 112, 179],
    [231, 41, 138],
    [166, 97, 26],
    [0, 0, 0],
];

/// The background of titles and colour bars.
pub const BACKGROUND: Rgb = [255, 255, 255];

/// The colour of text.
pub const TEXT: Rgb = [0, 0, 0];

/// Space around text, in pixels.
const MARGIN: usize = 3;

/// An RGB raster.
pub struct Raster {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<Rgb>,
}

impl Raster {
    pub fn new(width: usize, height: usize, fill: Rgb) -> Raster {
        Raster {
            width,
            height,
            pixels: vec![fill; width * height],
        }
    }

    /// A map of `values` (row-major `size × size`) through `colour`.
    pub fn map(size: usize, values: impl Iterator<Item = Rgb>) -> Raster {
        let pixels: Vec<Rgb> = values.collect();
        Raster {
            width: size,
            height: pixels.len() / size.max(1),
            pixels,
        }
    }

    /// This raster scaled up by an integer factor (nearest neighbour).
    pub fn scaled(&self, factor: usize) -> Raster {
        let mut out = Raster::new(self.width * factor, self.height * factor, [0; 3]);
        for r in 0..out.height {
            for c in 0..out.width {
                out.pixels[r * out.width + c] = self.pixels[(r / factor) * self.width + c / factor];
            }
        }
        out
    }

    /// Copies `other` with its top-left corner at `(row, col)`.
    pub fn paste(&mut self, other: &Raster, row: usize, col: usize) {
        for r in 0..other.height.min(self.height.saturating_sub(row)) {
            for c in 0..other.width.min(self.width.saturating_sub(col)) {
                self.pixels[(row + r) * self.width + col + c] = other.pixels[r * other.width + c];
            }
        }
    }

    /// Draws `text` in [`TEXT`] colour with its top-left corner at `(row, col)`, each font pixel
    /// a `scale`×`scale` square; what falls outside the raster is clipped.
    pub fn draw_text(&mut self, text: &str, row: usize, col: usize, scale: usize) {
        for (k, c) in text.chars().enumerate() {
            let left = col + k * (GLYPH.0 + 1) * scale;
            for (r, bits) in font::glyph(c).iter().enumerate() {
                for x in 0..GLYPH.0 {
                    if bits & (1 << (GLYPH.0 - 1 - x)) == 0 {
                        continue;
                    }
                    for dy in 0..scale {
                        for dx in 0..scale {
                            let (y, x) = (row + r * scale + dy, left + x * scale + dx);
                            if y < self.height && x < self.width {
                                self.pixels[y * self.width + x] = TEXT;
                            }
                        }
                    }
                }
            }
        }
    }

    /// This raster under a white strip with `title` (at twice the font size where it fits the
    /// width, else at the font size; centred).
    pub fn titled(&self, title: &str) -> Raster {
        let scale = if font::text_width(title, 2) + 2 * MARGIN <= self.width {
            2
        } else {
            1
        };
        let strip = GLYPH.1 * scale + 2 * MARGIN;
        let mut out = Raster::new(self.width, self.height + strip, BACKGROUND);
        out.paste(self, strip, 0);
        let col = self.width.saturating_sub(font::text_width(title, scale)) / 2;
        out.draw_text(title, MARGIN, col, scale);
        out
    }

    /// This raster with `cmap`'s colour bar for values from `lo` to `hi` (low on the left) in a
    /// strip underneath, numbered at both ends and in the middle (at twice the font size where
    /// the numbers fit the width with room between them, else at the font size).
    pub fn with_colour_bar(&self, cmap: &ColourMap, lo: f64, hi: f64, digits: usize) -> Raster {
        let (gap, bar) = (4, 12);
        let label = |x: f64| format!("{x:.digits$}");
        let texts = [label(lo), label((lo + hi) / 2.0), label(hi)];
        let widths = |scale| texts.each_ref().map(|t| font::text_width(t, scale));
        let scale = if widths(2).iter().sum::<usize>() + 8 * MARGIN <= self.width {
            2
        } else {
            1
        };
        let label_row = self.height + gap + bar + MARGIN;
        let mut out = Raster::new(self.width, label_row + GLYPH.1 * scale + MARGIN, BACKGROUND);
        out.paste(self, 0, 0);
        for c in 0..self.width {
            let colour = cmap.colour(c as f64, 0.0, (self.width - 1).max(1) as f64);
            for r in 0..bar {
                out.pixels[(self.height + gap + r) * self.width + c] = colour;
            }
        }
        let [_, mid_w, hi_w] = widths(scale);
        let columns = [
            MARGIN,
            self.width.saturating_sub(mid_w) / 2,
            self.width.saturating_sub(hi_w + MARGIN),
        ];
        for (text, col) in texts.iter().zip(columns) {
            out.draw_text(text, label_row, col, scale);
        }
        out
    }

    pub fn write_png(&self, path: &Path) -> Result<(), String> {
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut encoder = png::Encoder::new(
            std::io::BufWriter::new(file),
            self.width as u32,
            self.height as u32,
        );
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let data: Vec<u8> = self.pixels.iter().flatten().copied().collect();
        encoder
            .write_header()
            .and_then(|mut w| w.write_image_data(&data))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// One series of a plot.
pub struct Series {
    pub label: String,
    pub colour: &'static str,
    pub points: Vec<(f64, f64)>,
    /// Dots (observations) instead of a line.
    pub dots: bool,
}

/// One panel of an SVG figure: series and vertical marker lines `(x, colour, label)`.
pub struct Panel {
    pub title: String,
    pub series: Vec<Series>,
    pub markers: Vec<(f64, &'static str, String)>,
}

/// An SVG figure of panels stacked vertically, sharing the x range.
pub fn svg_figure(panels: &[Panel], width: f64, panel_height: f64) -> String {
    let (left, right, top, gap) = (60.0, 20.0, 24.0, 36.0);
    let height = panels.len() as f64 * (panel_height + gap) + top;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let xs = panels
        .iter()
        .flat_map(|p| p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0)));
    let (x0, x1) = bounds(xs);
    for (k, panel) in panels.iter().enumerate() {
        let y_top = top + k as f64 * (panel_height + gap);
        let ys = panel
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|q| q.1));
        let (y0, y1) = bounds(ys);
        let sx = |x: f64| left + (x - x0) / (x1 - x0).max(1e-12) * (width - left - right);
        let sy = |y: f64| y_top + panel_height - (y - y0) / (y1 - y0).max(1e-12) * panel_height;
        let _ = writeln!(
            svg,
            r#"<rect x="{left}" y="{y_top}" width="{}" height="{panel_height}" fill="none" stroke="gray"/>"#,
            width - left - right
        );
        let _ = writeln!(
            svg,
            r#"<text x="{left}" y="{}" font-weight="bold">{}</text>"#,
            y_top - 6.0,
            escape(&panel.title)
        );
        for (y, anchor) in [(y0, y_top + panel_height), (y1, y_top + 10.0)] {
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{anchor}" text-anchor="end">{y:.3}</text>"#,
                left - 4.0
            );
        }
        for (x, colour, label) in &panel.markers {
            let _ = writeln!(
                svg,
                r#"<line x1="{0}" x2="{0}" y1="{y_top}" y2="{1}" stroke="{colour}" stroke-dasharray="4 3"/><text x="{2}" y="{3}" fill="{colour}">{4}</text>"#,
                sx(*x),
                y_top + panel_height,
                sx(*x) + 3.0,
                y_top + 12.0,
                escape(label)
            );
        }
        for (j, s) in panel.series.iter().enumerate() {
            if s.dots {
                for (x, y) in &s.points {
                    let _ = writeln!(
                        svg,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="1.8" fill="{}"/>"#,
                        sx(*x),
                        sy(*y),
                        s.colour
                    );
                }
            } else {
                let path: Vec<String> = s
                    .points
                    .iter()
                    .filter(|(_, y)| y.is_finite())
                    .map(|(x, y)| format!("{:.1},{:.1}", sx(*x), sy(*y)))
                    .collect();
                let _ = writeln!(
                    svg,
                    r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.3"/>"#,
                    path.join(" "),
                    s.colour
                );
            }
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{}" fill="{}">{}</text>"#,
                width - right - 170.0,
                y_top + 12.0 + 12.0 * j as f64,
                s.colour,
                escape(&s.label)
            );
        }
    }
    let _ = writeln!(
        svg,
        r#"<text x="{left}" y="{}">{x0:.1}</text><text x="{}" y="{}" text-anchor="end">{x1:.1}</text></svg>"#,
        height - 4.0,
        width - right,
        height - 4.0
    );
    svg
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi { (0.0, 1.0) } else { (lo, hi) }
}

/// Text escaped for XML/HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pixels of a PNG file: width, height and RGB rows.
    fn read_png(path: &Path) -> (usize, usize, Vec<u8>) {
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut data = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut data).unwrap();
        data.truncate(info.buffer_size());
        (info.width as usize, info.height as usize, data)
    }

    #[test]
    fn maps_get_a_title_and_a_numbered_colour_bar() {
        let map = Raster::new(64, 40, [10, 20, 30]);
        let out = map.with_colour_bar(&SEQUENTIAL, -0.5, 0.5, 1).titled("Map");
        // Title strip: 2·7 + 2·3 rows; under the map: gap 4, bar 12, numbers 3 + 7 + 3.
        let (title, bar_top) = (20, 20 + 40 + 4);
        let path = std::env::temp_dir().join(format!("ogham-picture-{}.png", std::process::id()));
        out.write_png(&path).unwrap();
        let (width, height, data) = read_png(&path);
        let _ = std::fs::remove_file(&path);
        assert_eq!((width, height), (64, title + 40 + 4 + 12 + 13));
        let pixel = |r: usize, c: usize| [0, 1, 2].map(|k| data[(r * width + c) * 3 + k]);
        let text_in = |rows: std::ops::Range<usize>| {
            rows.flat_map(|r| (0..width).map(move |c| (r, c)))
                .filter(|&(r, c)| pixel(r, c) == TEXT)
                .count()
        };
        assert!(text_in(0..title) > 30, "the title is drawn");
        assert!(text_in(bar_top + 12..height) > 30, "the bar is numbered");
        assert_eq!(pixel(title, 0), [10, 20, 30], "the map is under the title");
        assert_eq!(
            pixel(bar_top, 0),
            SEQUENTIAL.0[0],
            "the bar starts at the low colour"
        );
        // "-0.5" starts at the left margin: its minus sign is the glyph's fourth row.
        assert_eq!(pixel(bar_top + 12 + MARGIN + 3, MARGIN), TEXT);
        // Where the numbers fit at twice the font size, they are drawn so.
        let wide = Raster::new(256, 10, [0; 3]).with_colour_bar(&DIVERGING, -0.4, 0.4, 1);
        assert_eq!(wide.height, 10 + 4 + 12 + 3 + 14 + 3);
    }
}
