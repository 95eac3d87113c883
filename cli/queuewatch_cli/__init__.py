"""The `queuewatch` command line, the local demo and the local runner: installed by pip, never shipped to Lambda."""
