#!/usr/bin/env python3
"""Checks every #include "..." of the project against the floor table in cmake/floors.cmake.

- A file of a floor may include headers of its own floor and of the floors its USES lists,
  nothing else of ours (the build lets through what those floors use in turn; this does not).
- A public header (RULESTREAM_PUBLIC_HEADERS) includes public headers only, and examples/
  include public headers (and their own) only.
- Every source file under the floors' top-level folders belongs to a floor: nothing left in
  a folder that no floor names.
- Includes are written from the project root: no "../", and the header must exist.

Prints one line per offence, `path:line: what is wrong`, and exits 1 when there is any.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / "cmake" / "floors.cmake"
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h"}
# Folders that may include anything of ours (they mirror the floors to test and measure them).
UNRESTRICTED = ("tests/", "benchmarks/")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def parse_table():
    text = re.sub(r"#.*", "", TABLE.read_text())
    floors = {}  # name -> (folder, uses)
    for call in re.finditer(r"rulestream_floor\(([^)]*)\)", text):
        words = call.group(1).split()
        name, folder, rest = words[0], words[1], words[2:]
        uses, section = [], None
        for word in rest:
            if word in ("USES", "PUBLIC_DEPS", "PRIVATE_DEPS"):
                section = word
            elif section == "USES":
                uses.append(word)
        floors[name] = (folder, uses)
    public = re.search(r"set\(RULESTREAM_PUBLIC_HEADERS([^)]*)\)", text)
    public_headers = set(public.group(1).split()) if public else set()
    return floors, public_headers


def main():
    floors, public_headers = parse_table()
    problems = []
    for name, (_, uses) in floors.items():
        for used in uses:
            if used not in floors:
                problems.append(f"{TABLE.relative_to(ROOT)}: floor {name} uses unknown floor {used}")
    folder_floor = {folder: name for name, (folder, _) in floors.items()}

    def floor_of(path: str):
        return folder_floor.get(str(pathlib.PurePosixPath(path).parent))

    tops = sorted({folder.split("/")[0] for folder, _ in floors.values()})
    for header in sorted(public_headers):
        if not (ROOT / header).is_file():
            problems.append(f"{TABLE.relative_to(ROOT)}: public header {header} does not exist")

    checked = 0
    for top in tops + ["examples", "tests", "benchmarks"]:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(ROOT).as_posix()
            own = floor_of(rel)
            restricted = not rel.startswith(UNRESTRICTED) and not rel.startswith("examples/")
            if restricted and own is None:
                problems.append(f"{rel}: belongs to no floor (cmake/floors.cmake names its folders)")
                continue
            checked += 1
            allowed = {own, *floors[own][1]} if own else None
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = match.group(1)
                where = f"{rel}:{number}"
                if ".." in pathlib.PurePosixPath(target).parts:
                    problems.append(f'{where}: "{target}": write includes from the project root')
                    continue
                if target.endswith(".pb.h"):
                    # Generated from a .proto in a proto/ folder of its floor's folder.
                    target_floor = floor_of(str(pathlib.PurePosixPath(target).parent))
                elif not (ROOT / target).is_file():
                    problems.append(f'{where}: "{target}" is not a file of the project')
                    continue
                else:
                    target_floor = floor_of(target)
                if rel.startswith("examples/"):
                    if target not in public_headers and not target.startswith("examples/"):
                        problems.append(f'{where}: examples include public headers only, and "{target}" is not one')
                    continue
                if rel in public_headers and target not in public_headers:
                    problems.append(f'{where}: public header includes "{target}", which is not public')
                if allowed is None:
                    continue
                if target_floor is None:
                    problems.append(f'{where}: "{target}" belongs to no floor')
                elif target_floor not in allowed:
                    may = ", ".join(sorted(a for a in allowed if a != own)) or "nothing of ours"
                    problems.append(f'{where}: floor {own} includes "{target}" of floor {target_floor}; '
                                    f"{own} may include only its own floor and: {may}")

    # Nothing but a README at pipeline/'s top: every file there has a floor to live on.
    for stray in sorted((ROOT / "pipeline").glob("*")):
        if stray.is_file() and stray.name != "README.md":
            problems.append(f"{stray.relative_to(ROOT)}: pipeline/ holds floors only (and a README)")

    for problem in problems:
        print(problem)
    print(f"check-includes: {checked} files, {len(problems)} offence(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
