// The result view as an anywidget module: views/widget.py's ResultWidget loads the bundle
// built from this file (static/dist/result.js). The state is one JSON string traitlet, "data".

import { renderResult } from "./result.js";

export default {
  render({ model, el: host }) {
    const draw = () => { host.textContent = ""; renderResult(host, JSON.parse(model.get("data"))); };
    draw();
    model.on("change:data", draw);
  },
};
