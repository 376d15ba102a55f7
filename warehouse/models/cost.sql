-- reads:
-- Input and output tokens per summary, per method and length, latest version.
CREATE OR REPLACE VIEW cost AS
WITH latest AS (
    SELECT max(version) AS version FROM res_versions
),
per_generation AS (
    SELECT DISTINCT generation_id, coalesce(variant, method) AS method, target_words, backbone,
        tokens_in, tokens_out
    FROM res_scores
    JOIN latest USING (version)
)
SELECT
    method,
    target_words,
    backbone,
    count(*) AS generations,
    round(avg(tokens_in)) AS tokens_in_per_summary,
    round(avg(tokens_out)) AS tokens_out_per_summary
FROM per_generation
GROUP BY ALL
ORDER BY method, target_words;
