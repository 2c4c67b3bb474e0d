//! System tests: the assembled offload core and the receive path into host memory, against real
//! peers, a host model and hostile traffic; the receive benchmark in its short form.

mod bench_rx;
mod capture;
mod card;
mod core;
mod differential;
mod line_rate;
mod peer;
mod replay;
mod rx_engine;
mod rx_path;
