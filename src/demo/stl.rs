//! The demo's STL stage: trend magnitudes of every pixel from `programs/stl.og` (`auto_fill`:
//! the cycle-subseries that are cloudy in every year are filled from the nearest observations
//! around them, docs/stl.md), how many pixels STL decomposes with and without that filling, and
//! the plot of one pixel's decomposition.
//!
//! Relies on the scene's stack being `[pixels][dates]` with [`scene::PER_YEAR`] dates a year,
//! the period STL is given, and on the program returning NaN trend magnitudes exactly for the
//! series it cannot decompose.

use super::scene::{self, Scene};
use super::{floats, load, picture, run as run_entry, scalar_i64};
use crate::Backend;
use ogham_runtime::value::{Array, Scalar, Value};

/// What the demo keeps of STL.
pub(super) struct StlResults {
    /// Trend magnitude per pixel (NaN where STL cannot decompose the pixel).
    pub trend_magnitude: Vec<f64>,
    /// Pixels whose every cycle-subseries has an observation: those STL decomposes without
    /// the filling (spec §5).
    pub observed_subseries: usize,
    /// The plotted pixel's decomposition: (pixel, seasonal, trend, remainder).
    pub pixel: (usize, Vec<f64>, Vec<f64>, Vec<f64>),
}

/// The pixel whose STL decomposition is plotted: the first greening forest pixel.
fn plot_pixel(scene: &Scene) -> usize {
    (0..scene.size * scene.size)
        .find(|&p| scene.trend[p] > 0.0)
        .unwrap_or(0)
}

/// The number of pixels whose every position in the year (cycle-subseries) is observed in at
/// least one year.
fn fully_observed(scene: &Scene) -> usize {
    let t = scene.dates.len();
    let period = scene::PER_YEAR;
    (0..scene.size * scene.size)
        .filter(|&p| {
            let row = &scene.ndmi[p * t..(p + 1) * t];
            (0..period).all(|phase| row.iter().skip(phase).step_by(period).any(|v| !v.is_nan()))
        })
        .count()
}

/// STL of every pixel (period one year, seasonal window 7, the spec's defaults otherwise),
/// unobserved cycle-subseries filled.
pub(super) fn run(scene: &Scene, backend: Backend) -> Result<StlResults, String> {
    let fe = load("stl.og")?;
    let px = scene.size * scene.size;
    let t = scene.dates.len();
    let stack = Array::from_f32(vec![px, t], scene.ndmi.clone()).ok_or("internal error: shape")?;
    let out = run_entry(
        &fe,
        backend,
        "auto_fill",
        vec![
            Value::Array(stack),
            scalar_i64(scene::PER_YEAR as i64),
            scalar_i64(7),
            Value::Scalar(Scalar::Bool(false)),
        ],
    )?;
    let p = plot_pixel(scene);
    let row =
        |v: &Value| -> Result<Vec<f64>, String> { Ok(floats(v)?[p * t..(p + 1) * t].to_vec()) };
    Ok(StlResults {
        trend_magnitude: floats(&out[4])?,
        observed_subseries: fully_observed(scene),
        pixel: (p, row(&out[0])?, row(&out[1])?, row(&out[2])?),
    })
}

/// The STL decomposition of one pixel: observations, seasonal, trend, remainder.
pub(super) fn plot(scene: &Scene, pixel: &(usize, Vec<f64>, Vec<f64>, Vec<f64>)) -> String {
    let (p, seasonal, trend, remainder) = pixel;
    let t = scene.dates.len();
    let line = |values: &[f64]| -> Vec<(f64, f64)> {
        scene
            .dates
            .iter()
            .copied()
            .zip(values.iter().copied())
            .collect()
    };
    let observed: Vec<(f64, f64)> = (0..t)
        .filter(|&i| !scene.ndmi[p * t + i].is_nan())
        .map(|i| (scene.dates[i], scene.ndmi[p * t + i] as f64))
        .collect();
    let panel = |title: &str, series: picture::Series| picture::Panel {
        title: title.to_string(),
        series: vec![series],
        markers: Vec::new(),
    };
    let series = |label: &str, colour: &'static str, points, dots| picture::Series {
        label: label.to_string(),
        colour,
        points,
        dots,
    };
    picture::svg_figure(
        &[
            panel(
                &format!(
                    "STL of pixel (row {}, column {}): observations",
                    p / scene.size,
                    p % scene.size
                ),
                series("NDMI", "#1b7837", observed, true),
            ),
            panel(
                "seasonal",
                series("seasonal", "#2166ac", line(seasonal), false),
            ),
            panel("trend", series("trend", "#b2182b", line(trend), false)),
            panel(
                "remainder",
                series("remainder", "#555", line(remainder), true),
            ),
        ],
        900.0,
        90.0,
    )
}
