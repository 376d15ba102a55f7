-- A method's intermediate structure, stored with its generation (docs/design.md §15): Markov-cluster's
-- clusters, transition matrix and path; RAPID-style's outline, dependency graph and writing
-- order; LongScope-style's skeletons, edits and scores. NULL or {} for the other methods.
ALTER TABLE fct_generations ADD COLUMN structure JSON;
