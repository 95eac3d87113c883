"""One base for every error queuewatch raises on purpose, so a caller can tell them from bugs."""


class QueuewatchError(Exception):
    """A named failure with a message that says what was wrong and where: bad config, settings or
    input, a snapshot too large to travel, a lost write race, a tick out of time."""
