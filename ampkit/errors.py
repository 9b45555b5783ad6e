"""The one exception type the CLI turns into a message for the user."""


class AmpkitError(Exception):
    """Something the user can act on: what went wrong, and what to do about it."""

    def __init__(self, what: str, hint: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.hint = hint

    def __str__(self) -> str:
        return self.what if self.hint is None else f"{self.what}\n  hint: {self.hint}"
