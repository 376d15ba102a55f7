-- Every result version in the shape of the paper's Table 2: method (variant) x target
-- length, with S_l, S_c, S_q (x100, means over the scored samples in the sample's own paper
-- order), the judge behind S_c/S_q, and how many of the expected summaries were scored:
-- a failed or unscored summary is a result, shown as `scored` below `expected`.
-- `overall_s_*` is Table 2's Overall, the same on each of a method's rows: each score's
-- per-length means averaged over the lengths the version ran for it, each length weighing
-- the same; NULL when some length has no mean for that score.
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
),
cells AS (
    SELECT c.*, p.judge, p.s_l, p.s_c, p.s_q
    FROM res_cells AS c
    LEFT JOIN per_method AS p USING (version, method, variant, target_words, backbone)
)
SELECT
    c.version,
    v.dataset_version,
    c.method,
    c.variant,
    c.target_words,
    c.backbone,
    c.judge,
    c.n_scored AS scored,
    c.n_expected AS expected,
    c.n_failed AS failed,
    c.n_scored < c.n_expected AS partial,
    round(c.s_l, 2) AS s_l,
    round(c.s_c, 2) AS s_c,
    round(c.s_q, 2) AS s_q,
    round(CASE WHEN count(c.s_l) OVER lengths = count(*) OVER lengths
        THEN avg(c.s_l) OVER lengths END, 2) AS overall_s_l,
    round(CASE WHEN count(c.s_c) OVER lengths = count(*) OVER lengths
        THEN avg(c.s_c) OVER lengths END, 2) AS overall_s_c,
    round(CASE WHEN count(c.s_q) OVER lengths = count(*) OVER lengths
        THEN avg(c.s_q) OVER lengths END, 2) AS overall_s_q
FROM cells AS c
JOIN res_versions AS v USING (version)
WINDOW lengths AS (PARTITION BY c.version, c.method, c.variant, c.backbone)
ORDER BY c.version, method_rank(c.method), c.method, c.variant, c.target_words;
