"""Shared fixtures of the Python tests: the repository root, the CLI binary, a private cache."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """The `ogham` binary that scripts/test built (`cargo build --bin ogham`)."""
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    path = target / "debug" / "ogham"
    if not path.is_file():
        pytest.fail(f"{path} does not exist: build it with `cargo build --bin ogham` "
                    "(scripts/test does)")
    return path
