"""Third-party tools through the agent_ext.tools entry-point group (a real installed dist-info)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_ext.core import Registry, ToolLoadError
from agent_ext.core.plugins import allowed_plugins, load_plugins


@pytest.fixture
def plugin_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed distribution with two tool entry points, one of them broken."""
    (tmp_path / "weather_plugin_for_test.py").write_text(
        "from agent_ext.core import FunctionTool\n"
        "def forecast(city: str) -> str:\n"
        "    '''Tell the weather forecast for a city.'''\n"
        "    return f'sunny in {city}'\n"
        "forecast_tool = FunctionTool(forecast)\n")
    info = tmp_path / "weather_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: weather-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[agent_ext.tools]\n"
        "forecast = weather_plugin_for_test:forecast_tool\n"
        "radar = weather_plugin_for_test:missing_attribute\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("weather_plugin_for_test", None)


def test_plugins_register_lazily_and_deferred(plugin_dist: Path) -> None:
    reg = Registry()
    names = load_plugins(reg, environ={})
    assert sorted(names) == ["forecast", "radar"]
    assert "weather_plugin_for_test" not in sys.modules
    assert reg.deferred() == ["forecast", "radar"]
    assert reg.declarations() == []
    assert reg.get("forecast").description == "Tell the weather forecast for a city."
    assert reg.is_external("forecast")


def test_broken_plugin_fails_loudly_on_use(plugin_dist: Path) -> None:
    reg = Registry()
    load_plugins(reg, environ={})
    with pytest.raises(ToolLoadError, match=r"'radar'.*missing_attribute"):
        reg.get("radar")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("none", []), ("", []), ("forecast", ["forecast"]), ("weather-plugin", ["forecast", "radar"]),
     ("FORECAST, other", ["forecast"])],
)
def test_env_var_restricts_plugins(plugin_dist: Path, value: str, expected: list[str]) -> None:
    reg = Registry()
    assert sorted(load_plugins(reg, environ={"AGENT_EXT_PLUGINS": value})) == expected


def test_allowed_plugins_parsing() -> None:
    assert allowed_plugins({}) is None
    assert allowed_plugins({"AGENT_EXT_PLUGINS": "none"}) == set()
    assert allowed_plugins({"AGENT_EXT_PLUGINS": "a, B"}) == {"a", "b"}
