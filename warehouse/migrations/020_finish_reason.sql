-- Why each reply ended, as the endpoint said: "stop", or "length" when it was cut at its
-- output budget (max_tokens, or the context window): a truncated reply is handled as such,
-- never parsed as if whole (docs/design.md §9). NULL for calls recorded before.
ALTER TABLE fct_llm_calls ADD COLUMN finish_reason VARCHAR;
ALTER TABLE llm_cache ADD COLUMN finish_reason VARCHAR;
