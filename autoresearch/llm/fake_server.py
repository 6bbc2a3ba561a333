"""A local server that speaks the OpenAI and Anthropic wire formats, for tests and demos.

Point the real SDK clients at it: OpenAI `base_url=server.openai_base_url` (ends in /v1),
Anthropic `base_url=server.anthropic_base_url` (no /v1). A script decides each reply from
the decoded request; faults (429 with retry-after, 5xx, slow replies, malformed tool
arguments) are injected in front of it; every request is recorded for assertions.

    with FakeLLMServer(lambda req: "hello", api_key="sk-test-...") as server:
        provider = OpenAIProvider("gpt-4.1-mini", api_key="sk-test-...", base_url=server.openai_base_url)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import autoresearch.llm._fake_wire as wire
from autoresearch.llm.messages import Message, ToolChoice
from autoresearch.llm.provider import Provider
from autoresearch.llm.scripted import Reply, estimate_tokens, to_response
from autoresearch.llm.settings import ProviderKind
from skills.tooldef import ToolDef

_ROUTES = {"/v1/chat/completions": ProviderKind.OPENAI, "/v1/messages": ProviderKind.ANTHROPIC}


class FaultKind(str, Enum):
    """What goes wrong with the next request(s)."""

    RATE_LIMIT = "rate_limit"
    SERVER_ERROR = "server_error"
    SLOW = "slow"
    MALFORMED_TOOL_ARGS = "malformed_tool_args"


class Fault(BaseModel):
    """One injected fault, applied to the next `times` requests."""

    model_config = ConfigDict(frozen=True)

    kind: FaultKind
    """What happens."""
    times: int = Field(1, ge=1)
    """How many consecutive requests it hits."""
    retry_after: str | None = None
    """RATE_LIMIT: the retry-after header (seconds or an HTTP date); None sends none."""
    status: int = 500
    """SERVER_ERROR: the HTTP status."""
    delay_s: float = 5.0
    """SLOW: how long to wait before answering."""
    message: str | None = None
    """RATE_LIMIT / SERVER_ERROR: the error message in the body (a default when None)."""


class FakeRequest(BaseModel):
    """A request as the script sees it, decoded from either wire format."""

    model_config = ConfigDict(frozen=True)

    wire: ProviderKind
    """Which wire format the request came in."""
    model: str
    """The model asked for."""
    messages: list[Message]
    """The conversation, system prompt first."""
    tools: list[ToolDef]
    """The tools offered."""
    tool_choice: ToolChoice | None
    """The tool choice sent, if any."""
    max_tokens: int | None
    """The token limit sent (max_tokens or max_completion_tokens)."""


class RecordedRequest(BaseModel):
    """One HTTP request exactly as it arrived, and the status it got."""

    model_config = ConfigDict(frozen=True)

    path: str
    """Path with query string."""
    headers: dict[str, str]
    """Headers, names lower-cased."""
    body: str
    """The raw body."""
    status: int
    """The HTTP status answered."""


Script = Callable[[FakeRequest], Reply]


class FakeLLMServer:
    """A threaded HTTP server on 127.0.0.1 and an ephemeral port; a context manager."""

    def __init__(self, script: Script, *, api_key: str | None = None) -> None:
        self.script = script
        self.api_key = api_key
        """When set, requests must carry it (Bearer or x-api-key) or get a 401."""
        self.requests: list[RecordedRequest] = []
        self._faults: list[tuple[Fault, int]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None

    @classmethod
    def replaying(cls, provider: Provider, **kwargs: Any) -> FakeLLMServer:
        """Answer with another provider (e.g. a ScriptedProvider of canned turns)."""

        def script(req: FakeRequest) -> Reply:
            return provider.complete(req.messages, req.tools, tool_choice=req.tool_choice or ToolChoice.AUTO)

        return cls(script, **kwargs)

    # lifecycle
    def start(self) -> FakeLLMServer:
        self._stopping.clear()
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-llm-server", daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "start the server first"
        return self._httpd.server_address[1]

    @property
    def openai_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # faults
    def inject(self, kind: FaultKind, *, times: int = 1, **options: Any) -> None:
        """Queue a fault for the next `times` requests (after any fault already queued)."""
        fault = Fault(kind=kind, times=times, **options)
        with self._lock:
            self._faults.append((fault, fault.times))

    def _next_fault(self) -> Fault | None:
        with self._lock:
            if not self._faults:
                return None
            fault, left = self._faults[0]
            if left <= 1:
                self._faults.pop(0)
            else:
                self._faults[0] = (fault, left - 1)
            return fault

    # request handling
    def _authorized(self, headers: dict[str, str]) -> str | None:
        """None when the key matches; otherwise the key presented (echoed like some APIs do)."""
        if self.api_key is None:
            return None
        presented = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return None if presented == self.api_key else presented or "(none)"

    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
        kind = _ROUTES.get(path.split("?", 1)[0])
        if kind is None:
            return 404, {}, wire.error_body(ProviderKind.OPENAI, 404, f"no route {path}")
        bad_key = self._authorized(headers)
        if bad_key is not None:
            return 401, {}, wire.error_body(kind, 401, f"Incorrect API key provided: {bad_key}")
        fault = self._next_fault()
        if fault and fault.kind is FaultKind.RATE_LIMIT:
            extra = {"retry-after": fault.retry_after} if fault.retry_after is not None else {}
            return 429, extra, wire.error_body(kind, 429, fault.message or "Rate limit reached (injected)")
        if fault and fault.kind is FaultKind.SERVER_ERROR:
            return fault.status, {}, wire.error_body(kind, fault.status, fault.message or "Internal error (injected)")
        if fault and fault.kind is FaultKind.SLOW:
            self._stopping.wait(fault.delay_s)
        body = json.loads(raw or b"{}")
        decode = wire.decode_openai if kind is ProviderKind.OPENAI else wire.decode_anthropic
        messages, tools, choice = decode(body)
        request = FakeRequest(
            wire=kind,
            model=body.get("model", ""),
            messages=messages,
            tools=tools,
            tool_choice=choice,
            max_tokens=body.get("max_tokens") or body.get("max_completion_tokens"),
        )
        try:
            reply = to_response(self.script(request), model=request.model, input_tokens=estimate_tokens(messages))
        except Exception as exc:  # noqa: BLE001 - a script bug is reported to the client as a 400
            return 400, {}, wire.error_body(kind, 400, f"fake server script failed: {type(exc).__name__}: {exc}")
        malformed = fault is not None and fault.kind is FaultKind.MALFORMED_TOOL_ARGS
        encode = wire.encode_openai if kind is ProviderKind.OPENAI else wire.encode_anthropic
        return 200, {}, encode(reply, malformed=malformed)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, extra, payload = self.fake.handle(self.path, headers, raw)
        with self.fake._lock:
            self.fake.requests.append(
                RecordedRequest(path=self.path, headers=headers, body=raw.decode(errors="replace"), status=status)
            )
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence per-request logs
        return
