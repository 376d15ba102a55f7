-- reads: method_rank, res_leaderboard_scores
-- Every result version in the shape of the paper's Table 2: method (variant) x target
-- length, the judge behind the judged scores, how many of the expected summaries were
-- scored (a failed or unscored summary is a result, shown as `scored` below `expected`),
-- then for each leaderboard score (the scorers registered with a label, tasks/scoring/, in
-- their order: s_l, s_c, s_q, ...) its mean (x100) with `_low`/`_high`, and then each one's
-- `overall_` with its interval (as `res_leaderboard_scores` defines them), and the cost per
-- summary (NULL when a summary's model had no price). The rows are the
-- version's scope, what its run asked for. The score columns are written in where the
-- SELECT names score_columns, by warehouse/db.py (`model_statements`), from the scorers.
CREATE OR REPLACE VIEW res_leaderboard AS
WITH judges AS (
    SELECT
        version, method, coalesce(variant, method) AS variant, target_words, backbone,
        string_agg(DISTINCT judge, ', ') AS judge
    FROM res_scores
    WHERE coalesce(rotation, 0) = 0
    GROUP BY ALL
),
costs AS (
    SELECT
        version, method, coalesce(variant, method) AS variant, target_words, backbone,
        CASE WHEN count(cost) = count(*) THEN avg(cost) END AS cost_per_summary
    FROM (SELECT DISTINCT version, generation_id, method, variant, target_words, backbone, cost
          FROM res_scores WHERE coalesce(rotation, 0) = 0)
    GROUP BY ALL
),
scores AS (
    SELECT
        version, method, variant, target_words, backbone,
        {score_columns}
    FROM res_leaderboard_scores AS s
    GROUP BY ALL
)
SELECT
    c.version,
    v.dataset_version,
    c.method,
    c.variant,
    c.target_words,
    c.backbone,
    j.judge,
    c.n_scored AS scored,
    c.n_expected AS expected,
    c.n_failed AS failed,
    c.n_scored < c.n_expected AS partial,
    s.* EXCLUDE (version, method, variant, target_words, backbone),
    k.cost_per_summary
FROM res_cells AS c
JOIN res_versions AS v USING (version)
LEFT JOIN judges AS j USING (version, method, variant, target_words, backbone)
LEFT JOIN costs AS k USING (version, method, variant, target_words, backbone)
LEFT JOIN scores AS s USING (version, method, variant, target_words, backbone)
ORDER BY c.version, method_rank(c.method), c.method, c.variant, c.target_words;
