-- Review decisions on QA pairs (docs/design.md §6): one row per decision, whoever made it and
-- wherever (auto mode, the Prefect UI form, the CLI, an imported JSONL file). The row keeps
-- the pair's text as reviewed; an edit keeps the original beside the edited text.
-- fct_qa_pairs holds each pair's current state; this table is the history behind it.

CREATE TABLE fct_qa_decisions (
    decision_id       VARCHAR PRIMARY KEY,
    qa_id             VARCHAR NOT NULL,
    sample_id         VARCHAR NOT NULL,
    action            VARCHAR NOT NULL,           -- approve | reject | edit
    reviewer          VARCHAR NOT NULL,           -- "auto" in auto-review mode
    channel           VARCHAR NOT NULL,           -- auto | ui | cli | file
    decided_at        TIMESTAMP NOT NULL,
    question          VARCHAR NOT NULL,           -- as reviewed (after an edit: the new text)
    answer            VARCHAR NOT NULL,
    evidence          JSON,
    original_question VARCHAR NOT NULL,           -- before this decision (as generated,
    original_answer   VARCHAR NOT NULL,           -- or as a previous edit left it)
    reason            VARCHAR,
    run_id            VARCHAR                     -- the flow run, if a flow recorded it
);
