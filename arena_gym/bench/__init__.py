"""The navigation benchmark: suites of stages (suite.py) run through evaluation's episode
loop (runner.py) into per-episode records (records.py), statistics (stats.py), reports
(report.py, plots.py) and side-by-side comparisons (compare.py). `arena-gym bench` is its
command line."""
