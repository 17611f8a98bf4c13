// One graph in the explorer as an anywidget module: views/widget.py's ExplorerWidget loads the
// bundle built from this file (static/dist/explorer.js). The state is one JSON string, "data".

import { el } from "./dom.js";
import { createExplorer } from "./explorer.js";

export default {
  render({ model, el: host }) {
    let explorer = null;
    const draw = () => {
      if (explorer) explorer.dispose();
      host.textContent = "";
      const box = el("div", { class: "cs-root" });
      host.appendChild(box);
      explorer = createExplorer(box, JSON.parse(model.get("data")));
    };
    draw();
    model.on("change:data", draw);
    // anywidget calls this when the view goes: every listener the view added goes with it.
    return () => {
      model.off("change:data", draw);
      explorer.dispose();
    };
  },
};
