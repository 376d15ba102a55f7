-- Every LLM call a run made or had served from the cache: tokens, latency, cache hit.
-- `llm_cache` keeps each distinct response once; this is the per-call ledger behind
-- the run record's counts (a run with nothing new adds no rows here).
CREATE TABLE fct_llm_calls (
    run_id          VARCHAR NOT NULL,
    stage           VARCHAR NOT NULL,
    seq             INTEGER NOT NULL,             -- order within the run's stage
    key             VARCHAR NOT NULL,             -- llm_cache.key
    backend         VARCHAR NOT NULL,
    model           VARCHAR NOT NULL,
    purpose         VARCHAR NOT NULL,
    cached          BOOLEAN NOT NULL,
    tokens_in       INTEGER,
    tokens_out      INTEGER,
    latency_s       DOUBLE,
    PRIMARY KEY (run_id, stage, seq)
);
