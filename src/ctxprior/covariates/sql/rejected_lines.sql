-- The lines the last statement could not read as text, from DuckDB's reject tables
-- (triples.TripleFiles.rejected): file, line number, error type.
SELECT s.file_path, e.line, e.error_type
FROM reject_errors e JOIN reject_scans s USING (scan_id, file_id)
ORDER BY 1, 2
