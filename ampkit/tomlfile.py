"""Reading the kit's TOML files (mixes, campaign specs) with one kind of error."""

import tomllib
from pathlib import Path
from typing import Any

from ampkit.errors import AmpkitError


def read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    """The file's text (for line numbers in later errors) and its data."""
    text = path.read_text()
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise AmpkitError(f"{path}: not valid TOML: {e}") from e
