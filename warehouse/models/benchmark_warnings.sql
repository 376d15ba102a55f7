-- reads:
-- What lilo's cleaned-papers suite found in an imported benchmark's papers, one row per
-- paper and kind (appendix, bibliography, comment_lines, missing_title, short_text, ...):
-- the papers are kept as published, these are warnings, never reasons to drop them.
CREATE OR REPLACE VIEW benchmark_warnings AS
SELECT s.dataset_version, s.sample_id, p.paper_id, w.kind, p.title, p.words, p.main_file
FROM dim_samples AS s, unnest(s.paper_ids) AS u(paper_id)
JOIN dim_papers AS p ON p.paper_id = u.paper_id,
     unnest(p.warnings) AS w(kind)
WHERE starts_with(p.cleaner_version, 'import:')
ORDER BY s.dataset_version, w.kind, s.sample_id, p.paper_id;
