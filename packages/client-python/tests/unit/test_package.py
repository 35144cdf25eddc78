from __future__ import annotations

import ast
import importlib.util
import os
import sysconfig
import unittest
from pathlib import Path

import pressroom

PACKAGE = Path(__file__).resolve().parents[2]
SOURCES = sorted((PACKAGE / "src" / "pressroom").glob("*.py"))


def in_standard_library(origin: object) -> bool:
    if origin in ("built-in", "frozen"):
        return True
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    relative = os.path.relpath(os.path.realpath(str(origin)), stdlib)
    return not relative.startswith(os.pardir) and relative.split(os.sep)[0] not in ("site-packages", "dist-packages")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


class Package(unittest.TestCase):
    def test_exports_the_pinned_api(self) -> None:
        for name in ("Pressroom", "PressroomError", "verify_signature"):
            self.assertIn(name, pressroom.__all__)
        self.assertTrue((PACKAGE / "src" / "pressroom" / "py.typed").is_file())

    def test_parses_as_python_3_9(self) -> None:
        self.assertGreater(len(SOURCES), 4)
        for path in SOURCES:
            with self.subTest(path.name):
                ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(3, 9))

    def test_imports_only_the_standard_library(self) -> None:
        site_packages = os.path.join(sysconfig.get_paths()["stdlib"], "site-packages", "requests", "__init__.py")
        self.assertFalse(in_standard_library(site_packages))
        self.assertFalse(in_standard_library("/opt/elsewhere/requests/__init__.py"))
        for path in SOURCES:
            for name in imported_modules(path) - {"__future__"}:
                with self.subTest(f"{path.name}: {name}"):
                    spec = importlib.util.find_spec(name)
                    self.assertIsNotNone(spec)
                    origin = spec.origin if spec else None
                    self.assertTrue(in_standard_library(origin), f"{name} comes from {origin}, outside the standard library")


if __name__ == "__main__":
    unittest.main()
