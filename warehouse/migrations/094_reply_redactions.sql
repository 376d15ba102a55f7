-- How many configured secrets each reply held, replaced by `[redacted]` as it came in
-- (tasks/redact.py `redact_reply`): a hostile endpoint that echoes the key sent is on record.
-- 0 for calls recorded before.
ALTER TABLE fct_llm_calls ADD COLUMN redacted INTEGER DEFAULT 0;
ALTER TABLE llm_cache ADD COLUMN redacted INTEGER DEFAULT 0;
