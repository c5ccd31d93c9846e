"""SecretMasker: secret env values and registered keys never reach the model in tool results."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_ext.agent.secrets import SecretMasker, looks_secret
from agent_ext.core import ExecControl, ImagePart, TextPart, ToolContext, ToolResult
from agent_ext.tools.shell import ShellTool
from agent_ext.tools.shell_jobs import ShellJobs

pytestmark = pytest.mark.timeout(30)

#: Shaped like no known format, so only its variable's name makes it a secret.
KEY = "test-0123456789abcdef-value"


def test_secret_names() -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN",
                 "DB_PASSWORD", "MYPASSWORD_FILE", "STRIPE_SECRET", "HF_TOKEN", "MY_APIKEY",
                 "CLIENT_SECRET_VALUE", "GITLAB_PAT", "AWS_ACCESS_KEY_ID", "DB_PASS",
                 "STRIPE_SK", "SENTRY_DSN", "DATABASE_URL", "SLACK_WEBHOOK_URL", "GH_AUTH"):
        assert looks_secret(name), name
    for name in ("PATH", "HOME", "PWD", "OLDPWD", "KEYBOARD", "TOKENIZERS_PARALLELISM",
                 "SHELL", "PASSAGE", "DISK", "AUTHOR"):
        assert not looks_secret(name), name


def test_masks_text_parts_display_and_error() -> None:
    masker = SecretMasker({"OPENAI_API_KEY": KEY, "PATH": "/usr/bin:/bin"})
    result = ToolResult(llm_content=[TextPart(f"key={KEY}."), ImagePart(b"png")],
                        display={"rows": [f"a {KEY}", ("t", KEY)], "n": 1})
    masked = masker.mask_result(result)
    assert masked.parts[0] == TextPart("key=[secret:OPENAI_API_KEY].")
    assert masked.parts[1] == ImagePart(b"png")
    assert masked.display == {"rows": ["a [secret:OPENAI_API_KEY]",
                                       ("t", "[secret:OPENAI_API_KEY]")], "n": 1}
    assert result.text == f"key={KEY}."  # the original is untouched
    failed = masker.mask_result(ToolResult.fail("x", f"bad key {KEY}"))
    assert failed.text == failed.display == "bad key [secret:OPENAI_API_KEY]"
    assert failed.error is not None and KEY not in failed.error.message
    clean = ToolResult(llm_content="nothing here", display="nothing here")
    assert masker.mask_result(clean) is clean
    assert masker.names == ["OPENAI_API_KEY"]


def test_short_values_ignored_and_longest_first() -> None:
    masker = SecretMasker({"SHORT_TOKEN": "abc123", "A_KEY": "prefix-secret",
                           "B_KEY": "prefix-secret-longer"})
    assert masker.mask("abc123 prefix-secret-longer prefix-secret") == (
        "abc123 [secret:B_KEY] [secret:A_KEY]")


def test_refreshes_when_the_environment_changes() -> None:
    env = {"HOME": "/home/x"}
    masker = SecretMasker(env)
    assert masker.mask(KEY) == KEY
    env["NEW_API_KEY"] = KEY
    assert masker.mask(KEY) == "[secret:NEW_API_KEY]"
    env["NEW_API_KEY"] = "another-value-123"
    assert masker.mask(KEY) == KEY and masker.mask("another-value-123") == "[secret:NEW_API_KEY]"
    del env["NEW_API_KEY"]
    assert masker.mask("another-value-123") == "another-value-123"
    assert not masker.refresh()


def test_registered_values_and_url_passwords() -> None:
    masker = SecretMasker({"DATABASE_URL": "postgres://app:hunter2hunter2@db:5432/x"})
    assert masker.mask("pw hunter2hunter2") == "pw [secret:DATABASE_URL]"
    masker.register("typed-in-key-999", "OPENAI_API_KEY")
    masker.register("short")
    assert masker.mask("typed-in-key-999 short") == "[secret:OPENAI_API_KEY] short"
    masker.unregister("typed-in-key-999")
    assert masker.mask("typed-in-key-999") == "typed-in-key-999"


def test_reads_the_real_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    masker = SecretMasker()
    monkeypatch.setenv("MY_API_KEY", KEY)
    assert masker.mask(f"x {KEY}") == "x [secret:MY_API_KEY]"
    monkeypatch.delenv("MY_API_KEY")
    assert masker.mask(KEY) == KEY


@pytest.mark.skipif(os.name != "posix", reason="uses bash")
async def test_key_printed_by_a_shell_command_or_read_from_a_file_is_masked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_KEY", KEY)
    (tmp_path / "settings.env").write_text(f"token = {KEY}\n")
    ctx = ToolContext(cwd=tmp_path)
    masker = SecretMasker()
    try:
        for command in ("echo $MY_API_KEY", "cat settings.env"):
            built = ShellTool().build({"command": command}, ctx)
            assert not isinstance(built, ToolResult)
            raw = await built.execute(ExecControl())
            assert KEY in raw.text  # the real output carries it ...
            masked = masker.mask_result(raw)
            assert KEY not in masked.text and KEY not in str(masked.display)
            assert "[secret:MY_API_KEY]" in masked.text
    finally:
        jobs = ctx.service(ShellJobs)
        if jobs is not None:
            await jobs.kill_all()
