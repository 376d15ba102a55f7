-- reads: default_result_version
-- Every generation or score that failed, with its reason: what `partial` leaderboard cells
-- are missing. Generations that failed, scoring and win-rate quarantine rows, and the samples
-- the default result version expected that wait for review (every method and length).
CREATE OR REPLACE VIEW failures AS
SELECT 'generate' AS stage, g.generation_id AS item_id, g.sample_id,
       coalesce(g.variant, g.method) AS method, g.target_words, g.error AS reason
FROM fct_generations AS g
WHERE g.error <> ''
UNION ALL
SELECT q.stage, q.item_id, g.sample_id, coalesce(g.variant, g.method), g.target_words,
       q.reason || ': ' || coalesce(q.detail, '')
FROM quarantine AS q
LEFT JOIN fct_generations AS g ON g.generation_id = q.item_id
WHERE q.stage IN ('score', 'winrate')
UNION ALL
SELECT 'review', w.sample_id, w.sample_id, NULL, NULL, w.reason
FROM res_waiting AS w
WHERE w.version = default_result_version(NULL)
ORDER BY stage, method, target_words, item_id;
