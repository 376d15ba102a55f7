-- Statistics per result version (tasks/paper/significance.py, docs/design.md "Scores"):
-- each leaderboard cell's 95% bootstrap interval over samples (target_words 0: Overall),
-- and each method variant's paired difference with a reference variant.
CREATE TABLE res_cell_stats (
    version         INTEGER NOT NULL,
    method          VARCHAR NOT NULL,
    variant         VARCHAR NOT NULL,
    target_words    INTEGER NOT NULL,
    backbone        VARCHAR NOT NULL,
    score           VARCHAR NOT NULL,
    n               INTEGER NOT NULL,
    mean            DOUBLE,
    ci_low          DOUBLE,
    ci_high         DOUBLE,
    seed            INTEGER NOT NULL,
    PRIMARY KEY (version, variant, target_words, backbone, score)
);

CREATE TABLE res_paired (
    version         INTEGER NOT NULL,
    variant         VARCHAR NOT NULL,
    reference       VARCHAR NOT NULL,
    target_words    INTEGER NOT NULL,
    backbone        VARCHAR NOT NULL,
    score           VARCHAR NOT NULL,
    n               INTEGER NOT NULL,
    difference      DOUBLE,
    ci_low          DOUBLE,
    ci_high         DOUBLE,
    p_value         DOUBLE,
    within_noise    BOOLEAN,
    seed            INTEGER NOT NULL,
    PRIMARY KEY (version, variant, reference, target_words, backbone, score)
);

-- `--judge-repeats N`: the judge asked again (repeat 1..N, each call cached under its own
-- key) for the headline judged scores of a generation; repeat 0 is fct_scores itself.
CREATE TABLE fct_judge_repeats (
    generation_id   VARCHAR NOT NULL,
    score           VARCHAR NOT NULL,
    repeat          INTEGER NOT NULL,
    value           DOUBLE,
    judge           VARCHAR,
    run_id          VARCHAR NOT NULL,
    PRIMARY KEY (generation_id, score, repeat)
);

-- Reviewers' grades of the judge's QA grades (is the judge right?): one row per judged
-- question of a generation, the human's grade on the judge's five tiers.
CREATE TABLE fct_grade_reviews (
    generation_id   VARCHAR NOT NULL,
    qa_id           VARCHAR NOT NULL,
    dataset_version VARCHAR NOT NULL,
    judge           VARCHAR NOT NULL,
    judge_grade     DOUBLE NOT NULL,
    human_grade     DOUBLE NOT NULL,
    reviewer        VARCHAR NOT NULL,
    reviewed_at     TIMESTAMP NOT NULL,
    PRIMARY KEY (generation_id, qa_id, reviewer)
);
