"""API keys never show up in errors, logs, reprs or anything but the auth header."""

from __future__ import annotations

import logging

import pytest

from autoresearch.llm import (
    FakeLLMServer,
    FaultKind,
    LLMError,
    LLMSettings,
    LLMUnavailable,
    Message,
    OpenAIProvider,
    UsageMeter,
    make_provider,
    redact,
    register_secret,
)

from tests.autoresearch.llm.conftest import FAST, KEY

WRONG_KEY = "sk-ant-api03-wrongwrongwrong0123456789"


def test_redact_removes_registered_env_and_key_shaped_values(monkeypatch):
    register_secret("tok_unusualshape_42xyz")
    monkeypatch.setenv("SOME_SERVICE_API_KEY", "zzplainlookingvalue99")
    text = "a=tok_unusualshape_42xyz b=zzplainlookingvalue99 c=sk-ant-api03-abcdefghij d=sk-proj-abcdefghijkl"
    out = redact(text)
    assert out == "a=[REDACTED] b=[REDACTED] c=[REDACTED] d=[REDACTED]"
    assert redact("learning rate 3e-4, sk-short") == "learning rate 3e-4, sk-short"


def test_wrong_key_error_is_clear_and_never_shows_a_key(harness):
    h = harness(lambda req: "never")
    # The server echoes the key it got, like some APIs and proxies do.
    with pytest.raises(LLMError) as err:
        h.provider(api_key=WRONG_KEY).complete([Message.user("hi")])
    message = str(err.value)
    assert err.value.status == 401 and not isinstance(err.value, LLMUnavailable)
    assert "TEST_LLM_KEY" in message and "401" in message
    assert WRONG_KEY not in message and KEY not in message
    assert len(h.server.requests) == 1  # not retried


def test_key_echoed_in_retried_errors_stays_out_of_logs_and_the_final_error(harness, caplog):
    h = harness(lambda req: "never")
    h.server.inject(FaultKind.SERVER_ERROR, times=5, status=503, message=f"upstream said: bad auth {KEY}")
    with caplog.at_level(logging.WARNING, logger="autoresearch.llm"), pytest.raises(LLMUnavailable) as err:
        h.provider(retry=FAST.model_copy(update={"max_attempts": 3})).complete([Message.user("hi")])
    assert len(caplog.records) == 2 and "503" in caplog.text and "[REDACTED]" in caplog.text
    assert KEY not in caplog.text and KEY not in str(err.value)


def test_key_travels_only_in_the_auth_header(harness):
    h = harness(lambda req: "ok")
    h.provider().complete([Message.system("s"), Message.user("hi")])
    (req,) = h.server.requests
    carrying = {name for name, value in req.headers.items() if KEY in value}
    assert carrying and carrying <= {"authorization", "x-api-key"}
    assert KEY not in req.body and KEY not in req.path


def test_reprs_hold_no_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLMServer(lambda req: "ok") as server:
        settings = LLMSettings(
            provider="openai", model="gpt-4.1-mini", base_url=server.openai_base_url, api_key_env="OPENAI_API_KEY"
        )
        provider = make_provider(settings, retry=FAST)
        wrapped = UsageMeter().wrap(provider, node="propose")
        direct = OpenAIProvider("m", api_key="custom-secret-value-123", base_url=server.openai_base_url)
        shown = " ".join([repr(settings), repr(provider), repr(wrapped), repr(direct), str(settings.model_dump())])
    assert "OPENAI_API_KEY" in shown and "gpt-4.1-mini" in shown
    assert KEY not in shown and "custom-secret-value-123" not in shown
    assert redact("custom-secret-value-123") == "[REDACTED]"  # registered when the provider read it
