-- Whether a probe reply echoes its prompt (tasks/probes/metric.py, docs/design.md §17): its
-- opening tokens copied verbatim from the prompt, so that the gold item it may hold was
-- copied, not retrieved. NULL for an empty or failed reply, and for answers recorded before.
ALTER TABLE fct_probe_answers ADD COLUMN echo BOOLEAN;
ALTER TABLE res_probe_answers ADD COLUMN echo BOOLEAN;
