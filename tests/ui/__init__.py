"""Browser tests of `seek ui` (a package, so its conftest is not the top one)."""
