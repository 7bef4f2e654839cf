//! The demo's report: `report.html` (maps with legends, plots, accuracy and timing tables) and
//! `report.md` (the same numbers as Markdown).

use super::picture::{CATEGORIES, DIVERGING, SEQUENTIAL, escape};
use super::scene::{CLASSES, Scene};
use super::{MAGNITUDE_RANGE, Options, PS_THRESHOLD, Summary, TREND_RANGE};
use std::fmt::Write as _;

/// The accuracy table: (what, value, unit).
pub fn accuracy_rows(summary: &Summary) -> Vec<(&'static str, String)> {
    let a = &summary.accuracy;
    vec![
        (
            "clear-cut detection precision (BFAST-Monitor)",
            format!("{:.3}", a.break_precision),
        ),
        (
            "clear-cut detection recall (BFAST-Monitor)",
            format!("{:.3}", a.break_recall),
        ),
        (
            "median break-date error (days)",
            format!("{:.1}", a.break_date_error_days),
        ),
        (
            "land-cover overall accuracy (TWDTW)",
            format!("{:.3}", a.landcover_accuracy),
        ),
        (
            "pixels decomposed (STL)",
            format!("{:.3}", a.stl_decomposed),
        ),
        (
            "pixels decomposed without gap filling (STL)",
            format!("{:.3}", a.stl_decomposed_unfilled),
        ),
        (
            "greening/browning trends found (STL)",
            format!("{:.3}", a.trend_agreement),
        ),
        (
            "persistent-scatterer precision (PtSel)",
            format!("{:.3}", a.ps_precision),
        ),
        (
            "persistent-scatterer recall (PtSel)",
            format!("{:.3}", a.ps_recall),
        ),
    ]
}

/// The timing table: (stage, seconds, items per second).
pub fn timing_rows(summary: &Summary) -> Vec<(String, String, String)> {
    summary
        .timings
        .iter()
        .map(|t| {
            let rate = match t.items {
                Some(n) if t.seconds > 0.0 => format!("{:.0}", n as f64 / t.seconds),
                _ => "-".to_string(),
            };
            (t.stage.clone(), format!("{:.2}", t.seconds), rate)
        })
        .collect()
}

fn legend_bar(gradient: &str, lo: &str, hi: &str, note: &str) -> String {
    format!(
        r#"<div class="legend"><span>{lo}</span><span class="bar" style="background:{gradient}"></span><span>{hi}</span> <small>{note}</small></div>"#
    )
}

fn swatches() -> String {
    let mut out = String::from(r#"<div class="legend">"#);
    for (name, [r, g, b]) in CLASSES.iter().zip(CATEGORIES) {
        let _ = write!(
            out,
            r#"<span class="swatch" style="background:rgb({r},{g},{b})"></span>{} "#,
            escape(name)
        );
    }
    out.push_str(r#"<span class="swatch" style="background:#000"></span>no match</div>"#);
    out
}

/// The report's figures: file, caption and legend of each map (`monitor`: the monitoring
/// period, the range of the date colours).
fn figures(monitor: (f64, f64)) -> [(&'static str, &'static str, String); 8] {
    let dates = legend_bar(
        &SEQUENTIAL.css_gradient(),
        &format!("{:.1}", monitor.0),
        &format!("{:.1}", monitor.1),
        "clear-cut date; pale blue: other break, light grey: none, dark grey: too few observations",
    );
    [
        ("truth_clearcuts.png", "True clear-cut dates", dates.clone()),
        (
            "bfast_break_date.png",
            "BFAST-Monitor: detected break dates",
            dates,
        ),
        (
            "bfast_magnitude.png",
            "BFAST-Monitor: break magnitude (median monitoring residual)",
            legend_bar(
                &DIVERGING.css_gradient(),
                &format!("-{MAGNITUDE_RANGE}"),
                &format!("{MAGNITUDE_RANGE}"),
                "NDMI",
            ),
        ),
        ("truth_landcover.png", "True land cover", swatches()),
        (
            "twdtw_landcover.png",
            "TWDTW: nearest pattern over the last two years",
            swatches(),
        ),
        (
            "stl_trend.png",
            "STL: trend magnitude (change of the trend over the period)",
            legend_bar(
                &DIVERGING.css_gradient(),
                &format!("-{TREND_RANGE}"),
                &format!("{TREND_RANGE}"),
                "NDMI; discs: greening (left), browning (right); grey: a date of the year \
                 cloudy in every year, no decomposition",
            ),
        ),
        (
            "truth_ps.png",
            "True persistent scatterers (white)",
            String::new(),
        ),
        (
            "ptsel_rank.png",
            "PtSel: rank (arc temporal coherence)",
            legend_bar(
                &SEQUENTIAL.css_gradient(),
                "0",
                "1",
                &format!("selected: rank ≥ {PS_THRESHOLD}"),
            ),
        ),
    ]
}

pub fn write(scene: &Scene, options: &Options, summary: &Summary) -> Result<(), String> {
    let monitor = (
        scene.dates[scene.history],
        scene.dates[scene.dates.len() - 1],
    );
    let missing = scene.ndmi.iter().filter(|x| x.is_nan()).count() as f64 / scene.ndmi.len() as f64;
    let setting = format!(
        "{0}×{0} pixels, {1} years at 16-day steps ({2} dates, {3:.0} % cloudy), monitoring from {4:.2}; \
         interferograms {5}×{5}, K = {6}; backend `{7}`, seed {8}",
        scene.size,
        scene.years,
        scene.dates.len(),
        100.0 * missing,
        monitor.0,
        scene.insar.rows,
        scene.insar.k,
        options.backend.name(),
        options.seed
    );
    let maps = figures(monitor);
    let mut html = String::new();
    let _ = writeln!(
        html,
        r#"<!doctype html><html><head><meta charset="utf-8"><title>Ogham demo</title><style>
body {{ font-family: sans-serif; max-width: 1100px; margin: 2em auto; }}
figure {{ display: inline-block; margin: 0 1em 1.5em 0; vertical-align: top; }}
figure img {{ width: 256px; image-rendering: pixelated; border: 1px solid #ccc; }}
.legend {{ font-size: 12px; }} .bar {{ display: inline-block; width: 140px; height: 10px; margin: 0 4px; }}
.swatch {{ display: inline-block; width: 10px; height: 10px; margin: 0 2px 0 6px; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: 3px 8px; text-align: right; }}
td:first-child, th:first-child {{ text-align: left; }}
</style></head><body><h1>Ogham demo: change detection on a generated scene</h1><p>{}</p>"#,
        escape(&setting)
    );
    for (file, title, legend) in &maps {
        let _ = writeln!(
            html,
            r#"<figure><img src="{file}" alt="{t}"><figcaption>{t}<br>{legend}</figcaption></figure>"#,
            t = escape(title)
        );
    }
    let _ = writeln!(
        html,
        r#"<h2>Pixels</h2><img src="pixels.svg" alt="pixel time series"><img src="stl.svg" alt="STL decomposition"><h2>Accuracy against the truth</h2><table>"#
    );
    let mut md = format!(
        "# Ogham demo\n\n{setting}\n\n![overview](overview.png)\n\nLeft to right: true clear-cut \
         dates, BFAST-Monitor clear-cuts, TWDTW land cover, STL trend magnitudes, PtSel ranks. Details: `report.html`.\n\n\
         | accuracy | value |\n|---|---:|\n"
    );
    for (what, value) in accuracy_rows(summary) {
        let _ = writeln!(html, "<tr><td>{}</td><td>{value}</td></tr>", escape(what));
        let _ = writeln!(md, "| {what} | {value} |");
    }
    let _ = writeln!(
        html,
        "</table><h2>Timing</h2><table><tr><th>stage</th><th>seconds</th><th>pixels/s</th></tr>"
    );
    md.push_str("\n| stage | seconds | pixels/s |\n|---|---:|---:|\n");
    for (stage, secs, rate) in timing_rows(summary) {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{secs}</td><td>{rate}</td></tr>",
            escape(&stage)
        );
        let _ = writeln!(md, "| {stage} | {secs} | {rate} |");
    }
    html.push_str("</table></body></html>\n");
    for (name, text) in [("report.html", html), ("report.md", md)] {
        std::fs::write(options.out.join(name), text)
            .map_err(|e| format!("cannot write {name}: {e}"))?;
    }
    Ok(())
}
