-- The first fake generation of relation $1 from the file with sha256 $2 (a rerun is a no-op).
SELECT generation_id FROM fake_generation WHERE relation_id = ? AND source_sha256 = ?
ORDER BY generation_id LIMIT 1
