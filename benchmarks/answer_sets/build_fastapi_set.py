"""Build benchmarks/answer_sets/fastapi_docs.jsonl: questions over the FastAPI docs in ../shared (our own,
not a published benchmark), with gold file + line spans located from an anchor string, so the spans stay
right if the set is rebuilt. Half the questions are for tuning, half are held out (`split`).

    python benchmarks/answer_sets/build_fastapi_set.py

Types: exact, conceptual, zh, cross_lingual (a zh question whose answer is on an English-only page),
chitchat, unanswerable, file_discovery. `must_contain` is a list of groups; an answer must contain one
alternative of every group."""

from __future__ import annotations

import json
from pathlib import Path

DOCS = Path(__file__).resolve().parents[3] / "shared" / "data" / "fastapi_docs" / "docs"
OUT = Path(__file__).with_name("fastapi_docs.jsonl")

# (split, type, question, [(file, anchor)], must_contain groups)
SPEC = [
    (
        "tune",
        "exact",
        "What is the default value of max_age in FastAPI's CORSMiddleware?",
        [("en/docs/tutorial/cors.md", "Defaults to `600`")],
        [["600"]],
    ),
    (
        "tune",
        "exact",
        "Which package must be installed to receive uploaded files?",
        [("en/docs/tutorial/request-files.md", "To receive uploaded files, first install")],
        [["python-multipart"]],
    ),
    (
        "tune",
        "exact",
        "What exception does FastAPI raise internally when a request contains invalid data?",
        [("en/docs/tutorial/handling-errors.md", "When a request contains invalid data")],
        [["RequestValidationError"]],
    ),
    (
        "tune",
        "conceptual",
        "How do I return an HTTP error response to the client?",
        [("en/docs/tutorial/handling-errors.md", "To return HTTP responses with errors to the client")],
        [["HTTPException"]],
    ),
    (
        "tune",
        "exact",
        "What does allow_credentials default to in the CORS middleware?",
        [("en/docs/tutorial/cors.md", "`allow_credentials` - Indicate")],
        [["False"]],
    ),
    (
        "tune",
        "conceptual",
        "How can I run code after the response has been sent?",
        [
            ("en/docs/tutorial/background-tasks.md", "First, import `BackgroundTasks`"),
            ("en/docs/tutorial/background-tasks.md", "You can define background tasks to be run *after*"),
        ],
        [["BackgroundTasks", "background task"]],
    ),
    (
        "tune",
        "exact",
        "Which password hashing algorithm does the OAuth2 JWT tutorial recommend?",
        [("en/docs/tutorial/security/oauth2-jwt.md", 'The recommended algorithm is "Argon2"')],
        [["Argon2"]],
    ),
    (
        "tune",
        "exact",
        "What custom header does the middleware example add to responses?",
        [("en/docs/tutorial/middleware.md", "custom header `X-Process-Time`")],
        [["X-Process-Time"]],
    ),
    ("tune", "zh", "CORS 中间件的 max_age 默认值是多少？", [("zh/docs/tutorial/cors.md", "默认为 `600`")], [["600"]]),
    (
        "tune",
        "zh",
        "接收上传文件需要先安装什么？",
        [("zh/docs/tutorial/request-files.md", "要接收上传的文件")],
        [["python-multipart"]],
    ),
    (
        "tune",
        "zh",
        "如何向客户端返回 HTTP 错误响应？",
        [("zh/docs/tutorial/handling-errors.md", "向客户端返回 HTTP 错误响应")],
        [["HTTPException"]],
    ),
    (
        "tune",
        "zh",
        "在后台运行任务要使用哪个类？",
        [("zh/docs/tutorial/background-tasks.md", "首先导入 `BackgroundTasks`")],
        [["BackgroundTasks"]],
    ),
    (
        "tune",
        "cross_lingual",
        "FastAPI 的 status 模块是由哪个库直接提供的？",
        [("en/docs/reference/status.md", "`status` is provided directly by Starlette")],
        [["Starlette"]],
    ),
    (
        "tune",
        "cross_lingual",
        "HTTP 418 状态码在 status 模块里对应哪个常量？",
        [("en/docs/reference/status.md", "HTTP_418_IM_A_TEAPOT")],
        [["HTTP_418_IM_A_TEAPOT"]],
    ),
    ("tune", "chitchat", "Hello! Who are you?", [], []),
    ("tune", "chitchat", "谢谢你的帮助！", [], []),
    (
        "tune",
        "unanswerable",
        "What is the maximum number of WebSocket connections FastAPI allows per worker by default?",
        [],
        [],
    ),
    ("tune", "unanswerable", "How do I enable FastAPI's built-in rate limiting middleware?", [], []),
    (
        "tune",
        "file_discovery",
        "Which documentation file explains CORS?",
        [("en/docs/tutorial/cors.md", "# CORS")],
        [["cors.md"]],
    ),
    (
        "tune",
        "file_discovery",
        "Find the docs page about lifespan events.",
        [("en/docs/advanced/events.md", "# Lifespan Events")],
        [["events.md"]],
    ),
    (
        "tune",
        "conceptual",
        "What is the lifespan parameter of the FastAPI app used for?",
        [("en/docs/advanced/events.md", "You can define this *startup* and *shutdown* logic")],
        [["startup"], ["shutdown"]],
    ),
    (
        "tune",
        "exact",
        "Which parameter of FastAPI() sets the URL of the Swagger UI docs?",
        [("en/docs/tutorial/metadata.md", "You can set its URL with the parameter `docs_url`")],
        [["docs_url"]],
    ),
    (
        "tune",
        "exact",
        "What does ge=1 mean for a numeric path parameter?",
        [("en/docs/tutorial/path-params-numeric-validations.md", "Here, with `ge=1`")],
        [["greater than or equal", ">= 1", "at least 1"]],
    ),
    (
        "tune",
        "conceptual",
        "What is jsonable_encoder used for?",
        [("en/docs/tutorial/encoder.md", "to something compatible with JSON")],
        [["JSON"]],
    ),
    (
        "holdout",
        "exact",
        "Which package provides BaseSettings for reading settings from environment variables?",
        [("en/docs/advanced/settings.md", "Add the `pydantic-settings` package")],
        [["pydantic-settings"]],
    ),
    (
        "holdout",
        "exact",
        "Which HTTP status code means 'Created'?",
        [
            ("en/docs/tutorial/response-status-code.md", '`201` is the status code for "Created"'),
            ("en/docs/tutorial/response-status-code.md", "Another example would be `201`"),
        ],
        [["201"]],
    ),
    (
        "holdout",
        "exact",
        "At which URL is the OpenAPI schema served by default?",
        [("en/docs/tutorial/first-steps.md", "You can see it directly at")],
        [["openapi.json"]],
    ),
    (
        "holdout",
        "conceptual",
        "How do I serve static files from a directory?",
        [("en/docs/tutorial/static-files.md", "You can serve static files automatically from a directory")],
        [["StaticFiles"]],
    ),
    (
        "holdout",
        "exact",
        "What must be installed to use TestClient?",
        [("en/docs/tutorial/testing.md", "To use `TestClient`, first install")],
        [["httpx"]],
    ),
    (
        "holdout",
        "exact",
        "Which path operation parameter returns only the values that were explicitly set?",
        [("en/docs/tutorial/response-model.md", "parameter `response_model_exclude_unset=True`")],
        [["response_model_exclude_unset"]],
    ),
    (
        "holdout",
        "conceptual",
        "How do I split a large application into multiple files?",
        [("en/docs/tutorial/bigger-applications.md", "for that module using `APIRouter`")],
        [["APIRouter"]],
    ),
    (
        "holdout",
        "exact",
        "What exception is raised when a WebSocket connection is closed?",
        [("en/docs/advanced/websockets.md", "will raise a `WebSocketDisconnect` exception")],
        [["WebSocketDisconnect"]],
    ),
    (
        "holdout",
        "conceptual",
        "When do I need root_path?",
        [
            ("en/docs/advanced/behind-a-proxy.md", "In these cases you can use `root_path`"),
            ("en/docs/advanced/behind-a-proxy.md", "You could have a proxy that adds a path prefix"),
        ],
        [["proxy", "prefix"]],
    ),
    (
        "holdout",
        "exact",
        "What max_length does the string validation example set for the q query parameter?",
        [("en/docs/tutorial/query-params-str-validations.md", "set the parameter `max_length` to `50`")],
        [["50"]],
    ),
    (
        "holdout",
        "zh",
        "中间件示例添加了哪个自定义响应头？",
        [("zh/docs/tutorial/middleware.md", "自定义请求头 `X-Process-Time`")],
        [["X-Process-Time"]],
    ),
    (
        "holdout",
        "zh",
        "路径参数里的 ge=1 是什么意思？",
        [("zh/docs/tutorial/path-params-numeric-validations.md", "在这里，使用 `ge=1` 后")],
        [["大于等于", "greater than or equal", ">= 1", "不小于"]],
    ),
    (
        "holdout",
        "zh",
        "读取配置需要安装哪个包？",
        [
            ("zh/docs/advanced/settings.md", "### 安装 `pydantic-settings`"),
            ("zh/docs/advanced/settings.md", "$ uv add pydantic-settings"),
        ],
        [["pydantic-settings"]],
    ),
    (
        "holdout",
        "zh",
        "ReDoc 文档在哪个地址？",
        [("zh/docs/tutorial/first-steps.md", "前往 [http://127.0.0.1:8000/redoc]")],
        [["/redoc"]],
    ),
    (
        "holdout",
        "cross_lingual",
        "fastapi 的 status 模块里包含什么？",
        [("en/docs/reference/status.md", "It contains a group of named constants")],
        [["constant", "常量"]],
    ),
    ("holdout", "chitchat", "Good morning, what can you do?", [], []),
    ("holdout", "chitchat", "你好，你是谁？", [], []),
    ("holdout", "unanswerable", "Which version of FastAPI added native Kafka consumer support?", [], []),
    ("holdout", "unanswerable", "FastAPI 内置的分布式任务调度器怎么配置？", [], []),
    (
        "holdout",
        "file_discovery",
        "Which file documents the TestClient?",
        [("en/docs/tutorial/testing.md", "# Testing"), ("en/docs/reference/testclient.md", "TestClient")],
        [["testing.md", "testclient.md"]],
    ),
    (
        "holdout",
        "file_discovery",
        "哪个文件介绍了中间件？",
        [("zh/docs/tutorial/middleware.md", "# 中间件"), ("en/docs/tutorial/middleware.md", "# Middleware")],
        [["middleware.md"]],
    ),
    (
        "holdout",
        "conceptual",
        "How do I override the default handler for request validation errors?",
        [("en/docs/tutorial/handling-errors.md", "use it with `@app.exception_handler(RequestValidationError)`")],
        [["exception_handler"]],
    ),
    (
        "holdout",
        "exact",
        "Which base image does the Dockerfile example start from?",
        [("en/docs/deployment/docker.md", "FROM python:3.14")],
        [["python:3.14"]],
    ),
    (
        "holdout",
        "exact",
        "What command does the Dockerfile example use to start the app?",
        [
            ("en/docs/deployment/docker.md", "CMD fastapi run app/main.py --port 80"),
            ("en/docs/deployment/docker.md", "Set the **command** to use `fastapi run`"),
        ],
        [["fastapi run"]],
    ),
]


def _line(file: str, anchor: str) -> int:
    lines = (DOCS / file).read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, start=1):
        if anchor in line:
            return number
    raise SystemExit(f"anchor not found in {file}: {anchor!r}")


def main() -> None:
    rows = []
    for n, (split, kind, question, anchors, must) in enumerate(SPEC, start=1):
        gold = [{"path": f, "start_line": _line(f, a), "end_line": _line(f, a)} for f, a in anchors]
        rows.append(
            {
                "id": f"fq{n:02d}",
                "split": split,
                "type": kind,
                "question": question,
                "gold": gold,
                "must_contain": must,
                "answerable": kind not in ("chitchat", "unanswerable"),
            }
        )
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} questions -> {OUT}")


if __name__ == "__main__":
    main()
