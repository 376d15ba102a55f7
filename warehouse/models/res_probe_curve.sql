-- reads: wilson_high, wilson_low
-- Every probe result version (docs/design.md §17): accuracy per task, size (keys or
-- documents), setting (position: the gold item at `position`, 0-based; closed_book;
-- oracle), data variant, prompt form and backbone, over the answers that got a reply,
-- with the Wilson 95% interval of the proportion (`wilson_low`/`wilson_high`). `failed`:
-- answers whose LLM call failed, left out of n. `accuracy` is the authors' metric as they
-- report it; beside it, `echo_rate`: the share of the n replies that echo the prompt
-- (tasks/probes/metric.py), and `non_echo_accuracy` over the `non_echo_n` replies that do
-- not (an empty reply is one), with its interval. `echo_carried`: more than half of the
-- correct replies are echoes, so the accuracy shows copying, not retrieval. The echo
-- columns are NULL for a cell none of whose answers recorded whether it echoes (answers
-- from before lilo recorded it, or only empty replies).
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
        count(*) FILTER (WHERE error <> '') AS failed,
        count(echo) > 0 AS echo_known,
        count(*) FILTER (WHERE correct IS NOT NULL AND echo) AS n_echo,
        count(*) FILTER (WHERE correct AND echo) AS n_correct_echo,
        count(*) FILTER (WHERE correct IS NOT NULL AND echo IS NOT true) AS non_echo_n,
        count(*) FILTER (WHERE correct AND echo IS NOT true) AS n_correct_non_echo
    FROM res_probe_answers
    GROUP BY ALL
),
rates AS (
    SELECT
        *,
        CASE WHEN n > 0 THEN n_correct / n END AS p,
        CASE WHEN echo_known AND non_echo_n > 0 THEN n_correct_non_echo / non_echo_n END
            AS p_non_echo
    FROM cells
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
    wilson_low(p, n) AS ci_low,
    wilson_high(p, n) AS ci_high,
    CASE WHEN echo_known THEN round(n_echo / n, 4) END AS echo_rate,
    round(p_non_echo, 4) AS non_echo_accuracy,
    CASE WHEN echo_known THEN non_echo_n END AS non_echo_n,
    wilson_low(p_non_echo, non_echo_n) AS non_echo_ci_low,
    wilson_high(p_non_echo, non_echo_n) AS non_echo_ci_high,
    CASE WHEN echo_known THEN n_correct_echo > n_correct / 2 END AS echo_carried
FROM rates
ORDER BY version, task, variant, backbone, query_aware, size, setting, position;
