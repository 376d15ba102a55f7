-- reads: position_curve, probe_summary, rounded
-- Do the probes predict the long-output loss? Each backbone's probe U depth (probe_summary)
-- beside its summaries' position curve (position_curve: S_single by the position of the
-- paper a question is about, latest result version), with the summaries' own U depth on
-- the probes' 0..1 scale: the mean of the first and last papers' S_single minus the worst
-- middle paper's, over 100. A backbone with probes but no summaries (or the reverse) has
-- no row.
CREATE OR REPLACE VIEW probe_vs_summary AS
WITH summary AS (
    SELECT
        backbone,
        method,
        target_words,
        min(position) AS first_position,
        max(position) AS last_position,
        arg_min(s_single, position) AS s_first,
        arg_max(s_single, position) AS s_last,
        sum(n) AS n_summary
    FROM position_curve
    GROUP BY ALL
),
middle AS (
    SELECT s.backbone, s.method, s.target_words, min(c.s_single) AS s_middle
    FROM summary AS s
    JOIN position_curve AS c
        ON c.backbone = s.backbone AND c.method = s.method
        AND c.target_words = s.target_words
        AND c.position > s.first_position AND c.position < s.last_position
    GROUP BY ALL
)
SELECT
    p.backbone,
    p.task,
    p.size,
    p.variant,
    p.query_aware,
    p.first_accuracy,
    p.worst_middle_accuracy,
    p.last_accuracy,
    p.u_depth AS probe_u_depth,
    s.method,
    s.target_words,
    s.s_first,
    m.s_middle,
    s.s_last,
    rounded(((s.s_first + s.s_last) / 2 - m.s_middle) / 100, 4) AS summary_u_depth,
    round(m.s_middle / nullif((s.s_first + s.s_last) / 2, 0), 4) AS summary_middle_ratio,
    s.n_summary
FROM probe_summary AS p
JOIN summary AS s USING (backbone)
JOIN middle AS m USING (backbone, method, target_words)
ORDER BY p.backbone, p.task, p.size, p.variant, s.method, s.target_words;
