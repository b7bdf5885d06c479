// osmosis eval report: the per-row table (search, filters, pages) and transcripts.
// Data comes from the JSON block above; user content is only ever set as text.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var runs = data.runs, rows = data.rows;
  var PAGE = 50;
  var state = { fn: null, run: 0, filter: "all", query: "", page: 0, open: {} };

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fmt(value) { return typeof value === "number" ? value.toFixed(3) : "–"; }

  // ----- controls
  var fns = [];
  runs.forEach(function (run) {
    run.fns.forEach(function (fn) { if (fns.indexOf(fn) < 0) fns.push(fn); });
  });
  state.fn = fns[0] || null;
  var fnSelect = document.getElementById("fn");
  fns.forEach(function (fn) { fnSelect.appendChild(el("option", null, fn)); });
  var runSelect = document.getElementById("run");
  runs.forEach(function (run, i) {
    var option = el("option", null, run.label);
    option.value = String(i);
    runSelect.appendChild(option);
  });
  var legend = document.getElementById("legend");
  runs.forEach(function (run) {
    var item = el("span", null, run.label + " — " + run.model);
    item.style.setProperty("--c", run.colour);
    legend.appendChild(item);
  });
  if (runs.length < 2) document.getElementById("flipped-label").style.display = "none";

  // ----- filtering
  function statusOf(row, i) {
    var cell = row.cells[i];
    return cell && state.fn in cell.status ? cell.status[state.fn] : null;
  }
  function haystack(row) {
    if (row._text === undefined) {
      var parts = [row.prompt];
      row.cells.forEach(function (cell) {
        if (!cell) return;
        parts.push(String(cell.row));
        cell.attempts.forEach(function (a) { parts.push(a.answer || "", a.error || ""); });
      });
      row._text = parts.join("\n").toLowerCase();
    }
    return row._text;
  }
  function flipped(row) {
    var passed = false, failed = false;
    row.cells.forEach(function (cell, i) {
      var s = statusOf(row, i);
      if (s === "passed") passed = true;
      else if (s === "failed" || s === "error") failed = true;
    });
    return passed && failed;
  }
  function visible() {
    var q = state.query;
    return rows.filter(function (row) {
      if (state.filter === "failed" && statusOf(row, state.run) !== "failed") return false;
      if (state.filter === "error" && statusOf(row, state.run) !== "error") return false;
      if (state.filter === "flipped" && !flipped(row)) return false;
      return !q || haystack(row).indexOf(q) >= 0;
    });
  }

  // ----- table
  var head = document.getElementById("head"), body = document.getElementById("body");
  function header() {
    head.textContent = "";
    var first = el("th", "num", "row");
    head.appendChild(first);
    head.appendChild(el("th", null, "prompt"));
    runs.forEach(function (run) {
      var th = el("th", null, run.label);
      th.style.borderBottom = "3px solid " + run.colour;
      th.style.width = "150px";
      head.appendChild(th);
    });
  }
  function badge(cell) {
    var wrap = el("span");
    if (!cell || !(state.fn in cell.status)) { wrap.textContent = "–"; return wrap; }
    var status = cell.status[state.fn], counts = cell.passing[state.fn];
    var b = el("span", "badge " + status, counts[1] + "/" + counts[0]);
    b.title = status;
    wrap.appendChild(b);
    wrap.appendChild(document.createTextNode(" " + fmt(cell.mean[state.fn])));
    return wrap;
  }
  function rowIndex(row) {
    for (var i = 0; i < row.cells.length; i++) if (row.cells[i]) return row.cells[i].row;
    return "?";
  }
  function render() {
    var shown = visible();
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    body.textContent = "";
    var slice = shown.slice(state.page * PAGE, (state.page + 1) * PAGE);
    slice.forEach(function (row) {
      var tr = el("tr", "row");
      var index = rowIndex(row);
      tr.dataset.index = String(index);
      tr.dataset.status = statusOf(row, state.run) || "none";
      tr.appendChild(el("td", "num", index));
      var prompt = el("td", "prompt", row.prompt);
      prompt.title = row.prompt;
      tr.appendChild(prompt);
      row.cells.forEach(function (cell) {
        var td = el("td");
        td.appendChild(badge(cell));
        tr.appendChild(td);
      });
      tr.tabIndex = 0;
      tr.setAttribute("aria-expanded", state.open[index] ? "true" : "false");
      function toggle() {
        state.open[index] = !state.open[index];
        render();
        var again = body.querySelector('tr.row[data-index="' + index + '"]');
        if (again) again.focus();
      }
      tr.addEventListener("click", toggle);
      tr.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); toggle(); }
      });
      body.appendChild(tr);
      if (state.open[index]) body.appendChild(detail(row));
    });
    document.getElementById("count").textContent =
      shown.length + " of " + rows.length + " rows";
    document.getElementById("page").textContent = "page " + (state.page + 1) + " of " + pages;
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
  }

  // ----- transcripts
  function message(m) {
    var box = el("div", "msg " + (m.role || "other"));
    box.appendChild(el("span", "role", m.role + (m.name ? " (" + m.name + ")" : "")));
    if (m.content) box.appendChild(document.createTextNode(m.content));
    (m.tool_calls || []).forEach(function (call) {
      box.appendChild(el("div", "call", "→ " + call.name + "(" + call.arguments + ")"));
    });
    return box;
  }
  function detail(row) {
    var tr = el("tr", "detail"), td = el("td");
    td.colSpan = 2 + runs.length;
    var holder = el("div", "transcript");
    row.cells.forEach(function (cell, i) {
      if (!cell) return;
      cell.attempts.forEach(function (a) {
        var box = el("div", "attempt");
        box.style.borderLeft = "4px solid " + runs[i].colour;
        var scores = Object.keys(a.scores).map(function (k) {
          return k + " = " + fmt(a.scores[k]);
        }).join(", ");
        var title = runs[i].label + " · attempt " + a.run + (a.tag ? " (" + a.tag + ")" : "") +
          " · " + (a.skip ? "skipped" : a.ok ? "ok" : "errored") + " · " + (scores || "no score") +
          " · " + (a.ms / 1000).toFixed(2) + "s · " + a.tokens + " tokens";
        box.appendChild(el("h4", null, title));
        if (a.error) box.appendChild(el("div", "err", a.error));
        if (a.fn_errors) {
          Object.keys(a.fn_errors).forEach(function (k) {
            box.appendChild(el("div", "err", k + ": " + a.fn_errors[k]));
          });
        }
        if (a.messages) a.messages.forEach(function (m) { box.appendChild(message(m)); });
        else box.appendChild(el("p", "muted", "answer: " + (a.answer || "(none)") +
          " — the transcript was not kept (--no-transcripts)"));
        holder.appendChild(box);
      });
    });
    td.appendChild(holder);
    tr.appendChild(td);
    return tr;
  }

  // ----- wiring
  fnSelect.addEventListener("change", function () { state.fn = fnSelect.value; state.page = 0; render(); });
  runSelect.addEventListener("change", function () { state.run = +runSelect.value; state.page = 0; render(); });
  var timer = null;
  document.getElementById("search").addEventListener("input", function (event) {
    clearTimeout(timer);
    timer = setTimeout(function () {
      state.query = event.target.value.trim().toLowerCase();
      state.page = 0;
      render();
    }, 120);
  });
  Array.prototype.forEach.call(document.querySelectorAll("input[name=filter]"), function (radio) {
    radio.addEventListener("change", function () { state.filter = radio.value; state.page = 0; render(); });
  });
  document.getElementById("prev").addEventListener("click", function () { state.page--; render(); });
  document.getElementById("next").addEventListener("click", function () { state.page++; render(); });
  header();
  render();
  document.body.dataset.ready = "1";
})();
