"""tx-train under Hydra, beside the run itself: the Hydra callbacks around its jobs (conf/hydra/default.yaml:
a sweep's seed axis before the sweeper is built, the private folder of a data-parallel run's other
processes, the report at a sweep's end) and the one line a config Hydra cannot compose becomes."""
