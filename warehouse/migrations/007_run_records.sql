-- Run records that never lie: the process behind a `running` row, so that the
-- next start can tell a live run from a killed one and mark the latter `crashed`.
ALTER TABLE runs ADD COLUMN pid INTEGER;
ALTER TABLE runs ADD COLUMN host VARCHAR;

-- A result version may be the default `leaderboard` when it is complete, or when its run
-- was told to publish partial results (`publish_partial`); any version stays queryable in
-- `res_leaderboard`.
ALTER TABLE res_versions ADD COLUMN published BOOLEAN DEFAULT true;
UPDATE res_versions SET published = NOT coalesce(partial, false);
