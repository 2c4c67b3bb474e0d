mod multi_stream;
mod packet_gen;
mod rx_packer;
mod tx_feeder;
