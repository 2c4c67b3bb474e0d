mod async_fifo;
mod sync_fifo;
