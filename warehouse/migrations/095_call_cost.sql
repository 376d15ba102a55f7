-- What calls cost in money at their endpoint's price (`llm.prices`, `judge.prices`), NULL
-- where the model has no price or no reply came: a call's tokens (a cached call's were paid
-- for when it was made), a run's spend (its calls made, NULL when any had no price), and a
-- summary's (its calls', cached ones included), carried into each result version.
ALTER TABLE fct_llm_calls ADD COLUMN cost DOUBLE;
ALTER TABLE runs ADD COLUMN cost DOUBLE;
ALTER TABLE fct_generations ADD COLUMN cost DOUBLE;
ALTER TABLE res_scores ADD COLUMN cost DOUBLE;
