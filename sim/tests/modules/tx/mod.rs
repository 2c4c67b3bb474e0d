mod engine;
mod rings;
