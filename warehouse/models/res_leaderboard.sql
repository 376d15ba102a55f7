-- Every result version in the shape of the paper's Table 2: method x target length,
-- with S_l, S_c, S_q (x100, means over samples).
CREATE OR REPLACE VIEW res_leaderboard AS
WITH scores AS (
    SELECT version, method, target_words, backbone, generation_id, score, value
    FROM res_scores
    WHERE score IN ('length', 'consistency', 'quality')
),
per_method AS (
    SELECT
        version,
        method,
        target_words,
        backbone,
        count(DISTINCT generation_id) AS generations,
        avg(value) FILTER (WHERE score = 'length') AS s_l,
        avg(value) FILTER (WHERE score = 'consistency') AS s_c,
        avg(value) FILTER (WHERE score = 'quality') AS s_q
    FROM scores
    GROUP BY ALL
)
SELECT
    version,
    method,
    target_words,
    backbone,
    generations,
    round(s_l, 2) AS s_l,
    round(s_c, 2) AS s_c,
    round(s_q, 2) AS s_q
FROM per_method
ORDER BY version, method, target_words;
