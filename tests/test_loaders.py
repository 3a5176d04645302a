"""Each loader on a small real file of its format, and bad input that must not crash."""

from pathlib import Path

import pytest

from kb_agent.ingest.loaders import LoaderError, load


def _load(path: Path):
    return load(path, path.read_bytes())


def test_markdown_headings_front_matter_and_code_fences(tmp_path):
    path = tmp_path / "guide.md"
    path.write_text(
        "---\ntitle: The Guide\nacl: [eng, ops]\n---\n# Intro\nhello\n```python\n# not a heading\n```\n"
        "## Setup\nsteps here\n"
    )
    (doc,) = _load(path)
    assert doc.title == "The Guide"
    assert doc.acl == ["eng", "ops"]
    assert doc.sections[0].line_numbers[0] == 5  # after the front matter
    assert doc.sections[-1].heading_path == ["Intro", "Setup"]
    assert all("# not a heading" not in s.heading_path for s in doc.sections)


def test_plain_text_and_code(tmp_path):
    for name, kind in (("notes.rst", "text"), ("app.py", "code"), ("conf.yaml", "code"), ("Makefile", "code")):
        path = tmp_path / name
        path.write_text("line one\nline two\n")
        (doc,) = _load(path)
        assert doc.source_type == kind
        assert doc.sections[0].lines == ["line one", "line two"]


def test_bad_utf8_is_replaced_not_fatal(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"caf\xe9 ok\nsecond\n")
    (doc,) = _load(path)
    assert doc.sections[0].lines[0] == "caf\ufffd ok"


def test_binary_is_refused(tmp_path):
    path = tmp_path / "blob.dat"
    path.write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(LoaderError, match="binary"):
        _load(path)


def test_pdf_keeps_pages(tmp_path):
    from reportlab.pdfgen import canvas

    path = tmp_path / "report.pdf"
    pdf = canvas.Canvas(str(path))
    pdf.drawString(72, 720, "First page about quotas")
    pdf.showPage()
    pdf.drawString(72, 720, "Second page about budgets")
    pdf.save()
    (doc,) = _load(path)
    assert doc.source_type == "pdf"
    assert [s.page for s in doc.sections] == [1, 2]
    assert "budgets" in doc.sections[1].lines[0]


def test_broken_pdf_is_a_loader_error(tmp_path):
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    with pytest.raises(LoaderError):
        _load(path)


def test_docx_headings_and_tables(tmp_path):
    import docx

    document = docx.Document()
    document.add_heading("Policy", level=1)
    document.add_paragraph("Remote work is allowed.")
    document.add_heading("Travel", level=2)
    document.add_paragraph("Book through the portal.")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "limit"
    table.rows[0].cells[1].text = "500 EUR"
    path = tmp_path / "policy.docx"
    document.save(path)
    (doc,) = _load(path)
    assert doc.title == "Policy"
    assert doc.sections[-1].heading_path == ["Policy", "Travel"]
    assert any("500 EUR" in line for s in doc.sections for line in s.lines)


def test_html_main_text_only(tmp_path):
    path = tmp_path / "page.html"
    path.write_text(
        "<html><head><title>T</title><script>var x=1;</script></head><body><nav>menu</nav>"
        "<main><h1>Install</h1><p>Run the   installer.</p><h2>Linux</h2><p>Use apt.</p></main>"
        "<footer>copyright</footer></body></html>"
    )
    (doc,) = _load(path)
    text = "\n".join(line for s in doc.sections for line in s.lines)
    assert "Run the installer." in text and "Use apt." in text
    assert "menu" not in text and "copyright" not in text and "var x" not in text
    assert doc.sections[-1].heading_path == ["Install", "Linux"]


def test_csv_rows_with_headers(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("name,team\nAda,kernel\nLin,search\n")
    (doc,) = _load(path)
    section = doc.sections[0]
    assert section.lines == ["name: Ada; team: kernel", "name: Lin; team: search"]
    assert section.line_numbers == [2, 3]


def test_xlsx_rows_with_headers(tmp_path):
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Budget"
    sheet.append(["item", "cost"])
    sheet.append(["gpu", 9000])
    path = tmp_path / "budget.xlsx"
    workbook.save(path)
    (doc,) = _load(path)
    assert doc.sections[0].heading_path == ["Budget"]
    assert doc.sections[0].lines == ["item: gpu; cost: 9000"]
    assert doc.sections[0].line_numbers == [2]


def test_jsonl_records_one_document_each(tmp_path):
    path = tmp_path / "tickets.jsonl"
    path.write_text(
        '{"_id": "LANG-1", "title": "Fix split", "text": "StringUtils.split fails", "metadata": {"type": "fix"}}\n'
        "not json\n"
        '{"_id": "LANG-2", "title": "Add join", "text": "New join method"}\n'
    )
    docs = _load(path)
    assert [d.key for d in docs] == ["LANG-1", "LANG-2"]
    assert docs[0].metadata["type"] == "fix"
    assert docs[1].sections[0].line_numbers == [3]


def test_jsonl_with_no_valid_record_is_an_error(tmp_path):
    path = tmp_path / "junk.jsonl"
    path.write_text("nope\n[1,2]\n")
    with pytest.raises(LoaderError):
        _load(path)
