-- reads: default_result_version, method_rank, res_leaderboard
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
