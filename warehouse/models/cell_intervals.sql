-- reads: default_result_version, rounded
-- Each leaderboard cell of the latest result version with its 95% bootstrap interval over
-- samples (x100 scores; target_words 0 is Overall), and the paired comparison of its
-- variant with the reference variant (`stats.reference`, RAL-Writer by default): the
-- sign-flip test's interval and p, `within_noise` when p >= 0.05 (exactly when the
-- interval covers zero). Below 6 samples the bounds are NULL: n too small (tasks/stats.py).
CREATE OR REPLACE VIEW cell_intervals AS
WITH latest AS (
    SELECT default_result_version(NULL) AS version
)
SELECT
    c.method,
    c.variant,
    c.target_words,
    c.backbone,
    c.score,
    c.n,
    rounded(c.mean, 2) AS mean,
    rounded(c.ci_low, 2) AS ci_low,
    rounded(c.ci_high, 2) AS ci_high,
    p.reference,
    rounded(p.difference, 2) AS difference,
    rounded(p.ci_low, 2) AS difference_low,
    rounded(p.ci_high, 2) AS difference_high,
    rounded(p.p_value, 4) AS p_value,
    p.within_noise
FROM res_cell_stats AS c
JOIN latest USING (version)
LEFT JOIN res_paired AS p USING (version, variant, target_words, backbone, score)
ORDER BY c.variant, c.target_words, c.score;
