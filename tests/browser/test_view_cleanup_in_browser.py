"""A widget view removes every listener it added when anywidget disposes it (render's cleanup).

The bundles anywidget loads (static/dist) run in Chromium against a stand-in model that counts
its handlers; the page counts window listeners and resize observers made after it loaded.
"""

from __future__ import annotations

import json

import pytest
from compilescope.views.result_view import view_data
from compilescope.views.static_files import static_text

ORIGIN = "http://compilescope.test"
# Counts what the bundles add: window listeners by (type, function), resize observers observing.
# Only listeners the bundles add count (Playwright's own clicks and waits add some too).
COUNTING = """
window.added = new Map();
const add = window.addEventListener.bind(window), remove = window.removeEventListener.bind(window);
const ours = () => /compilescope\\.test\\/\\w+\\.js/.test(new Error().stack);
window.addEventListener = (type, fn, opts) => { if (ours()) window.added.set(`${type}`, [...(window.added.get(`${type}`) || []), fn]); add(type, fn, opts); };
window.removeEventListener = (type, fn, opts) => { window.added.set(`${type}`, (window.added.get(`${type}`) || []).filter((f) => f !== fn)); remove(type, fn, opts); };
window.windowListeners = () => [...window.added.values()].reduce((n, fns) => n + fns.length, 0);
window.observing = new Set();
const Observer = window.ResizeObserver;
window.ResizeObserver = class extends Observer {
  observe(target) { window.observing.add(this); super.observe(target); }
  disconnect() { window.observing.delete(this); super.disconnect(); }
};
// A stand-in for anywidget's model: get, on, off, send; set fires "change:<key>".
window.makeModel = (state) => {
  const handlers = new Map();
  return {
    get: (key) => state[key],
    set(key, value) { state[key] = value; for (const h of [...(handlers.get(`change:${key}`) || [])]) h(); },
    on(event, h) { handlers.set(event, [...(handlers.get(event) || []), h]); },
    off(event, h) { handlers.set(event, (handlers.get(event) || []).filter((x) => x !== h)); },
    send() {},
    handlers: () => [...handlers.values()].reduce((n, hs) => n + hs.length, 0),
  };
};
"""


@pytest.fixture
def widget_page(page):
    """A page on a made-up origin that serves the two widget bundles (no server, no network)."""
    bundles = {f"/{name}": static_text(f"dist/{name}") for name in ("result.js", "explorer.js")}
    html = f"<!doctype html><html><body><script>{COUNTING}</script></body></html>"

    def serve(route):
        path = route.request.url[len(ORIGIN) :]
        if path in bundles:
            route.fulfill(body=bundles[path], content_type="text/javascript")
        else:
            route.fulfill(body=html, content_type="text/html")

    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/")
    return page


def _counts(page) -> dict:
    return page.evaluate(
        "() => ({window: windowListeners(), observers: observing.size,"
        " model: window.model ? model.handlers() : 0})"
    )


def test_result_views_remove_their_listeners(widget_page, loaded):
    page = widget_page
    data = view_data(loaded("graph_break"))
    assert len(data["compiles"]) >= 2
    page.evaluate(
        """async (data) => {
          const { default: widget } = await import("/result.js");
          window.model = makeModel({ data, trial: "null", tryable: true });
          window.views = [];
          for (const i of [0, 1]) {
            const host = document.createElement("div");
            host.id = `view${i}`;
            document.body.appendChild(host);
            views.push(widget.render({ model, el: host }));
          }
        }""",
        json.dumps(data),
    )
    page.wait_for_selector("#view1 .cs-root[data-ready='1']")
    # Every part that listens outside its elements: explorers (a drag goes on over the window),
    # the fitted tables (resize observers), both compile ids' graphs and code.
    for view in ("#view0", "#view1"):
        root = page.locator(view)
        root.locator("button[data-tab='graphs']").click()
        for stage in root.locator(".cs-stage:visible").all()[:3]:
            stage.click()
        root.locator("button[data-tab='code']").click()
        select = root.locator(".cs-select:visible")
        for option in select.locator("option").all()[:2]:
            select.select_option(option.get_attribute("value"))
        root.locator("button[data-tab='graphs']").click()
    two = _counts(page)
    assert two["window"] >= 4 and two["observers"] >= 2 and two["model"] >= 4, two
    # A redraw (the kernel sent new data) replaces what the old drawing added: no more than before.
    page.evaluate("() => model.set('data', model.get('data'))")
    page.wait_for_selector("#view1 .cs-root[data-ready='1']")
    redrawn = _counts(page)
    assert redrawn["window"] <= two["window"] and redrawn["model"] == two["model"], redrawn
    # Each view's cleanup removes its own; the other view still listens.
    page.evaluate("() => views[0]()")
    one = _counts(page)
    assert 0 < one["window"] < redrawn["window"] and 0 < one["model"] < redrawn["model"], one
    page.evaluate("() => views[1]()")
    assert _counts(page) == {"window": 0, "observers": 0, "model": 0}
    assert page.errors == []


def test_an_explorer_view_removes_its_listeners(widget_page, loaded):
    page = widget_page
    graph = view_data(loaded("graph_break"))["graphs"][0]
    page.evaluate(
        """async (graph) => {
          const { default: widget } = await import("/explorer.js");
          window.model = makeModel({ data: graph });
          const host = document.createElement("div");
          document.body.appendChild(host);
          window.cleanup = widget.render({ model, el: host });
          model.set("data", graph);  // drawn again: the first drawing's listeners go
        }""",
        json.dumps(graph),
    )
    page.wait_for_selector(".cs-explorer[data-ready='1']")
    assert _counts(page) == {"window": 2, "observers": 1, "model": 1}
    page.evaluate("() => cleanup()")
    assert _counts(page) == {"window": 0, "observers": 0, "model": 0}
    assert page.errors == []
