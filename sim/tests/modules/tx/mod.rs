mod engine;
