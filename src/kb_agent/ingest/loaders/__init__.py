"""Pick a loader for a file by its name, or by sniffing when the extension is unknown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kb_agent.ingest.loaders.documents import load_csv, load_docx, load_html, load_pdf, load_xlsx
from kb_agent.ingest.loaders.text import load_jsonl, load_markdown, load_plain
from kb_agent.ingest.models import LoaderError, ParsedDocument
from kb_agent.text.decoding import has_wide_bom

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


# zip formats (DOCX, XLSX) are checked before a parser inflates them: a small file can unpack to gigabytes
MAX_UNZIPPED_BYTES = 200 * 1024 * 1024
MAX_ZIP_RATIO = 100  # office XML compresses about 5-20x; a zip bomb by thousands
ZIP_FORMATS = {".docx", ".xlsx"}


def check_zip(data: bytes, max_bytes: int = MAX_UNZIPPED_BYTES, max_ratio: int = MAX_ZIP_RATIO) -> None:
    """LoaderError when the archive's declared unpacked size or compression ratio is out of bounds."""
    import io
    import zipfile

    limit = min(max_bytes, max(max_ratio * len(data), 1024 * 1024))
    unpacked = 0
    try:  # the bytes are counted as they inflate: the sizes a zip header declares can lie
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                with archive.open(info) as member:
                    while block := member.read(1 << 20):
                        unpacked += len(block)
                        if unpacked > limit:
                            raise LoaderError(
                                f"unpacks to more than {limit:,} bytes (limits: {max_bytes:,} bytes and "
                                f"{max_ratio}:1 compression): not parsed"
                            )
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        raise LoaderError(f"not a valid zip container: {exc}") from None


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192] and not has_wide_bom(data)


def load(path: Path, data: bytes) -> list[ParsedDocument]:
    """Parse a file into documents. Raises LoaderError with a human reason when it cannot."""
    suffix = path.suffix.lower()
    if suffix in BINARY_FORMATS:
        if suffix in ZIP_FORMATS:
            check_zip(data)
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
