// index.html of `tapegpt attention` (see attention_report.h): one
// self-contained file — styles, the data and the script inline, no network.
// The script draws with DOM calls and sets text through textContent only, so
// no token can inject markup; the data sits in a JSON <script> element made
// safe by json_for_script.
//
// Views: the model view (every layer × head as a small canvas; click one to
// select it), the selected head large as SVG cells with token labels on both
// axes (hover reads a weight), a colour scale with the masked (hatched)
// swatch beside white = 0, and the head view (lines from each query to the
// keys it attends to, opacity = probability). The body's data-status ends as
// "ready", or "error" with the message in #errors (the browser test reads
// both).
#include <string>

#include "train/viz/attention_report.h"
#include "train/viz/svg.h"

namespace viz {

namespace {

const char* const kStyle = R"CSS(
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 8px; } h2 { font-size: 16px; margin: 24px 0 6px; }
p.note { color: #555; font-size: 13px; margin: 4px 0 10px; max-width: 60em; }
p.note.narrow { max-width: 24em; }
#prompt { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; line-height: 1.9; }
#prompt span { border: 1px solid #ccc; border-radius: 3px; padding: 1px 2px; margin: 0 1px; white-space: pre; }
#errors { color: #b00; white-space: pre-wrap; font-family: monospace; }
#grid { display: inline-grid; gap: 6px; align-items: center; justify-items: center; }
#grid .lab { font-size: 12px; color: #555; }
canvas.thumb { width: 96px; height: 96px; image-rendering: pixelated; border: 2px solid #eee; cursor: pointer; }
canvas.thumb.selected { border-color: #e6550d; }
.row { display: flex; gap: 28px; align-items: flex-start; flex-wrap: wrap; }
#readout { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; min-height: 3.2em; margin: 10px 0; width: 19em; white-space: pre-wrap; }
svg text { font-family: "DejaVu Sans Mono", monospace; }
svg text.hot { fill: #e6550d; font-weight: bold; }
#big rect.cell:hover { stroke: #e6550d; stroke-width: 2; }
#lines line.link.dim { display: none; }
)CSS";

const char* const kScript = R"JS(
"use strict";
(function () {
  function report(message) {
    const box = document.getElementById("errors");
    box.hidden = false;
    box.textContent += message + "\n";
    document.body.dataset.status = "error";
  }
  window.addEventListener("error", function (e) { report("error: " + e.message); });
  try {
    main();
    if (document.body.dataset.status !== "error") document.body.dataset.status = "ready";
  } catch (err) {
    report("error: " + (err && err.stack ? err.stack : err));
  }

  function main() {
    const data = JSON.parse(document.getElementById("attention-data").textContent);
    const L = data.n_layer, H = data.n_head, T = data.tokens.length;
    const NS = "http://www.w3.org/2000/svg";
    const STOPS = [[255,255,255],[222,235,247],[198,219,239],[158,202,225],[107,174,214],
                   [66,146,198],[33,113,181],[8,81,156],[8,48,107]];
    const MASKED = "#d9d9d9";
    let selLayer = 0, selHead = 0;

    function color(p) {
      p = p > 0 ? (p < 1 ? p : 1) : 0;
      const x = p * (STOPS.length - 1), i = Math.min(Math.floor(x), STOPS.length - 2), f = x - i;
      const c = [0, 1, 2].map(function (k) { return Math.round(STOPS[i][k] + f * (STOPS[i + 1][k] - STOPS[i][k])); });
      return "rgb(" + c.join(",") + ")";
    }
    function show(s) {  // whitespace and control characters made visible
      return s.replace(/[\u0000-\u001f\u007f ]/g, function (c) {
        if (c === " ") return "\u2423";
        if (c === "\n") return "\u21b5";
        if (c === "\t") return "\u21e5";
        return "\\x" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0");
      });
    }
    function cut(s) { const a = Array.from(show(s)); return a.length > 12 ? a.slice(0, 12).join("") + "\u2026" : a.join(""); }
    function svgEl(tag, attrs, parent, text) {
      const e = document.createElementNS(NS, tag);
      for (const k in attrs) e.setAttribute(k, attrs[k]);
      if (text !== undefined) e.textContent = text;
      if (parent) parent.appendChild(e);
      return e;
    }
    function htmlEl(tag, attrs, parent, text) {
      const e = document.createElement(tag);
      for (const k in attrs) e.setAttribute(k, attrs[k]);
      if (text !== undefined) e.textContent = text;
      if (parent) parent.appendChild(e);
      return e;
    }
    function p(l, h, i, j) { return data.layers[l][h][i][j]; }
    function readout(l, h, i, j) {
      const r = document.getElementById("readout");
      if (j > i) {
        r.textContent = "layer " + l + " head " + h + "\nquery " + i + " \u201c" + show(data.tokens[i]) +
          "\u201d, key " + j + " \u201c" + show(data.tokens[j]) + "\u201d\nmasked: the future is not visible";
      } else {
        r.textContent = "layer " + l + " head " + h + "\nquery " + i + " \u201c" + show(data.tokens[i]) +
          "\u201d \u2192 key " + j + " \u201c" + show(data.tokens[j]) + "\u201d\nweight " + p(l, h, i, j).toPrecision(6);
      }
    }
    function hatch(svg, id) {
      const defs = svgEl("defs", {}, svg);
      const pat = svgEl("pattern", {id: id, width: 6, height: 6, patternUnits: "userSpaceOnUse",
                                    patternTransform: "rotate(45)"}, defs);
      svgEl("rect", {width: 6, height: 6, fill: MASKED}, pat);
      svgEl("line", {x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#a6a6a6", "stroke-width": 2}, pat);
      return defs;
    }

    // The prompt, token by token.
    const promptBox = document.getElementById("prompt");
    data.tokens.forEach(function (t, i) {
      htmlEl("span", {title: "token " + i + ", id " + data.token_ids[i]}, promptBox, show(t));
    });
    document.getElementById("count").textContent = T + " tokens, " + L + " layers \u00d7 " + H + " heads";

    // Model view: one canvas per head, one pixel block per (query, key).
    const grid = document.getElementById("grid");
    grid.style.gridTemplateColumns = "auto repeat(" + H + ", auto)";
    htmlEl("div", {}, grid, "");
    for (let h = 0; h < H; ++h) htmlEl("div", {class: "lab"}, grid, "head " + h);
    const thumbs = [];
    for (let l = 0; l < L; ++l) {
      htmlEl("div", {class: "lab"}, grid, "layer " + l);
      for (let h = 0; h < H; ++h) {
        const k = Math.max(1, Math.floor(96 / T));
        const c = htmlEl("canvas", {class: "thumb", width: T * k, height: T * k,
                                    "data-layer": l, "data-head": h,
                                    title: "layer " + l + ", head " + h + " (click to select)"}, grid);
        const g = c.getContext("2d");
        for (let i = 0; i < T; ++i)
          for (let j = 0; j < T; ++j) {
            g.fillStyle = j > i ? MASKED : color(p(l, h, i, j));
            g.fillRect(j * k, i * k, k, k);
          }
        c.addEventListener("click", function () { select(l, h); });
        c.addEventListener("mousemove", function (e) {
          const r = c.getBoundingClientRect();
          const j = Math.min(T - 1, Math.floor((e.clientX - r.left) / r.width * T));
          const i = Math.min(T - 1, Math.floor((e.clientY - r.top) / r.height * T));
          if (i >= 0 && j >= 0) readout(l, h, i, j);
        });
        thumbs.push(c);
      }
    }

    // Colour scale, with white = 0 and the hatched masked swatch side by side.
    const scale = svgEl("svg", {width: 230, height: 96}, document.getElementById("scale"));
    const sdefs = hatch(scale, "hatch-scale");
    const grad = svgEl("linearGradient", {id: "scale-gradient"}, sdefs);
    for (let s = 0; s <= 8; ++s) svgEl("stop", {offset: s / 8, "stop-color": color(s / 8)}, grad);
    svgEl("rect", {x: 10, y: 8, width: 200, height: 16, fill: "url(#scale-gradient)", stroke: "#888"}, scale);
    for (let s = 0; s <= 4; ++s) {
      svgEl("line", {x1: 10 + 50 * s, y1: 24, x2: 10 + 50 * s, y2: 29, stroke: "#555"}, scale);
      svgEl("text", {x: 10 + 50 * s, y: 41, "font-size": 11, "text-anchor": "middle"}, scale, String(s / 4));
    }
    svgEl("rect", {x: 10, y: 56, width: 16, height: 16, fill: "#fff", stroke: "#888"}, scale);
    svgEl("text", {x: 30, y: 69, "font-size": 11}, scale, "0: visible, no weight");
    svgEl("rect", {x: 10, y: 76, width: 16, height: 16, fill: "url(#hatch-scale)", stroke: "#888"}, scale);
    svgEl("text", {x: 30, y: 89, "font-size": 11}, scale, "masked: the future");

    function drawBig() {
      const box = document.getElementById("big");
      box.textContent = "";
      const cell = Math.max(5, Math.min(26, Math.floor(800 / T)));
      const font = Math.max(7, Math.min(12, Math.floor(cell * 0.75)));
      const longest = Math.max.apply(null, data.tokens.map(function (t) { return Array.from(cut(t)).length; }));
      const lab = 10 + Math.ceil(font * 0.65 * longest), side = cell * T;
      const svg = svgEl("svg", {width: lab + side + 10, height: lab + side + 10}, box);
      hatch(svg, "hatch-big");
      const rowLabs = [], colLabs = [];
      for (let i = 0; i < T; ++i) {
        const c = lab + (i + 0.5) * cell;
        rowLabs.push(svgEl("text", {x: lab - 4, y: c + font * 0.35, "font-size": font, "text-anchor": "end"}, svg, cut(data.tokens[i])));
        const tx = c + font * 0.35, ty = lab - 4;
        colLabs.push(svgEl("text", {x: tx, y: ty, "font-size": font, transform: "rotate(-90 " + tx + " " + ty + ")"}, svg, cut(data.tokens[i])));
      }
      const cells = svgEl("g", {}, svg);
      for (let i = 0; i < T; ++i)
        for (let j = 0; j < T; ++j) {
          const a = {x: lab + j * cell, y: lab + i * cell, width: cell, height: cell, "data-q": i, "data-k": j};
          if (j > i) { a.class = "masked"; a.fill = "url(#hatch-big)"; }
          else { a.class = "cell"; a.fill = color(p(selLayer, selHead, i, j)); }
          svgEl("rect", a, cells);
        }
      let hot = [];
      cells.addEventListener("mouseover", function (e) {
        const t = e.target;
        if (!t.dataset || t.dataset.q === undefined) return;
        const i = +t.dataset.q, j = +t.dataset.k;
        readout(selLayer, selHead, i, j);
        hot.forEach(function (x) { x.classList.remove("hot"); });
        hot = [rowLabs[i], colLabs[j]];
        hot.forEach(function (x) { x.classList.add("hot"); });
      });
    }

    function drawLines() {
      const box = document.getElementById("lines");
      box.textContent = "";
      const step = Math.max(12, Math.min(20, Math.floor(900 / T)));
      const font = Math.min(12, step - 2), w = 100, gap = 170;
      const svg = svgEl("svg", {width: 2 * w + gap + 20, height: step * T + 30}, box);
      svgEl("text", {x: w, y: 12, "font-size": 11, "text-anchor": "end", fill: "#555"}, svg, "queries");
      svgEl("text", {x: w + gap, y: 12, "font-size": 11, fill: "#555"}, svg, "keys");
      const links = svgEl("g", {}, svg);
      const byQuery = [];
      for (let i = 0; i < T; ++i) {
        byQuery.push([]);
        for (let j = 0; j <= i; ++j) {
          const v = p(selLayer, selHead, i, j);
          byQuery[i].push(svgEl("line", {class: "link", x1: w + 6, y1: 26 + i * step, x2: w + gap - 6, y2: 26 + j * step,
                                         stroke: "#08519c", "stroke-width": 1 + 3 * v, "stroke-opacity": v,
                                         "data-q": i, "data-k": j}, links));
        }
      }
      for (let i = 0; i < T; ++i) {
        const q = svgEl("text", {x: w, y: 30 + i * step, "font-size": font, "text-anchor": "end", class: "query"}, svg, cut(data.tokens[i]));
        svgEl("text", {x: w + gap, y: 30 + i * step, "font-size": font}, svg, cut(data.tokens[i]));
        q.addEventListener("mouseover", function () {
          byQuery.forEach(function (ls, k) { ls.forEach(function (x) { x.classList.toggle("dim", k !== i); }); });
        });
        q.addEventListener("mouseout", function () {
          byQuery.forEach(function (ls) { ls.forEach(function (x) { x.classList.remove("dim"); }); });
        });
      }
    }

    function select(l, h) {
      selLayer = l; selHead = h;
      thumbs.forEach(function (c) { c.classList.toggle("selected", +c.dataset.layer === l && +c.dataset.head === h); });
      document.getElementById("sel").textContent = "layer " + l + ", head " + h;
      document.getElementById("sel2").textContent = "layer " + l + ", head " + h;
      drawBig();
      drawLines();
    }
    // index.html#layer=L&head=H opens with that head selected.
    const want = /layer=(\d+).*head=(\d+)/.exec(window.location.hash);
    if (want && +want[1] < L && +want[2] < H) select(+want[1], +want[2]);
    else select(0, 0);
    // …&query=I&key=J also points at one weight, as if hovered (a link to it).
    const cell = /query=(\d+).*key=(\d+)/.exec(window.location.hash);
    const target = cell && document.querySelector('#big rect[data-q="' + cell[1] + '"][data-k="' + cell[2] + '"]');
    if (target) target.dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
  }
})();
)JS";

}  // namespace

std::string attention_html(const AttentionMaps& m) {
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>tapegpt attention: " + xml_escape(m.title) + "</title>\n<style>" + kStyle +
      "</style>\n</head>\n<body data-status=\"loading\">\n"
      "<h1>Attention of " + xml_escape(m.title) + "</h1>\n"
      "<p class=\"note\"><span id=\"count\"></span>. For every query position (row) a "
      "softmax weighting over the positions it may see (columns); the future is masked to "
      "exactly 0. Exact numbers: attention.json.</p>\n"
      "<div id=\"prompt\"></div>\n"
      "<div id=\"errors\" hidden></div>\n"
      "<noscript><p>This page draws with JavaScript; the numbers are in attention.json.</p></noscript>\n"
      "<h2>Model view: every layer and head</h2>\n"
      "<p class=\"note\">Rows are queries, columns keys. Click a head to select it; hover to read a weight.</p>\n"
      "<div id=\"grid\"></div>\n"
      "<div class=\"row\">\n<div><h2>Selected head: <span id=\"sel\"></span></h2>\n"
      "<div id=\"big\"></div></div>\n"
      "<div><h2>Colour scale</h2><div id=\"scale\"></div>"
      "<div id=\"readout\">Hover over a cell to read its weight.</div>\n"
      "<h2>Head view: <span id=\"sel2\"></span></h2>\n"
      "<p class=\"note narrow\">A line from each query (left) to every key it may see "
      "(right), as opaque and thick as its weight. Hover over a query to show only its "
      "lines.</p>\n<div id=\"lines\"></div></div>\n</div>\n"
      "<script type=\"application/json\" id=\"attention-data\">";
  page += json_for_script(attention_json(m, /*ascii_only=*/true));
  page += "</script>\n<script>";
  page += kScript;
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace viz
