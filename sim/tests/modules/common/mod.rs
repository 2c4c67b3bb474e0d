mod async_fifo;
mod round_robin;
mod skid_buffer;
mod stream_skid;
mod sync_fifo;
mod time_sync;
