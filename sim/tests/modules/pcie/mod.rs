mod config_sampler;
mod credit_gate;
mod read;
mod rx_demux;
mod target;
mod tlp_merge;
mod tx_arbiter;
mod write_tlp;
