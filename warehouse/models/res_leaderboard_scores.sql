-- reads: rounded
-- Every result version's leaderboard scores, one row per cell (method variant x target length
-- x backbone) and score, for whatever scores the score stage recorded (tasks/scoring/: each
-- registered scorer's rows): `value` the mean over the scored samples in the sample's own
-- paper order (x100), `low`/`high` its 95% bootstrap interval over samples (`res_cell_stats`,
-- NULL below 6 samples). `overall` is Table 2's Overall, the same on each of a method's rows:
-- the score's per-length means averaged over the lengths the version ran for it, each length
-- weighing the same; NULL when some length has no mean for that score. Its interval is over
-- each sample's mean across the lengths, or the one length's when a method ran one.
-- `res_leaderboard` lays these out as columns, one set per leaderboard score.
CREATE OR REPLACE VIEW res_leaderboard_scores AS
WITH means AS (
    SELECT
        version, method, coalesce(variant, method) AS variant, target_words, backbone, score,
        avg(value) AS value
    FROM res_scores
    WHERE coalesce(rotation, 0) = 0
    GROUP BY ALL
),
grid AS (
    SELECT c.version, c.method, c.variant, c.target_words, c.backbone, s.score, m.value
    FROM res_cells AS c
    JOIN (SELECT DISTINCT version, score FROM means) AS s USING (version)
    LEFT JOIN means AS m USING (version, method, variant, target_words, backbone, score)
)
SELECT
    g.version,
    g.method,
    g.variant,
    g.target_words,
    g.backbone,
    g.score,
    rounded(g.value, 2) AS value,
    rounded(i.ci_low, 2) AS low,
    rounded(i.ci_high, 2) AS high,
    rounded(CASE WHEN count(g.value) OVER lengths = count(*) OVER lengths
        THEN avg(g.value) OVER lengths END, 2) AS overall,
    rounded(CASE WHEN count(*) OVER lengths = 1 THEN i.ci_low ELSE o.ci_low END, 2)
        AS overall_low,
    rounded(CASE WHEN count(*) OVER lengths = 1 THEN i.ci_high ELSE o.ci_high END, 2)
        AS overall_high
FROM grid AS g
LEFT JOIN res_cell_stats AS i USING (version, variant, target_words, backbone, score)
LEFT JOIN res_cell_stats AS o
    ON o.version = g.version AND o.variant = g.variant AND o.backbone = g.backbone
    AND o.score = g.score AND o.target_words = 0
WINDOW lengths AS (PARTITION BY g.version, g.method, g.variant, g.backbone, g.score);
