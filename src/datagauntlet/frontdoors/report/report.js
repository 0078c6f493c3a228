"use strict";
// The report viewer. Data comes from the inline JSON block; every string is set as text.
const DATA = JSON.parse(document.getElementById("report-data").textContent);
const PAGE = 200;
const FOLD = 800;
const app = document.getElementById("app");
const chunkCache = new Map();

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
const fmt = (x) => (typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(4)) : x ?? "");
const section = (title, id) => { const s = el("section", { id }); s.append(el("h2", {}, title)); app.append(s); return s; };

function sortableTable(columns, rows, { id, onRow, pageSize } = {}) {
  // columns: [{key, label, num, get}]; rows: array of objects
  let sortKey = null, asc = true, page = 0, view = rows.slice();
  const wrap = el("div", { id });
  const table = el("table");
  const thead = el("thead");
  const tbody = el("tbody");
  const info = el("span", { class: "muted" });
  const prev = el("button", { onclick: () => { if (page > 0) { page--; render(); } } }, "‹ prev");
  const next = el("button", { onclick: () => { if ((page + 1) * size < view.length) { page++; render(); } } }, "next ›");
  const size = pageSize || view.length || 1;
  const headRow = el("tr");
  for (const col of columns) {
    const th = el("th", { "data-key": col.key, class: col.num ? "num" : null }, col.label);
    th.addEventListener("click", () => {
      asc = sortKey === col.key ? !asc : !col.num;
      sortKey = col.key;
      const get = col.get || ((r) => r[col.key]);
      view.sort((a, b) => { const x = get(a), y = get(b); return (x > y ? 1 : x < y ? -1 : 0) * (asc ? 1 : -1); });
      for (const other of headRow.children) other.classList.remove("sorted-asc", "sorted-desc");
      th.classList.add(asc ? "sorted-asc" : "sorted-desc");
      page = 0; render();
    });
    headRow.append(th);
  }
  thead.append(headRow);
  table.append(thead, tbody);
  function render() {
    tbody.replaceChildren();
    for (const row of view.slice(page * size, (page + 1) * size)) {
      const tr = el("tr", { class: onRow ? "clickable" : null, "data-i": row.i ?? null });
      for (const col of columns) {
        const v = (col.get || ((r) => r[col.key]))(row);
        tr.append(el("td", { class: col.num ? "num" : null }, fmt(v)));
      }
      if (onRow) tr.addEventListener("click", () => { for (const r of tbody.children) r.classList.remove("selected"); tr.classList.add("selected"); onRow(row); });
      tbody.append(tr);
    }
    info.textContent = `${view.length ? page * size + 1 : 0}–${Math.min((page + 1) * size, view.length)} of ${view.length}`;
  }
  if (pageSize && rows.length > pageSize) wrap.append(el("div", { class: "pager" }, prev, next, info));
  wrap.append(table);
  render();
  return wrap;
}

function summaries() {
  const s = section("Runs", "runs");
  const rows = DATA.runs.map((r, i) => ({ ...r, i }));
  const cols = [
    { key: "name", label: "run" }, { key: "kind", label: "kind" }, { key: "env", label: "env" },
    { key: "model", label: "model" }, { key: "n", label: "n", num: true },
    { key: "mean_reward", label: "mean reward", num: true },
    { key: "ci", label: "95% interval", get: (r) => (r.ci95 ? `${r.ci95[0].toFixed(4)} – ${r.ci95[1].toFixed(4)}` : "") },
    { key: "failed", label: "failed", num: true },
  ];
  s.append(sortableTable(cols, rows, { id: "runs-table" }));
  for (const r of DATA.runs) {
    const d = el("details", {}, el("summary", {}, `${r.name}: config, versions, component and metric means`));
    d.append(el("pre", {}, JSON.stringify({ config: r.config, versions: r.stamps, components: r.components, metrics: r.metrics }, null, 2)));
    s.append(d);
  }
}

function figures() {
  if (!DATA.figures.length) return;
  const s = section("Plots", "plots");
  const grid = el("div", { class: "grid" });
  s.append(grid);
  for (const f of DATA.figures) {
    const div = el("div", { class: "figure", id: `fig-${f.id}` });
    grid.append(div);
    Plotly.newPlot(div, f.figure.data, f.figure.layout, { responsive: true, displaylogo: false });
  }
}

function calibration() {
  if (!DATA.calibration.length) return;
  const s = section("Calibration", "calibration");
  for (const block of DATA.calibration) {
    const run = DATA.runs[block.run];
    s.append(el("h3", {}, run.env));
    const rows = block.rows.map((r) => ({ ...r, cfg: Object.entries(r.config || {}).map(([k, v]) => `${k}=${v}`).join(" ") }));
    const comps = Object.keys((block.rows[0] || {}).components || {});
    const cols = [{ key: "policy", label: "policy" }, { key: "cfg", label: "config" }, { key: "n", label: "n", num: true },
      { key: "mean_reward", label: "mean", num: true }, { key: "min_reward", label: "min", num: true },
      ...comps.map((c) => ({ key: c, label: c, num: true, get: (r) => r.components[c] }))];
    s.append(sortableTable(cols, rows, {}));
  }
}

function breakdownSection() {
  const any = DATA.breakdowns.some((b) => Object.keys(b).length);
  if (!any) return;
  const s = section("Breakdowns", "breakdowns");
  DATA.breakdowns.forEach((b, i) => {
    for (const [attr, rows] of Object.entries(b)) {
      s.append(el("h3", {}, `${DATA.runs[i].name} by ${attr}`));
      s.append(sortableTable([{ key: "value", label: attr }, { key: "n", label: "n", num: true }, { key: "mean_reward", label: "mean reward", num: true }], rows, {}));
    }
  });
}

function comparisonSection() {
  if (!DATA.comparisons.length) return;
  const s = section("Side by side", "comparisons");
  for (const c of DATA.comparisons) {
    s.append(el("h3", {}, `${c.b} minus ${c.a} (${c.env}): mean ${c.mean_diff >= 0 ? "+" : ""}${c.mean_diff.toFixed(4)} over ${c.tasks} tasks; ${c.b_better} better, ${c.a_better} worse`));
    s.append(sortableTable([{ key: "task_id", label: "task" }, { key: "a", label: c.a, num: true }, { key: "b", label: c.b, num: true }, { key: "diff", label: "difference", num: true }], c.rows, { pageSize: PAGE }));
  }
}

async function trajectoryOf(i) {
  const k = Math.floor(i / DATA.chunk);
  if (!chunkCache.has(k)) {
    const b64 = document.getElementById(`traj-${k}`).textContent;
    const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    chunkCache.set(k, JSON.parse(await new Response(stream).text()));
  }
  return chunkCache.get(k)[i % DATA.chunk];
}

function textBlock(text) {
  const s = typeof text === "string" ? text : JSON.stringify(text, null, 2);
  if (s.length <= FOLD) return el("pre", {}, s);
  const d = el("details", {}, el("summary", {}, `${s.slice(0, 160)}… (${s.length.toLocaleString()} characters)`));
  d.append(el("pre", {}, s));
  return d;
}

function prettyArgs(args) {
  try { return JSON.stringify(JSON.parse(args), null, 2); } catch { return String(args ?? ""); }
}

async function openTrajectory(row) {
  const panel = document.getElementById("trajectory");
  panel.setAttribute("data-i", row.i);
  panel.replaceChildren(el("h2", {}, "Trajectory"), el("p", { class: "muted" }, "loading…"));
  const t = await trajectoryOf(row.i);
  const run = DATA.runs[row.run];
  panel.replaceChildren(el("h2", {}, `Trajectory: ${run.name} · ${row.task} · rollout ${row.n}`));
  const head = el("table", { id: "trajectory-head" });
  const facts = [["reward", row.reward], ["status", row.status], ["stop", row.stop], ["turns", row.turns], ["failure code", row.failure]];
  for (const [k, v] of facts) head.append(el("tr", {}, el("th", {}, k), el("td", { "data-field": k }, fmt(v))));
  panel.append(head);
  if (t.error) panel.append(el("p", { class: "bad", id: "trajectory-error" }, `error: ${t.error}`));
  panel.append(el("h3", {}, "Where the reward was lost"));
  const lost = el("table", { id: "reward-lost" });
  lost.append(el("tr", {}, el("th", {}, "component"), el("th", { class: "num" }, "value"), el("th", { class: "num" }, "weight"), el("th", { class: "num" }, "lost"), el("th", {}, "")));
  for (const l of t.lost) {
    const bar = el("span", { class: "lost-bar" }); bar.style.width = `${Math.round(l.lost * 300)}px`;
    lost.append(el("tr", { "data-component": l.component }, el("td", {}, l.component), el("td", { class: "num" }, fmt(l.value)), el("td", { class: "num" }, fmt(l.weight)), el("td", { class: "num" }, fmt(l.lost)), el("td", {}, bar)));
  }
  panel.append(lost);
  const metrics = el("details", {}, el("summary", {}, "metrics"));
  metrics.append(el("pre", {}, JSON.stringify(t.metrics, null, 2)));
  panel.append(metrics);
  panel.append(el("h3", {}, `Messages (${t.messages.length})`));
  const list = el("div", { id: "messages" });
  for (const m of t.messages) {
    const box = el("div", { class: "message", "data-role": m.role });
    box.append(el("div", { class: "role" }, m.role + (m.tool_call_id ? ` · ${m.tool_call_id}` : "")));
    if (m.content) box.append(textBlock(m.content));
    for (const c of m.tool_calls || []) {
      box.append(el("div", { class: "tool-call", "data-tool": c.name }, el("strong", {}, `→ ${c.name}`), textBlock(prettyArgs(c.arguments))));
    }
    list.append(box);
  }
  panel.append(list);
  panel.scrollIntoView({ behavior: "instant", block: "start" });
}

function rolloutSection() {
  if (!DATA.rollouts.length) return;
  const s = section("Rollouts", "rollouts");
  const comps = [...new Set(DATA.rollouts.flatMap((r) => Object.keys(r.components)))];
  const cols = [
    { key: "run", label: "run", get: (r) => DATA.runs[r.run].name }, { key: "task", label: "task" },
    { key: "n", label: "rollout", num: true }, { key: "reward", label: "reward", num: true },
    ...comps.map((c) => ({ key: c, label: c, num: true, get: (r) => r.components[c] })),
    { key: "status", label: "status" }, { key: "failure", label: "failure code" }, { key: "stop", label: "stop" },
    { key: "attrs", label: "task", get: (r) => Object.entries(r.attrs).map(([k, v]) => `${k}=${v}`).join(" ") },
  ];
  s.append(sortableTable(cols, DATA.rollouts, { id: "rollouts-table", onRow: openTrajectory, pageSize: PAGE }));
  app.append(el("section", { id: "trajectory" }, el("h2", {}, "Trajectory"), el("p", { class: "muted" }, "Click a rollout above to open it.")));
}

document.getElementById("subtitle").textContent = `${DATA.runs.length} run(s), ${DATA.rollouts.length} rollout(s) · datagauntlet ${DATA.version}`;
summaries(); figures(); calibration(); breakdownSection(); comparisonSection(); rolloutSection();
document.body.setAttribute("data-ready", "1");
