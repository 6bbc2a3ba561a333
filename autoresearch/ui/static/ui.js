// autoresearch dashboard: live refresh of the page's content, confirmed actions, a following log.
// Plain JS, no build step, no outside requests.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const content = document.getElementById("content");
let refreshing = false;
let again = false;

function busy() {
  // Do not replace the content under a person who is typing into one of its fields.
  const active = document.activeElement;
  return active && content.contains(active) && (active.tagName === "INPUT" || active.tagName === "SELECT");
}

async function refresh() {
  if (refreshing || busy()) { again = true; return; }
  refreshing = true;
  try {
    const response = await fetch(location.href, { headers: { "X-Partial": "1" }, credentials: "same-origin" });
    if (response.ok) {
      const kept = keptInputs();
      content.innerHTML = await response.text();
      restoreInputs(kept);
      drawCharts();
    }
  } finally {
    refreshing = false;
    if (again) { again = false; setTimeout(refresh, 250); }
  }
}

// What a person ticked or typed in a form marked data-keep (the trial filter, the trials picked to
// compare) survives a live refresh that replaces the content.
function keptInputs() {
  const kept = new Map();
  for (const input of content.querySelectorAll("form[data-keep] input, form[data-keep] select, input[form]")) {
    const key = `${input.name}\u0000${input.type === "checkbox" ? input.value : ""}`;
    kept.set(key, input.type === "checkbox" ? input.checked : input.value);
  }
  return kept;
}

function restoreInputs(kept) {
  for (const input of content.querySelectorAll("form[data-keep] input, form[data-keep] select, input[form]")) {
    const key = `${input.name}\u0000${input.type === "checkbox" ? input.value : ""}`;
    if (!kept.has(key) || input.type === "hidden") { continue; }
    if (input.type === "checkbox") { input.checked = kept.get(key); } else { input.value = kept.get(key); }
  }
}

function flash(text, ok) {
  const box = document.getElementById("flash");
  box.textContent = text;
  box.className = ok ? "ok" : "error";
}

document.addEventListener("submit", async (event) => {
  const form = event.target;
  if (!form.classList.contains("action")) { return; }
  event.preventDefault();
  if (!window.confirm(form.dataset.confirm)) { return; }
  const body = {};
  for (const [key, value] of new FormData(form).entries()) { body[key] = value; }
  if ("field" in body) { body.changes = { [body.field]: body.value }; delete body.field; delete body.value; }
  const response = await fetch(form.dataset.action, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify(body),
  });
  let answer = {};
  try { answer = await response.json(); } catch (e) { answer = { error: response.statusText }; }
  flash(answer.ok ? answer.message : `refused (${response.status}): ${answer.error}`, answer.ok);
  if (document.activeElement) { document.activeElement.blur(); }
  refresh();
});

const state = document.getElementById("live-state");
const live = new EventSource("/live");
live.addEventListener("hello", () => { state.textContent = "live"; state.className = "live on"; });
live.addEventListener("change", () => { refresh(); });
live.onerror = () => { state.textContent = "reconnecting"; state.className = "live off"; };
const streams = [live];
// A browser holds few connections per host (6 over HTTP/1.1): close the streams as the page goes.
window.addEventListener("pagehide", () => { for (const s of streams) { s.close(); } });

const log = document.getElementById("log");
if (log && log.dataset.stream) {
  const follow = new EventSource(log.dataset.stream);
  streams.push(follow);
  const atBottom = () => window.innerHeight + window.scrollY >= document.body.scrollHeight - 8;
  const show = (text, replace) => {
    const stick = atBottom();
    log.textContent = replace ? text : log.textContent + text;
    if (stick) { window.scrollTo(0, document.body.scrollHeight); }
  };
  follow.addEventListener("append", (e) => show(JSON.parse(e.data), false));
  follow.addEventListener("reset", (e) => show(JSON.parse(e.data), true));
}

// Charts (plotly figures as JSON from the server) load after the page, plotly.js from the installed
// package on first use; a live refresh replaces the content, so they are drawn again with new data.
let plotlyLoaded = null;

function loadPlotly() {
  if (!plotlyLoaded) {
    plotlyLoaded = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/static/plotly.min.js";
      script.onload = resolve;
      script.onerror = () => reject(new Error("plotly.js did not load"));
      document.head.appendChild(script);
    });
  }
  return plotlyLoaded;
}

async function drawCharts() {
  for (const box of content.querySelectorAll("[data-figure]")) {
    try {
      const response = await fetch(box.dataset.figure, { credentials: "same-origin" });
      const figure = await response.json();
      if (!response.ok) { box.textContent = figure.error; continue; }
      await loadPlotly();
      box.textContent = "";
      await Plotly.react(box, figure.data, figure.layout, { displaylogo: false, responsive: true });
    } catch (error) {
      box.textContent = `chart not drawn: ${error.message}`;
    }
  }
}

drawCharts();
