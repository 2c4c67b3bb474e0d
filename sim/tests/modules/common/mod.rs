mod async_fifo;
mod skid_buffer;
mod sync_fifo;
mod time_sync;
