-- reads: default_result_version
-- The judge's own spread (`--judge-repeats N`), latest result version: per cell and judged
-- score, the standard deviation of a generation's score over the judge's answers (the
-- scored one and its repeats), averaged over the cell's generations; beside it the
-- spread of the cell's scores over samples, for judge noise against sample noise.
CREATE OR REPLACE VIEW judge_spread AS
WITH latest AS (
    SELECT default_result_version(NULL) AS version
),
scored AS (
    SELECT generation_id, variant, target_words, backbone, score, value
    FROM res_scores
    JOIN latest USING (version)
    WHERE score IN ('consistency', 'quality') AND coalesce(rotation, 0) = 0
),
answers AS (
    SELECT generation_id, score, value FROM scored
    UNION ALL
    SELECT r.generation_id, r.score, r.value
    FROM fct_judge_repeats AS r
    WHERE r.generation_id IN (SELECT generation_id FROM scored)
),
per_generation AS (
    SELECT generation_id, score, count(*) AS answers, stddev_samp(value) AS spread
    FROM answers
    GROUP BY ALL
    HAVING count(*) > 1
)
SELECT
    s.variant,
    s.target_words,
    s.backbone,
    s.score,
    min(p.answers) AS answers,
    round(avg(p.spread), 2) AS judge_spread,
    round(stddev_samp(s.value), 2) AS sample_spread,
    count(*) AS n
FROM scored AS s
JOIN per_generation AS p USING (generation_id, score)
GROUP BY ALL
ORDER BY s.variant, s.target_words, s.score;
