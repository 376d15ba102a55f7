-- An imported benchmark's papers in the order its group folder's listing (`os.listdir`)
-- gave them at import: the order the reference's scripts read them in (docs/reference.md,
-- "Paper order in a sample"). NULL for lilo's own samples and for imports made before it was recorded.
ALTER TABLE dim_samples ADD COLUMN listing_order VARCHAR[];

-- The sample's paper ids in the order a generation read them (its rotation applied): the
-- positions S_single counts are in this order. NULL for generations written before.
ALTER TABLE fct_generations ADD COLUMN papers_read VARCHAR[];
