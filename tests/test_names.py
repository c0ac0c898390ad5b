"""Name and label rules have one implementation (pysched.apimachinery); the snapshot validator, the model and
the configuration decoder use it and agree."""

from __future__ import annotations

import pytest

from pysched import apimachinery as am
from pysched.model.resources import is_extended
from pysched.snapshot import validation

VALUES = ["web-1", "a.b.c", "Web", "x" * 63, "x" * 64, "x" * 254, "-a", "a-", "1abc", "abc", "team.a", "n\u202e1",
          "ü" * 32, "a\n", ""]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: repr(v[:12]))
@pytest.mark.parametrize(("kind", "rule"), [("Pod", am.DNS1123_SUBDOMAIN), ("Namespace", am.DNS1123_LABEL),
                                            ("Service", am.DNS1035_LABEL)], ids=["subdomain", "label", "dns1035"])
def test_the_validator_short_form_and_upstream_form_agree(kind: str, rule: am.NameRule, value: str) -> None:
    full = rule.errors(value)
    short = rule.error(value)
    assert (short is None) == (not full)
    if value:
        assert (validation.name_error(kind, value) is None) == (not full)
    if short is not None:  # the short line is the first upstream message, without the regex
        assert full[0].startswith(short.split(" (")[0])


def test_lengths_count_bytes_as_go_does() -> None:
    assert am.DNS1123_LABEL.error("x" * 63) is None
    assert am.DNS1123_LABEL.error("x" * 64) == "must be no more than 63 characters (it has 64)"
    assert am.label_value_errors("ü" * 32)[0] == "must be no more than 63 characters"


@pytest.mark.parametrize(("name", "extended"), [
    ("example.com/gpu", True), ("nvidia.com/gpu", True), ("cpu", False), ("kubernetes.io/x", False),
    ("example.com/gpu\n", False), ("Example.com/gpu", False), ("example.com/" + "g" * 64, False),
    ("a/b/c", False)])
def test_extended_resource_names_use_the_qualified_name_rule(name: str, extended: bool) -> None:
    assert is_extended(name) == extended
    if "/" in name and "kubernetes.io/" not in name:
        assert extended == (not am.qualified_name_errors("requests." + name))
