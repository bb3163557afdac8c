"""The package's version, one place for pyproject.toml and the User-Agent."""

__version__ = "0.1.0"
