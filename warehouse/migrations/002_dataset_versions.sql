-- Dataset versions (docs/design.md §5): each is written once, with the samples it holds, and never
-- changed; `number` counts versions in the order they were made.
CREATE TABLE dim_dataset_versions (
    dataset_version VARCHAR PRIMARY KEY,
    number          INTEGER NOT NULL UNIQUE,
    created_at      TIMESTAMP NOT NULL,
    surveys         VARCHAR[] NOT NULL,           -- the surveys its samples were drawn from
    n_samples       INTEGER NOT NULL,
    n_papers        INTEGER NOT NULL,
    config_hash     VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL
);
