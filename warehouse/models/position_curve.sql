-- reads:
-- S_single by the position of the paper a question is about (1st, 2nd, 3rd), in the
-- sample's own paper order, latest version: the "lost in the middle" curve.
CREATE OR REPLACE VIEW position_curve AS
WITH latest AS (
    SELECT max(version) AS version FROM res_versions
),
positions AS (
    SELECT
        coalesce(variant, method) AS method,
        target_words,
        backbone,
        CAST(replace(score, 'single_pos', '') AS INTEGER) AS position,
        value
    FROM res_scores
    JOIN latest USING (version)
    WHERE score LIKE 'single_pos%' AND coalesce(rotation, 0) = 0
)
SELECT method, target_words, backbone, position, round(avg(value), 2) AS s_single, count(*) AS n
FROM positions
GROUP BY ALL
ORDER BY method, target_words, position;
