mod packet_buffer;
mod rx_parser;
mod tx_arbiter;
mod udp_tx;
