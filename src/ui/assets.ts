/**
 * The UI's stylesheet and its one script, served from /ui/assets (no CDN, no build step). The
 * script only adds live updates, copy buttons and ticking durations: every page reads without it.
 * Its HTML fragments come from the server, already escaped there.
 */

export const CSS = `
:root { color-scheme: light dark; --bg: #fbfbfd; --fg: #1b1d23; --muted: #5b6170;
  --line: #d6d9e0; --card: #ffffff; --accent: #2457c5; --ok: #17703a; --bad: #b3261e;
  --warn: #8a5a00; --code: #f1f3f7; font-family: system-ui, sans-serif; }
@media (prefers-color-scheme: dark) { :root { --bg: #14161b; --fg: #e7e9ee; --muted: #a3a9b6;
  --line: #343945; --card: #1c1f26; --accent: #8fb0ff; --ok: #6fd08f; --bad: #ff8a80;
  --warn: #f2c15c; --code: #232731; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.45; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem; }
.skip:focus { left: .5rem; z-index: 10; }
header.top { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem;
  border-bottom: 1px solid var(--line); background: var(--card); flex-wrap: wrap; }
header.top .brand { font-weight: 700; text-decoration: none; color: var(--fg); }
header.top nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
header.top nav a[aria-current="page"] { font-weight: 700; }
header.top form { margin-left: auto; }
main { padding: 1rem 1.2rem 3rem; max-width: 78rem; }
h1 { font-size: 1.5rem; margin: .3rem 0 1rem; } h2 { font-size: 1.15rem; margin-top: 1.8rem; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .88rem; }
pre { background: var(--code); padding: .6rem .8rem; overflow: auto; max-height: 30rem;
  white-space: pre-wrap; word-break: break-word; border-radius: 4px; margin: .3rem 0; }
.state { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: .85rem;
  border: 1px solid currentColor; }
.state-completed { color: var(--ok); } .state-error { color: var(--bad); }
.state-stopped, .state-created { color: var(--muted); } .state-running { color: var(--accent); }
.bad { color: var(--bad); } .ok { color: var(--ok); } .muted { color: var(--muted); }
.warn { color: var(--warn); }
form.filters { display: flex; gap: .8rem; align-items: end; flex-wrap: wrap; margin-bottom: 1rem; }
label { display: block; font-size: .85rem; color: var(--muted); margin-bottom: .15rem; }
input, select, textarea, button { font: inherit; color: inherit; background: var(--card);
  border: 1px solid var(--line); border-radius: 4px; padding: .35rem .5rem; }
textarea { width: 100%; min-height: 6rem; font-family: ui-monospace, monospace; }
button { cursor: pointer; background: var(--accent); color: var(--bg); border-color: var(--accent); }
button.secondary { background: var(--card); color: var(--accent); }
.row { display: flex; gap: .6rem; align-items: center; flex-wrap: wrap; }
.url { width: min(42rem, 100%); } td .row { flex-wrap: nowrap; } td .url { min-width: 30rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
ol.timeline { list-style: none; padding: 0; margin: 0; border-left: 2px solid var(--line); }
ol.timeline > li { padding: .3rem .8rem; position: relative; }
ol.timeline > li .when { color: var(--muted); font-size: .8rem; margin-right: .5rem; }
ol.timeline > li .kind { font-weight: 600; margin-right: .4rem; }
ol.timeline > li pre { margin: .2rem 0 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  padding: .8rem 1rem; margin: .6rem 0; }
.pager { display: flex; gap: 1rem; margin-top: .8rem; }
figure.block { margin: .4rem 0; } figure.block figcaption { font-size: .8rem; color: var(--muted); }
ul.stats { display: flex; flex-wrap: wrap; gap: .6rem 1.6rem; list-style: none; padding: 0;
  margin: 0 0 1rem; } ul.stats .num { font-size: 1.5rem; font-weight: 700; }
nav.ranges { display: flex; gap: 1rem; margin-bottom: 1rem; }
nav.ranges a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--fg); }
figure.chart-box { margin: 0 0 1rem; background: var(--card); border: 1px solid var(--line);
  border-radius: 6px; padding: .6rem .8rem; }
figure.chart-box figcaption { font-size: .85rem; color: var(--muted); }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart .axis { stroke: var(--line); } svg.chart .tick { fill: var(--muted); font-size: 11px; }
svg.chart .hit { fill: transparent; } svg.chart g.bar:hover .hit { fill: var(--code); }
.fill-completed { fill: var(--ok); background: var(--ok); }
.fill-error { fill: var(--bad); background: var(--bad); }
.fill-stopped { fill: var(--muted); background: var(--muted); }
.legend .key { display: inline-block; width: .7rem; height: .7rem; border-radius: 2px;
  margin-left: .6rem; vertical-align: -.05rem; }
.banner { border: 2px solid var(--bad); border-radius: 6px; padding: .6rem 1rem; margin: 0 0 1rem;
  background: var(--card); }
.banner pre { max-height: 12rem; }
svg.wf { display: block; width: min(40rem, 100%); height: .6rem; margin: .2rem 0; }
svg.wf .wf-track { fill: var(--code); } svg.wf .wf-ok { fill: var(--accent); }
svg.wf .wf-bad { fill: var(--bad); }
svg.wf.wf-running .wf-track { opacity: .5; } /* the session runs: its span ends now */
.hint { border-left: 3px solid var(--warn); padding: .2rem .8rem; margin: .4rem 0;
  color: var(--fg); max-width: 44rem; } .hint p { margin: .3rem 0; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
`;

export const JS = `
"use strict";
(function () {
  var announce = function (text) {
    var region = document.getElementById("announce");
    if (region) region.textContent = text;
  };
  var fmt = function (ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + " s";
    var m = Math.floor(s / 60);
    return m + " min " + (s % 60) + " s";
  };
  var tick = function () {
    document.querySelectorAll("[data-since]").forEach(function (el) {
      el.textContent = fmt(Date.now() - Date.parse(el.getAttribute("data-since")));
    });
    // An activity in flight: its bar runs from its start up to now.
    document.querySelectorAll("svg[data-grow-from]").forEach(function (svg) {
      var from = Number(svg.getAttribute("data-grow-from"));
      var x = ((Number(svg.getAttribute("data-grow-start")) - from) / Math.max(1, Date.now() - from)) * 1000;
      x = Math.min(1000, Math.max(0, x));
      var bar = svg.querySelector(".wf-ok");
      if (bar) { bar.setAttribute("x", String(x)); bar.setAttribute("width", String(Math.max(2, 1000 - x))); }
    });
  };
  setInterval(tick, 1000);
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest("[data-copy]");
    if (!btn) return;
    var input = document.getElementById(btn.getAttribute("data-copy"));
    if (!input) return;
    var done = function () { announce("Copied " + input.value); btn.textContent = "Copied"; };
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, function () {
      input.select(); document.execCommand("copy"); done();
    }); else { input.select(); document.execCommand("copy"); done(); }
  });
  var fragment = function (html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    return t.content.firstElementChild;
  };
  var list = document.querySelector("[data-live-list]");
  if (list && window.EventSource) {
    var src = new EventSource(list.getAttribute("data-live-list"));
    src.onopen = function () { list.setAttribute("data-live-ready", "true"); };
    src.addEventListener("row", function (ev) {
      var msg = JSON.parse(ev.data);
      var row = fragment(msg.html);
      var old = document.getElementById(row.id);
      if (old) old.replaceWith(row);
      else {
        var tbody = list.querySelector("tbody");
        tbody.insertBefore(row, tbody.firstElementChild);
        var empty = document.getElementById("no-sessions");
        if (empty) empty.remove();
        var max = Number(list.getAttribute("data-limit") || "50");
        while (tbody.children.length > max) tbody.lastElementChild.remove();
      }
      announce(msg.text);
    });
  }
  var ov = document.querySelector("[data-live-overview]");
  if (ov && window.EventSource) {
    var ovs = new EventSource(ov.getAttribute("data-live-overview"));
    ovs.onopen = function () { ov.setAttribute("data-live-ready", "true"); };
    ovs.addEventListener("overview", function (ev) {
      var msg = JSON.parse(ev.data);
      var old = document.getElementById("overview");
      var next = fragment(msg.html);
      if (old && next) old.replaceWith(next);
    });
  }
  var page = document.querySelector("[data-live-session]");
  if (page && window.EventSource) {
    var ses = new EventSource(page.getAttribute("data-live-session"));
    ses.onopen = function () { page.setAttribute("data-live-ready", "true"); };
    var replace = function (id, html) {
      var el = document.getElementById(id);
      if (el) el.innerHTML = html;
    };
    ses.addEventListener("entry", function (ev) {
      var msg = JSON.parse(ev.data);
      var tl = document.getElementById("timeline");
      (msg.gone || []).forEach(function (id) {
        var el = document.getElementById(id);
        if (el) el.remove();
      });
      var item = fragment(msg.html);
      var same = item && item.id ? document.getElementById(item.id) : null;
      if (same) same.replaceWith(item);
      else if (tl && item) tl.appendChild(item);
      if (msg.status) replace("session-status", msg.status);
      if (msg.end) replace("session-end", msg.end);
    });
    ses.addEventListener("end", function (ev) {
      var msg = JSON.parse(ev.data);
      ses.close();
      replace("session-status", msg.status);
      replace("session-end", msg.end);
      page.setAttribute("data-ended", "true");
      document.querySelectorAll('[data-kind="activity-running"]').forEach(function (el) { el.remove(); });
      var stop = document.getElementById("stop-form");
      if (stop) stop.remove();
      announce(msg.text);
    });
  }
})();
`;
