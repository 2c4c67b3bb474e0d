mod dma_writer;
mod event_arbiter;
mod event_queue;
mod tlb;
mod write_arbiter;
mod write_mux;
