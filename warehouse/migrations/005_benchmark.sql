-- The published benchmark and an honest leaderboard (docs/design.md §8, §14).
--
-- A dataset version carries the prompts and checklists it was built or imported with:
-- runs on it render these, so a run on the published benchmark stays faithful to it.
-- Names: task, qa_answer, qa_judge, checklist, winrate (Jinja2 templates),
-- checklist.json, checklist_winrate.json, description.json.
CREATE TABLE dim_dataset_assets (
    dataset_version VARCHAR NOT NULL,
    name            VARCHAR NOT NULL,
    content         VARCHAR NOT NULL,
    source          VARCHAR,                      -- the file it came from
    sha256          VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,
    PRIMARY KEY (dataset_version, name)
);

-- What made a generation, as the leaderboard shows it (e.g. compress[extractive]), and
-- which cyclic order of the sample's papers it read (0: the sample's own order).
ALTER TABLE fct_generations ADD COLUMN variant VARCHAR;
ALTER TABLE fct_generations ADD COLUMN rotation INTEGER DEFAULT 0;
-- The judge (backend:model) behind a score; NULL for scores no LLM gave (length).
ALTER TABLE fct_scores ADD COLUMN judge VARCHAR;

ALTER TABLE res_scores ADD COLUMN variant VARCHAR;
ALTER TABLE res_scores ADD COLUMN rotation INTEGER DEFAULT 0;
ALTER TABLE res_scores ADD COLUMN judge VARCHAR;
-- A version is partial when some expected generation or score is missing or failed.
ALTER TABLE res_versions ADD COLUMN partial BOOLEAN DEFAULT false;

-- Per result version, each leaderboard cell's account: what was expected, generated,
-- failed and scored. A failed generation is a result, not an absence.
CREATE TABLE res_cells (
    version         INTEGER NOT NULL,
    method          VARCHAR NOT NULL,
    variant         VARCHAR NOT NULL,
    target_words    INTEGER NOT NULL,
    backbone        VARCHAR NOT NULL,
    n_expected      INTEGER NOT NULL,
    n_generated     INTEGER NOT NULL,
    n_failed        INTEGER NOT NULL,
    n_scored        INTEGER NOT NULL,
    PRIMARY KEY (version, method, variant, target_words, backbone)
);

-- Pairwise win-rate (docs/design.md §8): two summaries of one sample at one length, judged on the
-- same checklist item in both orders (`ab`: A shown first). winner: a | b | tie.
CREATE TABLE fct_winrate (
    generation_a    VARCHAR NOT NULL,
    generation_b    VARCHAR NOT NULL,
    sample_id       VARCHAR NOT NULL,
    target_words    INTEGER NOT NULL,
    method_a        VARCHAR NOT NULL,
    method_b        VARCHAR NOT NULL,
    aspect          VARCHAR NOT NULL,
    item            INTEGER NOT NULL,
    shown           VARCHAR NOT NULL,             -- ab | ba
    winner          VARCHAR NOT NULL,             -- a | b | tie
    reason          VARCHAR,
    judge           VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,
    PRIMARY KEY (generation_a, generation_b, aspect, item, shown)
);
