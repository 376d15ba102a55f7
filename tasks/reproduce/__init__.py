"""The RAL-Writer paper's tables and figures from lilo's results (docs/design.md §1, §16):
statistics per leaderboard cell, the published numbers beside lilo's, the runs `lilo
reproduce ral-writer` plans, and its report page."""
