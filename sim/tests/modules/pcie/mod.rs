mod credit_gate;
mod read;
mod target;
mod tx_arbiter;
mod write_tlp;
