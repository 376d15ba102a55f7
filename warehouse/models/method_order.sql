-- reads:
-- The order methods are listed in wherever results are shown (the leaderboard views, the
-- report, the CLI): the paper's four in Table 2's order; any other method comes after them
-- (`coalesce(rank, 5)`), by name.
CREATE OR REPLACE VIEW method_order AS
SELECT * FROM (
    VALUES ('single', 1), ('agentwrite', 2), ('compress', 3), ('ral_writer', 4)
) AS t(method, rank);

-- A method's place in that order: what every listing sorts by.
CREATE OR REPLACE MACRO method_rank(name) AS
    coalesce((SELECT rank FROM method_order WHERE method = name), 5);
