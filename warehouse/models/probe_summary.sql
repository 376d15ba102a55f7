-- reads: probe_curve, rounded
-- One row per probe curve of the latest version (task, size, variant, prompt form,
-- backbone): the best and worst gold positions (the earlier one on a tie), the accuracy at
-- both ends, the worst position strictly between them, and the U depth: the mean of the
-- two ends minus the worst middle (0: no dip; 0.2: the middle is 20 points below the ends),
-- with the closed-book and oracle baselines beside it.
CREATE OR REPLACE VIEW probe_summary AS
WITH curve AS (
    SELECT * FROM probe_curve WHERE setting = 'position' AND n > 0
),
ends AS (
    SELECT
        task, size, variant, query_aware, prompts, backbone,
        min(position) AS first_position,
        max(position) AS last_position,
        arg_max(position, accuracy * 1e6 - position) AS best_position,
        max(accuracy) AS best_accuracy,
        arg_min(position, accuracy * 1e6 + position) AS worst_position,
        min(accuracy) AS worst_accuracy,
        count(*) AS positions,
        sum(n) AS n
    FROM curve
    GROUP BY ALL
),
shape AS (
    SELECT
        e.*,
        (SELECT c.accuracy FROM curve c WHERE c.task = e.task AND c.size = e.size
            AND c.variant = e.variant AND c.query_aware = e.query_aware
            AND c.prompts = e.prompts AND c.backbone = e.backbone
            AND c.position = e.first_position) AS first_accuracy,
        (SELECT c.accuracy FROM curve c WHERE c.task = e.task AND c.size = e.size
            AND c.variant = e.variant AND c.query_aware = e.query_aware
            AND c.prompts = e.prompts AND c.backbone = e.backbone
            AND c.position = e.last_position) AS last_accuracy,
        (SELECT min(c.accuracy) FROM curve c WHERE c.task = e.task AND c.size = e.size
            AND c.variant = e.variant AND c.query_aware = e.query_aware
            AND c.prompts = e.prompts AND c.backbone = e.backbone
            AND c.position > e.first_position AND c.position < e.last_position)
            AS worst_middle_accuracy
    FROM ends AS e
),
baselines AS (
    SELECT
        task, size, variant, query_aware, prompts, backbone,
        max(accuracy) FILTER (WHERE setting = 'closed_book') AS closed_book,
        max(accuracy) FILTER (WHERE setting = 'oracle') AS oracle
    FROM probe_curve
    WHERE setting <> 'position'
    GROUP BY ALL
)
SELECT
    s.task,
    s.size,
    s.variant,
    s.query_aware,
    s.prompts,
    s.backbone,
    s.best_position,
    s.best_accuracy,
    s.worst_position,
    s.worst_accuracy,
    s.first_accuracy,
    s.last_accuracy,
    s.worst_middle_accuracy,
    rounded((s.first_accuracy + s.last_accuracy) / 2 - s.worst_middle_accuracy, 4) AS u_depth,
    b.closed_book,
    b.oracle,
    s.positions,
    s.n
FROM shape AS s
LEFT JOIN baselines AS b USING (task, size, variant, query_aware, prompts, backbone)
ORDER BY s.task, s.variant, s.backbone, s.query_aware, s.size;
