-- reads:
-- Input and output tokens and cost per summary, per method and length, latest version; the
-- cost is NULL when a summary's model had no price (docs/operations.md, "Prices").
CREATE OR REPLACE VIEW cost AS
WITH latest AS (
    SELECT max(version) AS version FROM res_versions
),
per_generation AS (
    SELECT DISTINCT generation_id, coalesce(variant, method) AS method, target_words, backbone,
        tokens_in, tokens_out, cost
    FROM res_scores
    JOIN latest USING (version)
)
SELECT
    method,
    target_words,
    backbone,
    count(*) AS generations,
    round(avg(tokens_in)) AS tokens_in_per_summary,
    round(avg(tokens_out)) AS tokens_out_per_summary,
    CASE WHEN count(cost) = count(*) THEN avg(cost) END AS cost_per_summary
FROM per_generation
GROUP BY ALL
ORDER BY method, target_words;
