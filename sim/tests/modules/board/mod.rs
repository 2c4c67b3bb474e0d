mod glue;
mod si570;
