-- lilo warehouse, first schema. Layers follow dbt's naming:
-- stg_ raw data as fetched, dim_ papers/surveys/samples, fct_ generations and judgments,
-- res_ versioned results. Every write is an idempotent upsert keyed by content.

CREATE TABLE runs (
    run_id            VARCHAR PRIMARY KEY,
    flow              VARCHAR NOT NULL,
    started_at        TIMESTAMP NOT NULL,
    finished_at       TIMESTAMP,
    status            VARCHAR NOT NULL,           -- running | completed | failed
    config_hash       VARCHAR NOT NULL,
    code_version      VARCHAR NOT NULL,
    backbone          VARCHAR NOT NULL,
    dataset_version   VARCHAR NOT NULL,
    review_mode       VARCHAR NOT NULL,
    target_words      INTEGER[] NOT NULL,
    llm_calls_made    INTEGER NOT NULL DEFAULT 0,
    llm_calls_cached  INTEGER NOT NULL DEFAULT 0,
    tokens_in         BIGINT NOT NULL DEFAULT 0,
    tokens_out        BIGINT NOT NULL DEFAULT 0,
    embeddings_made   INTEGER NOT NULL DEFAULT 0,
    embeddings_cached INTEGER NOT NULL DEFAULT 0,
    rows_added        JSON,                       -- {table: rows added by this run}
    stage_seconds     JSON,                       -- {stage: wall seconds}
    settings          JSON NOT NULL,
    message           VARCHAR
);

CREATE TABLE stg_raw_sources (
    arxiv_id     VARCHAR PRIMARY KEY,
    role         VARCHAR NOT NULL,                -- paper | survey
    sha256       VARCHAR NOT NULL,
    path         VARCHAR NOT NULL,                -- content-addressed archive on disk
    size_bytes   BIGINT NOT NULL,
    format       VARCHAR NOT NULL,                -- tar.gz | tar | tex.gz | pdf | unknown
    title        VARCHAR,
    categories   VARCHAR,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE quarantine (
    item_id      VARCHAR NOT NULL,
    stage        VARCHAR NOT NULL,                -- fetch | clean | validate | samples | qa | generate
    reason       VARCHAR NOT NULL,
    detail       VARCHAR,
    run_id       VARCHAR NOT NULL,
    PRIMARY KEY (item_id, stage)
);

CREATE TABLE dim_surveys (
    survey_id    VARCHAR PRIMARY KEY,
    title        VARCHAR,
    main_file    VARCHAR,
    n_references INTEGER,
    n_resolved   INTEGER,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE dim_survey_references (
    survey_id    VARCHAR NOT NULL,
    cite_key     VARCHAR NOT NULL,
    title        VARCHAR,
    arxiv_id     VARCHAR,
    how          VARCHAR NOT NULL,                -- how the id was found, or why not
    run_id       VARCHAR NOT NULL,
    PRIMARY KEY (survey_id, cite_key)
);

CREATE TABLE dim_citation_groups (
    group_id     VARCHAR PRIMARY KEY,
    survey_id    VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,                -- command | paragraph | subsection
    section      VARCHAR,
    subsection   VARCHAR,
    cite_keys    VARCHAR[] NOT NULL,
    paper_ids    VARCHAR[] NOT NULL,
    run_id       VARCHAR NOT NULL
);

CREATE TABLE dim_papers (
    paper_id        VARCHAR PRIMARY KEY,
    title           VARCHAR,
    text            VARCHAR NOT NULL,
    words           INTEGER NOT NULL,
    tokens          INTEGER NOT NULL,
    main_file       VARCHAR,
    cleaner_version VARCHAR NOT NULL,
    source_sha256   VARCHAR NOT NULL,
    content_sha256  VARCHAR NOT NULL,
    categories      VARCHAR,
    removed         JSON,
    warnings        VARCHAR[],
    run_id          VARCHAR NOT NULL
);

CREATE TABLE dim_samples (
    sample_id       VARCHAR PRIMARY KEY,
    dataset_version VARCHAR NOT NULL,
    paper_ids       VARCHAR[] NOT NULL,           -- in order: position matters
    topic           VARCHAR,
    survey_id       VARCHAR,
    input_words     INTEGER,
    group_kind      VARCHAR,
    run_id          VARCHAR NOT NULL
);

CREATE TABLE fct_qa_pairs (
    qa_id           VARCHAR PRIMARY KEY,
    sample_id       VARCHAR NOT NULL,
    kind            VARCHAR NOT NULL,             -- single | cross
    paper_ids       VARCHAR[] NOT NULL,
    question        VARCHAR NOT NULL,
    answer          VARCHAR NOT NULL,
    evidence        JSON,
    status          VARCHAR NOT NULL,             -- approved | pending | rejected | filtered | duplicate | invalid
    round           INTEGER NOT NULL,
    reviewer        VARCHAR,
    reason          VARCHAR,
    prompt_version  VARCHAR NOT NULL,
    backbone        VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL
);

CREATE TABLE fct_generations (
    generation_id   VARCHAR PRIMARY KEY,
    sample_id       VARCHAR NOT NULL,
    method          VARCHAR NOT NULL,
    method_args     JSON,
    target_words    INTEGER NOT NULL,
    backbone        VARCHAR NOT NULL,
    text            VARCHAR NOT NULL,
    words           INTEGER NOT NULL,
    plan            JSON,
    restated        JSON,
    tokens_in       BIGINT,
    tokens_out      BIGINT,
    latency_s       DOUBLE,
    llm_calls       INTEGER,
    error           VARCHAR,
    config_hash     VARCHAR NOT NULL,
    code_version    VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL
);

CREATE TABLE fct_scores (
    generation_id   VARCHAR NOT NULL,
    score           VARCHAR NOT NULL,
    value           DOUBLE,
    detail          JSON,
    run_id          VARCHAR NOT NULL,
    PRIMARY KEY (generation_id, score)
);

CREATE TABLE llm_cache (
    key             VARCHAR PRIMARY KEY,          -- sha256 of backend, model, parameters, messages
    backend         VARCHAR NOT NULL,
    model           VARCHAR NOT NULL,
    purpose         VARCHAR,
    request         JSON,
    response        VARCHAR,
    tokens_in       INTEGER,
    tokens_out      INTEGER,
    latency_s       DOUBLE,
    run_id          VARCHAR NOT NULL
);

CREATE TABLE validation_results (
    run_id          VARCHAR NOT NULL,
    suite           VARCHAR NOT NULL,
    success         BOOLEAN NOT NULL,
    summary         JSON,
    PRIMARY KEY (run_id, suite)
);

CREATE TABLE res_versions (
    version         INTEGER PRIMARY KEY,
    created_at      TIMESTAMP NOT NULL,
    run_id          VARCHAR NOT NULL,
    content_hash    VARCHAR NOT NULL UNIQUE,
    dataset_version VARCHAR NOT NULL,
    n_generations   INTEGER NOT NULL,
    n_rows          INTEGER NOT NULL
);

CREATE TABLE res_scores (
    version         INTEGER NOT NULL,
    generation_id   VARCHAR NOT NULL,
    sample_id       VARCHAR NOT NULL,
    method          VARCHAR NOT NULL,
    target_words    INTEGER NOT NULL,
    backbone        VARCHAR NOT NULL,
    score           VARCHAR NOT NULL,
    value           DOUBLE,
    tokens_in       BIGINT,
    tokens_out      BIGINT,
    PRIMARY KEY (version, generation_id, score)
);
