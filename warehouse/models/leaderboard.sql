-- The default result version's leaderboard: what analysts usually want. That is the latest
-- complete version, or a later partial one published on purpose (`publish_partial`); while
-- no version is either, the latest one. `partial` rows average fewer summaries than were
-- expected (see `failures` for why); `dataset_version` names the data they were scored on.
CREATE OR REPLACE VIEW leaderboard AS
WITH latest AS (
    SELECT coalesce(max(version) FILTER (WHERE published), max(version)) AS version
    FROM res_versions
)
SELECT lb.* EXCLUDE (version)
FROM res_leaderboard AS lb
JOIN latest USING (version)
LEFT JOIN method_order AS o USING (method)
ORDER BY coalesce(o.rank, 5), lb.method, lb.variant, lb.target_words;
