"""agent_ext's tool search index: each widening rule on its own, then the ranking they make.

The tools and queries here are made up for these tests; none comes from the benchmark sets."""

from __future__ import annotations

import math
import time

import pytest

from agent_ext.core.search import SearchDoc, SearchHit, SearchIndex, SearchOutcome, _index
from agent_ext.core.search._index import (
    FIELDS,
    K1,
    bm25f_weights,
    damped_idf,
    parse_query,
    query_operations,
    tool_operations,
    tool_words,
)
from agent_ext.core.search._text import (
    abbreviation_table,
    action_table,
    compact,
    deletions,
    edit_distance_within,
    identifier_fragments,
    is_skeleton_of,
    operation_table,
    split_words,
    stem,
)


def mcp(server: str, tool: str, description: str = "", **kw: object) -> SearchDoc:
    return SearchDoc(name=f"mcp__{server}__{tool}", description=description, server=server,
                     **kw)  # type: ignore[arg-type]


def names(index: SearchIndex, query: str, limit: int = 5) -> list[str]:
    return [h.name.split("__")[-1] for h in index.search(query, limit).hits]


@pytest.fixture
def shop() -> SearchIndex:
    return SearchIndex([
        mcp("acme-ledger", "create_invoice", "Create an invoice for a buyer."),
        mcp("acme-ledger", "list_invoices", "List the invoices of a buyer."),
        mcp("acme-ledger", "delete_invoice", "Delete a draft invoice."),
        mcp("acme-ledger", "get_invoice", "Get one invoice by its number."),
        mcp("parcelpost", "track_shipment", "Where a parcel is now."),
        mcp("parcelpost", "create_label", "Buy a postage label for a parcel."),
        mcp("kitchen", "list_recipes", "Recipes in the cookbook."),
        mcp("kitchen", "update_recipe", "Change the ingredients of a recipe."),
        mcp("kitchen", "get_configuration", "The oven's configuration."),
        mcp("warehouse", "search_inventory", "Find items on the shelves by keyword.",
            parameters={"properties": {"barcode": {"type": "string"}}}),
        mcp("warehouse", "list_management_reports", "Reports for the managers."),
    ])


# -- text ------------------------------------------------------------------------------------

def test_split_words_splits_every_identifier_style() -> None:
    assert split_words("getHTTPResponse") == ["get", "http", "response"]
    assert split_words("list_open-items.v2") == ["list", "open", "items", "v2"]


def test_stem_folds_inflections_and_keeps_short_words_whole() -> None:
    assert {stem(w) for w in ("create", "creates", "created", "creating")} == {stem("create")}
    assert stem("invoices") == stem("invoice")
    assert stem("k8s") == "k8s" and stem("ids") == "ids"


def test_abbreviations_map_to_their_full_word_and_take_a_plural() -> None:
    table = abbreviation_table()
    assert table[stem("repo")] == (stem("repository"),)
    assert table["prs"] == (stem("pull"), stem("request"))
    assert table[stem("colour")] == (stem("color"),)


def test_action_verbs_reach_their_fellows_only() -> None:
    table = action_table()
    assert stem("delete") in table[stem("remove")]
    assert stem("create") not in table[stem("remove")]


def test_a_skeleton_keeps_the_first_letter_and_the_order() -> None:
    assert is_skeleton_of("mgmt", "management")
    assert is_skeleton_of("cfg", "configuration")
    assert not is_skeleton_of("gmt", "management")
    assert not is_skeleton_of("mtgm", "management")


def test_edit_distance_counts_a_swap_as_one_edit() -> None:
    assert edit_distance_within("recipe", "reicpe", 1)
    assert edit_distance_within("invoice", "invoce", 1)
    assert not edit_distance_within("invoice", "invade", 1)
    assert edit_distance_within("shipment", "shpiment", 1)


def test_words_one_edit_apart_share_a_deletion() -> None:
    for a, b in (("label", "lable"), ("label", "labels"), ("label", "lobel")):
        assert deletions(a) & deletions(b)


# -- fields and BM25F ------------------------------------------------------------------------

def test_identifier_fragments_are_shaped_tokens_of_some_length() -> None:
    assert compact("Get_User-Info") == "getuserinfo"
    assert identifier_fragments("warehouse search_inven now") == ["searchinven"]
    assert identifier_fragments("findStockIt +list_rec") == ["findstockit", "listrec"]
    # Plain words and short hyphenated words are no identifiers.
    assert identifier_fragments("search inventory e-mail") == []


def test_operations_read_the_names_first_verb() -> None:
    ops = operation_table()
    assert ops[stem("remove")] == ops[stem("delete")]
    assert tool_operations(["delete", "invoice"]) == ops[stem("delete")]
    # Getting things of a plural lists them; creating several is still creating.
    assert ops["list"] <= tool_operations(["get", "invoices"])
    assert not ops["list"] & tool_operations(["create", "invoices"])
    assert tool_operations(["invoice", "summary"]) == frozenset()
    assert ops["list"] <= tool_operations(["get", "all"])
    assert tool_operations(["invoice", "info"]) == ops["get"]


def test_query_operations_default_to_reading(shop: SearchIndex) -> None:
    ops = operation_table()
    assert query_operations(shop.query_terms("remove a draft")) == ops[stem("remove")]
    assert ops["get"] <= query_operations(shop.query_terms("invoice"))
    assert query_operations([]) == frozenset()


def test_tool_words_drop_the_mcp_prefix_and_add_server_forms() -> None:
    words = tool_words(mcp("acme-ledger", "create_invoice", "Bill.",
                           parameters={"properties": {"dueDate": {}}}))
    assert words["name"] == ["create", "invoice"]
    assert words["server"] == ["acme", "ledger", "acmeledger", "al"]
    assert words["parameters"] == ["due", "date"]


def test_damped_idf_keeps_the_order_of_rarity_but_narrows_it() -> None:
    plain_rare, plain_common = math.log(1 + 100.5 / 1.5), math.log(1 + 51.5 / 50.5)
    rare, common = damped_idf(101, 1), damped_idf(101, 50)
    assert rare > common > 0
    assert rare / common < plain_rare / plain_common
    assert rare == pytest.approx(plain_rare ** _index.IDF_POWER)


def test_bm25f_weights_favour_the_name_and_saturate() -> None:
    fields = {"name": ["invoic"], "server": [], "description": ["buyer"], "parameters": []}
    avg = {"name": 1.0, "server": 1.0, "description": 1.0, "parameters": 1.0}
    weights = bm25f_weights(fields, avg)
    assert weights["invoic"] > weights["buyer"]
    assert weights["invoic"] == pytest.approx(FIELDS["name"][0] / (K1 + FIELDS["name"][0]))
    assert all(0 < w < 1 for w in weights.values())


def test_parse_query_drops_stopwords_and_reads_required_words() -> None:
    assert parse_query("please list the +Invoices") == [("list", False), ("invoices", True)]


# -- widening rules on a catalogue ------------------------------------------------------------

def test_typo_terms_are_catalogue_words_one_edit_away(shop: SearchIndex) -> None:
    assert stem("invoice") in shop.typo_terms("invoce")
    assert shop.typo_terms("lbl") == []  # too short to correct


def test_long_words_allow_two_edits(shop: SearchIndex) -> None:
    assert stem("configuration") in shop.typo_terms("confgiuration")


def test_prefix_and_skeleton_terms(shop: SearchIndex) -> None:
    assert stem("inventory") in shop.prefix_terms("inv")
    assert stem("management") in shop.skeleton_terms("mgmt")
    assert shop.skeleton_terms("oven") == []  # two vowels: a word, not a skeleton


def test_an_abbreviated_verb_reaches_its_fellow_verbs() -> None:
    index = SearchIndex([mcp("desk", "remove_parcel", "A parcel."),
                         mcp("desk", "list_parcels", "Parcels.")])
    assert index.variants("rm") == {stem("remove"): _index.ACTION}
    assert names(index, "rm parcel")[0] == "remove_parcel"


def test_known_words_are_not_widened(shop: SearchIndex) -> None:
    assert shop.variants("recipe") == {stem("recipe"): 1.0}


# -- ranking ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "expected"), [
    ("remove a draft invoice", "delete_invoice"),
    ("invoices", "list_invoices"),
    ("one invoice", "get_invoice"),
    ("where is my parcle", "track_shipment"),
    ("cfg of the oven", "get_configuration"),
    ("mgmt reports", "list_management_reports"),
    ("edit a recipe", "update_recipe"),
    ("find stock by barcode", "search_inventory"),
])
def test_each_rule_brings_its_tool_first(shop: SearchIndex, query: str, expected: str) -> None:
    assert names(shop, query)[0] == expected


def test_a_word_as_written_picks_between_singular_and_plural_names() -> None:
    index = SearchIndex([mcp("desk", "get_parcel", "Get parcel."),
                         mcp("desk", "get_parcels", "Get parcels.")])
    assert names(index, "desk parcels")[0] == "get_parcels"
    assert names(index, "desk parcel")[0] == "get_parcel"
    assert index.exact_forms(1, ["parcels", "now"]) == 0.5


def test_the_server_name_and_its_initials_pick_the_server(shop: SearchIndex) -> None:
    assert names(shop, "acme ledger create")[0] == "create_invoice"
    assert names(shop, "al create")[0] == "create_invoice"
    assert names(shop, "parcelpost create")[0] == "create_label"


def test_an_identifier_fragment_points_at_the_tool_it_starts() -> None:
    index = SearchIndex([mcp("desk", "get_single_parcel", "One parcel."),
                         mcp("desk", "get_parcel_single", "One parcel, single.")])
    assert names(index, "get_single_par")[0] == "get_single_parcel"
    assert names(index, "get single par")[0] == "get_parcel_single"


def test_a_verb_of_another_operation_lowers_a_tool() -> None:
    index = SearchIndex([mcp("desk", "delete_parcel", "A parcel."),
                         mcp("desk", "parcel_summary", "A parcel.")])
    assert names(index, "parcel")[0] == "parcel_summary"
    assert names(index, "remove parcel")[0] == "delete_parcel"


def test_a_plural_thing_alone_raises_a_listing_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    index = SearchIndex([mcp("desk", "get_parcels", "Parcels."),
                         mcp("desk", "parcels_summary", "Parcels.")])
    with_bonus = index.scores("parcels")
    monkeypatch.setattr(_index, "PLURAL_LISTING", 0.0)
    without = index.scores("parcels")
    assert with_bonus[0] > without[0]
    assert with_bonus[1] == pytest.approx(without[1])


def test_coordination_scales_by_the_share_of_query_words_matched() -> None:
    index = SearchIndex([mcp("a", "zebra_tool", "A zebra.")])
    one, half = index.scores("zebra")[0], index.scores("zebra qwxz")[0]
    # The square root of one half, give or take the bonuses of the unmatched word.
    assert 0.6 * one < half < 0.8 * one


def test_a_glued_word_of_a_description_does_not_swallow_two_query_words() -> None:
    index = SearchIndex([mcp("shipit", "list_parcels", "See shipit parcels at shipitparcels.io."),
                         mcp("shipit", "parcel_rename", "Rename a parcel.")])
    assert [t.raw for t in index.query_terms("shipit parcels")] == ["shipit", "parcels"]
    assert names(index, "shipit parcels")[0] == "list_parcels"


def test_a_rarer_fellow_verb_does_not_outweigh_the_verb_as_written() -> None:
    index = SearchIndex([mcp("desk", "remove_parcel_tag", "Remove a tag."),
                         mcp("desk", "delete_parcel", "Delete it."),
                         *(mcp("other", f"delete_thing{i}", "Delete.") for i in range(5))])
    assert names(index, "delete parcel")[0] == "delete_parcel"


def test_prefixes_and_skeletons_shorten_name_and_server_words_only() -> None:
    index = SearchIndex([mcp("desk", "get_parcel", "Parameters of a parcel.")])
    assert index.prefix_terms("par") == [stem("parcel")]


def test_two_letters_abbreviate_only_a_server_word() -> None:
    index = SearchIndex([mcp("stockkeeper", "get_invoice", "An invoice."),
                         mcp("ledger", "skip_balance", "A balance.")])
    assert index.skeleton_terms("sk") == [stem("stockkeeper")]
    assert names(index, "sk invoice")[0] == "get_invoice"


def test_a_required_word_must_be_in_the_name(shop: SearchIndex) -> None:
    found = names(shop, "buyer +list", 10)
    assert found[0] == "list_invoices" and all("list" in n for n in found)


def test_a_typo_scores_below_the_word_itself() -> None:
    index = SearchIndex([mcp("a", "label_a", "x"), mcp("b", "lable_b", "x")])
    hits = index.search("label", 5).hits
    assert [h.name for h in hits] == ["mcp__a__label_a"]
    fuzzy = SearchIndex([mcp("a", "label_a", "x")]).search("lable", 5).hits
    assert fuzzy and fuzzy[0].score < SearchIndex([mcp("a", "label_a", "x")]).search(
        "label", 5).hits[0].score


def test_outcome_counts_every_match_and_sorts_ties_by_name(shop: SearchIndex) -> None:
    outcome = shop.search("invoice", 2)
    assert len(outcome.hits) == 2 and outcome.total_matches == 4
    scores = [h.score for h in shop.search("invoice", 10).hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    tied = SearchIndex([SearchDoc("b_tool", "same words"), SearchDoc("a_tool", "same words")])
    assert [h.name for h in tied.search("same words").hits] == ["a_tool", "b_tool"]


@pytest.mark.parametrize("query", ["", "   ", "the of and", "!!!"])
def test_empty_queries_find_nothing(shop: SearchIndex, query: str) -> None:
    assert shop.search(query) == SearchOutcome([], 0)


def test_records_are_frozen_and_len_counts_tools(shop: SearchIndex) -> None:
    assert len(shop) == 11 and len(SearchIndex([])) == 0
    with pytest.raises(AttributeError):
        SearchHit("x", 1.0).score = 2.0  # type: ignore[misc]


def test_the_best_tools_do_not_depend_on_the_limit(shop: SearchIndex) -> None:
    assert names(shop, "invoice buyer", 2) == names(shop, "invoice buyer", 10)[:2]


def test_a_thousand_tools_build_and_search_quickly() -> None:
    docs = [mcp(f"server{i % 40}", f"tool_{i}_{w}", f"Does {w} things number {i}.")
            for i, w in enumerate(["alpha", "beta", "gamma", "delta", "omega"] * 200)]
    start = time.perf_counter()
    index = SearchIndex(docs)
    index.search("gamma thngs", 5)
    assert time.perf_counter() - start < 5.0  # a generous bound; the bench prints the figures
    assert names(index, "server7 omega")


def test_a_named_server_raises_its_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    index = SearchIndex([mcp("parcelpost", "track", "Track a parcel."),
                         mcp("courier", "track", "Track a parcelpost parcel.")])
    named = index.scores("parcelpost track")
    monkeypatch.setattr(_index, "SERVER_NAMED", 0.0)
    plain = index.scores("parcelpost track")
    assert named[0] > plain[0] and named[1] == pytest.approx(plain[1])
