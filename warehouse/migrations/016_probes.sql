-- Lost-in-the-Middle probes (docs/design.md §17): key-value retrieval and
-- multi-document QA with the gold item at a chosen position, on the same backbones as the
-- summaries.
--
-- One row per probe example: imported from a clone of the authors' repository (`source`
-- names its file and line) or made by lilo (`source` = 'lilo'). `probe_set` names the data
-- and how it was made (e.g. liu/kv-75, liu/nq-oracle, lilo/kv-75[seed=0],
-- lilo/mdqa-20[warehouse,hard]). kv: `question` is the key, `answers` its value, `context`
-- the ordered [key, value] records (the gold pair among them); mdqa: `question` the
-- question, `answers` the gold answers, `gold` the gold document {title, text}, `context`
-- the distractor documents in their order (the gold one left out).
CREATE TABLE dim_probe_items (
    item_id         VARCHAR PRIMARY KEY,
    probe_set       VARCHAR NOT NULL,
    task            VARCHAR NOT NULL,             -- kv | mdqa
    size            INTEGER NOT NULL,             -- keys, or documents with the gold one
    line            INTEGER NOT NULL,             -- rank in its file or construction
    source          VARCHAR NOT NULL,
    question        VARCHAR NOT NULL,
    answers         VARCHAR[] NOT NULL,
    gold            JSON,
    context         JSON NOT NULL,
    sha256          VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL
);

-- One answer per item x setting x gold position x prompt form x backbone. `setting`:
-- position (the gold item at `position`, 0-based), closed_book (the question alone) or
-- oracle (the gold document alone). `variant` is the data's construction, recorded with
-- every result; `prompts` whose templates were rendered (lost-in-the-middle: the user's
-- clone; lilo: lilo's own). `answered_at` is the last run that asked or replayed it: the
-- newest answer of each cell is the current one.
CREATE TABLE fct_probe_answers (
    answer_id       VARCHAR PRIMARY KEY,
    item_id         VARCHAR NOT NULL,
    task            VARCHAR NOT NULL,
    probe_set       VARCHAR NOT NULL,
    variant         VARCHAR NOT NULL,
    size            INTEGER NOT NULL,
    setting         VARCHAR NOT NULL,
    position        INTEGER,
    query_aware     BOOLEAN NOT NULL,
    prompts         VARCHAR NOT NULL,
    backbone        VARCHAR NOT NULL,
    prediction      VARCHAR NOT NULL,
    correct         BOOLEAN,
    error           VARCHAR NOT NULL,
    answered_at     TIMESTAMP NOT NULL,
    config_hash     VARCHAR NOT NULL,
    code_version    VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL
);

-- Probe results as immutable versions, like res_versions/res_scores for the leaderboard:
-- a probe run whose current answers differ from the latest version's makes a new one.
CREATE TABLE res_probe_versions (
    version         INTEGER PRIMARY KEY,
    created_at      TIMESTAMP NOT NULL,
    run_id          VARCHAR NOT NULL,
    content_hash    VARCHAR NOT NULL,
    n_answers       INTEGER NOT NULL
);

CREATE TABLE res_probe_answers (
    version         INTEGER NOT NULL,
    answer_id       VARCHAR NOT NULL,
    item_id         VARCHAR NOT NULL,
    task            VARCHAR NOT NULL,
    probe_set       VARCHAR NOT NULL,
    variant         VARCHAR NOT NULL,
    size            INTEGER NOT NULL,
    setting         VARCHAR NOT NULL,
    position        INTEGER,
    query_aware     BOOLEAN NOT NULL,
    prompts         VARCHAR NOT NULL,
    backbone        VARCHAR NOT NULL,
    correct         BOOLEAN,
    error           VARCHAR NOT NULL,
    PRIMARY KEY (version, answer_id)
);
