"""`eval agent --report report.html`: one static page (inline SVG, no script, no server) with the figures
and the plots that show what a recall costs: evidence recall@5 against LLM calls and against seconds,
one point per question and one marked point per route and per hop count, then the per-question table."""

from __future__ import annotations

import html
import statistics
from pathlib import Path

_W, _H, _PAD = 460, 300, 44
_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def write_report(path: Path, result: dict, rows: list[dict]) -> Path:
    figures = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
        for k, v in result.items()
        if not isinstance(v, dict)
    )
    plots = [
        _scatter(rows, "llm_calls", "LLM calls", "complexity", "route"),
        _scatter(rows, "seconds", "seconds", "complexity", "route"),
        _scatter(rows, "llm_calls", "LLM calls", "hops", "hop count"),
        _scatter(rows, "seconds", "seconds", "hops", "hop count"),
    ]
    groups = "".join(_group_table(name, result.get(name, {})) for name in ("by_route", "by_hops"))
    table = "".join(
        "<tr>"
        + "".join(
            f"<td>{html.escape(_fmt(r.get(k)))}</td>"
            for k in ("id", "hops", "complexity", "recall2", "recall5", "contains", "llm_calls", "steps", "seconds")
        )
        + f"<td>{html.escape(r.get('question', ''))}</td><td>{html.escape(str(r.get('answer', ''))[:200])}</td></tr>"
        for r in rows
    )
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>kb-agent eval agent</title>
<style>body{{font:14px system-ui,sans-serif;margin:24px;color:#222}} table{{border-collapse:collapse;margin:8px 0 24px}}
td,th{{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}} svg{{margin:0 16px 16px 0}}
.plots{{display:flex;flex-wrap:wrap}}</style></head><body>
<h1>kb-agent eval agent — {html.escape(str(result.get("dataset", "")))}</h1>
<table>{figures}</table>
<h2>What recall costs</h2><div class="plots">{"".join(plots)}</div>
{groups}
<h2>Questions</h2><table><tr><th>id</th><th>hops</th><th>route</th><th>R@2</th><th>R@5</th><th>contains</th>
<th>LLM calls</th><th>steps</th><th>s</th><th>question</th><th>answer</th></tr>{table}</table>
</body></html>"""
    path.write_text(page, encoding="utf-8")
    return path


def _fmt(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _group_table(name: str, groups: dict) -> str:
    if not groups:
        return ""
    keys = list(next(iter(groups.values())).keys())
    head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
    body = "".join(
        f"<tr><th>{html.escape(g)}</th>" + "".join(f"<td>{_fmt(v[k])}</td>" for k in keys) + "</tr>"
        for g, v in groups.items()
    )
    return f"<h2>{html.escape(name.replace('_', ' '))}</h2><table><tr><th></th>{head}</tr>{body}</table>"


def _scatter(rows: list[dict], x_key: str, x_label: str, group_key: str, group_label: str) -> str:
    """Recall@5 (y, 0..1) against `x_key`: small dots per question, a large ringed point per group mean."""
    xs = [float(r.get(x_key) or 0.0) for r in rows] or [0.0]
    x_max = max(max(xs) * 1.1, 1.0)  # at least one unit: a run with no LLM call still has an axis

    def px(x: float) -> float:
        return _PAD + (_W - 2 * _PAD) * x / x_max

    def py(y: float) -> float:
        return _H - _PAD - (_H - 2 * _PAD) * y

    groups = sorted({str(r.get(group_key)) for r in rows})
    colour = {g: _COLOURS[i % len(_COLOURS)] for i, g in enumerate(groups)}
    parts = [
        f'<line x1="{_PAD}" y1="{py(0)}" x2="{_W - _PAD}" y2="{py(0)}" stroke="#888"/>',
        f'<line x1="{_PAD}" y1="{py(0)}" x2="{_PAD}" y2="{py(1)}" stroke="#888"/>',
        f'<text x="{_W / 2}" y="{_H - 8}" text-anchor="middle">{html.escape(x_label)}</text>',
        f'<text x="12" y="{_H / 2}" transform="rotate(-90 12 {_H / 2})" text-anchor="middle">recall@5</text>',
    ]
    for tick in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{_PAD - 6}" y="{py(tick) + 4}" text-anchor="end">{tick:g}</text>')
    for tick in (0.0, x_max / 2, x_max):
        parts.append(f'<text x="{px(tick)}" y="{py(0) + 16}" text-anchor="middle">{tick:.3g}</text>')
    for r, x in zip(rows, xs, strict=False):
        g = str(r.get(group_key))
        parts.append(f'<circle cx="{px(x):.1f}" cy="{py(r["recall5"]):.1f}" r="3" fill="{colour[g]}" opacity="0.35"/>')
    for i, g in enumerate(groups):
        members = [r for r in rows if str(r.get(group_key)) == g]
        mx = statistics.fmean(float(r.get(x_key) or 0.0) for r in members)
        my = statistics.fmean(r["recall5"] for r in members)
        parts.append(
            f'<circle cx="{px(mx):.1f}" cy="{py(my):.1f}" r="7" fill="{colour[g]}" stroke="#000">'
            f"<title>{html.escape(g)}: recall@5 {my:.2f} at {mx:.2f} {html.escape(x_label)} ({len(members)})</title>"
            "</circle>"
        )
        parts.append(
            f'<text x="{_W - _PAD + 4}" y="{_PAD + 14 * i}" fill="{colour[g]}">{html.escape(group_label)} '
            f"{html.escape(g)}</text>"
        )
    return f'<svg width="{_W + 90}" height="{_H}" role="img">{"".join(parts)}</svg>'
