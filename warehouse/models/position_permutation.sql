-- reads:
-- The permutation experiment (docs/design.md §8), latest version: each sample written in every
-- cyclic order of its papers; S_single at each reading position, averaged over the
-- samples of each order, then over the orders (the U-curve), with its spread across orders.
CREATE OR REPLACE VIEW position_permutation AS
WITH latest AS (
    SELECT max(version) AS version FROM res_versions
),
per_order AS (
    SELECT
        coalesce(variant, method) AS method,
        target_words,
        backbone,
        rotation,
        CAST(replace(score, 'single_pos', '') AS INTEGER) AS position,
        avg(value) AS s_single,
        count(*) AS n
    FROM res_scores
    JOIN latest USING (version)
    WHERE score LIKE 'single_pos%'
    GROUP BY ALL
)
SELECT
    method,
    target_words,
    backbone,
    position,
    round(avg(s_single), 2) AS s_single,
    round(coalesce(stddev_pop(s_single), 0), 2) AS spread,
    count(*) AS orders,
    sum(n) AS n
FROM per_order
GROUP BY ALL
HAVING count(*) > 1
ORDER BY method, target_words, position;
