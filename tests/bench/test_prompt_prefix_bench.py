"""The first request's leading part is the same in another folder and on another day."""

from __future__ import annotations

import pytest
from bench_prompt_prefix import measure, report

from agent_ext.core.profiles import PROFILES


@pytest.mark.bench
@pytest.mark.parametrize("profile", PROFILES)
def test_the_stable_prefix_is_most_of_the_first_request(
        profile: str, capsys: pytest.CaptureFixture[str]) -> None:
    figures = measure(profile)
    with capsys.disabled():
        print("\n" + report(figures))
    assert figures["profile"] == profile
    assert figures["other_folder_share"] >= 0.9
    assert figures["other_day_share"] >= 0.9
    assert figures["stable_share"] >= 0.9
