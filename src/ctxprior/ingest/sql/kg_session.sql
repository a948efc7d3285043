-- build-dataset: settings of the temporary database (kg_build._read), after its temp_directory.
-- Insertion order is kept in pass 1: line numbers = row_number() in file order.
SET enable_progress_bar = true;
SET enable_progress_bar_print = false;
SET preserve_insertion_order = true;
