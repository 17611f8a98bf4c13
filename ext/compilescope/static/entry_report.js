// The offline HTML report (views/report.py inlines the bundle built from this file,
// static/dist/report.js, as a module script): the view drawn into #cs-app from the JSON in #cs-data.

import { renderResult } from "./result.js";

renderResult(document.getElementById("cs-app"), JSON.parse(document.getElementById("cs-data").textContent));
