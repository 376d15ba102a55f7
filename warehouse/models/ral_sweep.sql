-- reads: default_result_version
-- RAL-Writer at each setting of a (position bias exponent), b (its weight) and k (chunks
-- restated), latest result version, papers in the sample's own order: S_c and its single
-- and cross halves (x100), for the paper's Figure 6a (a x b at k = 12) and 6b (k at
-- a = 10, b = 0.2). `lilo reproduce ral-writer` runs both sweeps.
CREATE OR REPLACE VIEW ral_sweep AS
WITH latest AS (
    SELECT default_result_version(NULL) AS version
)
SELECT
    s.variant,
    CAST(g.method_args->>'a' AS DOUBLE) AS a,
    CAST(g.method_args->>'b' AS DOUBLE) AS b,
    CAST(g.method_args->>'k' AS INTEGER) AS k,
    s.target_words,
    s.backbone,
    round(avg(s.value) FILTER (WHERE s.score = 'consistency'), 2) AS s_c,
    round(avg(s.value) FILTER (WHERE s.score = 'consistency_single'), 2) AS s_single,
    round(avg(s.value) FILTER (WHERE s.score = 'consistency_cross'), 2) AS s_cross,
    count(DISTINCT s.sample_id) AS n
FROM res_scores AS s
JOIN latest USING (version)
JOIN fct_generations AS g USING (generation_id)
WHERE s.method = 'ral_writer' AND coalesce(s.rotation, 0) = 0
GROUP BY ALL
ORDER BY a, b, k, s.target_words;
