"""A Report as one self-contained HTML page (pure): `git agy-state view` (docs/report.md).

No network: the CSS and the one script are inline, and a Content-Security-Policy admits only
them, by hash, so a page whose texts were crafted can load nothing and run no handler of its
own. Every text that came from the repository goes through `_e` (html.escape, quotes too); the
script reads no text from the page, only counts and toggles elements.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

from gitstate.document import controls
from gitstate.document.language import LANGUAGES
from gitstate.document.model import cut_suffix, parse_item, step_text
from gitstate.usecases.report.model import Annotation, Entry, Job, Mark, Report, StepEvent

SHORT = 7

STYLE = """
:root{--bg:#fbfbfa;--fg:#1f2328;--muted:#656d76;--card:#fff;--line:#d8dee4;--accent:#0969da;
--add:#1a7f37;--add-bg:#dafbe1;--del:#cf222e;--del-bg:#ffebe9;--hunk:#8250df;
--IDLE:#6e7781;--PLANNING:#0969da;--CONFIRMING:#9a6700;--EXECUTING:#1a7f37;--AUTO_FIX:#bc4c00;
--BLOCKED:#cf222e;--ARCHIVING:#8250df;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;
--card:#161b22;--line:#30363d;--accent:#4493f8;--add:#3fb950;--add-bg:#12261e;--del:#f85149;
--del-bg:#2d1214;--hunk:#a371f7;--IDLE:#8d96a0;--PLANNING:#4493f8;--CONFIRMING:#d29922;
--EXECUTING:#3fb950;--AUTO_FIX:#db6d28;--BLOCKED:#f85149;--ARCHIVING:#a371f7}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.55 system-ui,-apple-system,
"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK TC",sans-serif}
main{max-width:56rem;margin:0 auto;padding:2rem 1.25rem 4rem}
header h1{font-size:1.75rem;line-height:1.25;margin:0 0 .5rem;overflow-wrap:anywhere}
.meta{color:var(--muted);font-size:.9rem;display:flex;flex-wrap:wrap;gap:.35rem 1rem}
code,pre,.id{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,monospace}
.id{font-size:.85em;color:var(--muted)}
h2{font-size:1.15rem;margin:2.25rem 0 .75rem;padding-bottom:.35rem;border-bottom:1px solid
var(--line)}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(7.5rem,1fr));gap:.75rem;
margin:1.5rem 0 0;padding:0;list-style:none}
.stats li{background:var(--card);border:1px solid var(--line);border-radius:.6rem;
padding:.6rem .8rem}
.stats b{display:block;font-size:1.5rem;line-height:1.2}
.stats span{color:var(--muted);font-size:.85rem}
.badge{display:inline-block;font-size:.72rem;font-weight:600;letter-spacing:.04em;
padding:.1rem .5rem;border-radius:1rem;color:#fff;background:var(--IDLE);vertical-align:middle}
.badge.PLANNING{background:var(--PLANNING)}.badge.CONFIRMING{background:var(--CONFIRMING)}
.badge.EXECUTING{background:var(--EXECUTING)}.badge.AUTO_FIX{background:var(--AUTO_FIX)}
.badge.BLOCKED{background:var(--BLOCKED)}.badge.ARCHIVING{background:var(--ARCHIVING)}
.chip{display:inline-block;font-size:.75rem;padding:0 .45rem;margin:0 .25rem .25rem 0;
border:1px solid var(--line);border-radius:.3rem;color:var(--muted)}
ul.plain{margin:.25rem 0;padding-left:1.2rem}
.steps li,.plain li{margin:.15rem 0;overflow-wrap:anywhere}
.kind{font-size:.72rem;font-weight:600;text-transform:uppercase;letter-spacing:.05em;
margin-right:.35rem}
.k-done{color:var(--add)}.k-blocked,.k-dropped,.k-undone{color:var(--del)}.k-started{color:var(--accent)}
.k-added,.k-paused{color:var(--muted)}
.verify{color:var(--muted);font-size:.9em}
.toolbar{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center;margin:.5rem 0 1rem}
button{font:inherit;font-size:.85rem;padding:.3rem .75rem;border-radius:.4rem;cursor:pointer;
border:1px solid var(--line);background:var(--card);color:var(--fg)}
button[aria-pressed=true]{border-color:var(--accent);color:var(--accent)}
ol.timeline{list-style:none;margin:0;padding:0 0 0 1.25rem;border-left:2px solid var(--line)}
li.snapshot{position:relative;margin:0 0 1rem;padding:.75rem 1rem;background:var(--card);
border:1px solid var(--line);border-radius:.6rem}
li.snapshot::before{content:"";position:absolute;left:-1.72rem;top:1.05rem;width:.8rem;
height:.8rem;border-radius:50%;background:var(--IDLE);border:2px solid var(--bg)}
li.snapshot.PLANNING::before{background:var(--PLANNING)}
li.snapshot.CONFIRMING::before{background:var(--CONFIRMING)}
li.snapshot.EXECUTING::before{background:var(--EXECUTING)}
li.snapshot.AUTO_FIX::before{background:var(--AUTO_FIX)}
li.snapshot.BLOCKED::before{background:var(--BLOCKED)}
li.snapshot.ARCHIVING::before{background:var(--ARCHIVING)}
li.snapshot.merge{border-style:dashed}
li.snapshot.hidden{display:none}
.head{display:flex;flex-wrap:wrap;gap:.25rem .6rem;align-items:baseline}
.subject{font-weight:600;overflow-wrap:anywhere;flex:1 1 16rem}
time{color:var(--muted);font-size:.85rem;white-space:nowrap}
.note{margin:.5rem 0 0;padding:.45rem .7rem;border-left:3px solid var(--accent);
background:color-mix(in srgb,var(--accent) 8%,transparent);border-radius:0 .4rem .4rem 0;
overflow-wrap:anywhere}
.note.error{border-color:var(--del);background:color-mix(in srgb,var(--del) 8%,transparent)}
.note.checkpoint{border-color:var(--ARCHIVING);background:color-mix(in srgb,var(--ARCHIVING) 8%,
transparent)}
.note.merge{border-color:var(--CONFIRMING);background:color-mix(in srgb,var(--CONFIRMING) 9%,
transparent)}
.note small{color:var(--muted)}
.inactive{opacity:.6}
details{margin-top:.5rem}
summary{cursor:pointer;color:var(--accent);font-size:.85rem}
pre{margin:.4rem 0 0;padding:.6rem .75rem;overflow-x:auto;font-size:.8rem;line-height:1.45;
background:var(--bg);border:1px solid var(--line);border-radius:.4rem}
pre span{display:block;white-space:pre}
.add{color:var(--add);background:var(--add-bg)}.del{color:var(--del);background:var(--del-bg)}
.hunk{color:var(--hunk)}
table{border-collapse:collapse;width:100%;font-size:.9rem;display:block;overflow-x:auto}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid var(--line);
vertical-align:top;overflow-wrap:anywhere}
th{color:var(--muted);font-weight:600}
.empty{color:var(--muted);font-style:italic}
footer{margin-top:3rem;color:var(--muted);font-size:.8rem}
@media (max-width:34rem){main{padding:1.25rem .75rem 3rem}header h1{font-size:1.35rem}
.stats{grid-template-columns:repeat(auto-fit,minmax(5.5rem,1fr));gap:.5rem}
.stats li{padding:.4rem .6rem}.stats b{font-size:1.2rem}
ol.timeline{padding-left:.9rem}li.snapshot{padding:.6rem .7rem}
li.snapshot::before{left:-1.32rem}}
"""

# Counts the snapshots and toggles the diffs and the filter; it reads no text from the page.
SCRIPT = """
(function(){
var items=document.querySelectorAll('li.snapshot');
var count=document.getElementById('shown');
function update(){var n=0;items.forEach(function(li){if(!li.classList.contains('hidden'))n++;});
count.textContent=n+' of '+items.length+' shown';}
document.getElementById('expand').addEventListener('click',function(){
document.querySelectorAll('li.snapshot details').forEach(function(d){d.open=true;});});
document.getElementById('collapse').addEventListener('click',function(){
document.querySelectorAll('li.snapshot details').forEach(function(d){d.open=false;});});
var only=document.getElementById('notable');
only.addEventListener('click',function(){var on=only.getAttribute('aria-pressed')!=='true';
only.setAttribute('aria-pressed',on?'true':'false');
items.forEach(function(li){li.classList.toggle('hidden',on&&!li.hasAttribute('data-notable'));});
update();});
update();
document.body.setAttribute('data-ready',String(items.length));
})();
"""

STEP_WORDS = {
    "added": "added",
    "started": "started",
    "paused": "paused",
    "blocked": "blocked",
    "done": "done",
    "undone": "undone",
    "dropped": "dropped",
}


def _e(text: object) -> str:
    """Text as HTML text: controls shown as `\\x1b`, `\\u202e`… (docs/format.md), then escaped."""
    return escape(controls.escape(str(text)), quote=True)


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


CSP = (
    "default-src 'none'; "
    f"style-src {_hash(STYLE)}; script-src {_hash(SCRIPT)}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


def render(report: Report) -> str:
    """The whole page."""
    entries = report.entries
    notes = report.annotations()
    errors = [a for a in notes if a.known_error]
    decisions = [a for a in notes if not a.known_error]
    merges = [e for e in entries if e.merge is not None]
    marks = report.checkpoints()
    stats = [
        (len(entries), "snapshots" if len(entries) != 1 else "snapshot"),
        (len(report.done_steps()), "steps done"),
        (len(decisions), "decisions" if len(decisions) != 1 else "decision"),
        (len(errors), "known errors" if len(errors) != 1 else "known error"),
        (len(marks), "checkpoints" if len(marks) != 1 else "checkpoint"),
        (len(merges), "sync merges" if len(merges) != 1 else "sync merge"),
        (len(report.jobs), "jobs" if len(report.jobs) != 1 else "job"),
    ]
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="{_e(_lang(report.language))}">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{_e(report.title)} · git agy-state</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        "<main>",
        "<header>",
        f"<h1>{_e(report.title)}</h1>",
        '<div class="meta">',
        f'<span><span class="badge {_e(report.phase)}">{_e(report.phase)}</span></span>',
        f"<span>task <code>{_e(report.task)}</code></span>",
        f"<span>ref <code>{_e(report.ref)}</code></span>",
        f'<span>tip <code class="id">{_e(report.tip[:SHORT])}</code></span>',
        f"<span>{_e(_span(entries))}</span>",
        "</div>",
        '<ul class="stats">',
        *(
            f"<li><b>{n}</b><span>{_e(label)}</span></li>"
            for i, (n, label) in enumerate(stats)
            if n or i == 0  # the snapshots always; the rest when there are any
        ),
        "</ul>",
        "</header>",
        *_goal(report),
        *_progress(report),
        *_notes_section(decisions, errors),
        *_jobs(report.jobs),
        "<section>",
        "<h2>Timeline</h2>",
        '<div class="toolbar">',
        '<button type="button" id="expand">Expand all diffs</button>',
        '<button type="button" id="collapse">Collapse all</button>',
        '<button type="button" id="notable" aria-pressed="false">Only notable</button>',
        '<span class="id" id="shown"></span>',
        "</div>",
        '<ol class="timeline" id="timeline">',
        *(_entry(e) for e in reversed(entries)),
        "</ol>",
        "</section>",
        "<footer>Written by git agy-state view. The texts on this page are the agent's and the "
        "repository's, shown as text.</footer>",
        "</main>",
        f"<script>{SCRIPT}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _lang(code: str) -> str:
    return {"zh-TW": "zh-Hant-TW", "zh-CN": "zh-Hans-CN"}.get(code, "en")


def _span(entries: tuple[Entry, ...]) -> str:
    if not entries:
        return ""
    first, last = _time(entries[0].time), _time(entries[-1].time)
    return first if first == last else f"{first} → {last}"


def _time(iso: str) -> str:
    return iso.replace("T", " ")[:16]


def _goal(report: Report) -> list[str]:
    if len(report.goal) <= 1:
        return []
    return [
        "<section>",
        "<h2>Goal</h2>",
        '<ul class="plain">',
        *(f"<li>{_e(line.removeprefix('- '))}</li>" for line in report.goal),
        "</ul>",
        "</section>",
    ]


def _progress(report: Report) -> list[str]:
    done = report.done_steps()
    failed = [f for e in report.entries for f in e.failed]
    out = ["<section>", "<h2>Steps</h2>", '<ul class="plain steps">']
    for step in done:
        out.append(f"<li>{_kind('done')}{_e(step.text)}{_verify(step)}</li>")
    lang = LANGUAGES[report.language]
    for line in report.open_steps:
        item = parse_item(line)
        marker = item.marker if item else " "
        _, reason = cut_suffix(item.text if item else "", lang.reason)
        kind = {">": "started", "!": "blocked"}.get(marker, "added")
        word = {"started": "in progress", "blocked": "blocked", "added": "to do"}[kind]
        why = StepEvent(kind, "", (reason or "").strip()) if kind == "blocked" else None
        out.append(
            f'<li><span class="kind k-{kind}">{word}</span>{_e(step_text(line, lang))}'
            f"{_verify(why) if why else ''}</li>"
        )
    if not done and not report.open_steps:
        out.append('<li class="empty">no steps</li>')
    out.append("</ul>")
    if failed:
        out += ["<h2>Tried and failed</h2>", '<ul class="plain">']
        out += [f"<li>{_e(line)}</li>" for line in failed]
        out.append("</ul>")
    out.append("</section>")
    return out


def _kind(kind: str) -> str:
    return f'<span class="kind k-{_e(kind)}">{_e(STEP_WORDS.get(kind, kind))}</span>'


def _verify(step: StepEvent) -> str:
    if not step.detail:
        return ""
    word = "verified" if step.kind == "done" else "reason"
    return f' <span class="verify">— {word}: {_e(step.detail)}</span>'


def _notes_section(decisions: list[Annotation], errors: list[Annotation]) -> list[str]:
    if not decisions and not errors:
        return []
    out = ["<section>"]
    if decisions:
        out += ["<h2>Decisions</h2>", *(_note(a) for a in decisions)]
    if errors:
        out += ["<h2>Known errors</h2>", *(_note(a) for a in errors)]
    out.append("</section>")
    return out


def _jobs(jobs: tuple[Job, ...]) -> list[str]:
    if not jobs:
        return []
    out = [
        "<section>",
        "<h2>Jobs</h2>",
        "<table><thead><tr><th>job</th><th>state</th><th>agent</th><th>branch</th>"
        "<th>round</th><th>result</th></tr></thead><tbody>",
    ]
    for job in jobs:
        out.append(
            f'<tr class="job"><td><code>{_e(job.id)}</code></td><td>{_e(job.state)}</td>'
            f"<td>{_e(job.agent)}</td><td><code>{_e(job.branch)}</code></td>"
            f"<td>{job.round}</td><td>{_e(job.result)}</td></tr>"
        )
    out += ["</tbody></table>", "</section>"]
    return out


def _note(a: Annotation) -> str:
    cls = "note error" if a.known_error else "note"
    if not a.active:
        cls += " inactive"
    label, body = a.type, _e(a.text)
    if a.known_error:  # "known error · KeyError", then only the cause and the fix
        kind, rest = a.error_label()
        label, body = f"known error · {kind}", _e(rest)
        fields = dict(a.issue)
        if fields.get("scope"):  # the text already says the type, the cause and the fix
            body += f"<br><small>scope: {_e(fields['scope'])}</small>"
    state = "" if a.active else " · superseded"
    return (
        f'<div class="{cls}" data-id="{_e(a.id)}"><span class="kind">{_e(label)}</span>'
        f"{body}<br><small>{_e(a.id)} · {_e(a.by)} · {_e(_time(a.at))} · on "
        f'<code class="id">{_e(a.commit[:SHORT])}</code>{state}</small></div>'
    )


def _mark(m: Mark) -> str:
    when = f" · {_e(_time(m.at))}" if m.at else ""
    return (
        f'<div class="note checkpoint"><span class="kind">checkpoint</span>'
        f"<code>{_e(m.name)}</code> {_e(m.message)}<br><small>code "
        f'<code class="id">{_e(m.commit[:SHORT])}</code>{when}</small></div>'
    )


def _entry(e: Entry) -> str:
    classes = ["snapshot", e.phase if e.phase.replace("_", "").isalpha() else "IDLE"]
    if e.merge is not None:
        classes.append("merge")
    notable = bool(e.annotations or e.checkpoints or e.merge or e.failed or e.closing) or any(
        s.kind in ("done", "blocked") for s in e.steps
    )
    attrs = f'class="{_e(" ".join(classes))}" data-commit="{_e(e.commit)}"'
    if notable:
        attrs += " data-notable"
    out = [
        f"<li {attrs}>",
        '<div class="head">',
        f'<time datetime="{_e(e.time)}">{_e(_time(e.time))}</time>',
        f'<span class="badge {_e(e.phase)}">{_e(e.phase)}</span>',
        f'<span class="subject">{_e(e.subject)}</span>',
        f'<code class="id">{_e(e.commit[:SHORT])}</code>',
        "</div>",
    ]
    if e.sections:
        out.append("<div>" + "".join(f'<span class="chip">{_e(key)}</span>' for key in e.sections))
        out.append("</div>")
    if e.steps:
        out.append('<ul class="plain steps">')
        for step in e.steps:
            out.append(f"<li>{_kind(step.kind)}{_e(step.text)}{_verify(step)}</li>")
        out.append("</ul>")
    for line in e.failed:
        out.append(
            f'<div class="note error"><span class="kind">tried and failed</span>{_e(line)}</div>'
        )
    if e.merge is not None:
        what = "sync merge"
        if e.merge.conflicts:
            what += " · conflicts in " + ", ".join(e.merge.conflicts)
        if e.merge.over_limit:
            what += " · over limit: " + ", ".join(e.merge.over_limit)
        out.append(
            f'<div class="note merge"><span class="kind">merge</span>{_e(what)}<br><small>with '
            f'<code class="id">{_e(e.merge.other[:SHORT])}</code></small></div>'
        )
    out += [_note(a) for a in e.annotations]
    out += [_mark(m) for m in e.checkpoints]
    if e.diff:
        out += ["<details>", "<summary>diff</summary>", f"<pre>{_diff(e.diff)}</pre>", "</details>"]
    out.append("</li>")
    return "\n".join(out)


def _diff(text: str) -> str:
    lines = []
    for line in text.splitlines():
        if line.startswith(("+++", "---", "@@")):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        lines.append(f'<span class="{cls}">{_e(line) or " "}</span>')
    return "".join(lines)
