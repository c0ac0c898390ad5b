"""The workloads and edits sections of the ``-o table`` report (from the same dictionaries -o json prints)."""

from __future__ import annotations

from pysched.controllers.engine import Expansion
from pysched.report.document import Block, Cell, Column, Table, _limit, _more
from pysched.scheduler.simulation import SimulationResult, workload_sections
from pysched.snapshot.kinds import POD_CREATING

BAD, OK, WARN = "red", "green", "yellow"


def workload_blocks(result: SimulationResult, max_rows: int) -> list[Block]:
    exp = result.cluster.expansion
    if not isinstance(exp, Expansion):
        return []
    data = workload_sections(result, exp)
    out: list[Block] = []
    rows = []
    for key, w in data["workloads"].items():
        if key.split("/", 1)[0] not in POD_CREATING:
            continue
        why = w.get("reason") or w.get("note") or ""
        if w.get("not_created"):
            why = (why + "; " if why else "") + f"{len(w['not_created'])} not created: {w['not_created'][0]['reason']}"
        if w.get("rejected"):
            why = (why + "; " if why else "") + f"{len(w['rejected'])} rejected: {w['rejected'][0]['reason']}"
        if w["deleted"]:
            why = (why + "; " if why else "") + f"{len(w['deleted'])} deleted by the controller"
        if len(why) > 90:
            why = why[:89] + "…"
        rows.append([Cell(key), Cell("-" if w["desired"] is None else str(w["desired"])), Cell(str(w["existing"])),
                     Cell(str(w["created"])), Cell(str(w["scheduled"]), OK if w["scheduled"] else ""),
                     Cell(str(w["pending"]), BAD if w["pending"] else ""), Cell(why)])
    if rows:
        shown, hidden = _limit(rows, max_rows)
        out.append(Table("Workloads (pods their controllers create now)",
                         [Column("workload"), Column("desired", "right"), Column("existing", "right"),
                          Column("created", "right"), Column("scheduled", "right"), Column("pending", "right"),
                          Column("main reason")], shown, [_more(hidden, "workloads")] if hidden else []))
    edits = data["edits"]
    if edits:
        erows = []
        placed = result.bindings
        repl = {old: new for new, old in exp.replacements.items()}
        for i, e in enumerate(edits, 1):
            detail = e.get("taint") or e.get("label") or (f"replicas {e['replicas']}" if "replicas" in e else "") \
                or (f"count {e['count']}" if "count" in e else "")
            head = [Cell(str(i)), Cell(e["edit"]), Cell(f"{e.get('target', '')} {detail}".strip())]
            lines: list[tuple[str, str, str]] = []
            for what in ("evicted", "deleted", "removed", "ignored"):
                for p in e.get(what) or []:
                    note = ""
                    if what == "evicted" and p in repl:
                        new = repl[p]
                        note = f"replaced by {new}, {'on ' + placed[new] if new in placed else 'pending'}"
                    lines.append((p, what, note))
            for p, r in sorted((e.get("refused") or {}).items()):
                lines.append((p, "refused", f"{', '.join(r['pdbs'])}: {r['reason']}"))
            if not lines:
                erows.append([*head, Cell("-"), Cell(""), Cell("")])
            for j, (p, what, note) in enumerate(lines):
                style = WARN if what == "refused" else ""
                erows.append([*(head if j == 0 else [Cell(""), Cell(""), Cell("")]), Cell(p), Cell(what, style),
                              Cell(note)])
        shown, hidden = _limit(erows, max_rows)
        out.append(Table("Edits (applied in order before the simulation)",
                         [Column("#", "right"), Column("edit"), Column("target"), Column("pod"), Column("outcome"),
                          Column("detail")], shown, [_more(hidden, "rows")] if hidden else []))
    return out
