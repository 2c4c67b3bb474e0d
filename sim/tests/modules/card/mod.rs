mod board_glue;
