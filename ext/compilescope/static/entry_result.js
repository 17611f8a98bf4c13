// The result view as an anywidget module: views/widget.py's ResultWidget loads the bundle
// built from this file (static/dist/result.js). The state is one JSON string traitlet, "data".

import { renderResult } from "./result.js";

export default {
  render({ model, el: host }) {
    let view = null; // the drawn view: its dispose
    let trialHandlers = []; // the drawn view's model.on("change:trial") handlers
    // Trying a fix runs in the kernel (views/widget.py); its result arrives in "trial".
    const actions = {
      tryFix: (number) => model.send({ kind: "try_fix", number }),
      trial: () => JSON.parse(model.get("trial") || "null"),
      onTrial: (cb) => {
        const handler = () => cb(JSON.parse(model.get("trial") || "null"));
        model.on("change:trial", handler);
        trialHandlers.push(handler);
      },
    };
    const undraw = () => {
      if (view) view.dispose();
      for (const handler of trialHandlers) model.off("change:trial", handler);
      view = null;
      trialHandlers = [];
    };
    const draw = () => {
      undraw();
      host.textContent = "";
      view = renderResult(host, JSON.parse(model.get("data")), model.get("tryable") ? actions : null);
    };
    draw();
    model.on("change:data", draw);
    // anywidget calls this when the view goes: every listener the view added goes with it.
    return () => {
      model.off("change:data", draw);
      undraw();
    };
  },
};
