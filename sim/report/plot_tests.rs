//! Chart tests: every kind renders to valid PNG and SVG (a gallery, saved with
//! `GPUMEMSIM_PLOT_GALLERY=DIR cargo test --lib report::plot`), data errors, axis captions, legends
//! that never leave the canvas, all-zero charts, log-scaled bars.

use super::*;

#[test]
fn mismatched_bar_lengths_are_a_data_error() {
    let c = Chart::bars(
        "b",
        Axis::linear("x", ""),
        Axis::linear("y", ""),
        vec!["a".into(), "b".into()],
        vec![BarSeries::new("s", vec![1.0])],
        BarLayout::Grouped,
    );
    assert!(matches!(c.to_svg(), Err(PlotError::Data { .. })));
}

#[test]
fn log_axis_without_positive_values_is_a_data_error() {
    let c = Chart::lines(
        "l",
        Axis::log("x", ""),
        Axis::log("y", ""),
        vec![Series::new("s", vec![(0.0, 1.0), (-1.0, 2.0)])],
    );
    let e = c.to_png().unwrap_err().to_string();
    assert!(e.contains("positive"), "{e}");
}

/// Every chart kind, as the sweep and compare commands use them.
pub(crate) fn gallery() -> Vec<(&'static str, Chart)> {
    let threads: Vec<f64> = (0..=16).map(|k| 2f64.powi(k)).collect();
    let curve = |k: f64, c: f64| -> Vec<(f64, f64)> {
        threads
            .iter()
            .map(|&t| (t, c + (t / k).max(1.0) * 4.0))
            .collect()
    };
    vec![
        (
            "lines_log",
            Chart::lines(
                "Atomic contention: cycles per atomic",
                Axis::log("contending threads", "threads"),
                Axis::log("cycles per atomic", "cycles"),
                vec![
                    Series::new("1 address", curve(1.0, 300.0)),
                    Series::new("32 addresses", curve(32.0, 300.0)),
                    Series::new("T addresses", curve(1e9, 300.0)).with_spread(
                        curve(1e9, 300.0)
                            .iter()
                            .map(|p| (p.1 * 0.9, p.1 * 1.1))
                            .collect(),
                    ),
                ],
            ),
        ),
        (
            "scatter_identity",
            Chart::scatter(
                "Simulated vs measured",
                Axis::log("measured", "ns"),
                Axis::log("simulated", "ns"),
                vec![
                    Series::new(
                        "contention",
                        vec![(100.0, 120.0), (1000.0, 900.0), (20000.0, 25000.0)],
                    ),
                    Series::new("histogram", vec![(300.0, 310.0), (5000.0, 4000.0)]),
                ],
                true,
            ),
        ),
        (
            "stacked",
            Chart::bars(
                "Load latency breakdown",
                Axis::linear("configuration", ""),
                Axis::linear("mean latency", "cycles"),
                vec![
                    "l2.slices=16".into(),
                    "l2.slices=32".into(),
                    "l2.slices=64".into(),
                ],
                vec![
                    BarSeries::new("L1", vec![20.0, 20.0, 20.0]),
                    BarSeries::new("interconnect", vec![40.0, 35.0, 30.0]),
                    BarSeries::new("L2", vec![150.0, 120.0, 100.0]),
                    BarSeries::new("DRAM", vec![300.0, 300.0, 290.0]),
                ],
                BarLayout::Stacked,
            ),
        ),
        (
            "outcomes",
            Chart::bars(
                "MP outcomes (1000 runs)",
                Axis::linear("outcome", ""),
                Axis::log("count", "runs"),
                (0..12)
                    .map(|i| format!("r0={} r1={} r2={}", i % 2, i / 2 % 2, i / 4))
                    .collect(),
                vec![
                    BarSeries::new(
                        "allowed",
                        (0..12)
                            .map(|i| if i == 1 { 0.0 } else { 100.0 + i as f64 })
                            .collect(),
                    ),
                    BarSeries::new(
                        "forbidden",
                        (0..12).map(|i| if i == 1 { 3.0 } else { 0.0 }).collect(),
                    ),
                ],
                BarLayout::Stacked,
            ),
        ),
        (
            "grouped",
            Chart::bars(
                "Throughput by slices",
                Axis::linear("L2 slices", "slices"),
                Axis::linear("throughput", "atomics/cycle"),
                vec!["16".into(), "32".into(), "64".into()],
                vec![
                    BarSeries::new("native", vec![1.0, 1.9, 3.5]),
                    BarSeries::new("CAS loop", vec![0.3, 0.5, 0.8]),
                ],
                BarLayout::Grouped,
            ),
        ),
        (
            "histogram",
            Chart::histogram(
                "Latency distribution",
                Axis::linear("latency", "cycles"),
                &(0..500)
                    .map(|i| 200.0 + ((i * 37) % 101) as f64 * (i % 7) as f64)
                    .collect::<Vec<_>>(),
                20,
            )
            .unwrap(),
        ),
        (
            "legend_below",
            Chart::lines(
                "Nine long legend entries go below the plot",
                Axis::log("L2 slices", "slices"),
                Axis::linear("throughput", "atomics per ns"),
                (0..9)
                    .map(|i| {
                        Series::new(
                            format!(
                                "histogram of 65536 values into 1024 bins, {} op/cycle",
                                i + 1
                            ),
                            vec![(25.0, 10.0 + i as f64), (400.0, 40.0 + 3.0 * i as f64)],
                        )
                    })
                    .collect(),
            ),
        ),
        (
            "all_zero",
            Chart::lines(
                "Backpressure",
                Axis::log("contending work-items T", "work-items"),
                Axis::linear("backpressure", "L2 cycles"),
                vec![
                    Series::new("1 address", vec![(1.0, 0.0), (1024.0, 0.0), (65536.0, 0.0)]),
                    Series::new("T addresses", vec![(1.0, 0.0), (65536.0, 0.0)]),
                ],
            ),
        ),
        (
            "log_bars",
            Chart::bars(
                "MP final states",
                Axis::linear("final state", ""),
                Axis::log("runs", ""),
                vec!["r0=0 r1=0".into(), "r0=1 r1=0 *".into(), "r0=1 r1=1".into()],
                vec![
                    BarSeries::new("other states", vec![12500.0, 0.0, 11800.0]),
                    BarSeries::new("witness", vec![0.0, 1050.0, 0.0]),
                ],
                BarLayout::Stacked,
            ),
        ),
    ]
}

#[test]
fn axis_captions_name_a_unit_once() {
    let cap = |l: &str, u: &str| Axis::linear(l, u).title();
    assert_eq!(cap("L2 slices", "slices"), "L2 slices");
    assert_eq!(
        cap("contending work-items T", "work-items"),
        "contending work-items T"
    );
    assert_eq!(
        cap("runs (3 seeds × 10000)", "runs"),
        "runs (3 seeds × 10000)"
    );
    assert_eq!(
        cap("time for T adds (kernel)", "core cycles"),
        "time for T adds (kernel) [core cycles]"
    );
    assert_eq!(cap("kernel time", "ns"), "kernel time (ns)");
    assert_eq!(
        cap("mean queueing", "L2 cycles"),
        "mean queueing (L2 cycles)"
    );
    assert_eq!(cap("count", ""), "count");
}

#[test]
fn legends_stay_on_the_canvas() {
    let g = gallery();
    let chart = |name: &str| g.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    // A short legend sits beside the plot on the requested canvas.
    let beside = chart("lines_log");
    assert_eq!(beside.rendered_size().unwrap(), beside.size);
    // Nine long entries go below, and the canvas grows to hold them, text uncut.
    let below = chart("legend_below");
    let (w, h) = below.rendered_size().unwrap();
    assert!(w == below.size.0 && h > below.size.1, "{w}x{h}");
    let svg = below.to_svg().unwrap();
    assert!(svg.contains("aria-label=\"histogram of 65536 values into 1024 bins, 9 op/cycle\""));
    // Width and height are the caller's to choose.
    let wide = below.clone().with_size(1600, 560);
    assert_eq!(wide.rendered_size().unwrap().0, 1600);
    assert!(
        Chart::lines("t", Axis::linear("x", ""), Axis::linear("y", ""), vec![])
            .with_size(100, 100)
            .to_svg()
            .unwrap_err()
            .to_string()
            .contains("too small")
    );
    // A canvas too big to allocate is an error, not an abort.
    assert!(below
        .clone()
        .with_size(100_000, 100_000)
        .to_png()
        .unwrap_err()
        .to_string()
        .contains("too large"));
}

#[test]
fn an_all_zero_chart_says_so() {
    let g = gallery();
    let zero = &g.iter().find(|(n, _)| *n == "all_zero").unwrap().1;
    let svg = zero.to_svg().unwrap();
    assert!(
        svg.contains("aria-label=\"Every value is 0 (5 points)\""),
        "{svg}"
    );
    // No negative ticks around the zero line.
    assert!(!svg.contains("aria-label=\"-"), "negative tick");
    let bars = Chart::bars(
        "b",
        Axis::linear("x", ""),
        Axis::log("y", ""),
        vec!["a".into(), "b".into()],
        vec![BarSeries::new("s", vec![0.0, 0.0])],
        BarLayout::Grouped,
    );
    assert!(bars.to_svg().unwrap().contains("Every value is 0 (2 bars)"));
}

#[test]
fn log_scaled_bars_start_a_decade_below_the_smallest_and_carry_their_values() {
    let g = gallery();
    let chart = &g.iter().find(|(n, _)| *n == "log_bars").unwrap().1;
    let plan = chart.plan().unwrap();
    assert!(
        plan.y.lo <= 1050.0 / 10.0 + 1e-9,
        "axis starts at {}",
        plan.y.lo
    );
    // The witness bar is at least a third of the plot's height.
    assert!(
        plan.y.fraction(1050.0) > 0.33,
        "{}",
        plan.y.fraction(1050.0)
    );
    let svg = chart.to_svg().unwrap();
    for v in ["12500", "1050", "11800"] {
        assert!(svg.contains(&format!("aria-label=\"{v}\"")), "{v}");
    }
}

#[test]
fn points_a_log_axis_cannot_show_are_counted_under_it() {
    let c = Chart::lines(
        "l",
        Axis::linear("x", ""),
        Axis::log("y", ""),
        vec![Series::new("s", vec![(1.0, 0.0), (2.0, 5.0), (3.0, 7.0)])],
    );
    assert!(c
        .to_svg()
        .unwrap()
        .contains("1 of 3 points with values ≤ 0 are not shown (log axis)"));
}

#[test]
fn every_chart_kind_renders_to_valid_png_and_svg() {
    let dir = std::env::var_os("GPUMEMSIM_PLOT_GALLERY").map(std::path::PathBuf::from);
    for (stem, chart) in gallery() {
        let png_bytes = chart.to_png().unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(&png_bytes[..]))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(
            (info.width, info.height),
            chart.rendered_size().unwrap(),
            "{stem}"
        );
        // Something besides the white background was drawn, text included.
        assert!(buf.iter().filter(|&&b| b < 128).count() > 2000, "{stem}");
        let svg_text = chart.to_svg().unwrap();
        let doc = roxmltree::Document::parse(&svg_text).unwrap();
        assert_eq!(doc.root_element().tag_name().name(), "svg", "{stem}");
        // Text is outlines, labelled: the title and both axis captions are there, no <text>.
        let labels: Vec<&str> = doc
            .descendants()
            .filter_map(|n| n.attribute("aria-label"))
            .collect();
        for want in [chart.title.as_str(), &chart.x.title(), &chart.y.title()] {
            assert!(labels.contains(&want), "{stem}: {want} not in {labels:?}");
        }
        assert!(!doc.descendants().any(|n| n.has_tag_name("text")), "{stem}");
        if let Some(d) = &dir {
            chart.save(d, stem).unwrap();
        }
    }
}
