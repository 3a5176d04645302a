"""A leading `---` YAML block (Markdown front matter), read so that its `acl` can never be lost silently.

A block that mentions an `acl` key (any case, `acls` too) must parse cleanly, start on the first line,
stay within the size limit, hold the key once at the top level and give a valid group list - or the file
is skipped (`AclError`). Blocks without an `acl` key keep the tolerant behaviour: a block that does not
parse is treated as ordinary text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from kb_agent.ingest.acl import AclError, groups_from_value

MAX_LINES = 200
MAX_CHARS = 64 * 1024
_ACL_KEY = re.compile(r"^[\s-]*[\"']?acls?[\"']?\s*:", re.I)


@dataclass
class FrontMatter:
    data: dict = field(default_factory=dict)
    lines: int = 0  # lines the block spans from line 1 (0 = no front matter)
    acl: frozenset[str] | None = None  # None = the block sets no ACL


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice (plain PyYAML keeps the last one silently)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: set = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, str | int | float | bool):
            continue
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_front_matter(lines: list[str], where: str) -> FrontMatter:
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or lines[first].strip() != "---":
        return FrontMatter()
    close = next((i for i in range(first + 1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    block = lines[first + 1 : close] if close is not None else lines[first + 1 : first + 1 + MAX_LINES]
    mentions_acl = any(_ACL_KEY.match(line) for line in block)
    if close is None:
        if mentions_acl:
            raise AclError(f"{where}: front matter with an acl is never closed with '---'")
        return FrontMatter()  # a thematic break, not front matter
    if first > 0:
        if mentions_acl:
            raise AclError(
                f"{where}: front matter must start on the first line (a blank line before '---' "
                "would make its acl ignored)"
            )
        return FrontMatter()
    text = "\n".join(block)
    if len(block) > MAX_LINES or len(text) > MAX_CHARS:
        if mentions_acl:
            raise AclError(f"{where}: front matter is longer than {MAX_LINES} lines or {MAX_CHARS // 1024} KB")
        return FrontMatter()
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        if mentions_acl:
            raise AclError(f"{where}: front matter does not parse ({_yaml_problem(exc, first + 2)})") from None
        return FrontMatter()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        if mentions_acl:
            raise AclError(f"{where}: front matter is not a mapping, so its acl cannot be read")
        return FrontMatter()
    keys = [k for k in data if isinstance(k, str) and k.strip().lower() in ("acl", "acls")]
    if len(keys) > 1:
        raise AclError(f"{where}: front matter sets the acl more than once ({', '.join(map(repr, keys))})")
    if mentions_acl and not keys:
        raise AclError(f"{where}: front matter has an acl that is not a top-level key")
    acl = groups_from_value(data[keys[0]], f"{where}: front matter") if keys else None
    meta = {k: v for k, v in data.items() if k not in keys}
    return FrontMatter(meta, close + 1, acl)


def _yaml_problem(exc: yaml.YAMLError, first_line: int) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
    return f"line {first_line + mark.line}: {problem}" if mark is not None else str(problem)
