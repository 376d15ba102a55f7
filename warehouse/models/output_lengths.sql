-- reads: default_result_version
-- Words written per summary, per method variant and required length, latest result version
-- (papers in the sample's own order): mean, standard deviation, n. The paper's Figure 7a
-- shows Single's.
CREATE OR REPLACE VIEW output_lengths AS
WITH latest AS (
    SELECT default_result_version(NULL) AS version
),
generations AS (
    SELECT DISTINCT generation_id, variant, target_words, backbone
    FROM res_scores
    JOIN latest USING (version)
    WHERE coalesce(rotation, 0) = 0
)
SELECT
    s.variant,
    s.target_words,
    s.backbone,
    round(avg(g.words), 1) AS words,
    round(coalesce(stddev_samp(g.words), 0), 1) AS words_std,
    count(*) AS n
FROM generations AS s
JOIN fct_generations AS g USING (generation_id)
GROUP BY ALL
ORDER BY s.variant, s.target_words;
