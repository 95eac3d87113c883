"""The development world, from a checkout: the real handlers run in this process, the tables as template.yaml
declares them in moto, and what moto does not make. For the demo, the tests and the benchmark; never shipped."""
