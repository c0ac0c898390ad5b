"""JSON and YAML output: same input and options give byte-identical text."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

# characters JSON may carry raw but a terminal or an editor would act on (DEL, C1 controls, bidi)
_INVISIBLE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029]")


def to_json(data: Any) -> str:
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    # outside strings JSON has only ASCII, so these can only be inside strings: same value, escaped
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) if _INVISIBLE.search(text) else text


class _Dumper(yaml.SafeDumper):
    pass


def _str_repr(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style=style)


_Dumper.add_representer(str, _str_repr)
_Dumper.add_multi_representer(str, _str_repr)  # str subclasses too (StrEnum values such as Outcome)


def to_yaml(data: Any) -> str:
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=True, allow_unicode=True, default_flow_style=False, width=120)
    if _INVISIBLE.search(text):  # PyYAML writes bidi characters raw when unicode is allowed: escape everything
        text = yaml.dump(data, Dumper=_Dumper, sort_keys=True, allow_unicode=False, default_flow_style=False,
                         width=120)
    return text
