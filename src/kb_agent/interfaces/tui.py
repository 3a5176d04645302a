"""The Textual app (`kb-agent` with no arguments), like the original: chat, live agent steps, Tab toggles
KB / chat mode, a settings screen, slash commands and a citation viewer."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Header, Input, Label, Markdown, Static

from kb_agent.engine import Engine
from kb_agent.governance.identity import UserContext

HELP = """**Commands**
- `/index PATH` — index a folder or file into the current knowledge base
- `/file_search PATTERN` — find indexed files by name, glob or path fragment
- `/help` — this help · `/clear` — forget the conversation · `/quit` — leave

**Keys**: Tab toggles KB mode (answers from documents, with citations) and chat mode ·
Ctrl+S settings · click a reference to see the cited lines."""


class CitationScreen(ModalScreen):
    """The cited lines in context (read through the same ACL-checked read_file tool)."""

    BINDINGS: ClassVar = [Binding("escape", "dismiss", "Close")]

    def __init__(self, title: str, text: str):
        super().__init__()
        self._title, self._text = title, text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="citation"):
            yield Label(self._title, id="citation-title")
            yield Static(self._text, id="citation-text", markup=False)
            yield Button("Close", id="close")

    @on(Button.Pressed, "#close")
    def _close(self) -> None:
        self.dismiss()


class SettingsScreen(ModalScreen):
    BINDINGS: ClassVar = [Binding("escape", "dismiss", "Close")]

    def __init__(self, kb: str, user: UserContext, engine: Engine):
        super().__init__()
        self._kb, self._user, self._engine = kb, user, engine

    def compose(self) -> ComposeResult:
        model = self._engine.model_name()
        with VerticalScroll(id="settings"):
            yield Label("Settings")
            yield Static(
                f"user: {self._user.user_id}   model: {model}   knowledge bases: "
                f"{', '.join(self._engine.kb_names()) or '(none)'}",
                markup=False,
            )
            yield Label("Knowledge base")
            yield Input(value=self._kb, id="kb-input")
            yield Button("Save", id="save")

    @on(Button.Pressed, "#save")
    def _save(self) -> None:
        self.dismiss(self.query_one("#kb-input", Input).value.strip() or self._kb)


class KBAgentApp(App):
    TITLE = "kb-agent"
    CSS = """
    #messages { height: 1fr; padding: 0 1; }
    #steps { height: 1; color: $text-muted; padding: 0 1; }
    .user { color: $accent; margin-top: 1; }
    .refs Button { min-width: 8; margin-right: 1; }
    #citation, #settings { width: 80%; height: 80%; border: round $accent; background: $surface; padding: 1 2; }
    CitationScreen, SettingsScreen { align: center middle; }
    """
    BINDINGS: ClassVar = [
        Binding("tab", "toggle_mode", "KB/chat mode", priority=True),
        Binding("ctrl+s", "settings", "Settings"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, engine: Engine, user: UserContext | None = None, kb: str | None = None):
        super().__init__()
        self.engine, self.user = engine, user or UserContext.local_owner()
        self.kb = kb or engine.settings.default_kb
        self.mode = "kb"
        self.history: list[dict] = []
        self.citations: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield VerticalScroll(id="messages")
        yield Static("", id="steps")
        yield Input(placeholder="Ask the knowledge base…  (/help for commands)", id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        self._update_title()
        self.query_one("#prompt", Input).focus()

    def _update_title(self) -> None:
        self.sub_title = f"{'KB mode' if self.mode == 'kb' else 'chat mode'} · kb {self.kb} · {self.user.user_id}"

    def action_toggle_mode(self) -> None:
        self.mode = "chat" if self.mode == "kb" else "kb"
        self._update_title()
        self._say(f"*mode: {self.mode}*")

    def action_settings(self) -> None:
        def apply(kb: str | None) -> None:
            if kb:
                self.kb = kb
                self._update_title()

        self.push_screen(SettingsScreen(self.kb, self.user, self.engine), apply)

    def _say(self, markdown: str, css: str | None = None) -> Markdown:
        widget = Markdown(markdown, classes=css or "")
        messages = self.query_one("#messages", VerticalScroll)
        messages.mount(widget)
        messages.scroll_end(animate=False)
        return widget

    @on(Input.Submitted, "#prompt")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.value = ""
        if not text:
            return
        if text.startswith("/"):
            self._command(text)
            return
        self._say(f"**you:** {text}", "user")
        if self.mode == "kb":
            self._ask(text)
        else:
            self._chat(text)

    def _command(self, text: str) -> None:
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in ("/quit", "/exit"):
            self.exit()
        elif name == "/help":
            self._say(HELP)
        elif name == "/clear":
            self.history.clear()
            self.query_one("#messages", VerticalScroll).remove_children()
        elif name == "/index" and arg:
            self._index(arg)
        elif name == "/file_search" and arg:
            self._file_search(arg)
        else:
            self._say(f"unknown command or missing argument: `{text}` — try `/help`")

    @work(thread=True, exclusive=True)
    def _ask(self, question: str) -> None:
        steps: list[str] = []

        def on_event(event: dict) -> None:
            if event["type"] == "step":  # only the steps that really run
                steps.append(event["label"])
                self.call_from_thread(self.query_one("#steps", Static).update, " → ".join(steps))

        try:
            answer = self.engine.answer_query(
                question, user=self.user, history=self.history[-6:], kbs=[self.kb], on_event=on_event
            )
        except Exception as exc:  # shown, never a crash
            self.call_from_thread(self._say, f"**error:** {exc}")
            return
        self.history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer.answer}]
        self.call_from_thread(self._show_answer, answer)

    def _show_answer(self, answer) -> None:
        self.query_one("#steps", Static).update("")
        self._say(answer.answer.split("\n\nReferences:\n", 1)[0])
        if answer.citations:
            buttons = []
            for c in answer.citations:
                key = f"cite-{len(self.citations)}"
                self.citations[key] = c
                buttons.append(Button(f"[{c.n}] {c.citation}", id=key))
            row = Horizontal(*buttons, classes="refs")
            row.styles.height = "auto"
            self.query_one("#messages", VerticalScroll).mount(row)
        for notice in answer.notices:
            self._say(f"*note: {notice}*")

    @on(Button.Pressed)
    def _open_citation(self, event: Button.Pressed) -> None:
        citation = self.citations.get(event.button.id or "")
        if citation is None:
            return
        start = max(1, citation.start_line - 5)
        result = self.engine.run_tool(
            "read_file",
            {"path": citation.path, "start_line": start, "end_line": citation.end_line + 5},
            user=self.user,
            kbs=[self.kb],
        )
        if result.status != "ok":
            text = f"cannot show the source: {result.error}"
        else:
            item = result.evidence[0]
            text = "\n".join(
                f"{'▶' if citation.start_line <= n <= citation.end_line else ' '} {n:>5}  {line}"
                for n, line in enumerate(item.text.split("\n"), start=item.start_line)
            )
        self.push_screen(CitationScreen(citation.citation, text))

    @work(thread=True, exclusive=True)
    def _chat(self, text: str) -> None:
        try:  # the same gated, budgeted, masked chat mode as the CLI and the server
            reply = self.engine.chat(text, user=self.user, history=self.history[-10:])
        except Exception as exc:  # shown, never a crash
            self.call_from_thread(self._say, f"*{exc}*")
            return
        self.history += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
        self.call_from_thread(self._say, reply)

    @work(thread=True)
    def _index(self, path: str) -> None:
        try:
            report = self.engine.index([Path(path).expanduser()], kb=self.kb)
            message = (
                f"indexed `{path}` into **{self.kb}**: {len(report.added)} added, {len(report.updated)} "
                f"updated, {len(report.deleted)} removed, {len(report.skipped)} skipped"
            )
        except Exception as exc:
            message = f"**error:** {exc}"
        self.call_from_thread(self._say, message)

    def _file_search(self, pattern: str) -> None:
        result = self.engine.run_tool("local_file_qa", {"pattern": pattern}, user=self.user, kbs=[self.kb])
        if result.status != "ok":
            self._say(f"*{result.error}*")
            return
        self._say(
            "\n".join(
                f"- `{e.path}` (L{e.start_line}-{e.end_line})" for e in {e.path: e for e in result.evidence}.values()
            )
        )


def run_tui(engine: Engine, user: UserContext | None = None, kb: str | None = None) -> None:
    KBAgentApp(engine, user, kb).run()
