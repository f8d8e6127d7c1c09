#!/usr/bin/env python3
"""Checks every #include "..." of the project against the floor table in cmake/floors.cmake.

- A file of a floor may include headers of its own floor and of the floors its USES lists,
  nothing else of ours (the build lets through what those floors use in turn; this does not).
- A public header (RULESTREAM_PUBLIC_HEADERS) includes public headers only, and examples/
  include public headers (and their own) only, as does include/ (the installed umbrella header).
- Every C++ file under the floors' top-level folders belongs to a floor: it lies in a floor's
  folder or in one of the SUBFOLDERS that floor names (rules/sagemaker/ is the rules floor's),
  never in a sub-folder the table does not name. The folders that hold floors in sub-folders
  (core/, trial/, engine/, apps/) hold nothing at their top but a README.
- Includes are written from the project root: no "../", and the header must exist.

Prints one line per offence, `path:line: what is wrong`, and exits 1 when there is any.
"""

import argparse
import pathlib
import re
import sys

TABLE = pathlib.PurePosixPath("cmake/floors.cmake")
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h"}
# Folders that may include anything of ours: they mirror the floors to test and measure them.
UNRESTRICTED = ("tests/", "benchmarks/")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
# The top-level folders that hold floors in sub-folders and nothing else but a README.
FLOORS_ONLY = ("core", "trial", "engine", "apps")


class Floors:
    """The floor table: each floor's folders (its folder and its SUBFOLDERS) and the floors it
    USES, and the public headers."""

    def __init__(self, root: pathlib.Path):
        text = re.sub(r"#.*", "", (root / TABLE).read_text())
        self.uses = {}  # floor -> floors it may include
        self.folder_floor = {}  # folder (a floor's own, or one of its SUBFOLDERS) -> floor
        for call in re.finditer(r"rulestream_floor\(([^)]*)\)", text):
            name, folder, *rest = call.group(1).split()
            uses, section = [], None
            self.folder_floor[folder] = name
            for word in rest:
                if word in ("SUBFOLDERS", "USES", "PUBLIC_DEPS", "PRIVATE_DEPS"):
                    section = word
                elif section == "USES":
                    uses.append(word)
                elif section == "SUBFOLDERS":
                    self.folder_floor[f"{folder}/{word}"] = name
            self.uses[name] = uses
        public = re.search(r"set\(RULESTREAM_PUBLIC_HEADERS([^)]*)\)", text)
        self.public_headers = set(public.group(1).split()) if public else set()

    def floor_of(self, path: str):
        """The floor of a file of the project (a generated .pb.h: its proto/ folder's floor)."""
        folder = pathlib.PurePosixPath(path).parent
        if path.endswith(".pb.h") and folder.name == "proto":
            folder = folder.parent
        return self.folder_floor.get(str(folder))

    def top_folders(self):
        return sorted({folder.split("/")[0] for folder in self.folder_floor})


def include_problems(root: pathlib.Path, floors: Floors, rel: str):
    """The offences of one file's #include lines."""
    own = floors.floor_of(rel)
    allowed = {own, *floors.uses[own]} if own else None
    is_example = rel.startswith(("examples/", "include/"))
    text = (root / rel).read_text(errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        match = INCLUDE.match(line)
        if not match:
            continue
        target, where = match.group(1), f"{rel}:{number}"
        if ".." in pathlib.PurePosixPath(target).parts:
            yield f'{where}: "{target}": write includes from the project root'
            continue
        if not target.endswith(".pb.h") and not (root / target).is_file():
            yield f'{where}: "{target}" is not a file of the project'
            continue
        if is_example:
            if target not in floors.public_headers and not target.startswith("examples/"):
                yield f'{where}: examples include public headers only, and "{target}" is not one'
            continue
        if rel in floors.public_headers and target not in floors.public_headers:
            yield f'{where}: public header includes "{target}", which is not public'
        if allowed is None:
            continue
        target_floor = floors.floor_of(target)
        if target_floor is None:
            yield f'{where}: "{target}" belongs to no floor'
        elif target_floor not in allowed:
            may = ", ".join(sorted(a for a in allowed if a != own)) or "nothing of ours"
            yield (f'{where}: floor {own} includes "{target}" of floor {target_floor}; '
                   f"{own} may include only its own floor and: {may}")


def check(root: pathlib.Path):
    """Every offence in the project at `root`, and how many files were read."""
    floors = Floors(root)
    problems = []
    for name, uses in floors.uses.items():
        problems += [f"{TABLE}: floor {name} uses unknown floor {u}" for u in uses
                     if u not in floors.uses]
    problems += [f"{TABLE}: public header {h} does not exist"
                 for h in sorted(floors.public_headers) if not (root / h).is_file()]
    checked = 0
    for top in floors.top_folders() + ["examples", "include", "tests", "benchmarks"]:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            free = rel.startswith(UNRESTRICTED) or rel.startswith(("examples/", "include/"))
            if not free and floors.floor_of(rel) is None:
                problems.append(f"{rel}: belongs to no floor ({TABLE} names the floors' folders)")
                continue
            checked += 1
            problems += include_problems(root, floors, rel)
    for top in FLOORS_ONLY:
        for stray in sorted((root / top).glob("*")):
            if stray.is_file() and stray.name != "README.md":
                problems.append(f"{stray.relative_to(root).as_posix()}: {top}/ holds floors only "
                                "(and a README)")
    return problems, checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent,
                        help="the project to check (default: this script's project)")
    problems, checked = check(parser.parse_args().root.resolve())
    for problem in problems:
        print(problem)
    print(f"check-includes: {checked} files, {len(problems)} offence(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
