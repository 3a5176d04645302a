"""The Textual app driven by its pilot: asking with live steps, citation viewer, Tab mode toggle, slash
commands and the settings screen."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Button, Input, Markdown

from conftest import HashEmbedder, write
from kb_agent.engine import Engine
from kb_agent.interfaces.tui import CitationScreen, KBAgentApp, SettingsScreen


@pytest.fixture
def engine(settings, tmp_path):
    root = tmp_path / "corp"
    write(root / "handbook.md", "# Handbook\nThe office opens at nine.\nLunch is at noon.\n")
    engine = Engine(settings, embedder=HashEmbedder())
    engine.index([root])
    yield engine
    engine.close()


def _texts(app) -> str:
    return "\n".join(m.source for m in app.query(Markdown))


async def _wait_for(pilot, condition, timeout=10.0):
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not met in time")


def test_ask_shows_the_answer_and_opens_a_citation(engine):
    async def scenario():
        app = KBAgentApp(engine)
        async with app.run_test(size=(120, 40)) as pilot:
            app.query_one("#prompt", Input).value = "When does the office open?"
            await pilot.press("enter")
            await _wait_for(pilot, lambda: len(app.query(Button)) > 0)
            assert "nine" in _texts(app)
            button = app.query(Button).first()
            assert "corp/handbook.md" in str(button.label)
            button.press()
            await _wait_for(pilot, lambda: isinstance(app.screen, CitationScreen))
            shown = str(app.screen.query_one("#citation-text").render())
            assert "The office opens at nine." in shown and "▶" in shown
            await pilot.press("escape")

    asyncio.run(scenario())


def test_tab_toggles_mode_and_slash_commands_work(engine, tmp_path):
    write(tmp_path / "more" / "travel.md", "# Travel\nBook trains two weeks ahead.\n")

    async def scenario():
        app = KBAgentApp(engine)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("tab")
            assert app.mode == "chat" and "chat mode" in app.sub_title
            await pilot.press("tab")
            assert app.mode == "kb"
            for command in ("/help", f"/index {tmp_path / 'more'}", "/file_search travel"):
                app.query_one("#prompt", Input).value = command
                await pilot.press("enter")
                await pilot.pause(0.1)
            await _wait_for(pilot, lambda: "`more/travel.md`" in _texts(app))
            assert "/file_search PATTERN" in _texts(app) and "1 added" in _texts(app)
            app.query_one("#prompt", Input).value = "/clear"
            await pilot.press("enter")
            await pilot.pause(0.1)
            assert _texts(app) == ""
            await pilot.press("ctrl+s")
            await _wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
            app.screen.query_one("#kb-input", Input).value = "other"
            app.screen.query_one("#save", Button).press()
            await _wait_for(pilot, lambda: app.kb == "other")
            app.query_one("#prompt", Input).value = "/quit"
            await pilot.press("enter")

    asyncio.run(scenario())
