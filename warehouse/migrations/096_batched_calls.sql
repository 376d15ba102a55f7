-- Calls made through OpenAI's Batch API (`llm.batch`, `judge.batch`), at the batch price
-- (tasks/llm/batch.py); false for every call sent alone, and for calls recorded before.
ALTER TABLE fct_llm_calls ADD COLUMN batched BOOLEAN DEFAULT false;
