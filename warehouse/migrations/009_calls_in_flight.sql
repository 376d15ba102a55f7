-- A request sent by a run that was killed before its reply came: the endpoint counted (and
-- may bill) it, the resumed run sent it again. Folded from the run's `.sent` log by the next
-- start; `replied` is false, tokens and latency NULL (docs/design.md §10).
ALTER TABLE fct_llm_calls ADD COLUMN replied BOOLEAN DEFAULT true;
