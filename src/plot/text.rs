//! Text for the plots, with a font embedded in the binary (DejaVu Sans, assets/fonts), so
//! PNGs look the same on a machine without fonts.
//!
//! [`Typeset`] wraps a plotters backend and takes over text: it measures every string with
//! the embedded font (so layouts fit, for SVG too) and, for bitmaps, draws the glyphs
//! itself (anti-aliased, with proper side bearings and kerning). The anchor conventions
//! follow plotters' SVG backend (top: baseline 0.76 em below; centre: 0.5 ex above the
//! baseline), so a plot looks the same as PNG and as SVG in a browser.

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind};
use std::sync::OnceLock;

static FONT_TTF: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The family the SVGs ask the browser for: DejaVu Sans where it is installed, else a
/// sans-serif of similar width.
pub const FAMILY: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

fn font() -> Option<&'static FontRef<'static>> {
    static FONT: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(FONT_TTF).ok()).as_ref()
}

/// plotters' font sizes are 1.24 times the em size (its SVG backend writes
/// `font-size = size / 1.24`); text here is measured and drawn the same.
const SIZE_PER_EM: f64 = 1.24;

/// The glyph scale for a plotters font size.
fn scale(f: &FontRef<'_>, size: f64) -> PxScale {
    let upem = f.units_per_em().unwrap_or(2048.0);
    PxScale::from((size / SIZE_PER_EM) as f32 * f.height_unscaled() / upem)
}

/// Width of a string in pixels at a plotters font size.
pub fn width(text: &str, size: f64) -> f32 {
    let Some(f) = font() else {
        return text.chars().count() as f32 * (size / SIZE_PER_EM) as f32 * 0.6;
    };
    let sf = f.as_scaled(scale(f, size));
    let mut w = 0.0;
    let mut prev = None;
    for c in text.chars() {
        let g = f.glyph_id(c);
        if let Some(p) = prev {
            w += sf.kern(p, g);
        }
        w += sf.h_advance(g);
        prev = Some(g);
    }
    w
}

/// A backend whose text is measured (and, for bitmaps, drawn) with the embedded font.
pub struct Typeset<B> {
    inner: B,
    /// Draw glyphs here (bitmaps) rather than handing text to the backend (SVG).
    raster: bool,
}

impl<B: DrawingBackend> Typeset<B> {
    pub fn raster(inner: B) -> Self {
        Typeset { inner, raster: true }
    }
    pub fn vector(inner: B) -> Self {
        Typeset { inner, raster: false }
    }

    fn rasterize<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        let Some(f) = font() else { return Ok(()) };
        let colour = style.color();
        if colour.alpha == 0.0 {
            return Ok(());
        }
        let size = style.size();
        let em = (size / SIZE_PER_EM) as f32;
        let sc = scale(f, size);
        let sf = f.as_scaled(sc);
        let w = width(text, size);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -w / 2.0,
            HPos::Right => -w,
        };
        let ex = em * 0.547; // DejaVu Sans x-height
        let baseline = match style.anchor().v_pos {
            VPos::Top => em * 0.76,
            VPos::Center => 0.6 * ex,
            VPos::Bottom => -0.5 * ex,
        };
        let trans = style.transform();
        let (bw, bh) = self.inner.get_size();
        let mut pen = dx;
        let mut prev = None;
        let mut pixels: Vec<(i32, i32, f32)> = Vec::new();
        for c in text.chars() {
            let id = f.glyph_id(c);
            if let Some(p) = prev {
                pen += sf.kern(p, id);
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(sc, point(pen, baseline));
            pen += sf.h_advance(id);
            if let Some(o) = f.outline_glyph(glyph) {
                let b = o.px_bounds();
                o.draw(|x, y, cov| {
                    if cov > 0.02 {
                        pixels.push((b.min.x as i32 + x as i32, b.min.y as i32 + y as i32, cov.min(1.0)));
                    }
                });
            }
        }
        for (x, y, cov) in pixels {
            let (x, y) = trans.transform(x, y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && y >= 0 && (x as u32) < bw && (y as u32) < bh {
                let c = BackendColor {
                    alpha: colour.alpha * cov as f64,
                    rgb: colour.rgb,
                };
                self.inner.draw_pixel((x, y), c)?;
            }
        }
        Ok(())
    }
}

impl<B: DrawingBackend> DrawingBackend for Typeset<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }
    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        if self.raster {
            self.rasterize(text, style, pos)
        } else {
            self.inner.draw_text(text, style, pos)
        }
    }
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let size = style.size();
        Ok((width(text, size).ceil() as u32, (size / SIZE_PER_EM).ceil() as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_font_loads_and_measures() {
        assert!(font().is_some());
        let w = width("bytes in flight", 14.0 * 1.24);
        assert!(w > 80.0 && w < 130.0, "{w}");
        assert!(width("WWW", 14.0) > width("iii", 14.0));
    }
}
