// The result view as an anywidget module: views/widget.py's ResultWidget loads the bundle
// built from this file (static/dist/result.js). The state is one JSON string traitlet, "data".

import { renderResult } from "./result.js";

export default {
  render({ model, el: host }) {
    // Trying a fix runs in the kernel (views/widget.py); its result arrives in "trial".
    const actions = {
      tryFix: (number) => model.send({ kind: "try_fix", number }),
      trial: () => JSON.parse(model.get("trial") || "null"),
      onTrial: (cb) => model.on("change:trial", () => cb(JSON.parse(model.get("trial") || "null"))),
    };
    const draw = () => { host.textContent = ""; renderResult(host, JSON.parse(model.get("data")), model.get("tryable") ? actions : null); };
    draw();
    model.on("change:data", draw);
  },
};
