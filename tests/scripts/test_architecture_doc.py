"""docs/architecture.md against the tree: every module has its paragraph, each paragraph's "May use:" line names
modules of the table, and a module's sources include, and its CMakeLists.txt links, only itself and what it may use
(so dependencies point down, without circles)."""

import os
import re
import unittest

SOURCE = os.environ.get("TORCHSCOPE_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
MODULES = ["base", "store", "collector", "interop", "analyzer", "compiler", "gui", "cli"]
# Header folders (torchscope/<folder>/) that belong to a module besides its own, and the module of each library.
OWN_HEADERS = {"collector": {"cupti"}}
LIBRARY_MODULE = {
    "base": "base", "store": "store", "collector": "collector", "cupti": "collector", "interop": "interop",
    "analyzer": "analyzer", "compiler": "compiler", "optimize": "compiler", "gui_model": "gui", "gui": "gui",
    "cli_support": "cli",
}
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc")


def read(path):
    with open(os.path.join(SOURCE, path), encoding="utf-8") as file:
        return file.read()


def paragraphs(doc):
    """{module: its "**module** ..." paragraph} of the Modules section."""
    found = {}
    for block in re.split(r"\n\s*\n", doc):
        match = re.match(r"\*\*([a-z]+)\*\* ", block)
        if match and match.group(1) in MODULES:
            found[match.group(1)] = block
    return found


def may_use(paragraph):
    match = re.search(r"^May use: (.*)\.$", paragraph, re.MULTILINE)
    if match is None:
        return None
    return set() if match.group(1) == "nothing" else {name.strip() for name in match.group(1).split(",")}


def included_modules(module):
    used = set()
    for folder, _, files in os.walk(os.path.join(SOURCE, module)):
        for name in files:
            if name.endswith(SOURCE_SUFFIXES):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as file:
                    used.update(re.findall(r'#include "torchscope/([a-z]+)/', file.read()))
    return used


def linked_modules(module):
    """The modules of the torchscope_* libraries that the module's CMakeLists.txt files name (a path such as
    compiler/python/torchscope_compiler/ names a folder, not a library)."""
    linked = set()
    for folder, _, files in os.walk(os.path.join(SOURCE, module)):
        if "CMakeLists.txt" in files:
            with open(os.path.join(folder, "CMakeLists.txt"), encoding="utf-8") as file:
                text = re.sub(r"#.*", "", file.read())
            for name in re.findall(r"(?<![/\w])torchscope_([a-z_]+)\b", text):
                if name in LIBRARY_MODULE:
                    linked.add(LIBRARY_MODULE[name])
    return linked


class ArchitectureDoc(unittest.TestCase):
    def setUp(self):
        self.doc = read("docs/architecture.md")
        self.paragraphs = paragraphs(self.doc)

    def test_every_module_has_a_paragraph_and_a_row(self):
        for module in MODULES:
            self.assertIn(module, self.paragraphs, f"no **{module}** paragraph")
            self.assertIn(f"| `{module}/` |", self.doc, f"no row for {module}/ in the modules table")
            self.assertTrue(os.path.isdir(os.path.join(SOURCE, module)), f"{module}/ is not in the tree")
            if module != "cli":
                self.assertTrue(os.path.isdir(os.path.join(SOURCE, module, "include", "torchscope", module)),
                                f"{module} keeps no public headers in {module}/include/torchscope/{module}/")

    def test_may_use_names_modules_below(self):
        for module, paragraph in self.paragraphs.items():
            allowed = may_use(paragraph)
            self.assertIsNotNone(allowed, f"the {module} paragraph ends without a 'May use: ...' line")
            self.assertFalse(allowed - set(MODULES), f"{module} may use unknown modules: {allowed - set(MODULES)}")
            self.assertNotIn(module, allowed)
        # No circles: a module may use only modules whose own allowance leads back to base.
        allowed = {module: may_use(self.paragraphs[module]) for module in MODULES}
        for module in MODULES:
            for used in allowed[module]:
                self.assertNotIn(module, allowed[used], f"{module} and {used} may use each other")

    def test_includes_and_links_keep_to_may_use(self):
        for module in MODULES:
            allowed = may_use(self.paragraphs[module]) | {module}
            includes = included_modules(module) - OWN_HEADERS.get(module, set())
            self.assertFalse(includes - allowed,
                             f"{module} includes headers of {sorted(includes - allowed)}, which docs/architecture.md "
                             f"does not let it use")
            linked = linked_modules(module)
            self.assertFalse(linked - allowed,
                             f"{module} links libraries of {sorted(linked - allowed)}, which docs/architecture.md "
                             f"does not let it use")


if __name__ == "__main__":
    unittest.main()
