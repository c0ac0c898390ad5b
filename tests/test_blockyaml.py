"""The plain-Python block YAML reader reads every text it accepts exactly as PyYAML's safe loader does
(values, types, key order, document lines), and refuses (returns None: fastyaml or PyYAML read it)
whatever it does not know."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from pysched.snapshot import blockyaml
from pysched.snapshot.loader import _parse_yaml, load_snapshot

ROOT = Path(__file__).resolve().parent.parent
YAML_FILES = sorted(p for base in (ROOT / "fixtures", ROOT / "tests", ROOT / "plugins") if base.is_dir()
                    for p in base.rglob("*.y*ml"))


def pyyaml_docs(text: str) -> list[tuple[object, int | None]]:
    return [(d.obj, d.line if d.obj is not None else None) for d in _parse_yaml(text, "x.yaml")]


def fast_docs(text: str) -> list[tuple[object, int | None]] | None:
    got = blockyaml.read_block_yaml(text)
    return None if got is None else [(obj, line if obj is not None else None) for obj, line in got]


def same(a: object, b: object) -> bool:
    """Equal with the same types at every level (``1 == True`` and ``1 == 1.0`` are not the same here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)  # type: ignore[arg-type]
    return a == b


def same_docs(a: list[tuple[object, int | None]], b: list[tuple[object, int | None]]) -> bool:
    return len(a) == len(b) and all(x[1] == y[1] and same(x[0], y[0]) for x, y in zip(a, b, strict=True))


def test_every_yaml_file_of_the_project_reads_alike() -> None:
    accepted = 0
    for path in YAML_FILES:
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue  # a bad-input fixture
        try:
            expected = pyyaml_docs(text)
        except Exception:
            assert blockyaml.read_block_yaml(text) is None, path
            continue
        got = fast_docs(text)
        if got is not None:
            accepted += 1
            assert same_docs(got, expected), path
    assert accepted > len(YAML_FILES) // 2  # (fails if the reader refuses nearly everything)


CASES = {
    "list": ("apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata:\n    name: a\n", True),
    "stream-with-comments": ("# head\n\n---\n# c\na: 1\n---\n\n---\nb: []\nc: {}\n", True),
    "leading-empty-documents": ("---\n---\na: 1\n", True),
    "empty": ("", True),
    "only-comments": ("# x\n\n  # y\n", True),
    "indentless-and-indented-sequences": ("a:\n- 1\n- x: 2\n  y:\n  - 3\nb:\n  - c\n  -   d: e\n      f: g\n", True),
    "null-values": ("a:\nb: ~\nc: null\nd: Null\ne:\n  f:\n", True),
    "keywords": ("a: yes\nb: No\nc: ON\nd: off\ne: TRUE\nf: false\ng: y\nh: n\ni: nil\n", True),
    "integers": ("a: 0\nb: -5\nc: +7\nd: 123456789012345678\ne: '12'\n", True),
    "hash-label": ("labels:\n  pod-template-hash: 747242e187\n  n: 12\n", True),
    "strings-that-look-numeric": ("a: 10.0.0.1\nb: 1e5\nc: 2025-03-01T08:00:00Z\nd: 1-2\ne: 0.1.2\n", True),
    "quoted": ("a: 'yes'\nb: \"0755\"\nc: 'it''s'\nd: \"x: y\"\ne: ''\n'k: 1': \"v\"\n\"q\": 'w'\n", True),
    "double-quoted-escapes": ('a: "tab\\there \\"q\\" \\\\ \\u00e9 \\n"\n', True),
    "plain-inside-characters": ("a: b@c\nd: e&f\ng: h[i]\nj: k:l\nm: it's\nn: -x\n", True),
    "unicode": ("a: caf\xe9\nc: \U0001f600\n", True),
    "no-break-space": ("a: 1\xa02\n", False),  # (PyYAML reads it; Python's isprintable() refuses it)
    "sequence-of-scalars": ("- a\n- 'b'\n- 1\n- {}\n- []\n", True),
    "indented-root": ("  a: 1\n  b: 2\n", True),
    "trailing-spaces": ("a: 1   \nb:   \n  c: d  \n", True),
    # refused: read by fastyaml or PyYAML
    "float": ("x: 1.5\n", False),
    "octal": ("mode: 0755\n", False),
    "hex": ("a: 0x1F\n", False),
    "sexagesimal": ("t: 1:30\n", False),
    "underscore-int": ("a: 1_000\n", False),
    "inf": ("a: .inf\n", False),
    "long-integer": ("a: " + "9" * 30 + "\n", False),
    "number-key": ("80: x\n", False),
    "bool-key": ("true: x\n", False),
    "null-key": ("~: x\n", False),
    "merge": ("a: 1\n<<: {}\n", False),
    "value-tag": ("a: =\n", False),
    "alias": ("a: &x 1\nb: *x\n", False),
    "anchor-in-sequence": ("a: 1\nb:\n- &x 1\n", False),
    "tag": ("a: !foo 1\n", False),
    "flow": ("a: [1, 2]\n", False),
    "flow-with-space": ("a: [ ]\n", False),
    "flow-map": ("a:\n- {b: 1}\n", False),
    "block-scalar": ("a: |\n  x\n", False),
    "folded-scalar": ("a: >-\n  x\n", False),
    "multi-line-plain": ("a: b\n  c\n", False),
    "multi-line-quoted": ("a: 'b\n  c'\n", False),
    "value-on-next-line": ("a:\n  b\n", False),
    "complex-key": ("? a\n: 1\n", False),
    "comment-after-value": ("a: 1 # x\n", False),
    "tab": ("a:\t1\n", False),
    "crlf": ("a: 1\r\nb: 2\r\n", False),
    "directive": ("%YAML 1.1\n---\na: 1\n", False),
    "doc-end": ("a: 1\n...\n", False),
    "separator-with-content": ("--- a\n", False),
    "duplicate-key": ("a: 1\na: 2\n", False),
    "duplicate-key-nested": ("a:\n  b: 1\n  c: 2\n  b: 3\n", False),
    "control-char": ("a: b\x0bc\n", False),
    "c1-control": ("a: b\x9bc\n", False),
    "line-separator": ("a: b\u2028c\n", False),
    "bom-inside": ("a: b\ufeffc\n", False),
    "noncharacter": ("a: b\uffffc\n", False),
    "nested-sequence": ("- - a\n", False),
    "dash-alone": ("-\n  a: 1\n", False),
    "deep-block": ("- " * 2000 + "x\n", False),
    "deep-mapping": ("".join(" " * i + "a:\n" for i in range(60)) + " " * 60 + "b: 1\n", False),
    "bad-indentation": ("a:\n    b: 1\n  c: 2\n", False),
    "dash-at-mapping-indent": ("a: 1\n- b\n", False),
    "scalar-document": ("hello\n", False),
    "mapping-value-in-value": ("a: b: c\n", False),
    "escape-unknown": ('a: "\\x41"\n', False),
    "escape-surrogate": ('a: "\\ud800"\n', False),
    "dedent-below-root": ("  a: 1\nb: 2\n", False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_accepts_only_what_it_reads_alike(name: str) -> None:
    text, accepted = CASES[name]
    got = fast_docs(text)
    assert (got is not None) == accepted
    if got is not None:
        assert same_docs(got, pyyaml_docs(text))


WORD = st.text(alphabet="0123456789_.:+-eExXoObBaAfFiInN~=<yYsStTrRuUlL'\" #", min_size=1, max_size=8)


@settings(max_examples=400, deadline=None)
@given(WORD, WORD)
def test_words_read_alike(key: str, word: str) -> None:
    for text in (f"k: {word}\n", f"- {word}\n", f"{key}: v\n", f"a:\n- {key}: {word}\n"):
        got = fast_docs(text)
        if got is not None:
            assert same_docs(got, pyyaml_docs(text)), text


@settings(max_examples=80, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=30), st.booleans())
def test_what_pyyaml_dumps_reads_back_alike(data: object, indent_sequences: bool) -> None:
    class Dumper(yaml.SafeDumper):
        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, False if indent_sequences else indentless)

    text = yaml.dump({"items": [data, {"hash": "747242e187"}]}, Dumper=Dumper, default_flow_style=False)
    got = fast_docs(text)
    if got is not None:
        assert same_docs(got, pyyaml_docs(text)), text


def test_a_kubectl_like_dump_is_read_here_and_keeps_its_lines(tmp_path: Path) -> None:
    items = "".join(f"- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n{i}\n    labels:\n"
                    f"      h: 747242e18{i % 10}\n  status:\n    allocatable:\n      cpu: '4'\n" for i in range(50))
    text = "# a dump\napiVersion: v1\nkind: List\nitems:\n" + items
    assert fast_docs(text) is not None and same_docs(fast_docs(text) or [], pyyaml_docs(text))
    path = tmp_path / "nodes.yaml"
    path.write_text(text)
    cluster = load_snapshot([str(path)])
    assert len(cluster.nodes) == 50
    assert cluster.nodes[3].labels["h"] == "747242e183"
    path.write_text(text.replace("      cpu: '4'\n", "      cpu: 'four'\n", 1))
    with pytest.raises(Exception, match=":13") as info:
        load_snapshot([str(path)])
    assert "four" in str(info.value) or "cpu" in str(info.value)


def test_loads_that_need_neither_pyyaml_nor_yaml_rs_import_neither(tmp_path: Path) -> None:
    """A JSON snapshot, and a block YAML one this reader reads, load without importing PyYAML (its
    import compiles a large regular expression) or yaml_rs; a text this reader refuses still loads."""
    node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n  allocatable:\n    cpu: '4'\n    pods: '10'\n"
    (tmp_path / "a.yaml").write_text(node)
    (tmp_path / "b.json").write_text('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}')
    (tmp_path / "c.yaml").write_text(node.replace("n1", "n3").replace("  name: n3\n", "  name: n3\n  x: 1.5\n"))
    code = ("import sys\nfrom pysched.snapshot.loader import load_snapshot\n"
            "for f in sys.argv[1:-1]:\n    load_snapshot([f])\n"
            "print(sorted(m for m in ('yaml', 'yaml_rs') if m in sys.modules))\n"
            "c = load_snapshot([sys.argv[-1]])\nprint(sorted(m for m in ('yaml',) if m in sys.modules), len(c.nodes))\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.yaml"), str(tmp_path / "b.json"),
                          str(tmp_path / "c.yaml")], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split("\n")[:2] == ["[]", "['yaml'] 1"], out.stdout + out.stderr
