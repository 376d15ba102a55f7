"""The queries flows run, by name and with typed arguments, one module per subject: flows
and tasks hold no SQL (tests/test_sql_in_warehouse.py). Rules that the analyst views share
with these queries are macros in warehouse/models/ (`method_rank`,
`default_result_version`, `leaderboard_of`), so each is written once."""
