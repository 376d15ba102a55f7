-- Every probe result version (docs/design.md §17): accuracy per task, size (keys or
-- documents), setting (position: the gold item at `position`, 0-based; closed_book;
-- oracle), data variant, prompt form and backbone, over the answers that got a reply,
-- with the Wilson 95% interval of the proportion (sound at 0 and 1, unlike the normal
-- one). `failed`: answers whose LLM call failed, left out of n.
CREATE OR REPLACE VIEW res_probe_curve AS
WITH cells AS (
    SELECT
        version,
        task,
        size,
        setting,
        position,
        variant,
        query_aware,
        prompts,
        backbone,
        count(*) FILTER (WHERE correct IS NOT NULL) AS n,
        count(*) FILTER (WHERE correct) AS n_correct,
        count(*) FILTER (WHERE error <> '') AS failed
    FROM res_probe_answers
    GROUP BY ALL
),
rates AS (
    SELECT *, CASE WHEN n > 0 THEN n_correct / n END AS p, 1.959964 AS z FROM cells
)
SELECT
    version,
    task,
    size,
    setting,
    position,
    variant,
    query_aware,
    prompts,
    backbone,
    round(p, 4) AS accuracy,
    n,
    failed,
    rounded((p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)))
          / (1 + z * z / n), 4) AS ci_low,
    rounded((p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)))
          / (1 + z * z / n), 4) AS ci_high
FROM rates
ORDER BY version, task, variant, backbone, query_aware, size, setting, position;
