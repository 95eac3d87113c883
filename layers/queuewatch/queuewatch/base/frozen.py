"""The one pydantic base of queuewatch's value types: immutable, and strict about unknown keys."""

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    # populate_by_name: models with aliases (`for`) take their field names too, as the code writes them.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
