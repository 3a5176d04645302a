"""Pick a loader for a file by its name, or by sniffing when the extension is unknown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kb_agent.ingest.loaders.documents import load_csv, load_docx, load_html, load_pdf, load_xlsx
from kb_agent.ingest.loaders.text import load_jsonl, load_markdown, load_plain
from kb_agent.ingest.models import LoaderError, ParsedDocument

MARKDOWN = {".md", ".markdown", ".mdx"}
TEXT = {".txt", ".rst", ".text", ".log", ".adoc", ".org", ".tex"}
CODE = {
    ".py",
    ".pyi",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    ".ts",
    ".tsx",
    ".java",
    ".kt",
    ".kts",
    ".scala",
    ".go",
    ".rs",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".cs",
    ".rb",
    ".php",
    ".swift",
    ".m",
    ".r",
    ".jl",
    ".lua",
    ".pl",
    ".sql",
    ".sh",
    ".bash",
    ".zsh",
    ".ps1",
    ".bat",
    ".yaml",
    ".yml",
    ".json",
    ".toml",
    ".ini",
    ".cfg",
    ".conf",
    ".env",
    ".properties",
    ".xml",
    ".gradle",
    ".proto",
    ".graphql",
    ".tf",
    ".vue",
    ".svelte",
    ".css",
    ".scss",
    ".less",
    ".dockerfile",
    ".mk",
    ".cmake",
}
CODE_NAMES = {"dockerfile", "makefile", "readme", "license", "changelog", "jenkinsfile", "procfile"}
BINARY_FORMATS: dict[str, Callable[[Path, bytes], list[ParsedDocument]]] = {
    ".pdf": load_pdf,
    ".docx": load_docx,
    ".xlsx": load_xlsx,
}
KNOWN_BINARY = {
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".bmp",
    ".ico",
    ".webp",
    ".zip",
    ".gz",
    ".tgz",
    ".bz2",
    ".xz",
    ".7z",
    ".tar",
    ".jar",
    ".war",
    ".class",
    ".exe",
    ".dll",
    ".so",
    ".dylib",
    ".o",
    ".a",
    ".pyc",
    ".whl",
    ".mp3",
    ".mp4",
    ".mov",
    ".avi",
    ".wav",
    ".ttf",
    ".otf",
    ".woff",
    ".woff2",
    ".doc",
    ".xls",
    ".ppt",
    ".pptx",
    ".sqlite",
    ".db",
    ".bin",
    ".gguf",
    ".npy",
    ".parquet",
}


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def load(path: Path, data: bytes) -> list[ParsedDocument]:
    """Parse a file into documents. Raises LoaderError with a human reason when it cannot."""
    suffix = path.suffix.lower()
    if suffix in BINARY_FORMATS:
        return BINARY_FORMATS[suffix](path, data)
    if suffix in KNOWN_BINARY or looks_binary(data):
        raise LoaderError("binary file")
    if suffix in MARKDOWN:
        return load_markdown(path, data)
    if suffix in (".html", ".htm", ".xhtml"):
        return load_html(path, data)
    if suffix in (".csv", ".tsv"):
        return load_csv(path, data)
    if suffix in (".jsonl", ".ndjson"):
        return load_jsonl(path, data)
    if suffix in TEXT:
        return load_plain(path, data, "text")
    if suffix in CODE or path.name.lower() in CODE_NAMES:
        return load_plain(path, data, "code")
    return load_plain(path, data, "text")  # unknown but textual (no NUL bytes): index as text


__all__ = ["LoaderError", "load", "looks_binary"]
