"""Query rules and ranking behaviour of agent_ext's tool search index."""

from __future__ import annotations

import time

import pytest

from agent_ext.core.search import SearchDoc, SearchHit, SearchIndex, SearchOutcome


def mcp(server: str, tool: str, description: str = "", **kw: object) -> SearchDoc:
    return SearchDoc(name=f"mcp__{server}__{tool}", description=description, server=server,
                     **kw)  # type: ignore[arg-type]


def names(index: SearchIndex, query: str, limit: int = 5) -> list[str]:
    return [h.name for h in index.search(query, limit).hits]


@pytest.fixture
def catalogue() -> SearchIndex:
    return SearchIndex([
        mcp("github", "create_issue", "Create a new issue in a GitHub repository."),
        mcp("github", "list_issues", "List issues in a GitHub repository."),
        mcp("github", "create_pull_request", "Create a new pull request in a GitHub repository."),
        mcp("github", "delete_repository", "Delete a GitHub repository."),
        mcp("github", "search_repositories", "Find GitHub repositories by name."),
        mcp("playwright", "browser_take_screenshot", "Take a screenshot of the current page."),
        mcp("playwright", "browser_navigate", "Navigate to a URL."),
        mcp("playwright", "browser_click", "Perform click on a web page."),
        mcp("filesystem", "list_directory", "Get a listing of all files in a directory."),
        mcp("filesystem", "read_text_file", "Read the complete contents of a file as text."),
        mcp("time", "get_current_time", "Get current time in a specific timezone."),
        mcp("slack", "slack_post_message", "Post a new message to a Slack channel."),
        SearchDoc("stop_task", "Stop a running background task."),
        SearchDoc("write_file", "Write a file to disk."),
    ])


def test_public_records_are_frozen_values() -> None:
    out = SearchOutcome([SearchHit("a", 1.0)], 1)
    assert out.hits[0] == SearchHit("a", 1.0)
    assert mcp("s", "t").external
    assert not SearchDoc("t", "").external
    with pytest.raises(AttributeError):
        out.hits[0].score = 2.0  # type: ignore[misc]


def test_len_counts_docs(catalogue: SearchIndex) -> None:
    assert len(catalogue) == 14
    assert len(SearchIndex([])) == 0


@pytest.mark.parametrize("query", ["", "   ", "the a of", "x y z", "to be or", "!!! ???", "+"])
def test_empty_blank_and_stopword_only_queries_give_no_hits(
    catalogue: SearchIndex, query: str
) -> None:
    out = catalogue.search(query)
    assert out.hits == []
    assert out.total_matches == 0


def test_quotes_and_punctuation_are_stripped(catalogue: SearchIndex) -> None:
    assert names(catalogue, '"create issue"')[0] == "mcp__github__create_issue"
    assert names(catalogue, "(create issue)!")[0] == "mcp__github__create_issue"


def test_case_does_not_matter(catalogue: SearchIndex) -> None:
    assert catalogue.search("CREATE ISSUE") == catalogue.search("create issue")


def test_stop_words_do_not_change_the_ranking(catalogue: SearchIndex) -> None:
    plain = catalogue.search("create issue")
    wordy = catalogue.search("how can i create an issue for the repo please")
    assert wordy.hits[0].name == plain.hits[0].name == "mcp__github__create_issue"
    assert catalogue.search("what is this").hits == []


def test_one_character_tokens_are_dropped(catalogue: SearchIndex) -> None:
    assert catalogue.search("x").hits == []
    assert catalogue.search("x create issue y").hits == catalogue.search("create issue").hits


def test_required_term_excludes_tools_whose_name_lacks_it(catalogue: SearchIndex) -> None:
    free = names(catalogue, "create repository", 20)
    assert "mcp__github__create_issue" in free
    required = names(catalogue, "create +repository", 20)
    assert required
    assert all("repositor" in n for n in required)
    assert "mcp__github__create_issue" not in required


def test_required_term_accepts_a_variant_in_the_name(catalogue: SearchIndex) -> None:
    assert "mcp__github__delete_repository" in names(catalogue, "+remove repo")
    assert names(catalogue, "+nonexistentword issue") == []


def test_action_synonyms_reach_each_other(catalogue: SearchIndex) -> None:
    for verb in ("cancel", "clear", "delete", "remove", "stop"):
        found = names(catalogue, f"{verb} task", 3)
        assert "stop_task" in found, verb
    assert names(catalogue, "remove repository")[0] == "mcp__github__delete_repository"


def test_name_outweighs_hint_and_hint_outweighs_description() -> None:
    index = SearchIndex([
        SearchDoc("alpha_widget", "unrelated words"),
        SearchDoc("beta", "unrelated words", search_hint="widget"),
        SearchDoc("gamma", "turns a widget around"),
    ])
    assert names(index, "widget") == ["alpha_widget", "beta", "gamma"]
    scores = [h.score for h in index.search("widget").hits]
    assert scores[0] > scores[1] > scores[2] > 0


def test_external_tools_win_equal_matches() -> None:
    index = SearchIndex([SearchDoc("create_issue", "Create an issue."),
                         mcp("tracker", "create_issue", "Create an issue.")])
    hits = index.search("create issue").hits
    assert hits[0].name == "mcp__tracker__create_issue"
    assert hits[0].score > hits[1].score


def test_ties_are_sorted_by_name() -> None:
    docs = [SearchDoc(n, "Same words here.") for n in ("zeta_tool", "alpha_tool", "mid_tool")]
    hits = SearchIndex(docs).search("same words").hits
    assert [h.name for h in hits] == ["alpha_tool", "mid_tool", "zeta_tool"]
    assert len({h.score for h in hits}) == 1


def test_snake_camel_and_kebab_names_are_split() -> None:
    index = SearchIndex([
        SearchDoc("getUserProfile", ""),
        SearchDoc("API-post-search", ""),
        SearchDoc("list_open_orders", ""),
    ])
    assert names(index, "user profile")[0] == "getUserProfile"
    assert names(index, "post search")[0] == "API-post-search"
    assert names(index, "open orders")[0] == "list_open_orders"
    assert names(index, "listOpenOrders")[0] == "list_open_orders"


def test_server_part_of_mcp_names_matches_server_mentions(catalogue: SearchIndex) -> None:
    assert names(catalogue, "slack")[0] == "mcp__slack__slack_post_message"
    top = names(catalogue, "playwright page")
    assert all(n.startswith("mcp__playwright__") for n in top[:3])


def test_plural_and_inflected_forms_match(catalogue: SearchIndex) -> None:
    assert names(catalogue, "screenshots")[0] == "mcp__playwright__browser_take_screenshot"
    assert names(catalogue, "listing directories")[0] == "mcp__filesystem__list_directory"
    assert names(catalogue, "created issues")[0] == "mcp__github__create_issue"


@pytest.mark.parametrize(("query", "expected"), [
    ("scrennshot", "mcp__playwright__browser_take_screenshot"),
    ("reposotory search", "mcp__github__search_repositories"),
    ("navgiate", "mcp__playwright__browser_navigate"),
])
def test_typos_still_find_the_tool(catalogue: SearchIndex, query: str, expected: str) -> None:
    assert names(catalogue, query)[0] == expected


def test_typo_matches_score_below_exact_ones() -> None:
    index = SearchIndex([SearchDoc("deploy_service", ""), SearchDoc("rollback_service", "")])
    exact = index.search("deploy").hits
    typo = index.search("deploi").hits
    assert [h.name for h in typo] == [h.name for h in exact] == ["deploy_service"]
    assert 0 < typo[0].score < exact[0].score
    assert index.search("qwzxv").hits == []


@pytest.mark.parametrize(("query", "expected"), [
    ("open a PR", "mcp__github__create_pull_request"),
    ("submit pull request", "mcp__github__create_pull_request"),
    ("make a ticket", "mcp__github__create_issue"),
    ("capture the page", "mcp__playwright__browser_take_screenshot"),
    ("go to url", "mcp__playwright__browser_navigate"),
    ("press the button", "mcp__playwright__browser_click"),
    ("ls folder", "mcp__filesystem__list_directory"),
    ("send msg to channel", "mcp__slack__slack_post_message"),
    ("tz now", "mcp__time__get_current_time"),
])
def test_synonyms_and_abbreviations(catalogue: SearchIndex, query: str, expected: str) -> None:
    assert names(catalogue, query)[0] == expected


def test_rare_words_outweigh_common_ones() -> None:
    docs = [SearchDoc(f"get_{noun}", "") for noun in ("user", "team", "file", "page", "label")]
    docs.append(SearchDoc("archive_label", ""))
    index = SearchIndex(docs)
    assert names(index, "get archive")[0] == "archive_label"


def test_total_matches_counts_every_match_beyond_the_limit(catalogue: SearchIndex) -> None:
    out = catalogue.search("github", limit=2)
    assert len(out.hits) == 2
    assert out.total_matches == 5
    assert all(h.score > 0 for h in out.hits)
    assert catalogue.search("github", limit=0).hits == []


def test_scores_are_positive_and_sorted(catalogue: SearchIndex) -> None:
    hits = catalogue.search("list files in folder", limit=20).hits
    assert hits
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_parameters_are_searchable_but_weak() -> None:
    schema = {"type": "object", "properties": {"timezone": {"type": "string"}}}
    index = SearchIndex([SearchDoc("convert", "Convert a value.", parameters=schema),
                         SearchDoc("set_timezone", "Set it.")])
    assert names(index, "timezone") == ["set_timezone", "convert"]


def test_a_thousand_docs_search_fast() -> None:
    docs = [mcp(f"server{i % 50}", f"tool_{i}_{verb}_{noun}", f"Does {verb} on {noun} number {i}.")
            for i, (verb, noun) in enumerate(
                (v, n) for v in ("get", "list", "create", "delete", "update", "search", "run",
                                 "send", "read", "write")
                for n in ("issue", "file", "page", "user", "table", "message", "event", "bucket",
                          "pod", "invoice") * 10)]
    assert len(docs) == 1000
    start = time.perf_counter()
    index = SearchIndex(docs)
    build = time.perf_counter() - start
    start = time.perf_counter()
    out = index.search("delete invoice", limit=5)
    query = time.perf_counter() - start
    assert len(index) == 1000
    assert len(out.hits) == 5
    assert all("delete_invoice" in h.name for h in out.hits)
    assert out.total_matches > 5
    assert build < 2.0
    assert query < 0.5
