-- reads: res_probe_curve
-- The latest probe result version's curves: accuracy by gold position per task, size,
-- variant, prompt form and backbone, the closed-book and oracle baselines as rows of
-- their own (setting closed_book | oracle, no position), each with n and a 95% interval.
CREATE OR REPLACE VIEW probe_curve AS
SELECT c.* EXCLUDE (version)
FROM res_probe_curve AS c
WHERE c.version = (SELECT max(version) FROM res_probe_versions);
