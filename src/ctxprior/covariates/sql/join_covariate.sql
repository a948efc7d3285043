-- join_covariate: the registered rows _chi with their covariate, the first of the LEFT JOINs on
-- the covariate's per-key averages (cov) that matches ({cov}, {values}, {joins}: built in
-- resolve.py from names quoted by sqlfiles.ident).
WITH cov AS ({cov}) SELECT s.*, coalesce({values}) AS covariate FROM _chi s {joins}
