-- The entity classes of relation $1 with their fractions, most common first (fakes.plan).
SELECT class_name, fraction FROM relation_class
WHERE relation_id = ? AND role = 'entity' AND fraction > 0
ORDER BY fraction DESC, class_name
