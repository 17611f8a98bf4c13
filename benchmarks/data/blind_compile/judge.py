"""Blind judge for compilescope's compile-time advice.

For each scenario script s*.py in this folder: a fresh subprocess with its own empty
TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR runs `run(fresh=True)`, calls
`compilescope.findings(capture)`, and records the top-5 findings, the 1-based rank of the
first finding whose text (what + fix titles + fix changes, lowercased) contains any of the
script's REMEDY_WORDS, the rank of the first finding containing any WRONG_WORDS (where a
script defines them), the same two ranks counting only each finding's what + FIRST fix
(a stricter view: is the remedy what the tool leads with?), and whether EXPECT was met:
  remedy : some finding names the remedy (rank is not None);
  nothing: no compile_time finding, or every compile_time finding's first fix title
           contains "nothing".
Scripts run one at a time. Results go to results.json and a table on stdout.

Run: PYTHONPATH=ext .venv/bin/python benchmarks/data/blind_compile/judge.py [names...]
(a later round: names starting with its prefix, e.g. `c2_` or `c3_`, into results_c2.json ...)
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
TIMEOUT_S = 1500  # generous: another test suite may share the 2 cores


def _fix_list(f):
    fixes = getattr(f, "fixes", None)
    if fixes is None:
        one = getattr(f, "fix", None)
        fixes = (one,) if one is not None else ()
    return tuple(fixes)


def _text(f) -> str:
    parts = [str(getattr(f, "what", "") or "")]
    for fx in _fix_list(f):
        parts.append(str(getattr(fx, "title", "") or ""))
        parts.append(str(getattr(fx, "change", "") or ""))
    return "\n".join(parts).lower()


def _first_fix_text(f) -> str:
    fixes = _fix_list(f)
    parts = [str(getattr(f, "what", "") or "")]
    if fixes:
        parts += [
            str(getattr(fixes[0], "title", "") or ""),
            str(getattr(fixes[0], "change", "") or ""),
        ]
    return "\n".join(parts).lower()


def _first_rank(found, words, text=_text) -> int | None:
    words = tuple(w.lower() for w in words)
    for i, f in enumerate(found, 1):
        t = text(f)
        if any(w in t for w in words):
            return i
    return None


def child(script: str, out: str) -> None:
    rec: dict = {"script": Path(script).name}
    try:
        spec = importlib.util.spec_from_file_location(Path(script).stem, script)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for k in ("SOURCE", "REMEDY", "REMEDY_WORDS", "EXPECT"):
            rec[k.lower()] = getattr(mod, k)
        rec["remedy_words"] = list(mod.REMEDY_WORDS)
        wrong = tuple(getattr(mod, "WRONG_WORDS", ()))
        rec["wrong_words"] = list(wrong)
        import compilescope

        t0 = time.perf_counter()
        cap = mod.run(fresh=True)
        rec["run_s"] = round(time.perf_counter() - t0, 1)
        found = tuple(compilescope.findings(cap))
        rec["n_findings"] = len(found)
        rec["top5"] = [
            {
                "rank": i,
                "kind": str(getattr(f, "kind", "")),
                "what": str(getattr(f, "what", "")),
                "fix_titles": [str(getattr(fx, "title", "")) for fx in _fix_list(f)],
                "first_fix_change": (
                    str(getattr(_fix_list(f)[0], "change", "")) if _fix_list(f) else None
                ),
                "first_fix_source": (
                    str(getattr(_fix_list(f)[0], "source", "")) if _fix_list(f) else None
                ),
            }
            for i, f in enumerate(found[:5], 1)
        ]
        rec["all_kinds"] = [str(getattr(f, "kind", "")) for f in found]
        rec["remedy_rank"] = _first_rank(found, mod.REMEDY_WORDS)
        rec["wrong_rank"] = _first_rank(found, wrong) if wrong else None
        # stricter view: only the finding's what + its FIRST fix (title and change)
        rec["remedy_first_fix_rank"] = _first_rank(found, mod.REMEDY_WORDS, _first_fix_text)
        rec["wrong_first_fix_rank"] = _first_rank(found, wrong, _first_fix_text) if wrong else None
        ct = [
            (i, f) for i, f in enumerate(found, 1) if "compile_time" in str(getattr(f, "kind", ""))
        ]
        rec["compile_time_ranks"] = [i for i, _ in ct]
        rec["compile_time_first_fix_titles"] = [
            (str(getattr(_fix_list(f)[0], "title", "")) if _fix_list(f) else None) for _, f in ct
        ]
        if mod.EXPECT == "nothing":
            rec["expect_met"] = all(
                t is not None and "nothing" in t.lower()
                for t in rec["compile_time_first_fix_titles"]
            )
        else:
            rec["expect_met"] = rec["remedy_rank"] is not None
    except BaseException:  # noqa: BLE001 - record, never crash the judge
        rec["error"] = traceback.format_exc()
        rec["expect_met"] = False
    Path(out).write_text(json.dumps(rec, indent=2))


def run_one(script: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="bc_") as tmp:
        env = dict(os.environ)
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor")
        env["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        os.makedirs(env["TORCHINDUCTOR_CACHE_DIR"])
        os.makedirs(env["TRITON_CACHE_DIR"])
        out = os.path.join(tmp, "result.json")
        t0 = time.perf_counter()
        try:
            p = subprocess.run(
                [sys.executable, __file__, "--child", str(script), out],
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
            rc, tail = p.returncode, (p.stdout + p.stderr)[-3000:]
        except subprocess.TimeoutExpired as e:
            rc, tail = "timeout", str(e)[-3000:]
        wall = round(time.perf_counter() - t0, 1)
        if os.path.exists(out):
            rec = json.loads(Path(out).read_text())
        else:
            rec = {"script": script.name, "error": f"child rc={rc}\n{tail}", "expect_met": False}
        rec["wall_s"] = wall
        rec["child_rc"] = rc
        if rc != 0 and "error" not in rec:
            rec["stderr_tail"] = tail
        return rec


def table(results: list[dict]) -> str:
    rows = [
        (
            "script",
            "expect",
            "met",
            "remedy@",
            "remedy@1st-fix",
            "wrong@",
            "wrong@1st-fix",
            "ct@",
            "n",
            "run_s",
            "top-3 kinds",
        )
    ]
    for r in results:
        rows.append(
            (
                r["script"].removesuffix(".py"),
                str(r.get("expect", "?")),
                "YES" if r.get("expect_met") else "no",
                str(r.get("remedy_rank")) if r.get("remedy_rank") else "-",
                str(r.get("remedy_first_fix_rank")) if r.get("remedy_first_fix_rank") else "-",
                (str(r.get("wrong_rank")) if r.get("wrong_rank") else "-")
                if r.get("wrong_words")
                else "n/a",
                (
                    (str(r.get("wrong_first_fix_rank")) if r.get("wrong_first_fix_rank") else "-")
                    if r.get("wrong_words")
                    else "n/a"
                ),
                ",".join(map(str, r.get("compile_time_ranks", []))) or "-",
                str(r.get("n_findings", "ERR")),
                str(r.get("run_s", "-")),
                ", ".join(t["kind"] for t in r.get("top5", [])[:3])
                or ("ERROR" if "error" in r else "-"),
            )
        )
    w = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(row)) for row in rows]
    lines.insert(1, "  ".join("-" * x for x in w))
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if argv and argv[0] == "--child":
        child(argv[1], argv[2])
        return
    # s*: the first round (results.json); cN_*: a later round (results_cN.json), judged apart.
    rounds = {a.split("_", 1)[0] for a in argv if a[:1] == "c" and "_" in a}
    later = rounds.pop() if len(rounds) == 1 and all(a.startswith("c") for a in argv) else ""
    scripts = sorted(HERE.glob(f"{later}_*.py" if later else "s[0-9]*_*.py"))
    if argv:
        scripts = [s for s in scripts if any(a in s.name for a in argv)]
    results = []
    for s in scripts:
        print(f"running {s.name} ...", flush=True)
        rec = run_one(s)
        results.append(rec)
        status = "ERROR" if "error" in rec else ("met" if rec["expect_met"] else "missed")
        print(f"  {status}; remedy rank {rec.get('remedy_rank')}; {rec['wall_s']} s", flush=True)
    out = HERE / (f"results_{later}.json" if later else "results.json")
    if argv and out.exists():  # partial rerun: merge into earlier results
        old = {r["script"]: r for r in json.loads(out.read_text())["results"]}
        old.update({r["script"]: r for r in results})
        results = [old[k] for k in sorted(old)]
    met = sum(1 for r in results if r.get("expect_met"))
    summary = {"met": met, "total": len(results)}
    out.write_text(json.dumps({"summary": summary, "results": results}, indent=2))
    print()
    print(table(results))
    print(f"\nEXPECT met on {met} of {len(results)}")
    for r in results:
        print(
            f"\n== {r['script']} (expect {r.get('expect')}; remedy words {r.get('remedy_words')})"
        )
        if "error" in r:
            print("  ERROR:", r["error"][-1500:])
            continue
        for t in r.get("top5", []):
            print(f"  #{t['rank']} [{t['kind']}] {t['what']}")
            for j, title in enumerate(t["fix_titles"], 1):
                print(f"       fix {j}: {title}")


if __name__ == "__main__":
    main(sys.argv[1:])
