-- The default result version: the latest complete version, or a later partial one published
-- on purpose (`publish_partial`); while no version is either, the latest one. Among the
-- versions of dataset version `dataset`, or of all when it is NULL.
CREATE OR REPLACE MACRO default_result_version(dataset) AS (
    SELECT coalesce(max(version) FILTER (WHERE published), max(version))
    FROM res_versions
    WHERE dataset IS NULL OR dataset_version = dataset
);

-- One result version's leaderboard rows, in the order every listing shows them.
CREATE OR REPLACE MACRO leaderboard_of(result_version) AS TABLE
SELECT *
FROM res_leaderboard
WHERE version = result_version
ORDER BY method_rank(method), method, variant, target_words;

-- The default result version's leaderboard: what analysts usually want. `partial` rows
-- average fewer summaries than were expected (see `failures` for why); `dataset_version`
-- names the data they were scored on.
CREATE OR REPLACE VIEW leaderboard AS
SELECT * EXCLUDE (version) FROM leaderboard_of(default_result_version(NULL));
