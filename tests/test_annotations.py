"""Code annotations: the numbered list after a code block says what its marked lines are."""

from __future__ import annotations

from kb_agent.agent import evidence_units
from kb_agent.agent.annotations import code_annotations
from kb_agent.agent.extractive import extractive_sentences
from kb_agent.tools.base import Evidence

DOCKERFILE = """### Dockerfile

Now in the same project directory create a file `Dockerfile` with:

```{ .dockerfile .annotate }
# (1)!
FROM python:3.14

# (2)!
WORKDIR /code

# (3)!
CMD ["fastapi", "run", "app/main.py", "--port", "80"]
```

1. Start from the official Python base image.

2. Set the current working directory to `/code`.

    This is where we'll put the `requirements.txt` file.

3. Set the **command** to use `fastapi run`, which uses Uvicorn underneath.

The `--no-cache-dir` option tells `pip` to not save the downloaded packages locally.
"""


def _evidence(text: str) -> Evidence:
    lines = text.split("\n")
    return Evidence(source="docker.md", path="docker.md", start_line=1, end_line=len(lines), text=text)


def test_a_marker_points_to_its_list_item():
    lines = DOCKERFILE.split("\n")
    notes = code_annotations(lines)
    assert notes[lines.index("FROM python:3.14")] == "Start from the official Python base image."
    assert notes[lines.index("WORKDIR /code")] == "Set the current working directory to `/code`."
    assert len(notes) == 3  # the marker comments and the prose are not annotated lines
    trailing = ["```python", "app = FastAPI()  # (1)!", "```", "", "1. Create the app."]
    assert code_annotations(trailing) == {1: "Create the app."}
    unmarked = ["```python", "app = FastAPI()", "```", "", "1. Create the app."]
    assert code_annotations(unmarked) == {}
    interrupted = ["```", "# (1)!", "x = 1", "```", "Some prose.", "1. Not an annotation."]
    assert code_annotations(interrupted) == {}


def test_the_annotated_code_line_answers_what_its_annotation_describes(monkeypatch):
    question = "Which base image does the Dockerfile example start from?"
    answer = " ".join(s.text for s in extractive_sentences(question, [_evidence(DOCKERFILE)]))
    assert "FROM python:3.14" in answer
    monkeypatch.setattr(evidence_units, "code_annotations", lambda lines: {})  # control: annotations not read
    answer = " ".join(s.text for s in extractive_sentences(question, [_evidence(DOCKERFILE)]))
    assert "python:3.14" not in answer
