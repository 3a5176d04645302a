"""What the benchmarks print: their result rows as one Markdown table (pasted into docs/benchmarks.md)."""

from __future__ import annotations


def print_markdown_table(rows: list[dict]) -> None:
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
