-- The user table's keys as text with their file order (rid), as temp table _cov_keys
-- (user._match_keys). {keys}: CAST(<quoted key> AS VARCHAR) AS k_<key>, one per key.
CREATE OR REPLACE TEMP TABLE _cov_keys AS
SELECT row_number() OVER () AS rid, {keys} FROM _cov_user
