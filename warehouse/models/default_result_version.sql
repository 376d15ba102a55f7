-- reads:
-- The default result version: the latest complete version, or a later partial one published
-- on purpose (`publish_partial`); while no version is either, the latest one. Among the
-- versions of dataset version `dataset`, or of all when it is NULL.
CREATE OR REPLACE MACRO default_result_version(dataset) AS (
    SELECT coalesce(max(version) FILTER (WHERE published), max(version))
    FROM res_versions
    WHERE dataset IS NULL OR dataset_version = dataset
);
