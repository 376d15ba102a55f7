-- What a result version holds is what its run asked for (docs/design.md §10), its scope:
-- its cells are exactly `scope_variants` x `scope_target_words` on `scope_backbone`, each
-- over `scope_samples` (the run's samples, those waiting for review included) of the
-- `dataset_samples` its dataset version has; `scope_judge` is the judge the run was set to.
-- Versions made before scopes were recorded have NULLs here.
ALTER TABLE res_versions ADD COLUMN scope_samples VARCHAR[];
ALTER TABLE res_versions ADD COLUMN dataset_samples INTEGER;
ALTER TABLE res_versions ADD COLUMN scope_variants VARCHAR[];
ALTER TABLE res_versions ADD COLUMN scope_target_words INTEGER[];
ALTER TABLE res_versions ADD COLUMN scope_backbone VARCHAR;
ALTER TABLE res_versions ADD COLUMN scope_judge VARCHAR;
