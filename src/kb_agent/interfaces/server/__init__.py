"""`kb-agent serve`: the HTTP API (FastAPI). Every request is authenticated, mapped to the policy's
UserContext and passes the same gate as the CLI; answers stream over SSE; an OpenAI-compatible
/v1/chat/completions lets any OpenAI client or chat UI talk to kb-agent.

`app.py` builds the application; each router module (query, search, sources, openai, admin) holds one
group of routes and reaches the engine only through the injected `Services` (`deps.py`)."""

from kb_agent.interfaces.server.app import create_app

__all__ = ["create_app"]
