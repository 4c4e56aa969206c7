"""User-facing errors: one line naming the field, the value and what would be valid."""

from __future__ import annotations


class ScalewallError(ValueError):
    """Base of all user-input errors. The CLI prints ``str(err)`` on one line and exits 2."""


class SpecError(ScalewallError):
    """A field of a spec, plan or input file has a value scalewall cannot use."""

    def __init__(self, field: str, value: object, valid: str, *, where: str = "") -> None:
        self.field = field
        self.value = value
        self.valid = valid
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}{field}={value!r} is invalid; {valid}")
