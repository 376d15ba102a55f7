-- The default result version's leaderboard: what analysts usually want. That is the latest
-- complete version, or a later partial one published on purpose (`publish_partial`); while
-- no version is either, the latest one. `partial` rows average fewer summaries than were
-- expected (see `failures` for why).
CREATE OR REPLACE VIEW leaderboard AS
WITH latest AS (
    SELECT coalesce(max(version) FILTER (WHERE published), max(version)) AS version
    FROM res_versions
)
SELECT lb.* EXCLUDE (version)
FROM res_leaderboard AS lb
JOIN latest USING (version)
ORDER BY
    CASE method
        WHEN 'single' THEN 1 WHEN 'agentwrite' THEN 2 WHEN 'compress' THEN 3
        WHEN 'ral_writer' THEN 4 ELSE 5
    END,
    method,
    variant,
    target_words;
