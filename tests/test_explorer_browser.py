"""The Attention tab in a real browser: headless Chromium over two real tiny runs served by tx-board.

Screenshots land in test-artifacts/explorer_*.png; with TX_DOCS_SCREENSHOTS=1 also in docs/ (the ones
docs/explorer.md shows), so an ordinary test run leaves the tracked files alone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing import event_accumulator

from tests import browser_harness as harness
from tx_keras.run_folder.attention_format import PLUGIN_NAME

sync_api = harness.require_browser()

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
UI_TIMEOUT_MS = 30_000
ROUTES = f"data/plugin/{PLUGIN_NAME}/"

RUNS = harness.SWEEP  # heads_4 (every head exported) and heads_1


@pytest.fixture(scope="module", autouse=True)
def _quiet_machine(ahead) -> Iterator[None]:
    """No setup started ahead (tests/ahead.py) begins while a browser's answers are awaited here."""
    with ahead.paused():
        yield


@pytest.fixture(scope="module")
def logdir(browser_sweep: Path) -> Path:
    """The sweep-like folder of the two real runs (shared with test_board_browser: trained once)."""
    return browser_sweep


@contextmanager
def _serving(logdir: Path, folders: set[str]) -> Iterator[tuple[str, dict]]:
    """tx-board on a free loopback port; yields its URL and the tab's run listing once `folders` are in."""
    listing: dict = {}

    def listed(url: str) -> bool:
        listing.update(harness.get_json(url + ROUTES + "runs"))
        return {run["folder"] for run in listing["runs"]} == folders

    with harness.serving(logdir, listed, f"{folders} in the Attention tab", timeout=90) as url:
        yield url, listing


@pytest.fixture(scope="module")
def board(logdir: Path) -> Iterator[tuple[str, dict]]:
    with _serving(logdir, set(RUNS)) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """One Chromium for the module: Playwright's sync API runs one instance per thread."""
    with sync_api.sync_playwright() as playwright:
        browser = harness.launch(playwright)
        yield browser
        browser.close()


@contextmanager
def _page(browser) -> Iterator[sync_api.Page]:
    """A page that fails the test module on any script error it raised."""
    page = browser.new_page(viewport={"width": 1500, "height": 1150})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    page.close()
    assert not errors, errors


@pytest.fixture(scope="module")
def page(browser, board) -> Iterator[sync_api.Page]:
    with _page(browser) as page:
        yield page


def _logged(run_dir: Path, tag: str) -> dict[int, np.ndarray]:
    """step -> the float16 tensor a run logged under `tag`, read straight from its event files."""
    for path in sorted(run_dir.rglob("events.out.tfevents.*")):
        events = event_accumulator.EventAccumulator(str(path), size_guidance={event_accumulator.TENSORS: 0})
        events.Reload()
        if tag in events.Tags()["tensors"]:
            return {
                event.step: np.frombuffer(event.tensor_proto.tensor_content, np.float16).reshape(
                    [dim.size for dim in event.tensor_proto.tensor_shape.dim]
                )
                for event in events.Tensors(tag)
            }
    raise AssertionError(f"{tag} is in no event file of {run_dir}")


def _screenshot(target, name: str, docs: bool = True) -> None:
    """A page or one element of it (Playwright's screenshot of either) to test-artifacts/ (and docs/)."""
    ARTIFACTS.mkdir(exist_ok=True)
    target.screenshot(path=str(ARTIFACTS / f"explorer_{name}.png"))
    if docs and os.environ.get("TX_DOCS_SCREENSHOTS") == "1":
        shutil.copy(ARTIFACTS / f"explorer_{name}.png", REPO / "docs" / f"explorer_{name}.png")


def _run_name(listing: dict, folder: str) -> str:
    return next(run["run"] for run in listing["runs"] if run["folder"] == folder)


def _readout(panel, cells: int) -> list[tuple[int, int, float, str]]:
    """(head, key index, data-weight, shown text) of every cell of the panel's weight readout.

    Read in one script once `cells` cells are shown: cell by cell, a redraw between two reads (the board
    reloads its runs every 30 s) left a locator waiting for a cell that no longer existed.
    """
    readout = panel.locator(".readout td.weight")
    sync_api.expect(readout).to_have_count(cells, timeout=UI_TIMEOUT_MS)
    rows = readout.evaluate_all(
        "cells => cells.map(c => [c.dataset.head, c.dataset.index, c.dataset.weight, c.innerText])"
    )
    return [(int(head), int(key), float(weight), text) for head, key, weight, text in rows]


def _press_until(slider, label, key: str, text: str) -> None:
    """Press an idempotent `key` (Home, End) on the epoch slider until `label` reads `text`.

    The controls are redrawn for each epoch shown: a press that lands on the slider a redraw is replacing
    does nothing (once in a few clean-clone runs End left the label on the previous epoch), so it is
    pressed again on the new one.
    """
    for _ in range(4):
        slider.press(key)
        try:
            sync_api.expect(label).to_have_text(text, timeout=3000)
            return
        except AssertionError:
            continue
    sync_api.expect(label).to_have_text(text)


def _open(page, url: str):
    """A fresh page on the tab (going to the same URL again would keep the previous test's state)."""
    page.goto("about:blank")
    page.goto(url + "#" + PLUGIN_NAME)
    frame = page.frame_locator("iframe")
    sync_api.expect(frame.locator("section.panel").first).to_be_visible(timeout=UI_TIMEOUT_MS)
    return frame


def test_tab_is_listed_and_hover_shows_the_logged_weights_at_each_epoch(page, board, logdir):
    url, listing = board
    frame = _open(page, url)
    sync_api.expect(page.get_by_text("Attention", exact=True).first).to_be_visible()
    run = _run_name(listing, "heads_4")
    frame.locator("select[data-control=run]").select_option(run)
    frame.locator("select[data-control=probe]").select_option("1")  # the second probe sentence
    frame.locator("button[data-kind=cross]").click()
    panel = frame.locator(f"section.panel[data-run='{run}']")
    sync_api.expect(panel.locator(".meta")).to_contain_text(
        "epoch 3 · cross-attention", timeout=UI_TIMEOUT_MS
    )
    logged = _logged(logdir / "heads_4", "attention_explorer/probe_2/cross")
    assert sorted(logged) == [0, 1, 2, 3]  # 0: before training
    query = 2
    panel.locator(f"svg.head-view g.token[data-side=query][data-index='{query}']").hover()
    shown = _readout(panel, 4 * logged[3].shape[-1])  # every head, every source token
    assert len(shown) == 4 * logged[3].shape[-1]
    for head, key, weight, text in shown:
        assert weight == float(logged[3][0, head, query, key])  # the logged float16, exactly
        assert abs(float(text) - weight) <= 0.0005
    _screenshot(page, "head_view")

    slider = frame.locator("input.epoch-slider")
    _press_until(slider, frame.locator(".epoch-label"), "Home", "before training")  # the untrained model
    sync_api.expect(panel.locator(".meta")).to_contain_text("before training ·", timeout=UI_TIMEOUT_MS)
    panel.locator(f"svg.head-view g.token[data-side=query][data-index='{query}']").click()  # pin it
    pinned = panel.locator(f".readout[data-side=query][data-index='{query}'] .readout-title")
    sync_api.expect(pinned).to_contain_text("(pinned", timeout=UI_TIMEOUT_MS)
    for head, key, weight, _ in _readout(panel, 4 * logged[0].shape[-1]):
        assert weight == float(logged[0][0, head, query, key])
    sync_api.expect(panel.locator(".meta")).to_contain_text("before training ·")  # still, after the read
    assert not np.array_equal(logged[0], logged[3])  # the slider really showed another epoch


def test_an_answer_that_comes_back_late_does_not_paint_over_a_newer_choice(page, board):
    """The last epoch's answer, held back until the user has moved to "before training", is dropped.

    Seen once in a clean-clone CI run: a slow answer to an earlier request painted the last epoch's
    weights under a slider already at "before training".
    """
    url, listing = board
    frame = _open(page, url)
    run = _run_name(listing, "heads_4")
    held: list = []
    last_epoch = re.compile(r".*/attention\?(?!.*step=).*")  # no step: the last epoch logged

    def hold(route) -> None:
        held.append(route)

    page.route(last_epoch, hold)  # its answers wait
    try:
        frame.locator("select[data-control=run]").select_option(run)
        frame.locator("select[data-control=probe]").select_option("1")
        for _ in range(100):  # route handlers run while Playwright waits: up to 10 s for the request
            if held:
                break
            page.wait_for_timeout(100)
        assert held, "the last epoch's request never left the page"
        slider = frame.locator("input.epoch-slider")
        _press_until(slider, frame.locator(".epoch-label"), "Home", "before training")
        panel = frame.locator(f"section.panel[data-run='{run}']")
        sync_api.expect(panel.locator(".meta")).to_contain_text("before training ·", timeout=UI_TIMEOUT_MS)
        with page.expect_response(lambda response: response.request == held[-1].request):
            for route in held:
                route.continue_()
        page.wait_for_timeout(1000)  # time for the late answer to be read and (wrongly) drawn
        sync_api.expect(panel.locator(".meta")).to_contain_text("before training ·")
        assert frame.locator(".epoch-label").inner_text() == "before training"
    finally:
        page.unroute(last_epoch, hold)


def test_model_view_opens_one_head_and_two_runs_sit_side_by_side(page, board):
    url, listing = board
    frame = _open(page, url)
    main, other = _run_name(listing, "heads_4"), _run_name(listing, "heads_1")
    frame.locator("select[data-control=run]").select_option(main)
    frame.locator("select[data-control=compare]").select_option(other)
    panels = frame.locator("section.panel")
    sync_api.expect(panels).to_have_count(2, timeout=UI_TIMEOUT_MS)
    sync_api.expect(frame.locator(f"section.panel[data-run='{other}'] .head-chip")).to_have_count(1)
    first = frame.locator(f"section.panel[data-run='{main}']")
    sync_api.expect(first.locator(".head-chip")).to_have_count(4)
    first.locator("canvas.thumb[data-layer='0'][data-head='1']").click()  # layer 1, head 2
    sync_api.expect(first.locator(".head-chip.off")).to_have_count(3)
    sync_api.expect(first.locator(".head-chip[data-head='1']")).not_to_have_class(re.compile(r"\boff\b"))
    strokes = first.locator("svg.head-view line").evaluate_all(
        "lines => lines.map(l => l.getAttribute('stroke'))"
    )
    assert strokes and set(strokes) == {"#ff7f0e"}  # only head 2's colour is drawn
    first.locator(".head-chip[data-head='0']").click()  # toggle head 1 back on
    sync_api.expect(first.locator(".head-chip.off")).to_have_count(2)
    strokes = first.locator("svg.head-view line").evaluate_all(
        "lines => lines.map(l => l.getAttribute('stroke'))"
    )
    assert set(strokes) == {"#1f77b4", "#ff7f0e"}
    _screenshot(page, "side_by_side")


def test_own_sentence_is_translated_with_its_cross_attention(page, board):
    url, listing = board
    frame = _open(page, url)
    frame.locator("select[data-control=typed-run]").select_option("heads_4")
    box = frame.locator("input.sentence-input")
    box.fill("   ")
    frame.locator("button.primary").click()
    sync_api.expect(frame.locator(".typed-message")).to_have_text(
        "type a sentence first", timeout=UI_TIMEOUT_MS
    )
    sentence = "the cat sees the dog"
    frame.locator("input.sentence-input").fill(sentence)
    frame.locator("button.primary").click()
    translation = frame.locator(".translation-text")
    sync_api.expect(translation).not_to_be_empty(timeout=UI_TIMEOUT_MS)
    expected = harness.get_json(url + ROUTES + "translate", {"run": "heads_4", "text": sentence})
    assert translation.inner_text() == expected["translation"]
    result = frame.locator(".typed-result")
    keys = result.locator("svg.head-view g.token[data-side=key]")
    sync_api.expect(keys).to_have_count(len(sentence.split()) + 1)  # the words and EOS
    keys.nth(1).click()  # "cat": which output tokens looked at it
    shown = _readout(result, 4 * len(expected["queries"]))  # exported with export.attention=heads
    for head, query, weight, _ in shown:
        assert weight == expected["weights"][0][head][query][1]
    _screenshot(frame.locator("section.typed"), "own_sentence")


def test_a_run_stopped_early_served_alone_shows_its_last_epoch_under_its_folder_name(page, logdir):
    """`tx-board heads_1`: TensorBoard calls that run `.`; the menu names it after its folder. It stopped
    after epoch 3 of the 30 configured, and the tab opens on that epoch, the model as trained."""
    assert json.loads((logdir / "heads_1" / "summary.json").read_text())["epochs"] == 3
    assert sorted(_logged(logdir / "heads_1", "attention_explorer/probe_1/cross")) == [0, 1, 3]
    with _serving(logdir / "heads_1", {"."}) as (url, listing):
        frame = _open(page, url)
        menu = frame.locator("select[data-control=run] option")
        sync_api.expect(menu).to_have_text(["heads_1"])
        sync_api.expect(frame.locator("section.panel .run-name")).to_have_text("heads_1")
        sync_api.expect(frame.locator("section.panel .meta")).to_contain_text(
            "epoch 3 ·", timeout=UI_TIMEOUT_MS
        )
        slider, label = frame.locator("input.epoch-slider"), frame.locator(".epoch-label")
        meta = frame.locator("section.panel .meta")
        _press_until(slider, label, "Home", "before training")
        sync_api.expect(meta).to_contain_text("before training ·", timeout=UI_TIMEOUT_MS)  # redrawn
        slider.press("ArrowRight")  # the slider steps through the logged epochs: before, 1, 3
        sync_api.expect(label).to_have_text("epoch 1 of 3")
        sync_api.expect(meta).to_contain_text("epoch 1 ·", timeout=UI_TIMEOUT_MS)
        _press_until(slider, label, "End", "epoch 3 of 3")
        sync_api.expect(meta).to_contain_text("epoch 3 ·", timeout=UI_TIMEOUT_MS)
        _screenshot(page, "stopped_run_alone", docs=False)


@pytest.mark.slow  # old runs written and one deleted under the page: ~19 s
def test_old_runs_and_a_run_deleted_while_open_give_clear_states(page, logdir, tmp_path):
    fragile = tmp_path / "fragile"
    shutil.copytree(logdir / "heads_1", fragile / "doomed")
    old = fragile / "old"  # a run from before the Attention tab: scalars and an export, no raw attention
    shutil.copytree(logdir / "heads_1" / "export", old / "export")
    (old / "run.json").write_text("{}")
    with tf.summary.create_file_writer(str(old)).as_default():
        tf.summary.scalar("epoch_loss", 1.0, step=1)
    with _serving(fragile, {"doomed"}) as (url, listing):
        frame = _open(page, url)
        doomed = _run_name(listing, "doomed")
        sync_api.expect(frame.locator(f"section.panel[data-run='{doomed}']")).to_be_visible()
        shutil.rmtree(fragile / "doomed")
        notice = frame.locator(".notice.warning").filter(has_text=f"No longer in the logdir: {doomed}")
        sync_api.expect(notice).to_be_visible(timeout=60_000)  # TensorBoard reloads, the page re-reads
        sync_api.expect(frame.locator("[data-state=empty]")).to_contain_text(
            "No run here has logged raw attention"
        )
        sync_api.expect(frame.locator("section.panel")).to_have_count(0)
        options = frame.locator("select[data-control=typed-run] option")
        sync_api.expect(options).to_have_text(["old"])  # its export still translates
        _screenshot(page, "clear_states", docs=False)


# --- "why this word?": rollout, attribution, confidence, knock-out, export, long inputs ----------------

LONG = 64  # tokens of the long probe: past the 60 the page must stay readable and quick with
DOCS_IMAGES = REPO / "docs" / "images"


def _write_long_run(folder: Path) -> None:
    """A run that logged one LONG-token probe (2 layers, 4 heads, every kind) at one epoch."""
    from tx_keras.run_folder.attention_format import KINDS, ProbeAttention
    from tx_keras.run_folder.attention_summaries import write_attention

    folder.mkdir(parents=True)
    (folder / "run.json").write_text("{}")
    words = [f"w{i}" for i in range(LONG - 1)] + ["<eos>"]
    queries = ["<sos>"] + [f"v{i}" for i in range(LONG - 1)]
    rng = np.random.default_rng(0)
    records = []
    for kind in KINDS:
        rows, columns = (
            (words, words)
            if kind == "encoder_self"
            else (queries, queries if kind == "decoder_self" else words)
        )
        raw = rng.random((2, 4, len(rows), len(columns)))
        weights = (raw / raw.sum(-1, keepdims=True)).astype(np.float16)
        records.append(
            (ProbeAttention(0, kind, rows, columns, " ".join(words[:-1]), " ".join(queries[1:])), weights)
        )
    with tf.summary.create_file_writer(str(folder)).as_default():
        write_attention(records, 1)


@pytest.fixture(scope="module")
def explained(reverse_run: Path, tmp_path_factory) -> Iterator[tuple[str, dict]]:
    """tx-board over a copy of the reverse run and the long run (never writing into the shared run)."""
    logdir = tmp_path_factory.mktemp("explained")
    shutil.copytree(reverse_run, logdir / "reverse")
    _write_long_run(logdir / "long")
    with _serving(logdir, {"reverse", "long"}) as served:
        yield served


@pytest.fixture(scope="module")
def explained_page(browser, explained) -> Iterator[sync_api.Page]:
    """A page of its own for these tests, so that they need only the reverse run (not the sweep)."""
    with _page(browser) as page:
        yield page


def _frame(page):
    """The tab's iframe as a Frame (for evaluate: performance.now() of the page itself)."""
    return next(frame for frame in page.frames if frame != page.main_frame)


def _docs_image(target, name: str) -> None:
    """A screenshot for docs/explorer.md and the README: test-artifacts/, and docs/images/ when asked."""
    ARTIFACTS.mkdir(exist_ok=True)
    target.screenshot(path=str(ARTIFACTS / f"explorer_{name}.png"))
    if os.environ.get("TX_DOCS_SCREENSHOTS") == "1":
        shutil.copy(ARTIFACTS / f"explorer_{name}.png", DOCS_IMAGES / f"explorer_{name}.png")


def _rows(matrix) -> np.ndarray:
    """The values of a drawn svg.matrix as an array (rows x columns), from its cells' data-value."""
    cells = matrix.locator("rect.cell").evaluate_all(
        "cells => cells.map(c => [+c.dataset.row, +c.dataset.col, +c.dataset.value])"
    )
    shape = (max(r for r, _, _ in cells) + 1, max(c for _, c, _ in cells) + 1)
    values = np.full(shape, np.nan)
    for row, column, value in cells:
        values[row, column] = value
    return values


def _download(page, button) -> bytes:
    with page.expect_download() as caught:
        button.click()
    return Path(caught.value.path()).read_bytes()


def test_rollout_view_rows_sum_to_one_and_the_view_saves_as_svg_and_png(explained_page, explained):
    page = explained_page
    import io
    from xml.etree import ElementTree

    from PIL import Image

    url, listing = explained
    frame = _open(page, url)
    frame.locator("select[data-control=run]").select_option(_run_name(listing, "reverse"))
    frame.locator("button[data-view=rollout]").click()
    panel = frame.locator("section.panel.rollout")
    matrix = panel.locator("svg.matrix")
    sync_api.expect(matrix).to_be_visible(timeout=UI_TIMEOUT_MS)
    values = _rows(matrix)
    probe = next(run for run in listing["runs"] if run["folder"] == "reverse")["probes"][0]
    words = len(probe["source"].split()) + 1  # the words and EOS, decoder inputs SOS and the reversal
    assert values.shape == (words, words)
    np.testing.assert_allclose(values.sum(-1), 1.0, atol=1e-3)
    svg = _download(page, panel.locator("button[data-export=svg]"))
    root = ElementTree.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(root.findall(".//{http://www.w3.org/2000/svg}rect[@class='cell']")) == values.size
    png = _download(page, panel.locator("button[data-export=png]"))
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.width > 50 and image.height > 50
    assert len(set(image.convert("RGB").getdata())) > 3  # drawn, not blank


def _aligned_share(panel, sources: int) -> float:
    """Share of the output words whose most attributed source token (the coloured chips after clicking the
    word) is its aligned one on the reverse task (word t <- word n-1-t; EOS aside, as in
    test_explorer_explanations: at a fixed length the end follows from the count)."""
    outputs = panel.locator(".out-token")
    words = outputs.count() - 1
    hits = 0
    for index in range(words):
        outputs.nth(index).click()
        sync_api.expect(panel.locator(f".out-token.picked[data-index='{index}']")).to_have_count(1)
        values = panel.locator(".src-token").evaluate_all("chips => chips.map(c => +c.dataset.attribution)")
        hits += int(np.argmax(values) == sources - 2 - index)
    return hits / words


def test_why_view_shows_confidence_top_five_and_attribution_aligned_on_reverse(explained_page, explained):
    page = explained_page
    url, listing = explained
    frame = _open(page, url)
    frame.locator("select[data-control=run]").select_option(_run_name(listing, "reverse"))
    frame.locator("button[data-view=why]").click()
    panel = frame.locator("section.panel.why")
    sync_api.expect(panel.locator(".explain")).to_be_visible(timeout=UI_TIMEOUT_MS)
    probe = next(run for run in listing["runs"] if run["folder"] == "reverse")["probes"][0]
    words = probe["source"].split()
    chips = panel.locator(".out-token")
    sync_api.expect(chips).to_have_count(len(words) + 1)
    probabilities = chips.evaluate_all("chips => chips.map(c => +c.dataset.probability)")
    entropies = chips.evaluate_all("chips => chips.map(c => +c.dataset.entropy)")
    assert all(0 < p <= 1 for p in probabilities) and all(e >= 0 for e in entropies)
    chips.nth(1).hover()
    top = chips.nth(1).locator(".top5")
    sync_api.expect(top).to_be_visible()
    sync_api.expect(top.locator("tr.alternative")).to_have_count(5)
    assert _aligned_share(panel, len(words) + 1) >= 0.9
    chips.nth(0).click()
    page.mouse.move(0, 0)  # the top-5 box closes: the screenshot shows the source colours under it
    _docs_image(panel.locator(".explain"), "attribution")

    frame.locator("section.typed select[data-control=typed-run]").select_option("reverse")
    sentence = "s1 s2 s3 s4 s5 s6"
    frame.locator("input.sentence-input").fill(sentence)
    frame.locator("section.typed button.primary").click()
    typed = frame.locator(".typed-result .explain")
    sync_api.expect(typed).to_be_visible(timeout=UI_TIMEOUT_MS)
    sync_api.expect(frame.locator(".translation-text")).to_have_text("s6 s5 s4 s3 s2 s1")
    sync_api.expect(typed.locator(".out-token")).to_have_count(7)
    assert _aligned_share(typed, 7) >= 0.9
    rollout = _rows(typed.locator(".matrix-view[data-name$='_rollout'] svg.matrix"))  # the typed sentence's
    assert rollout.shape == (7, 7)
    np.testing.assert_allclose(rollout.sum(-1), 1.0, atol=1e-3)


def test_a_knock_out_changes_the_log_probabilities_and_undo_restores_them(explained_page, explained):
    page = explained_page
    url, _ = explained
    frame = _open(page, url)
    frame.locator("section.typed select[data-control=typed-run]").select_option("reverse")
    frame.locator("input.sentence-input").fill("s3 s1 s4 s1 s5 s9")
    frame.locator("section.typed button.primary").click()
    typed = frame.locator(".typed-result .explain")
    sync_api.expect(typed).to_be_visible(timeout=UI_TIMEOUT_MS)
    chips = typed.locator(".out-token")

    def probabilities() -> list[float]:
        return frame.locator(".typed-result .out-token").evaluate_all(
            "c => c.map(x => +x.dataset.probability)"
        )

    before = probabilities()
    frame.locator(".typed-result input.head-off[data-kind=cross][data-head='0']").check()
    frame.locator(".typed-result button.knock-out").click()
    deltas = frame.locator(".typed-result td.delta")
    sync_api.expect(deltas).to_have_count(chips.count(), timeout=UI_TIMEOUT_MS)
    changes = deltas.evaluate_all("cells => cells.map(c => +c.dataset.value)")
    assert max(abs(change) for change in changes) > 0.01  # the head mattered to some token
    after = frame.locator(".typed-result td.after").evaluate_all("cells => cells.map(c => +c.textContent)")
    assert after != pytest.approx([np.log(p) for p in before], abs=1e-3)
    _docs_image(frame.locator(".typed-result .knockout").locator(".."), "knockout")

    frame.locator(".typed-result button.undo").click()
    sync_api.expect(frame.locator(".typed-result .knockout-result.empty")).to_be_visible(
        timeout=UI_TIMEOUT_MS
    )
    assert probabilities() == pytest.approx(before, abs=1e-6)  # every head back: the same numbers

    frame.locator(".typed-result input.top-k").fill("2")
    frame.locator(".typed-result button.keep-top").click()  # keep the 2 most important of 6 heads
    sync_api.expect(frame.locator(".typed-result .knockout-summary")).to_contain_text(
        "4 head(s) off", timeout=UI_TIMEOUT_MS
    )
    sync_api.expect(frame.locator(".typed-result input.head-off:checked")).to_have_count(4)


def test_a_64_token_probe_renders_its_matrices_within_two_seconds(explained_page, explained):
    page = explained_page
    url, listing = explained
    frame = _open(page, url)
    frame.locator("select[data-control=run]").select_option(_run_name(listing, "long"))
    panel = frame.locator("section.panel")
    sync_api.expect(panel.locator("svg.head-view g.token[data-side=key]")).to_have_count(
        LONG, timeout=UI_TIMEOUT_MS
    )
    inner = _frame(page)
    for kind in ("cross", "encoder_self"):
        frame.locator("button[data-view=raw]").click()
        frame.locator(f"button[data-kind={kind}]").click()
        sync_api.expect(panel.locator(".meta")).to_contain_text("layer 1", timeout=UI_TIMEOUT_MS)
        started = inner.evaluate("performance.now()")
        frame.locator("button[data-view=rollout]").click()
        sync_api.expect(frame.locator("section.panel.rollout svg.matrix rect.cell")).to_have_count(
            LONG * LONG, timeout=UI_TIMEOUT_MS
        )
        took = inner.evaluate("performance.now()") - started
        print(f"{kind}: {LONG}x{LONG} rollout drawn {took:.0f} ms after the click (page time)")
        assert took < 2000
    box = frame.locator("section.panel.rollout .matrix-scroll")
    assert box.evaluate("b => b.scrollHeight > b.clientHeight")  # a long matrix scrolls instead of growing
    frame.locator("section.panel.rollout input.zoom").fill("2")
    width = frame.locator("section.panel.rollout svg.matrix").evaluate("s => s.width.baseVal.value")
    assert width > LONG * 8 * 2  # zoomed in
