-- reads: default_result_version
-- What RAL-Writer restated (the paper's Table 3): per generation and writing step, each
-- chunk it put back near the end of the prompt, ranked by importance (1: most important,
-- placed last), latest result version. `chunk` indexes the instruction's chunks.
CREATE OR REPLACE VIEW ral_recall AS
WITH latest AS (
    SELECT default_result_version(NULL) AS version
),
generations AS (
    SELECT DISTINCT generation_id, sample_id, variant, target_words
    FROM res_scores
    JOIN latest USING (version)
    WHERE method = 'ral_writer' AND coalesce(rotation, 0) = 0
),
steps AS (
    SELECT r.generation_id, r.sample_id, r.variant, r.target_words, g.plan,
        unnest(CAST(g.restated AS JSON[])) AS step
    FROM generations AS r
    JOIN fct_generations AS g USING (generation_id)
),
chunks AS (
    SELECT generation_id, sample_id, variant, target_words,
        CAST(step->>'step' AS INTEGER) AS step,
        plan->>(CAST(step->>'step' AS INTEGER) - 1) AS step_line,
        CAST(step->'chunks' AS INTEGER[]) AS chunks,
        CAST(step->'importance' AS DOUBLE[]) AS importance
    FROM steps
)
SELECT generation_id, sample_id, variant, target_words, step, step_line,
    len(chunks) - i + 1 AS rank, chunks[i] AS chunk, importance[i] AS importance
FROM chunks, range(1, len(chunks) + 1) AS t(i)
ORDER BY variant, target_words, sample_id, step, rank;
