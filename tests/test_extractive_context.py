"""Extractive answers that read a line in its context: an import statement names its module, a line
introducing a code block is about the names the block lists, a sentence is completed by the one that says
its consequence or what the thing is instead."""

from __future__ import annotations

import pytest

from kb_agent.agent import extractive, name_kinds
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.tools.base import Evidence


def _evidence(text: str, path: str, headings: list[str], start: int = 1) -> Evidence:
    lines = text.rstrip("\n").split("\n")
    return Evidence(
        source=path, path=path, start_line=start, end_line=start + len(lines) - 1, text="\n".join(lines),
        heading_path=headings,
    )  # fmt: skip


def _weights(asked: set[str]) -> dict[str, float]:
    return dict.fromkeys(asked, 2.0)


TRUSTED_HOST = """The following arguments are supported:

* `allowed_hosts` - A list of domain names that should be allowed as hostnames.
* `www_redirect` - If set to True, requests to non-www versions of the allowed hosts will be redirected."""
REFERENCE = """::: fastapi.middleware.trustedhost.TrustedHostMiddleware

It can be imported from `fastapi`:

```python
from fastapi.middleware.trustedhost import TrustedHostMiddleware
```"""


@pytest.mark.parametrize("rule", [True, False], ids=["import_names_its_module", "control_no_rule"])
def test_asked_which_module_an_import_statement_names_it(monkeypatch, rule):
    """dev22 x2201 (TrustedHostMiddleware 可以从哪个模块导入？) was answered with the English `allowed_hosts`
    line, which names a parameter: the import statement names the module, but not in backticks."""
    if not rule:
        monkeypatch.setattr(name_kinds, "_MODULE_KINDS", frozenset())
    sources = [
        _evidence(TRUSTED_HOST, "middleware.md", ["Advanced Middleware", "`TrustedHostMiddleware`"], 64),
        _evidence(REFERENCE, "reference/middleware.md", ["Middleware"], 31),
    ]
    ranked = extractive.rank("TrustedHostMiddleware 可以从哪个模块导入？", sources, weights=_weights)
    assert ("fastapi.middleware.trustedhost" in ranked[0].text) is rule

