-- Every result version in the shape of the paper's Table 2: method (variant) x target
-- length, with S_l, S_c, S_q (x100, means over the scored samples in the sample's own paper
-- order), the judge behind S_c/S_q, and how many of the expected summaries were scored:
-- a failed or unscored summary is a result, shown as `scored` below `expected`.
CREATE OR REPLACE VIEW res_leaderboard AS
WITH scores AS (
    SELECT version, method, variant, target_words, backbone, generation_id, score, value, judge
    FROM res_scores
    WHERE score IN ('length', 'consistency', 'quality') AND coalesce(rotation, 0) = 0
),
per_method AS (
    SELECT
        version,
        method,
        coalesce(variant, method) AS variant,
        target_words,
        backbone,
        string_agg(DISTINCT judge, ', ') AS judge,
        avg(value) FILTER (WHERE score = 'length') AS s_l,
        avg(value) FILTER (WHERE score = 'consistency') AS s_c,
        avg(value) FILTER (WHERE score = 'quality') AS s_q
    FROM scores
    GROUP BY ALL
)
SELECT
    c.version,
    c.method,
    c.variant,
    c.target_words,
    c.backbone,
    p.judge,
    c.n_scored AS scored,
    c.n_expected AS expected,
    c.n_failed AS failed,
    c.n_scored < c.n_expected AS partial,
    round(p.s_l, 2) AS s_l,
    round(p.s_c, 2) AS s_c,
    round(p.s_q, 2) AS s_q
FROM res_cells AS c
LEFT JOIN per_method AS p USING (version, method, variant, target_words, backbone)
ORDER BY c.version, c.method, c.variant, c.target_words;
