// scalewall planner UI: plain JS over the REST API; the view's state lives in the URL hash.
"use strict";
const $ = (id) => document.getElementById(id);
const GIB = 2 ** 30;
const DAY_S = 86400;
let STRINGS = {};
let lang = "en";
let tab = "estimate";
let lastEstimate = null;

// One formatter per quantity shown. Plans are not formatted here: every plan in an API document
// comes with its plan_text, written by the formatter the CLI and the report use.
const fmt = {
  seconds: (s) => (s >= 100 ? s.toFixed(0) : s.toFixed(3)) + " s",
  count: (n) => Math.round(n).toLocaleString("en-US"),
  frac: (f) => (f === null || f === undefined ? "" : (100 * f).toFixed(1) + "%"),
  gib: (b) => (b / GIB).toFixed(1) + " GiB",
  days: (s) => (s / DAY_S).toFixed(1),
  usd: (u) => (u === null || u === undefined ? "-" : "$" + (Math.abs(u) >= 1e6 ? (u / 1e6).toFixed(2) + "M" : u.toFixed(2))),
};
const t = (key, fields) => {
  let text = (STRINGS[lang] || {})[key] || key;
  for (const [k, v] of Object.entries(fields || {})) text = text.replace(`{${k}}`, v);
  return text;
};

function applyLang() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  $("lang").textContent = lang === "en" ? "中文" : "English";
  document.title = t("title");
}

// --- state in the URL -----------------------------------------------------------------
function saveState() {
  const params = new URLSearchParams({ tab, lang });
  document.querySelectorAll("[data-state]").forEach((el) => params.set(el.id, el.value));
  history.replaceState(null, "", "#" + params.toString());
}
function loadState() {
  const params = new URLSearchParams(location.hash.slice(1));
  tab = params.get("tab") || tab;
  lang = params.get("lang") || lang;
  document.querySelectorAll("[data-state]").forEach((el) => {
    if (params.has(el.id)) el.value = params.get(el.id);
  });
  return params.has("tab");
}

// --- API -------------------------------------------------------------------------------
async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}
async function guarded(name, work) {
  $("error-" + name).textContent = "";
  saveState();
  try { await work(); } catch (err) { $("error-" + name).textContent = err.message; }
}
const num = (id) => parseInt($(id).value, 10);

function clusterFields() {
  const mode = $("mode").value;
  if (mode === "catalog") return { cluster: $("cluster").value };
  if (mode === "custom") return { system: $("system").value, fabric: $("fabric").value, nodes: num("nodes") };
  return { gpu: $("gpu").value, gpus: num("gpus") };
}
const modelFields = () => ({ model: $("model").value, ...clusterFields() });
function planFields() {
  return {
    tp: num("tp"), pp: num("pp"), cp: num("cp"), micro_batch: num("micro_batch"),
    global_batch: num("global_batch"), seq_len: num("seq_len"),
    recompute: $("recompute").value, precision: $("precision").value,
  };
}

// --- drawing ---------------------------------------------------------------------------
const CONFIG = { displaylogo: false, responsive: true };
function rows(table, header, body) {
  const esc = (s) => String(s).replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]);
  const head = header ? "<tr>" + header.map((h) => `<th>${esc(h)}</th>`).join("") + "</tr>" : "";
  $(table).innerHTML = head + body.map((r) => "<tr>" + r.map((c) => `<td>${esc(c)}</td>`).join("") + "</tr>").join("");
}
function bar(div, title, labels, values, name) {
  Plotly.newPlot(div, [{ type: "bar", x: labels, y: values, name }], { title: { text: title }, margin: { t: 40, b: 110 } }, CONFIG);
}

async function runEstimate() {
  const d = await api("/api/estimate", { ...modelFields(), ...planFields() });
  lastEstimate = d;
  const interval = d.step_time_interval_s ? `${fmt.seconds(d.step_time_interval_s[0])} - ${fmt.seconds(d.step_time_interval_s[1])}` : "";
  rows("estimate-summary", null, [
    [t("plan"), d.plan_text],
    [t("step_time"), fmt.seconds(d.step_time_s)],
    [t("interval"), interval],
    [t("tokens_per_s"), fmt.count(d.tokens_per_s)],
    [t("mfu"), fmt.frac(d.mfu)],
    [t("memory"), `${fmt.gib(d.memory_total_bytes)} / ${fmt.gib(d.hbm_bytes)}: ${d.fits ? t("fits") : t("no_fit")}`],
    [t("limiter"), d.limiter || ""],
  ]);
  const parts = Object.entries(d.breakdown_s).filter(([, v]) => v > 0);
  bar("plot-breakdown", t("breakdown"), parts.map((p) => p[0]), parts.map((p) => p[1]), t("seconds"));
  const mem = Object.entries(d.memory_bytes).filter(([, v]) => v > 0);
  bar("plot-memory", t("memory_parts"), mem.map((p) => p[0]), mem.map((p) => p[1] / GIB), "GiB");
}

async function runSearch() {
  const d = await api("/api/search", { ...modelFields(), precision: $("search_precision").value, top: num("top") });
  rows("search-table", [t("rank"), t("plan"), t("tokens_per_s"), t("mfu"), t("step_time"), t("memory"), t("limit")],
    d.top.map((r) => [r.rank, r.plan_text, fmt.count(r.tokens_per_s), fmt.frac(r.mfu), fmt.seconds(r.step_time_s), fmt.gib(r.memory_total_bytes), r.limit_line]));
  bar("plot-search", t("top_plans"), d.top.map((r) => "#" + r.rank), d.top.map((r) => r.tokens_per_s), t("tokens_per_s"));
}

function follow(job, onUpdate) {
  return new Promise((resolve, reject) => {
    const source = new EventSource(`/api/jobs/${job.id}/events`);
    source.onmessage = (event) => {
      const status = JSON.parse(event.data);
      onUpdate(status);
      if (status.state === "done") { source.close(); resolve(status); }
      if (status.state === "failed") { source.close(); reject(new Error(status.message)); }
    };
    source.onerror = () => { source.close(); reject(new Error("lost the job's event stream")); };
  });
}

async function runWall() {
  const sizes = $("sizes").value.split(",").map((s) => parseInt(s, 10)).filter((n) => n > 0);
  const { model, cluster, gpu, system, fabric } = modelFields();
  const job = await api("/api/wall", { model, cluster, gpu, system, fabric, sizes });
  await follow(job, (s) => { $("wall-progress").value = s.progress_frac; $("wall-state").textContent = t(s.state); });
  drawWall(await api(`/api/jobs/${job.id}/result`));
}
function drawWall(d) {
  const found = d.rows.filter((r) => r.found);
  const x = found.map((r) => r.gpus);
  const traces = [
    { x, y: found.map((r) => r.scaling_efficiency_frac), name: t("scaling"), mode: "lines+markers" },
    { x, y: found.map((r) => r.marginal_efficiency_frac), name: t("marginal"), mode: "lines+markers" },
    { x, y: found.map((r) => r.mfu), name: t("mfu"), mode: "lines+markers" },
  ];
  const layout = { title: { text: t("efficiency") }, xaxis: { type: "log", title: { text: t("gpus_axis") } }, yaxis: { tickformat: ".0%" }, shapes: [] };
  if (d.knee) {
    layout.shapes.push({ type: "line", x0: d.knee.gpus, x1: d.knee.gpus, yref: "paper", y0: 0, y1: 1, line: { dash: "dash", color: "#b00020" } });
    $("wall-knee").textContent = t("knee_at", { gpus: d.knee.gpus, cause: d.knee.cause, detail: d.knee.detail });
  } else {
    $("wall-knee").textContent = t("no_knee");
  }
  Plotly.newPlot("plot-wall", traces, layout, CONFIG);
  const parts = Object.keys(found.length ? found[0].loss_fracs : {});
  const losses = parts.filter((p) => found.some((r) => (r.loss_fracs[p] || 0) > 0))
    .map((p) => ({ type: "bar", name: p, x: x.map(String), y: found.map((r) => r.loss_fracs[p] || 0) }));
  losses.unshift({ type: "bar", name: t("mfu"), x: x.map(String), y: found.map((r) => r.mfu) });
  Plotly.newPlot("plot-losses", losses, { barmode: "stack", title: { text: t("losses") }, yaxis: { tickformat: ".0%" }, xaxis: { type: "category", title: { text: t("gpus_axis") } } }, CONFIG);
}

async function runGoodput() {
  const g = await api("/api/goodput", { ...modelFields(), ...planFields(), mc_runs: 0 });
  const cost = await api("/api/cost", { ...clusterFields(), model: $("model").value.startsWith("upload:") ? null : $("model").value, tokens_per_s: g.tokens_per_s, goodput: g.goodput_frac });
  const c = cost.tco;
  rows("goodput-table", [t("quantity"), t("value")], [
    [t("goodput"), fmt.frac(g.goodput_frac)],
    [t("checkpoint_interval"), fmt.seconds(g.interval_s)],
    [t("mttf"), fmt.seconds(g.mttf_s)],
    [t("interruptions"), g.interruptions_per_day.toFixed(2)],
    [t("goodput_tokens"), fmt.count(g.goodput_tokens_per_s)],
    [t("usd_gpu_hour"), fmt.usd(c.usd_per_gpu_hour)],
    [t("usd_rented"), fmt.usd(c.rental_usd_per_gpu_hour)],
    [t("usd_mtok"), fmt.usd(c.usd_per_million_tokens)],
    [t("capex"), fmt.usd(c.capex ? c.capex.total_usd : null)],
  ]);
}

async function runCompare() {
  const ask = (p) => api("/api/search", { model: $(p + "_model").value, gpu: $(p + "_gpu").value, gpus: num(p + "_gpus"), top: 1 });
  const [a, b] = await Promise.all([ask("a"), ask("b")]);
  const best = [a.top[0], b.top[0]];
  const names = [`${t("option_a")}: ${a.model}, ${a.cluster}`, `${t("option_b")}: ${b.model}, ${b.cluster}`];
  rows("compare-table", [t("quantity"), names[0], names[1]], [
    [t("best_plan"), best[0].plan_text, best[1].plan_text],
    [t("tokens_per_s"), fmt.count(best[0].tokens_per_s), fmt.count(best[1].tokens_per_s)],
    [t("per_gpu"), fmt.count(best[0].tokens_per_s / a.gpus), fmt.count(best[1].tokens_per_s / b.gpus)],
    [t("mfu"), fmt.frac(best[0].mfu), fmt.frac(best[1].mfu)],
    [t("step_time"), fmt.seconds(best[0].step_time_s), fmt.seconds(best[1].step_time_s)],
    [t("memory"), fmt.gib(best[0].memory_total_bytes), fmt.gib(best[1].memory_total_bytes)],
    [t("limit"), best[0].limit_line, best[1].limit_line],
  ]);
  const parts = Object.keys(best[0].breakdown_s).filter((k) => best.some((r) => r.breakdown_s[k] > 0));
  Plotly.newPlot("plot-compare", best.map((r, i) => ({ type: "bar", name: names[i], x: parts, y: parts.map((k) => r.breakdown_s[k]) })),
    { barmode: "group", title: { text: t("step_parts") }, margin: { b: 110 } }, CONFIG);
}

const words = (id) => $(id).value.split(",").map((s) => s.trim()).filter((s) => s);
async function runExplore() {
  const body = {
    models: words("x_models"), gpus: words("x_gpus"), batch: words("x_batch"),
    sizes: words("x_sizes").map((s) => parseInt(s, 10)).filter((n) => n > 0),
  };
  const job = await api("/api/explore", body);
  await follow(job, (s) => {
    $("explore-progress").value = s.progress_frac;
    $("explore-state").textContent = s.counts ? t("explore_counts", s.counts) : t(s.state);
  });
  drawExplore(await api(`/api/jobs/${job.id}/result`));
}
function drawExplore(d) {
  rows("explore-table", [t("model"), t("accelerator"), t("gpus"), t("batch_rule"), t("tokens_per_s"), t("days"), t("tokens_per_usd")],
    d.frontier.map((r) => [r.model, r.accelerator, r.gpus, r.batch_rule, fmt.count(r.tokens_per_s), fmt.days(r.time_to_train_s), r.tokens_per_usd.toPrecision(3)]));
  const trace = {
    x: d.frontier.map((r) => r.time_to_train_s / DAY_S), y: d.frontier.map((r) => r.tokens_per_usd),
    text: d.frontier.map((r) => `${r.model}, ${r.gpus} x ${r.accelerator}, ${r.batch_rule}`),
    mode: "lines+markers", line: { shape: "hv" }, name: t("frontier"),
  };
  Plotly.newPlot("plot-explore", [trace], { title: { text: t("frontier") }, xaxis: { type: "log", title: { text: t("days_axis") } }, yaxis: { title: { text: t("tokens_per_usd") } } }, CONFIG);
}

const RUNS = { estimate: runEstimate, search: runSearch, wall: runWall, goodput: runGoodput, compare: runCompare, explore: runExplore };

function showTab(name) {
  tab = name;
  document.querySelectorAll(".view").forEach((v) => v.classList.toggle("active", v.id === "view-" + name));
  document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("active", b.dataset.tab === name));
  $("inputs").style.display = name === "compare" || name === "explore" ? "none" : "";
  saveState();
}
function showMode() {
  document.querySelectorAll(".mode").forEach((el) => { el.style.display = el.classList.contains("mode-" + $("mode").value) ? "" : "none"; });
}
function fill(id, entries, selected) {
  $(id).innerHTML = Object.entries(entries).map(([k, name]) => `<option value="${k}" title="${name}">${k}</option>`).join("");
  if (selected in entries) $(id).value = selected;
}

async function upload(event) {
  const file = event.target.files[0];
  if (!file) return;
  try {
    const config = JSON.parse(await file.text());
    const name = file.name.replace(/\.json$/, "").replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 60) || "model";
    const d = await api("/api/uploads", { name, config });
    const option = document.createElement("option");
    option.value = d.model;
    option.textContent = `${d.name} (${t("uploaded")})`;
    $("model").appendChild(option);
    $("model").value = d.model;
    $("upload-status").textContent = `${d.name}: ${d.layers} layers, hidden ${d.hidden}`;
  } catch (err) {
    $("upload-status").textContent = err.message;
  }
}

async function init() {
  STRINGS = await (await fetch("/static/strings.json")).json();
  const catalog = await api("/api/catalog");
  for (const id of ["model", "a_model", "b_model"]) fill(id, catalog.models, "llama3-8b");
  for (const id of ["gpu", "a_gpu", "b_gpu"]) fill(id, catalog.accelerators, "h100-sxm-80gb");
  fill("cluster", catalog.clusters, "dgx-h100-superpod-1024");
  fill("system", catalog.systems, "dgx-h100");
  fill("fabric", catalog.fabrics, "ndr-rail-3tier");
  const shared = loadState();
  applyLang();
  showMode();
  showTab(tab);
  document.querySelectorAll("#tabs button").forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
  $("mode").addEventListener("change", () => { showMode(); saveState(); });
  $("lang").addEventListener("click", () => { lang = lang === "en" ? "zh" : "en"; applyLang(); saveState(); });
  $("share").addEventListener("click", () => { saveState(); navigator.clipboard?.writeText(location.href).catch(() => {}); $("share").textContent = t("copied"); });
  $("upload").addEventListener("change", upload);
  for (const [name, run] of Object.entries(RUNS)) $("run-" + name).addEventListener("click", () => guarded(name, run));
  document.querySelectorAll("[data-state]").forEach((el) => el.addEventListener("change", saveState));
  document.body.dataset.ready = "1";
  // A shared link opens on its view, computed.
  if (shared) guarded(tab, RUNS[tab]);
}
init();
