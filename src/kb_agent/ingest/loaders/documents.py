"""Loaders for formats whose text is extracted: PDF, DOCX, HTML, CSV, XLSX.

Line numbers refer to the extracted text (per page for PDF), which is what citations show.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from kb_agent.ingest.loaders.text import decode, headed_sections, split_lines
from kb_agent.ingest.models import LoaderError, ParsedDocument, Section


def load_pdf(path: Path, data: bytes) -> list[ParsedDocument]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise LoaderError("encrypted PDF")
        sections = []
        for page_no, page in enumerate(reader.pages, start=1):
            lines = split_lines(page.extract_text() or "")
            if any(line.strip() for line in lines):
                sections.append(Section(lines=lines, line_numbers=list(range(1, len(lines) + 1)), page=page_no))
        title = str(dict(reader.metadata or {}).get("/Title") or "") or path.stem
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise LoaderError(f"unreadable PDF: {exc}") from exc
    if not sections:
        raise LoaderError("PDF has no extractable text (scanned?)")
    return [ParsedDocument("pdf", title, sections)]


def load_docx(path: Path, data: bytes) -> list[ParsedDocument]:
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, ValueError, KeyError) as exc:
        raise LoaderError(f"unreadable DOCX: {exc}") from exc
    lines: list[str] = []
    levels: list[int | None] = []
    for para in document.paragraphs:
        style = (para.style.name if para.style is not None else "") or ""
        match = re.match(r"Heading (\d)", style)
        text = para.text.replace("\n", " ")
        lines.append(("#" * int(match.group(1)) + " " + text) if match else text)
        levels.append(int(match.group(1)) if match else (1 if style == "Title" else None))
    for table in document.tables:
        for row in table.rows:
            lines.append(" | ".join(cell.text.replace("\n", " ") for cell in row.cells))
            levels.append(None)
    title = document.core_properties.title or next(
        (line.lstrip("# ") for line, lvl in zip(lines, levels, strict=True) if lvl), path.stem
    )
    return [ParsedDocument("docx", title, headed_sections(lines, levels))]


_DROP_TAGS = ("script", "style", "noscript", "nav", "header", "footer", "aside", "form", "svg", "iframe")
_BLOCK_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "td", "th", "dt", "dd", "blockquote")


def html_to_lines(html: str) -> tuple[str, list[str], list[int | None]]:
    """Main text of an HTML page as lines, headings marked with their level."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    title = soup.title.get_text(strip=True) if soup.title else ""
    for tag in soup(_DROP_TAGS):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    lines: list[str] = []
    levels: list[int | None] = []
    for element in root.find_all(_BLOCK_TAGS):
        if element.find(_BLOCK_TAGS):  # a container of other blocks: its children are emitted
            continue
        if element.name == "pre":
            block = element.get_text().split("\n")
        else:
            block = [re.sub(r"\s+", " ", element.get_text(" ")).strip()]
        level = int(element.name[1]) if re.fullmatch(r"h\d", element.name) else None
        for text in block:
            if text.strip():
                lines.append(("#" * level + " " + text) if level else text)
                levels.append(level)
    return title, lines, levels


def load_html(path: Path, data: bytes) -> list[ParsedDocument]:
    title, lines, levels = html_to_lines(decode(data))
    if not lines:
        raise LoaderError("HTML page has no main text")
    return [ParsedDocument("html", title or path.stem, headed_sections(lines, levels))]


def _row_line(headers: list[str], row: list[str]) -> str:
    cells = [f"{h or f'col{i + 1}'}: {v}" for i, (h, v) in enumerate(zip(headers, row, strict=False)) if v]
    return "; ".join(cells)


def load_csv(path: Path, data: bytes) -> list[ParsedDocument]:
    text = decode(data)
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    try:
        headers = [h.strip() for h in next(reader)]
    except StopIteration as exc:
        raise LoaderError("empty CSV") from exc
    except csv.Error as exc:
        raise LoaderError(f"bad CSV: {exc}") from exc
    lines, numbers = [], []
    try:
        for row in reader:
            line = _row_line(headers, [c.strip() for c in row])
            if line:
                lines.append(line)
                numbers.append(reader.line_num)
    except csv.Error as exc:
        raise LoaderError(f"bad CSV at line {reader.line_num}: {exc}") from exc
    return [ParsedDocument("csv", path.name, [Section(lines=lines, line_numbers=numbers)])]


def load_xlsx(path: Path, data: bytes) -> list[ParsedDocument]:
    import zipfile

    import openpyxl

    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise LoaderError(f"unreadable XLSX: {exc}") from exc
    sections = []
    for sheet in workbook.worksheets:
        rows = sheet.iter_rows(values_only=True)
        header_row = next(rows, None)
        if header_row is None:
            continue
        headers = ["" if v is None else str(v).strip() for v in header_row]
        lines, numbers = [], []
        for row_no, row in enumerate(rows, start=2):
            line = _row_line(headers, ["" if v is None else str(v).strip() for v in row])
            if line:
                lines.append(line)
                numbers.append(row_no)
        if lines:
            sections.append(Section(lines=lines, line_numbers=numbers, heading_path=[sheet.title]))
    workbook.close()
    if not sections:
        raise LoaderError("workbook has no rows")
    return [ParsedDocument("xlsx", path.name, sections)]
