"""Secrets recognised by their shape or their variable's name, from every source: the
environment, a file, a notebook's outputs, and output streamed in chunks that cut them in two.

Sample values are put together here at run time; none is a real credential.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from agent_ext import Agent
from agent_ext.agent import events as ev
from agent_ext.agent.secrets import SecretMasker, StreamMasker
from agent_ext.models import ScriptedModel

pytestmark = pytest.mark.timeout(60)

_RNG = random.Random(7)


def _chars(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


PEM = ("-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(_chars(64) for _ in range(4))
       + "\n-----END RSA PRIVATE KEY-----")
#: label → a value of that format.
SHAPED = {
    "aws_access_key_id": "AKIA" + _chars(16, string.ascii_uppercase + string.digits),
    "github_token": "ghp_" + _chars(36),
    "github_pat": "github_pat_" + _chars(22) + "_" + _chars(59),
    "anthropic_key": "sk-ant-api03-" + _chars(40),
    "openai_key": "sk-proj-" + _chars(40),
    "stripe_key": "sk_live_" + _chars(24),
    "slack_token": "xoxb-" + _chars(12, string.digits) + "-" + _chars(24),
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx" + _chars(12) + "." + _chars(43),
    "private_key": PEM,
    "url_password": "postgres://app:" + _chars(16) + "@db.internal:5432/app",
    "url_credential": "https://" + _chars(32, "0123456789abcdef") + "@o1.ingest.example.io/4",
}
#: The part of each sample that must never be shown.
SECRET_PART = {k: v.split("://")[1].split("@")[0].split(":")[-1] if "://" in v else v
               for k, v in SHAPED.items()}
#: Names that make any value a secret, with values shaped like nothing known.
NAMED = {"AWS_ACCESS_KEY_ID": "plain-value-0001", "DB_PASS": "hunter2-but-longer",
         "STRIPE_SK": "plain-value-0003", "SENTRY_DSN": "plain-value-0004",
         "AWS_SECRET_ACCESS_KEY": _chars(40)}


@pytest.mark.parametrize("label", sorted(SHAPED))
def test_a_shaped_secret_is_masked_in_text(label: str) -> None:
    masker = SecretMasker({})
    text = f"config: {SHAPED[label]}\nnext line"
    masked = masker.mask(text)
    assert SECRET_PART[label] not in masked
    assert "[secret:" in masked and "next line" in masked


def test_ordinary_text_is_left_alone() -> None:
    masker = SecretMasker({})
    for text in ("sk-learn is a library", "the task-list skeleton", "https://example.com/a@b",
                 "eyJ is not a token", "AKIA", "postgres://localhost/db", "user@example.com",
                 "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----"):
        assert masker.mask(text) == text


@pytest.mark.parametrize("name", sorted(NAMED))
def test_a_secret_named_in_the_environment_is_masked(name: str) -> None:
    masker = SecretMasker({name: NAMED[name], "PATH": "/usr/bin"})
    assert masker.mask(f"value {NAMED[name]} end") == f"value [secret:{name}] end"


def test_utf16_output_is_masked() -> None:
    value = SHAPED["github_token"]
    wide = "\x00".join(f"token={value}") + "\x00"
    masked = SecretMasker({}).mask(wide)
    assert value not in masked.replace("\x00", "")


@pytest.mark.parametrize("label", sorted(SHAPED))
def test_every_cut_of_a_streamed_secret_is_masked(label: str) -> None:
    masker = SecretMasker({"DB_PASS": NAMED["DB_PASS"]})
    text = f"start {SHAPED[label]} middle {NAMED['DB_PASS']} end\n"
    for cut in range(1, len(text)):
        stream = StreamMasker(masker)
        shown = stream.feed(text[:cut]) + stream.feed(text[cut:]) + stream.flush()
        assert SECRET_PART[label] not in shown, cut
        assert NAMED["DB_PASS"] not in shown, cut
        assert shown.endswith(" end\n") and shown.startswith("start ")


def test_streaming_holds_back_only_what_could_be_a_secret() -> None:
    stream = StreamMasker(SecretMasker({}))
    assert stream.feed("line one\n") == "line one\n"
    assert stream.feed("partial tok") == "partial "
    assert stream.flush() == "tok"


def test_streaming_a_long_run_of_token_characters_holds_back_only_its_tail() -> None:
    """A megabyte line of token characters streams through in pieces: each piece is shown but
    for its last 512 characters (a secret could start there), and a key at the end is caught."""
    masker = SecretMasker({})
    key = SHAPED["github_token"]
    run = "a" * 1_000_000
    stream = StreamMasker(masker)
    shown = []
    for at in range(0, len(run), 16_000):
        piece = stream.feed(run[at:at + 16_000])
        assert len(piece) >= len(run[at:at + 16_000]) - 512
        shown.append(piece)
    shown += [stream.feed(" " + key[:10]), stream.feed(key[10:] + " end"), stream.flush()]
    text = "".join(shown)
    assert text.startswith(run) and key not in text and text.endswith(" end")


def _agent(tmp_path: Path, events: list[ev.Event]) -> Agent:
    return Agent(ScriptedModel([]), cwd=tmp_path, mode="bypassPermissions", plugins=False,
                 mcp=False, on_event=events.append)


@pytest.mark.parametrize("label", sorted(SHAPED))
async def test_from_a_file_and_a_notebook_output(label: str, tmp_path: Path) -> None:
    (tmp_path / "config.env").write_text(f"KEY={SHAPED[label]}\n")
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"id": "a1", "cell_type": "code", "execution_count": 1, "metadata": {},
                     "source": "print(key)",
                     "outputs": [{"output_type": "stream", "name": "stdout",
                                  "text": SHAPED[label] + "\n"}]}]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    agent = _agent(tmp_path, [])
    try:
        for path in ("config.env", "nb.ipynb"):
            result = await agent.call_tool("read_file", {"file_path": path})
            assert not result.is_error, result.text
            assert SECRET_PART[label] not in f"{result.text}{result.display}"
            assert "[secret:" in result.text
    finally:
        await agent.aclose()


async def test_streamed_shell_output_cut_in_two_is_masked(tmp_path: Path) -> None:
    value = SHAPED["stripe_key"]
    half = len(value) // 2
    events: list[ev.Event] = []
    agent = _agent(tmp_path, events)
    try:
        result = await agent.call_tool("shell", {
            "command": f"printf '%s' '{value[:half]}'; sleep 0.3; printf '%s\\n' '{value[half:]}'"})
    finally:
        await agent.aclose()
    streamed = "".join(e.text for e in events if isinstance(e, ev.ToolOutput))
    assert value not in streamed and value not in result.text
    assert "[secret:stripe_key]" in result.text
