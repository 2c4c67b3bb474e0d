//! Line rate and latency, counted in cycles (deterministic, so a test; the figures themselves are
//! reported by `make bench`).

use nanet_sim::benchmark::offload::{
    rx_rate, tx_rate, HEADER_ARRIVAL_CYCLES, PAYLOAD_SIZES, TX_TAKEN_TO_SOP_CYCLES,
};

#[test]
fn receive_and_transmit_keep_up_with_back_to_back_frames() {
    for p in PAYLOAD_SIZES {
        for row in [rx_rate(p, 12), tx_rate(p, 12)] {
            assert_eq!(row.drops, 0, "{row:?}");
            assert_eq!(row.stall_cycles, 0, "{row:?}");
            assert!(row.line_rate_fraction >= 0.999, "{row:?}");
            assert_eq!(
                row.latency_cycles_min, row.latency_cycles_max,
                "latency must be deterministic: {row:?}"
            );
        }
        let tx = tx_rate(p, 4);
        // The card's time-of-flight benchmark checks its transmit stamps with this.
        assert_eq!(
            tx.taken_to_sop_cycles,
            (TX_TAKEN_TO_SOP_CYCLES, TX_TAKEN_TO_SOP_CYCLES),
            "{tx:?}"
        );
        let rx = rx_rate(p, 4);
        assert!(rx.latency_cycles_max <= HEADER_ARRIVAL_CYCLES + 8, "{rx:?}");
    }
}
