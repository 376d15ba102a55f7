-- Every generation or score that failed, with its reason: what `partial` leaderboard cells
-- are missing. Generations that failed, then scoring and win-rate quarantine rows.
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
ORDER BY stage, method, target_words, item_id;
