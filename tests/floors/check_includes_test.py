#!/usr/bin/env python3
"""scripts/check-includes.py on small made-up projects: it names each kind of offence, with
its file and line, and passes a project that keeps to its table."""

import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-includes.py"

TABLE = """
rulestream_floor(model core/model)
rulestream_floor(store trial/store USES model PRIVATE_DEPS TBB::tbb)
rulestream_floor(sinks sinks SUBFOLDERS http USES model)
set(RULESTREAM_PUBLIC_HEADERS
  core/model/mode.hpp
  sinks/sink.hpp)
"""


class CheckIncludesTest(unittest.TestCase):
    def project(self, files):
        root = pathlib.Path(self.enterContext(tempfile.TemporaryDirectory()))
        (root / "cmake").mkdir()
        (root / "cmake" / "floors.cmake").write_text(TABLE)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(textwrap.dedent(text))
        return root

    def run_check(self, root):
        result = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                                capture_output=True, text=True)
        return result.returncode, result.stdout.splitlines()

    def base(self):
        return {
            "core/model/mode.hpp": "#pragma once\n",
            "core/model/internal.hpp": "#pragma once\n",
            "trial/store/store.hpp": '#pragma once\n#include "core/model/mode.hpp"\n',
            "sinks/sink.hpp": '#pragma once\n#include "core/model/mode.hpp"\n',
            "examples/example.cpp": '#include "sinks/sink.hpp"\n',
            "tests/store_test.cpp": '#include "trial/store/store.hpp"\n',
            "core/README.md": "# core/\n",
            "trial/README.md": "# trial/\n",
        }

    def test_a_project_that_keeps_to_its_table_passes(self):
        code, lines = self.run_check(self.project(self.base()))
        self.assertEqual((code, lines), (0, []))

    def test_an_include_that_climbs_a_floor_is_named_with_its_line(self):
        files = self.base()
        files["core/model/mode.cpp"] = '#include "core/model/mode.hpp"\n#include "trial/store/store.hpp"\n'
        code, lines = self.run_check(self.project(files))
        self.assertEqual(code, 1)
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].startswith('core/model/mode.cpp:2: floor model includes '
                                            '"trial/store/store.hpp" of floor store'), lines[0])

    def test_a_sibling_floor_that_is_not_used_is_refused(self):
        files = self.base()
        files["sinks/file_sink.cpp"] = '#include "trial/store/store.hpp"\n'
        code, lines = self.run_check(self.project(files))
        self.assertEqual(code, 1)
        self.assertIn("sinks/file_sink.cpp:1: floor sinks includes", lines[0])
        self.assertIn("sinks may include only its own floor and: model", lines[0])

    def test_a_public_header_that_includes_an_internal_one_is_named(self):
        files = self.base()
        files["sinks/sink.hpp"] = '#pragma once\n#include "core/model/internal.hpp"\n'
        code, lines = self.run_check(self.project(files))
        self.assertEqual(code, 1)
        self.assertEqual(lines, ['sinks/sink.hpp:2: public header includes '
                                 '"core/model/internal.hpp", which is not public'])

    def test_examples_include_public_headers_only(self):
        files = self.base()
        files["examples/example.cpp"] = '#include "trial/store/store.hpp"\n'
        code, lines = self.run_check(self.project(files))
        self.assertEqual(code, 1)
        self.assertIn("examples/example.cpp:1: examples include public headers only", lines[0])

    def test_relative_missing_and_homeless_files_are_named(self):
        files = self.base()
        files["trial/store/a.cpp"] = '#include "../model/mode.hpp"\n#include "core/model/gone.hpp"\n'
        files["core/stray.cpp"] = ""
        files["apps/notes.txt"] = ""
        files["sinks/extra/b.cpp"] = ""
        code, lines = self.run_check(self.project(files))
        self.assertEqual(code, 1)
        self.assertEqual(sorted(lines), sorted([
            'trial/store/a.cpp:1: "../model/mode.hpp": write includes from the project root',
            'trial/store/a.cpp:2: "core/model/gone.hpp" is not a file of the project',
            "core/stray.cpp: belongs to no floor (cmake/floors.cmake names the floors' folders)",
            "core/stray.cpp: core/ holds floors only (and a README)",
            "apps/notes.txt: apps/ holds floors only (and a README)",
            "sinks/extra/b.cpp: belongs to no floor (cmake/floors.cmake names the floors' folders)",
        ]))

    def test_a_floors_named_sub_folders_are_that_floor(self):
        files = self.base()
        files["sinks/http/webhook.hpp"] = '#pragma once\n#include "sinks/sink.hpp"\n'
        files["sinks/http/webhook.cpp"] = ('#include "sinks/http/webhook.hpp"\n'
                                           '#include "core/model/internal.hpp"\n')
        files["sinks/sink.cpp"] = '#include "sinks/sink.hpp"\n#include "sinks/http/webhook.hpp"\n'
        self.assertEqual(self.run_check(self.project(files)), (0, []))
        files["sinks/http/webhook.cpp"] += '#include "trial/store/store.hpp"\n'
        code, lines = self.run_check(self.project(files))
        self.assertEqual(code, 1)
        self.assertEqual(len(lines), 1)
        self.assertTrue(lines[0].startswith('sinks/http/webhook.cpp:3: floor sinks includes '
                                            '"trial/store/store.hpp" of floor store'), lines[0])

    def test_a_sub_folder_of_a_sub_folder_is_not_the_floors(self):
        files = self.base()
        files["sinks/http/tls/client.cpp"] = '#include "sinks/sink.hpp"\n'
        code, lines = self.run_check(self.project(files))
        self.assertEqual((code, lines), (1, [
            "sinks/http/tls/client.cpp: belongs to no floor "
            "(cmake/floors.cmake names the floors' folders)"]))

    def test_tests_may_include_any_floor(self):
        files = self.base()
        files["tests/everything_test.cpp"] = '#include "trial/store/store.hpp"\n#include "sinks/sink.hpp"\n'
        self.assertEqual(self.run_check(self.project(files)), (0, []))


if __name__ == "__main__":
    unittest.main()
