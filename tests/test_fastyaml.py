"""The fast YAML reader reads every text it accepts exactly as PyYAML's safe loader does, and refuses
(returns None, so PyYAML reads it) whatever it cannot prove it reads alike."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from pysched.snapshot import fastyaml
from pysched.snapshot.loader import _parse_yaml, load_snapshot

pytestmark = pytest.mark.skipif(not fastyaml.available(), reason="yaml_rs is not installed")

ROOT = Path(__file__).resolve().parent.parent
YAML_FILES = sorted(p for base in (ROOT / "fixtures", ROOT / "tests", ROOT / "plugins") if base.is_dir()
                    for p in base.rglob("*.y*ml"))


def pyyaml_docs(text: str) -> list[tuple[object, int | None]]:
    return [(d.obj, d.line if d.obj is not None else None) for d in _parse_yaml(text, "x.yaml")]


def fast_docs(text: str) -> list[tuple[object, int | None]] | None:
    """The fast reader's documents; the line of an empty document is never used (it holds no object)."""
    got = fastyaml.read_block_yaml(text, force=True)
    return None if got is None else [(obj, line if obj is not None else None) for obj, line in got]


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_of_the_project_reads_alike(path: Path) -> None:
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        pytest.skip("not UTF-8 (a bad-input fixture)")
    try:
        expected = pyyaml_docs(text)
    except Exception:
        assert fastyaml.read_block_yaml(text, force=True) is None
        return
    got = fast_docs(text)
    if got is not None:
        assert got == expected


CASES = {
    "list": ("apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata:\n    name: a\n", True),
    "stream-with-comments": ("# head\n\n---\n# c\na: 1\n---\n\n---\nb: [] # x\nc: {}\n", True),
    "hash-label": ("labels:\n  pod-template-hash: 747242e187\n  n: 12\nx: 1.5\n", True),
    "quoted-words": ("a: 'yes'\nb: \"0755\"\nc: '1e5'\nd: 'on'\n", True),
    "timestamps-stay-strings": ("t: 2025-03-01T08:00:00Z\nd: 2025-03-01\n", True),
    "yaml11-bool": ("a: yes\n", False),
    "octal": ("mode: 0755\n", False),
    "sexagesimal": ("t: 1:30\n", False),
    "hash-as-key": ("747242e187: x\n", False),
    "hash-and-same-float": ("a: 747242e187\nb: 7.47242e+192\n", False),
    "alias": ("a: &x 1\nb: *x\n", False),
    "tag": ("a: !foo 1\n", False),
    "flow": ("a: [1, 2]\n", False),
    "complex-key": ("? a\n: 1\n", False),
    "tab": ("a:\t1\n", False),
    "crlf": ("a: 1\r\nb: 2\r\n", False),
    "directive": ("%YAML 1.1\n---\na: 1\n", False),
    "doc-end": ("a: 1\n...\n", False),
    "separator-with-content": ("--- a\n", False),
    "duplicate-key": ("a: 1\na: 2\n", False),
    "value-tag": ("a: =\n", False),
    "control-char": ("a: b\x0bc\n", False),
    "delete-char": ("a: b\x7fc\n", False),
    "c1-control": ("a: b\x9bc\n", False),
    "nel-in-quotes": ("a: 'x\x85y'\n", False),
    "line-separator": ("a: b\u2028c\n", False),
    "noncharacter": ("a: b\uffffc\n", False),
    "no-break-space": ("a: 1\xa02\nb: caf\xe9\n", True),
    "nonempty-flow-after-empty": ("a: {}\nb: {c: 1}\n", False),
    "deep-block": ("- " * 200000 + "x\n", False),
    "deep-mapping": ("".join(" " * i + "a:\n" for i in range(60)) + " " * 60 + "b: 1\n", False),
    # the checks read the distinct lines and their words: each refusal also after other lines
    "reserved-at": ("a: 1\nb: @x\n", False),
    "reserved-backquote": ("a: 1\nb: `x\n", False),
    "anchor-in-sequence": ("a: 1\nb:\n- &x 1\n", False),
    "complex-key-later": ("a: 1\n? b\n: 2\n", False),
    "doc-end-later": ("a: 1\n...\n---\nb: 2\n", False),
    "directive-later": ("a: 1\n---\n%TAG ! x\n---\nb: 2\n", False),
    "flow-with-space": ("a: 1\nb: [ ]\n", False),
    "flow-in-sequence": ("a:\n- {b: 1}\n", False),
    "empty-flows": ("a: []\nb:\n- {}\n", True),
    "empty-flow-document": ("[]\n", False),
    "control-in-repeated-lines": ("a: 1\n" + "b: c\x0cd\n" * 3, False),
    "deep-sequence-line": ("a: 1\n" + "- " * 30 + "x\n", False),
    "indicator-inside-word": ("a: b@c\nd: e&f\ng: h[i]\n", True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_accepts_only_what_it_reads_alike(name: str) -> None:
    text, accepted = CASES[name]
    got = fast_docs(text)
    assert (got is not None) == accepted
    if got is not None:
        assert got == pyyaml_docs(text)


def test_small_texts_stay_with_pyyaml() -> None:
    assert fastyaml.read_block_yaml("a: 1\n") is None
    assert fastyaml.read_block_yaml("a: 1\n" * (fastyaml.MIN_CHARS // 5 + 1)) is None  # duplicate keys
    assert fastyaml.read_block_yaml("".join(f"k{i}: {i}\n" for i in range(fastyaml.MIN_CHARS // 5))) is not None


WORD = st.text(alphabet="0123456789_.:+-eExXoObBaAfFiInN~=<yYsStTrRuUlL", min_size=1, max_size=8)


@settings(max_examples=400, deadline=None)
@given(WORD)
def test_words_judged_alike_read_alike(word: str) -> None:
    alike, _, _ = fastyaml._judge(word)
    if alike:
        try:
            a = yaml.load(f"k: {word}\n", Loader=fastyaml._Loader)["k"]
        except yaml.YAMLError:
            return  # not a plain scalar in a value (e.g. "- x"): the text reader refuses such texts anyway
        import yaml_rs
        b = yaml_rs.loads(f"k: {word}\n", parse_datetime=False)["k"]
        assert same(a, b), (word, a, b)


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=30))
def test_what_pyyaml_dumps_reads_back_alike(data: object) -> None:
    text = yaml.safe_dump({"items": [data, {"hash": "747242e187"}]}, default_flow_style=False)
    got = fast_docs(text)
    if got is not None:
        assert got == pyyaml_docs(text)


def test_loader_uses_it_for_large_block_yaml_and_keeps_lines(tmp_path: Path) -> None:
    items = "".join(f"- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n{i}\n    labels:\n"
                    f"      h: 747242e18{i % 10}\n  status:\n    allocatable:\n      cpu: '4'\n" for i in range(800))
    text = "# a dump\napiVersion: v1\nkind: List\nitems:\n" + items
    assert len(text) > fastyaml.MIN_CHARS and fastyaml.read_block_yaml(text) is not None
    path = tmp_path / "nodes.yaml"
    path.write_text(text)
    cluster = load_snapshot([str(path)])
    assert len(cluster.nodes) == 800
    assert cluster.nodes[3].labels["h"] == "747242e183"
    bad = text.replace("      cpu: '4'\n", "      cpu: 'four'\n", 1)
    path.write_text(bad)
    with pytest.raises(Exception, match=":13") as info:
        load_snapshot([str(path)])
    assert "four" in str(info.value) or "cpu" in str(info.value)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="-- \t\na", max_size=40))
def test_document_separators_are_the_bare_dash_lines(text: str) -> None:
    import re

    from pysched.snapshot.reader import document_separators
    expected = [(m.start(), m.end()) for m in re.finditer(r"^---[ \t]*$", text, re.M)]
    assert document_separators(text) == expected


@pytest.mark.parametrize("where", [(3, 40), (0,), (49,), ()], ids=["middle", "first", "last", "none"])
def test_repairs_reach_exactly_the_items_that_need_them(where: tuple[int, ...]) -> None:
    """A word yaml_rs reads as a number and PyYAML as a string is repaired in the items of a List whose
    text holds it, and in the documents of a stream that do; the result is PyYAML's."""
    def item(i: int) -> str:
        labels = "    pod-template-hash: 747242e187\n" if i in where else "    pod-template-hash: 5d8f9c7b6a\n"
        return f"- kind: Pod\n  metadata:\n    name: p{i}\n    labels:\n{labels}    n: '{i}'\n  spec:\n    x: 1.5\n"
    text = "apiVersion: v1\nkind: List\nitems:\n" + "".join(item(i) for i in range(50))
    assert fast_docs(text) == pyyaml_docs(text)
    stream = "".join("---\n" + item(i)[2:].replace("\n  ", "\n") for i in range(50))
    assert fast_docs(stream) == pyyaml_docs(stream)


def test_two_words_read_as_one_number_are_refused() -> None:
    text = "a: 747242e187\nb: 0747242e187\n"  # PyYAML: two strings; yaml_rs: one float twice
    assert [d for d, _ in pyyaml_docs(text)] == [{"a": "747242e187", "b": "0747242e187"}]
    assert fast_docs(text) is None


LINE_WORD = st.text(alphabet="0123456789_.:+-eExXaAgGyYsSnNoOtTrRuUlLfF~=<[]{}?!&*@`%#\u017f", min_size=0, max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.sets(LINE_WORD, max_size=40))
def test_words_judged_in_one_search_as_one_by_one(words: set[str]) -> None:
    """The candidates (begin as a number, or a keyword), the unsafe words (indicators, '?', flow
    collections), and the candidates ``_judge`` finds strings, which one search of them all finds, are
    those a test per word finds (fails when the search's pattern drifts from the rule)."""
    first = set("-+0123456789_.~=<")
    cands = {w for w in words if w and (w[0] in first or fastyaml._KEYWORDS.fullmatch(w))}
    assert fastyaml._candidates(words) == cands
    unsafe = any(w[:1] in set("!&*@`%") or w == "?" or (w.startswith(("[", "{")) and not w.startswith(("[]", "{}")))
                 for w in words)
    assert fastyaml._unsafe_words(words) == unsafe
    strings = {w for w in cands if fastyaml._judge(w)[0] and isinstance(fastyaml._judge(w)[1], str)
               and fastyaml._STRING.match(w[:-1] if w.endswith(":") and len(w) > 1 else w)
               and not fastyaml._KEYWORDS.fullmatch(w[:-1] if w.endswith(":") and len(w) > 1 else w)}
    assert fastyaml._strings(cands) == strings


@pytest.mark.parametrize("word", ["0x_", "0b_"])
def test_a_word_the_pyyaml_constructor_cannot_read_goes_to_pyyaml(word: str) -> None:
    """A plain word PyYAML resolves as a number but cannot convert (``0x_``) is judged unreadable, and
    the text goes to PyYAML, whose error names the line (it crashed the fast reader with a ValueError)."""
    text = f"a: {word}\n" + "".join(f"k{i}: v\n" for i in range(fastyaml.MIN_CHARS // 5))
    assert fastyaml.read_block_yaml(text) is None
