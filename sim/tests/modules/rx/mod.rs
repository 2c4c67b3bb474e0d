mod arbiter;
mod dma_writer;
mod event_queue;
mod tlb;
mod write_mux;
