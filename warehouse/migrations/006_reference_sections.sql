-- Survey references (docs/design.md §2, §5): where the survey cites each one, what its entry says
-- besides the title (from the .bib, or the compiled .bbl when that is all the source has),
-- and the record of its title searches, so that a failed search is tried again on a later
-- run with backoff instead of never.
ALTER TABLE dim_survey_references ADD COLUMN section VARCHAR;          -- of its first citation
ALTER TABLE dim_survey_references ADD COLUMN subsection VARCHAR;
ALTER TABLE dim_survey_references ADD COLUMN citation_group VARCHAR;   -- most specific group holding it
ALTER TABLE dim_survey_references ADD COLUMN citations INTEGER DEFAULT 0;
ALTER TABLE dim_survey_references ADD COLUMN authors VARCHAR[];
ALTER TABLE dim_survey_references ADD COLUMN year VARCHAR;
ALTER TABLE dim_survey_references ADD COLUMN venue VARCHAR;
ALTER TABLE dim_survey_references ADD COLUMN doi VARCHAR;
ALTER TABLE dim_survey_references ADD COLUMN url VARCHAR;
ALTER TABLE dim_survey_references ADD COLUMN title_searches INTEGER DEFAULT 0;  -- failures in a row
ALTER TABLE dim_survey_references ADD COLUMN title_searched_at TIMESTAMP;       -- last search (UTC)
ALTER TABLE dim_survey_references ADD COLUMN title_search_error VARCHAR;        -- why it failed
ALTER TABLE dim_surveys ADD COLUMN bibliography VARCHAR[];                       -- files read
