"""tx-board in a real browser: headless Chromium shows real tx-train runs in Scalars, Images and HParams.

Screenshots of each view land in test-artifacts/ at the repo root, for a human to look at after CI;
with TX_DOCS_SCREENSHOTS=1 the Scalars view is also saved as docs/images/dashboard.png (the README's).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import browser_harness as harness

sync_api = harness.require_browser()

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
DOCS_SCREENSHOT = Path(__file__).resolve().parents[1] / "docs" / "images" / "dashboard.png"
# run folder -> model.num_heads: two runs, two hparams rows (shared with test_explorer_browser: trained once)
RUNS = {name: heads for name, (heads, _) in harness.SWEEP.items()}
UI_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module", autouse=True)
def _quiet_machine(ahead) -> Iterator[None]:
    """No setup started ahead (tests/ahead.py) begins while a browser's answers are awaited here."""
    with ahead.paused():
        yield


@pytest.fixture(scope="module")
def runs(browser_sweep: Path) -> Path:
    """Two real tx-train runs side by side, as in a sweep folder."""
    return browser_sweep


@pytest.fixture(scope="module")
def board(runs: Path) -> Iterator[str]:
    """tx-board on a free loopback port over the runs; yields its URL once the runs are loaded."""
    wanted = {f"{name}/train" for name in RUNS}
    with harness.serving(
        runs, lambda url: wanted <= set(harness.get_json(url + "data/runs")), "the runs"
    ) as url:
        yield url


@pytest.fixture(scope="module")
def page(board: str) -> Iterator[sync_api.Page]:
    with sync_api.sync_playwright() as playwright:
        browser = harness.launch(playwright)
        yield browser.new_page(viewport={"width": 1920, "height": 1080})
        browser.close()


def _screenshot(page: sync_api.Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"board_{name}.png"), full_page=True)


def test_each_run_is_three_entries_in_the_run_list(board):
    """The run itself (dashboard, final scores, HParams), and Keras' train and validation curves."""
    runs = set(harness.get_json(board + "data/runs"))
    assert runs == {f"{name}{split}" for name in RUNS for split in ("", "/train", "/validation")}, runs


def test_scalars_open_on_loss_and_accuracy_with_diagnostics_last(board):
    """TensorBoard orders Scalars groups by name and opens the first two: the training loss per step (a
    curve even when a run stops after one epoch) and accuracy (token accuracy and the validation
    exact-match); then the epoch loss, the final scores, the per-layer diagnostics under one `layers/`
    prefix and the learning rate."""
    tags = harness.get_json(board + "data/plugin/scalars/tags")
    groups = sorted({tag.split("/")[0] for run in tags.values() for tag in run})
    assert groups == ["batch_loss", "epoch_accuracy", "epoch_loss", "final", "layers", "optimizer"], groups
    assert all("batch_loss" in run_tags for run, run_tags in tags.items() if run.endswith("/train"))
    validation = {tag for run, run_tags in tags.items() if run.endswith("/validation") for tag in run_tags}
    assert {"epoch_accuracy", "epoch_accuracy/exact_match", "epoch_loss"} <= validation


def test_scalars_view_shows_both_runs(page, board):
    page.goto(board + "#scalars")
    dashboard = page.locator("tf-scalar-dashboard")  # the views stay in the DOM: scope to this one
    runs_selector = dashboard.locator("tf-runs-selector")
    for name in RUNS:
        for split in ("train", "validation"):
            sync_api.expect(runs_selector.get_by_text(f"{name}/{split}", exact=True)).to_be_visible(
                timeout=UI_TIMEOUT_MS
            )
    # Many tag groups (diagnostics, final, ...): later ones start collapsed, so filter to the loss and
    # accuracy curves.
    dashboard.locator("tf-tag-filterer input").fill("^(epoch|batch)_")
    for tag, splits in (("batch_loss", 1), ("epoch_loss", 2), ("epoch_accuracy", 2)):
        card = dashboard.locator("tf-scalar-card").filter(has_text=tag).first
        # Drawn curves, not just an empty frame: each run's train (and validation) (smoothing adds more).
        curves = card.locator("path.line[d]")
        sync_api.expect(curves.nth(splits * len(RUNS) - 1)).to_be_attached(timeout=UI_TIMEOUT_MS)
    _screenshot(page, "scalars")
    if os.environ.get("TX_DOCS_SCREENSHOTS") == "1":
        dashboard.locator("tf-tag-filterer input").fill("")  # the view a user opens on
        page.wait_for_timeout(2000)
        DOCS_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_SCREENSHOT))


def test_images_view_shows_attention_maps_of_both_runs(page, board):
    page.goto(board + "#images")
    dashboard = page.locator("tf-image-dashboard")
    dashboard.locator("tf-tag-filterer input").fill("^attention/")  # the "Filter tags" box
    loaders = dashboard.locator("tf-image-loader")
    for kind in ("encoder_self", "decoder_self", "cross"):
        for name in RUNS:
            card = loaders.filter(has_text=f"attention/{kind}/layer_1").filter(has_text=name)
            sync_api.expect(card.first).to_be_visible(
                timeout=UI_TIMEOUT_MS
            )  # also in the filter's results pane
    images = loaders.locator("img")
    sync_api.expect(images.first).to_be_visible(timeout=UI_TIMEOUT_MS)
    page.wait_for_function(  # the heat-maps really decoded, not just their <img> frames
        "els => els.length > 0 && els.every(el => el.complete && el.naturalWidth > 0)",
        arg=images.element_handles(),
        timeout=UI_TIMEOUT_MS,
    )
    _screenshot(page, "images")


def test_hparams_table_has_one_row_per_run(page, board):
    statuses = ["STATUS_UNKNOWN", "STATUS_SUCCESS", "STATUS_FAILURE", "STATUS_RUNNING"]
    groups = harness.get_json(
        board + "data/plugin/hparams/session_groups",
        {
            "allowedStatuses": statuses,
            "startIndex": 0,
            "sliceSize": 100,
            "aggregationType": "AGGREGATION_AVG",
        },
    )["sessionGroups"]
    assert sorted(group["hparams"]["model.num_heads"] for group in groups) == sorted(RUNS.values()), groups
    page.goto(board + "#hparams")
    # Only the first few hparams start as columns; tick the one these runs differ in, as a user would.
    query_pane = page.locator("tf-hparams-dashboard tf-hparams-query-pane")
    query_pane.locator("paper-checkbox").filter(has_text=re.compile(r"^\s*model\.num_heads\s*$")).click()
    table = page.locator("tf-hparams-dashboard tf-hparams-table-view vaadin-grid").first
    sync_api.expect(table.get_by_text("model.num_heads", exact=True)).to_be_visible(timeout=UI_TIMEOUT_MS)
    rows = table.locator("tbody#items tr:not([hidden])")
    sync_api.expect(rows).to_have_count(len(RUNS), timeout=UI_TIMEOUT_MS)
    _screenshot(page, "hparams")
