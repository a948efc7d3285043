-- join_covariate: the registered rows _chi with their covariate, the first of the LEFT JOINs on
-- the covariate's per-key averages (cov) that matches ({cov}, {values}, {joins}: built in
-- resolve.py from names quoted by sqlfiles.ident). Rows keep _chi's order (its _row column).
WITH cov AS ({cov})
SELECT s.* EXCLUDE (_row), coalesce({values}) AS covariate FROM _chi s {joins} ORDER BY s._row
