-- Samples a result version expected but that wait for a reviewer (docs/design.md, QA review):
-- counted in the cells' n_expected, missing from their scores, listed by the `failures` view
-- as "waiting for review" with how far the review is.
CREATE TABLE res_waiting (
    version     INTEGER NOT NULL,
    sample_id   VARCHAR NOT NULL,
    reason      VARCHAR NOT NULL,
    PRIMARY KEY (version, sample_id)
);
