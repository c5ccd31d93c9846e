"""Record a real local model's answers to agent_ext's real first request, as test fixtures.

    llama-server -m qwen-1.5b.gguf --jinja -c 8192 --host 127.0.0.1 --port 18080 --temp 0 --seed 1
    python scripts/record_inband.py http://127.0.0.1:18080 tests/unit/fixtures/inband \
        [--only read_and_fix ...] [--max-tokens 12 --suffix _cut] [--model "1.5B"] \
        [--profile compact] [--raw]

Each prompt is sent exactly as agent_ext sends it (system prompt, session context, the built-in
tool declarations in the chosen profile, ``tool_choice: "auto"``), not streamed, at temperature
0 with a small output cap; the answer's message and finish reason are written to one JSON file
per prompt. With ``--raw`` the server does not parse the answer: the request is rendered by the
server's own chat template (``/apply-template``) and completed as plain text (``/completion``),
so the file holds the model's text exactly as written, as a server that does not parse tool
calls passes it on (Qwen's template has the model write ``<tool_call>`` tags).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from agent_ext.agent import Agent
from agent_ext.core import TextPart
from agent_ext.models import Message, ModelRequest, ScriptedModel, ToolCall, ToolReturn
from agent_ext.models._openai_convert import to_messages, to_tools

APP = "def mean(values):\n    return sum(values) / len(values) + 1\n\nprint(mean([1, 2, 3]))\n"
PROMPTS: dict[str, str] = {
    "read_and_fix": "read the file app.py and fix the bug",
    "list_files": "What files are in this folder?",
    "grep_todo": "Search the project for TODO comments.",
    "run_tests": "Run the tests with pytest.",
    "read_csv_head": "Show me the first 5 lines of data.csv",
    "write_hello": "Create a file hello.py that prints hello.",
    "fix_off_by_one": "mean() in app.py returns the wrong value; fix it.",
    "glob_python": "Find all Python files in this project.",
    "plain_json": "Reply with only a JSON object describing a user named Ada, aged 36, "
                  "with fields name and age. Do not use any tools.",
    "plain_question": "What does the Python expression 7 // 2 evaluate to? Answer briefly.",
    "read_two": "Read both app.py and data.csv.",
}


def first_request(cwd: Path, prompt: str, profile: str = "default") -> ModelRequest:
    agent = Agent(ScriptedModel([]), cwd=cwd, plugins=False, mcp=False, tool_profile=profile)
    agent.messages.append(Message(role="user", parts=(TextPart(prompt),)))
    return agent.request()


def conversation(cwd: Path, profile: str, prompt: str,
                 turns: list[tuple[str, dict[str, Any], str, bool]]) -> ModelRequest:
    """The request after ``prompt`` and the calls ``turns`` (tool, arguments, the tool's
    answer, whether it failed), each a model turn of one call."""
    agent = Agent(ScriptedModel([]), cwd=cwd, plugins=False, mcp=False, tool_profile=profile)
    agent.messages.append(Message(role="user", parts=(TextPart(prompt),)))
    for n, (name, arguments, answer, failed) in enumerate(turns, 1):
        agent.messages += [
            Message(role="assistant", tool_calls=(ToolCall.of(f"call_{n}", name, arguments),)),
            Message(role="tool", tool_returns=(ToolReturn(f"call_{n}", name, (TextPart(answer),),
                                                          is_error=failed),)),
        ]
    return agent.request()


def after_read(cwd: Path, profile: str = "default") -> ModelRequest:
    """The second request of "read the file app.py and fix the bug": the read done."""
    numbered = "".join(f"{n:6}\t{line}\n" for n, line in enumerate(APP.splitlines(), 1))
    return conversation(cwd, profile, PROMPTS["read_and_fix"],
                        [("read_file", {"file_path": "app.py"}, numbered, False)])


#: An edit a small model wrote for ``fix_off_by_one`` before reading app.py (a recorded answer).
MISSED_EDIT = {"file_path": "app.py", "old_string": "return sum(numbers)",
               "new_string": "return sum(numbers) / len(numbers)", "replace_all": False}


def after_miss(cwd: Path, profile: str = "default") -> ModelRequest:
    """The request after that edit, answered by the real tools: the read made for it, then the
    same edit, refused with the file's closest lines."""
    agent = Agent(ScriptedModel([]), cwd=cwd, plugins=False, mcp=False, tool_profile=profile)

    async def answers() -> tuple[str, str]:
        try:
            read = await agent.call_tool("read_file", {"file_path": "app.py"})
            missed = await agent.call_tool("edit", MISSED_EDIT)
        finally:
            await agent.aclose()
        return read.text, missed.text

    read, missed = asyncio.run(answers())
    return conversation(cwd, profile, PROMPTS["fix_off_by_one"],
                        [("read_file", {"file_path": "app.py"}, read, False),
                         ("edit", MISSED_EDIT, missed, True)])


def post(url: str, body: dict[str, Any], timeout: float = 600,
         path: str = "/v1/chat/completions") -> dict[str, Any]:
    request = urllib.request.Request(  # noqa: S310  (a loopback http URL given by hand)
        url + path, data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=timeout) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def raw_answer(url: str, body: dict[str, Any]) -> dict[str, Any]:
    """The answer as plain text: the server's template renders the request, and the model's
    completion of it is taken as it is, in the shape of a chat answer."""
    prompt = post(url, body, path="/apply-template")["prompt"]
    done = post(url, {"prompt": prompt, "n_predict": body["max_tokens"], "temperature": 0,
                      "seed": 1, "cache_prompt": True}, path="/completion")
    cut = done.get("stop_type") == "limit" or done.get("stopped_limit")
    return {"choices": [{"message": {"role": "assistant", "content": done["content"]},
                         "finish_reason": "length" if cut else "stop"}],
            "usage": {"prompt_tokens": done.get("tokens_evaluated"),
                      "completion_tokens": done.get("tokens_predicted")}}


def record(url: str, out: Path, name: str, request: ModelRequest, *, max_tokens: int,
           label: str, raw: bool = False) -> None:
    body = {"model": "qwen", "messages": to_messages(request), "tools": to_tools(request.tools),
            "tool_choice": "auto", "temperature": 0, "seed": 1, "max_tokens": max_tokens,
            "stream": False}
    started = time.monotonic()
    answer = raw_answer(url, body) if raw else post(url, body)
    seconds = time.monotonic() - started
    choice = answer["choices"][0]
    how = ("its chat template applied, the completion unparsed (/apply-template, /completion)"
           if raw else "chat completions")
    doc = {
        "server": f"llama.cpp llama-server --jinja, {how}, Qwen2.5-Coder-{label}-Instruct, "
                  "temperature 0, seed 1",
        "request": {"prompt": name, "user": request.messages[-1].parts[0].text  # type: ignore[union-attr]
                    if request.messages[-1].parts else "(tool result)",
                    "messages": [m["role"] for m in body["messages"]],
                    "tools": [t["function"]["name"] for t in body["tools"]],
                    "tool_choice": "auto", "max_tokens": max_tokens,
                    "system_chars": len(request.system),
                    "tools_chars": len(json.dumps(body["tools"]))},
        "response": {"message": choice["message"], "finish_reason": choice["finish_reason"],
                     "usage": answer.get("usage")},
        "seconds": round(seconds, 1),
    }
    (out / f"{name}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"{name}: {seconds:.1f}s finish={choice['finish_reason']} "
          f"calls={len(choice['message'].get('tool_calls') or [])} "
          f"content={(choice['message'].get('content') or '')[:120]!r}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--max-tokens", type=int, default=None, help="the output cap")
    parser.add_argument("--suffix", default="", help="added to each fixture's name")
    parser.add_argument("--model", default="1.5B", help="the model's size, for the record")
    parser.add_argument("--profile", default="default", choices=("default", "compact"))
    parser.add_argument("--raw", action="store_true",
                        help="complete the templated prompt as text; the server parses nothing")
    args = parser.parse_args()
    url, out, only = args.url.rstrip("/"), args.out, set(args.only)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agent_ext_rec_") as tmp:
        cwd = Path(tmp) / "project"
        cwd.mkdir()
        (cwd / "app.py").write_text(APP)
        (cwd / "data.csv").write_text("a,b\n1,2\n3,4\n")
        for name, prompt in PROMPTS.items():
            if not only or name in only:
                record(url, out, name + args.suffix, first_request(cwd, prompt, args.profile),
                       max_tokens=args.max_tokens or 256, label=args.model, raw=args.raw)
        if not only or "edit_after_read" in only:
            record(url, out, "edit_after_read" + args.suffix, after_read(cwd, args.profile),
                   max_tokens=args.max_tokens or 384, label=args.model, raw=args.raw)
        if not only or "edit_after_miss" in only:
            record(url, out, "edit_after_miss" + args.suffix, after_miss(cwd, args.profile),
                   max_tokens=args.max_tokens or 384, label=args.model, raw=args.raw)


if __name__ == "__main__":
    main()
