//! The receive-path benchmark in its short form: it runs, its rows hold the figures the README
//! claims for the sizes it covers (simulated cycles, so deterministic), and both plots are written.

use nanet_sim::bench_rx;

#[test]
fn the_quick_receive_benchmark_meets_its_targets_and_plots() {
    let r = bench_rx::run(true, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    assert!(!r.latency.is_empty() && !r.bandwidth.is_empty());
    for l in &r.latency {
        assert!(l.overhead_ns < 100.0, "{l:?}");
        if l.payload_bytes <= 1024 {
            assert!(l.event_latency_ns < 1000.0, "{l:?}");
        }
    }
    for b in r.bandwidth.iter().filter(|b| b.ports == 1) {
        assert!(b.line_rate_fraction > 0.999, "{b:?}");
        assert_eq!(b.fifo_full_drops + b.no_buffer_drops, 0, "{b:?}");
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let lat = dir.path().join("rx_latency.svg");
    let bw = dir.path().join("rx_bandwidth.svg");
    bench_rx::plot_latency(&r.latency, &lat).unwrap_or_else(|e| panic!("{e}"));
    bench_rx::plot_bandwidth(&r.bandwidth, &bw).unwrap_or_else(|e| panic!("{e}"));
    for p in [lat, bw] {
        let svg = std::fs::read_to_string(&p).expect("the plot was written");
        assert!(
            svg.starts_with("<svg") && svg.contains("<polyline"),
            "{}",
            p.display()
        );
    }
}
