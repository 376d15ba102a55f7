-- reads:
-- round() as every view shows a number: a small negative rounds to 0.0, never to -0.0
-- (DuckDB's round keeps the sign; -0.0 + 0.0 is +0.0).
CREATE OR REPLACE MACRO rounded(x, decimals) AS round(x, decimals) + 0.0;
