-- A probe result version holding failed answers (LLM calls that failed) is partial, as a
-- leaderboard result version with cells missing is (res_versions.partial).
ALTER TABLE res_probe_versions ADD COLUMN partial BOOLEAN DEFAULT false;
