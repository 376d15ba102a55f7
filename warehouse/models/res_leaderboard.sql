-- Every result version in the shape of the paper's Table 2: method (variant) x target
-- length, with S_l, S_c, S_q (x100, means over the scored samples in the sample's own paper
-- order), the judge behind S_c/S_q, and how many of the expected summaries were scored:
-- a failed or unscored summary is a result, shown as `scored` below `expected`.
-- `overall_s_*` is Table 2's Overall, the same on each of a method's rows: each score's
-- per-length means averaged over the lengths the version ran for it, each length weighing
-- the same; NULL when some length has no mean for that score.
-- `*_low`/`*_high` bound each score's 95% bootstrap interval over samples
-- (`res_cell_stats`, written once per version by the materialize stage; NULL below 6
-- samples); Overall's is over each sample's mean across the lengths, or the one length's
-- when a method ran one. The rows are the version's scope, what its run asked for.
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
),
intervals AS (
    SELECT
        version,
        variant,
        target_words,
        backbone,
        any_value(ci_low) FILTER (WHERE score = 'length') AS s_l_low,
        any_value(ci_high) FILTER (WHERE score = 'length') AS s_l_high,
        any_value(ci_low) FILTER (WHERE score = 'consistency') AS s_c_low,
        any_value(ci_high) FILTER (WHERE score = 'consistency') AS s_c_high,
        any_value(ci_low) FILTER (WHERE score = 'quality') AS s_q_low,
        any_value(ci_high) FILTER (WHERE score = 'quality') AS s_q_high
    FROM res_cell_stats
    GROUP BY ALL
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
    rounded(c.s_l, 2) AS s_l,
    rounded(i.s_l_low, 2) AS s_l_low,
    rounded(i.s_l_high, 2) AS s_l_high,
    rounded(c.s_c, 2) AS s_c,
    rounded(i.s_c_low, 2) AS s_c_low,
    rounded(i.s_c_high, 2) AS s_c_high,
    rounded(c.s_q, 2) AS s_q,
    rounded(i.s_q_low, 2) AS s_q_low,
    rounded(i.s_q_high, 2) AS s_q_high,
    rounded(CASE WHEN count(c.s_l) OVER lengths = count(*) OVER lengths
        THEN avg(c.s_l) OVER lengths END, 2) AS overall_s_l,
    rounded(CASE WHEN count(c.s_c) OVER lengths = count(*) OVER lengths
        THEN avg(c.s_c) OVER lengths END, 2) AS overall_s_c,
    rounded(CASE WHEN count(c.s_q) OVER lengths = count(*) OVER lengths
        THEN avg(c.s_q) OVER lengths END, 2) AS overall_s_q,
    rounded(CASE WHEN count(*) OVER lengths = 1 THEN i.s_l_low ELSE o_i.s_l_low END, 2)
        AS overall_s_l_low,
    rounded(CASE WHEN count(*) OVER lengths = 1 THEN i.s_l_high ELSE o_i.s_l_high END, 2)
        AS overall_s_l_high,
    rounded(CASE WHEN count(*) OVER lengths = 1 THEN i.s_c_low ELSE o_i.s_c_low END, 2)
        AS overall_s_c_low,
    rounded(CASE WHEN count(*) OVER lengths = 1 THEN i.s_c_high ELSE o_i.s_c_high END, 2)
        AS overall_s_c_high,
    rounded(CASE WHEN count(*) OVER lengths = 1 THEN i.s_q_low ELSE o_i.s_q_low END, 2)
        AS overall_s_q_low,
    rounded(CASE WHEN count(*) OVER lengths = 1 THEN i.s_q_high ELSE o_i.s_q_high END, 2)
        AS overall_s_q_high
FROM cells AS c
JOIN res_versions AS v USING (version)
LEFT JOIN intervals AS i USING (version, variant, target_words, backbone)
LEFT JOIN intervals AS o_i
    ON o_i.version = c.version AND o_i.variant = c.variant AND o_i.backbone = c.backbone
    AND o_i.target_words = 0
WINDOW lengths AS (PARTITION BY c.version, c.method, c.variant, c.backbone)
ORDER BY c.version, method_rank(c.method), c.method, c.variant, c.target_words;
