-- reads:
-- Pairwise win-rate (docs/design.md §8): per method pair and length, the share of checklist
-- verdicts (both presentation orders) that A won, B won, or tied.
CREATE OR REPLACE VIEW winrate AS
SELECT
    method_a,
    method_b,
    target_words,
    judge,
    count(*) AS verdicts,
    round(100.0 * avg(CASE winner WHEN 'a' THEN 1.0 ELSE 0.0 END), 2) AS a_wins_pct,
    round(100.0 * avg(CASE winner WHEN 'tie' THEN 1.0 ELSE 0.0 END), 2) AS ties_pct,
    round(100.0 * avg(CASE winner WHEN 'b' THEN 1.0 ELSE 0.0 END), 2) AS b_wins_pct,
    count(DISTINCT sample_id) AS samples
FROM fct_winrate
GROUP BY ALL
ORDER BY method_a, method_b, target_words;
