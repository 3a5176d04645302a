"""Prompt-injection patterns (English and Chinese) in questions and in retrieved content.

Retrieved text is always fenced as data, and nothing in it can change tools, ACLs or the system prompt
(those are decided outside the model). On top of that, a passage that *addresses the assistant* is
quarantined: kept out of the answer and recorded in the audit trail."""

from __future__ import annotations

import re

# Patterns address the assistant (imperatives, its role, its tools, its prompt); plain mentions of
# passwords, access or functions in documentation must not match (measured: 0 hits in 17,827 FastAPI
# paragraphs, 994 HotpotQA and 5,183 SciFact passages).
_PATTERNS: list[tuple[str, str]] = [
    (
        "ignore_instructions",
        r"\b(?:ignore|disregard|forget|override|bypass)\b.{0,40}\b(?:previous|prior|above|"
        r"earlier|all|any|your|the|system)\b.{0,20}\b(?:instructions?|prompts?|rules|guidelines)",
    ),
    (
        "new_role",
        r"\b(?:you are now|from now on,? you (?:are|will|must)|pretend (?:to be|you are)|roleplay as|"
        r"act as (?:an? )?(?:unrestricted|uncensored|evil|jailbroken|DAN|admin(?:istrator)?|root|system))\b",
    ),
    ("jailbreak", r"\b(?:jailbreak|DAN mode|developer mode enabled|do anything now|unfiltered mode)\b"),
    (
        "reveal_system",
        r"\b(?:reveal|print|show|repeat|output|leak)\b.{0,30}\b(?:system prompt|hidden prompt|"
        r"instructions you were given|your (?:rules|prompt|instructions))",
    ),
    (
        "exfiltrate_secrets",
        r"\b(?:reveal|leak|exfiltrate|dump|send me|print out|tell me)\b.{0,40}\b(?:passwords?|"
        r"api[ _-]?keys?|access tokens?|credentials?|secrets?|vault)\b",
    ),
    (
        "tool_command",
        r"\b(?:call|invoke|execute|use)\b.{0,15}\b(?:read_file|index_command|web_fetch|jira_fetch|"
        r"confluence_fetch|graph_related|shell_exec|the \w+ tool)\b",
    ),
    (
        "acl_change",
        r"\b(?:grant|give|elevate)\b.{0,20}\b(?:me|yourself|the user|this user)\b.{0,20}"
        r"\b(?:admin|root|full|unrestricted)\b.{0,10}\b(?:access|privileges|rights|permissions)"
        r"|\b(?:disable|turn off|bypass|ignore)\b.{0,20}\b(?:acls?|access control|security filters?|"
        r"permission checks?)\b",
    ),
    ("chat_markup", r"<\|im_start\|>|<\|system\|>|\[/?INST\]|<<SYS>>"),
    # instructions that would spend the reader's egress: fetch / send something to a URL
    (
        "fetch_url",
        r"\b(?:assistant|ai|chatbot|agent|model|llm|bot)s?\b[,:]?[^.\n]{0,60}\b(?:fetch|retrieve|"
        r"download|visit|browse|load|curl|wget|send|post|upload)\b[^.\n]{0,80}https?://"
        r"|(?:^|[.!?:]\s+)(?:please\s+|now\s+|first,?\s+)?(?:fetch|retrieve|download|browse|curl|wget|"
        r"exfiltrate|send|post|upload)\b[^.\n]{0,60}https?://",
    ),
    (
        "send_data_to_url",
        r"\b(?:send|post|upload|forward|exfiltrate|transmit|leak|report)\b[^.\n]{0,60}\b(?:contents?|"
        r"data|documents?|passages?|secrets?|credentials?|results?|answers?|conversation|context|"
        r"history|salar\w*|password\w*|everything)\b[^.\n]{0,40}https?://",
    ),
    (
        "zh_ignore",
        r"(?:忽略|无视|忘记|忘掉|不要遵守|绕过).{0,12}(?:之前|以上|前面|上述|所有|全部|系统).{0,6}"
        r"(?:指令|指示|说明|提示|规则|要求|限制)",
    ),
    ("zh_role", r"(?:你现在是|从现在开始你|假装你是|扮演一个|角色扮演)"),
    ("zh_jailbreak", r"(?:越狱|开发者模式|无限制模式)"),
    ("zh_reveal", r"(?:泄露|透露|告诉我|发给我|说出).{0,12}(?:系统提示|提示词|密码|密钥|令牌|凭据|凭证|秘钥)"),
    (
        "zh_fetch_url",
        r"(?:助手|模型|机器人|智能体|AI)[^。\n]{0,20}(?:访问|抓取|获取|下载|请求|调用|发送|上传)"
        r"[^。\n]{0,40}https?://|(?:请|立即|马上|现在)(?:抓取|下载|获取|调用|发送|上传)[^。\n]{0,30}https?://",
    ),
    (
        "zh_acl",
        r"(?:给我|授予我|为我|给你自己).{0,8}(?:管理员|最高|全部|所有)权限|(?:关闭|绕过|禁用).{0,6}"
        r"(?:权限|访问控制|安全)(?:检查|过滤|限制)",
    ),
]
_COMPILED = [(name, re.compile(pattern, re.I | re.M)) for name, pattern in _PATTERNS]


def scan(text: str) -> list[str]:
    """Names of the injection patterns the text matches (empty: nothing found)."""
    return [name for name, pattern in _COMPILED if pattern.search(text or "")]
