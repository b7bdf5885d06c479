// osmosis eval report: the per-row table (search, filters, slices, sorting, pages, deep
// links) and transcripts (A and B side by side). Data comes from the JSON block above:
// every number was computed by osmosis; user content is only ever set as text.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var runs = data.runs, rows = data.rows, two = runs.length === 2;
  var PAGE = 50;
  var state = {
    fn: null, run: 0, filter: "all", query: "", page: 0, open: {},
    sort: { key: "row", dir: 1 }, slice: data.slice_by || "", value: null, tab: null
  };

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fmt(value, sign) {
    if (typeof value !== "number") return "–";
    var text = value.toFixed(3);
    return sign && value >= 0 ? "+" + text : text;
  }
  function rowIndex(row) {
    for (var i = 0; i < row.cells.length; i++) if (row.cells[i]) return row.cells[i].row;
    return -1;
  }
  function annotate(list) {  // each row's place and index; each attempt knows its row
    list.forEach(function (row, i) {
      row._pos = i; row._index = rowIndex(row);
      row.cells.forEach(function (cell) {
        if (cell) cell.attempts.forEach(function (a) { a._row = cell.row; });
      });
    });
  }
  annotate(rows);

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
  if (!two && runs.length < 2) document.getElementById("flipped-label").style.display = "none";

  // ----- filtering
  function statusOf(row, i) {
    var cell = row.cells[i];
    return cell && state.fn in cell.status ? cell.status[state.fn] : null;
  }
  function haystack(row) {
    if (row._text === undefined) {
      var parts = [row.prompt, row.expected || ""];
      row.cells.forEach(function (cell) {
        if (!cell) return;
        parts.push(String(cell.row));
        // the whole transcript: messages, reasoning, tool calls and their results, the
        // model calls' errors and retries, the graders' explanations
        cell.attempts.forEach(function (a) {
          parts.push(a.answer || "", a.error || "");
          (a.messages || []).forEach(function (m) {
            parts.push(m.content || "", m.reasoning || "");
            (m.tool_calls || []).forEach(function (c) { parts.push(c.name || "", c.arguments || ""); });
          });
          (a.calls || []).forEach(function (c) { parts.push(c.error || "", (c.retries || []).join(" ")); });
          Object.keys(a.explanations || {}).forEach(function (k) { parts.push(a.explanations[k] || ""); });
          Object.keys(a.fn_errors || {}).forEach(function (k) { parts.push(a.fn_errors[k] || ""); });
        });
      });
      row._text = parts.join("\n").toLowerCase();
    }
    return row._text;
  }
  function taggedRow(row, tag) {
    return runs.some(function (run) {
      return (run.reviews || []).some(function (r) { return r.row === row._index && r.tag === tag; });
    });
  }
  // the tags people gave rows, to filter by (shown once there is one)
  function tagChoices() {
    var select = document.getElementById("tag"), seen = {};
    runs.forEach(function (run) {
      (run.reviews || []).forEach(function (r) { if (r.tag && r.row !== undefined) seen[r.tag] = true; });
    });
    var tags = Object.keys(seen).sort();
    document.getElementById("tag-label").hidden = tags.length === 0;
    select.textContent = "";
    [""].concat(tags).forEach(function (t) {
      var option = el("option", null, t || "any");
      option.value = t;
      option.selected = t === (state.tag || "");
      select.appendChild(option);
    });
  }
  function reviewedRow(row) {  // a person said something of it (any run's review)
    return runs.some(function (run) {
      return (run.reviews || []).some(function (r) { return r.row === row._index; });
    });
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
    var shown = rows.filter(function (row) {
      if (state.filter === "failed" && statusOf(row, state.run) !== "failed") return false;
      if (state.filter === "error" && statusOf(row, state.run) !== "error") return false;
      if (state.filter === "flipped" && !flipped(row)) return false;
      if (state.filter === "reviewed" && !reviewedRow(row)) return false;
      if (state.tag && !taggedRow(row, state.tag)) return false;
      if (state.slice && state.value !== null && row.meta[state.slice] !== state.value) return false;
      return !q || haystack(row).indexOf(q) >= 0;
    });
    return sorted(shown);
  }

  // ----- sorting: missing values always last, ties in row order
  function sortValue(row, key) {
    if (key === "row") return row._index;
    if (key === "prompt") return row.prompt || "";
    if (key === "expected") return row.expected;
    if (key === "diff") return row.diff && state.fn in row.diff ? row.diff[state.fn] : null;
    var cell = row.cells[+key.slice(4)];
    return cell && typeof cell.mean[state.fn] === "number" ? cell.mean[state.fn] : null;
  }
  function sorted(list) {
    var key = state.sort.key, dir = state.sort.dir;
    if (key === "row" && dir === 1) return list;
    return list.slice().sort(function (a, b) {
      var x = sortValue(a, key), y = sortValue(b, key);
      if (x === null || y === null) return x === y ? a._pos - b._pos : x === null ? 1 : -1;
      if (x < y) return -dir;
      if (x > y) return dir;
      return a._pos - b._pos;
    });
  }

  // ----- table
  var head = document.getElementById("head"), body = document.getElementById("body");
  var columns = [{ key: "row", label: "row", cls: "num" }, { key: "prompt", label: "prompt" },
    { key: "expected", label: "expected" }];
  runs.forEach(function (run, i) {
    columns.push({ key: "run-" + i, label: run.label, run: i, cls: "result" });
    if (runs.length <= 2) columns.push({ key: null, label: run.label + " answer", answer: i });
  });
  if (two) columns.push({ key: "diff", label: runs[1].label + " − " + runs[0].label, cls: "diff" });

  function header() {
    head.textContent = "";
    columns.forEach(function (column) {
      var th = el("th", column.cls || null);
      if (column.run !== undefined) th.style.borderBottom = "3px solid " + runs[column.run].colour;
      if (!column.key) { th.textContent = column.label; head.appendChild(th); return; }
      var active = state.sort.key === column.key;
      th.setAttribute("aria-sort", active ? (state.sort.dir === 1 ? "ascending" : "descending") : "none");
      var button = el("button", "sort", column.label + (active ? (state.sort.dir === 1 ? " ▲" : " ▼") : ""));
      button.type = "button";
      button.dataset.sort = column.key;
      button.title = "Sort by " + column.label;
      button.addEventListener("click", function () {
        if (state.sort.key === column.key) state.sort.dir = -state.sort.dir;
        else state.sort = { key: column.key, dir: 1 };  // ascending: the worst (lowest) first
        state.page = 0;
        header();
        render();
      });
      th.appendChild(button);
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
  function textCell(cls, text) {
    var td = el("td", cls, text === null || text === undefined ? "–" : text);
    if (text) td.title = text;
    return td;
  }
  function rowElement(row) {
    var tr = el("tr", "row");
    var index = row._index;
    tr.id = "row-" + index;
    tr.dataset.index = String(index);
    tr.dataset.status = statusOf(row, state.run) || "none";
    var num = el("td", "num");
    var link = el("a", "permalink", String(index));
    link.href = "#row=" + index;
    link.title = "Link to this row";
    link.addEventListener("click", function (event) {
      event.preventDefault();
      event.stopPropagation();
      openRow(index, true);
    });
    num.appendChild(link);
    tr.appendChild(num);
    tr.appendChild(textCell("prompt", row.prompt));
    tr.appendChild(textCell("expected", row.expected));
    columns.forEach(function (column) {
      var cell;
      if (column.run !== undefined) {
        var td = el("td", "result");
        td.appendChild(badge(row.cells[column.run]));
        tr.appendChild(td);
      } else if (column.answer !== undefined) {
        cell = row.cells[column.answer];
        var answer = cell && cell.answer ? cell.answer[state.fn] : null;
        var error = cell && cell.error ? cell.error[state.fn] : null;
        // an errored row says why in the table, not only once it is opened
        var errored = error && (!answer || statusOf(row, column.answer) === "error");
        var answerTd = errored ? textCell("answer err", error) : textCell("answer", answer);
        if (row.expected !== null && answer !== null && answer !== undefined && answer !== "" &&
            statusOf(row, column.answer) !== "passed") answerTd.classList.add("wrong");
        tr.appendChild(answerTd);
      }
    });
    if (two) {
      var diff = row.diff && state.fn in row.diff ? row.diff[state.fn] : null;
      var diffTd = el("td", "diff" + (diff < 0 ? " worse" : diff > 0 ? " better" : ""), fmt(diff, true));
      tr.appendChild(diffTd);
    }
    tr.tabIndex = 0;
    tr.setAttribute("aria-expanded", state.open[index] ? "true" : "false");
    tr.addEventListener("click", function () { toggle(index); });
    tr.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); toggle(index); }
      else if (event.key === "ArrowDown" || event.key === "j") { event.preventDefault(); step(tr, 1); }
      else if (event.key === "ArrowUp" || event.key === "k") { event.preventDefault(); step(tr, -1); }
    });
    return tr;
  }
  // the previous and next rows of the list as shown (its filters and sort), opened in turn
  function neighbours(row) {
    var nav = el("div", "neighbours"), shown = visible();
    var at = shown.findIndex(function (r) { return r._index === row._index; });
    [["‹ previous row", -1, "prev-row"], ["next row ›", 1, "next-row"]].forEach(function (spec) {
      var button = el("button", spec[2], spec[0]), other = shown[at + spec[1]];
      button.type = "button";
      button.disabled = !other;
      button.dataset.testid = spec[2];
      if (other) button.addEventListener("click", function () { openRow(other._index, true); });
      nav.appendChild(button);
    });
    nav.appendChild(el("span", "muted", "row " + (at + 1) + " of " + shown.length +
      " shown · keys: j/k move, Enter opens, Esc closes, / searches"));
    return nav;
  }
  function step(tr, direction) {
    var all = Array.prototype.slice.call(body.querySelectorAll("tr.row"));
    var next = all[all.indexOf(tr) + direction];
    if (next) next.focus();
  }
  function focusRow(index) {
    var again = body.querySelector('tr.row[data-index="' + index + '"]');
    if (again) again.focus();
    return again;
  }
  function setHash(index) {
    try {
      history.replaceState(null, "", index === null ? location.pathname + location.search : "#row=" + index);
    } catch (e) { /* a page opened where history cannot change: the link still works */ }
  }
  function toggle(index) {
    state.open[index] = !state.open[index];
    setHash(state.open[index] ? index : null);
    render();
    focusRow(index);
  }
  function openRow(index, updateHash) {
    var shown = visible();
    var at = shown.findIndex(function (row) { return row._index === index; });
    if (at < 0) {  // hidden by a filter: show every row again
      state.filter = "all"; state.query = ""; state.value = null;
      document.querySelector("input[name=filter][value=all]").checked = true;
      document.getElementById("search").value = "";
      document.getElementById("slice-value").value = "";
      shown = visible();
      at = shown.findIndex(function (row) { return row._index === index; });
    }
    if (at < 0) return;
    state.page = Math.floor(at / PAGE);
    state.open = {};
    state.open[index] = true;
    if (updateHash) setHash(index);
    render();
    var tr = focusRow(index);
    if (tr && tr.scrollIntoView) tr.scrollIntoView({ block: "start" });
  }
  function render() {
    var shown = visible();
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    body.textContent = "";
    shown.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (row) {
      body.appendChild(rowElement(row));
      if (state.open[row._index]) body.appendChild(detail(row));
    });
    document.getElementById("count").textContent = shown.length + " of " + rows.length + " rows" +
      (data.total_rows > rows.length ? " listed (" + data.total_rows.toLocaleString("en-US") + " in all)" : "");
    document.getElementById("page").textContent = "page " + (state.page + 1) + " of " + pages;
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
  }

  // ----- transcripts
  function message(m) {
    var box = el("div", "msg " + (m.role || "other"));
    box.appendChild(el("span", "role", m.role + (m.name ? " (" + m.name + ")" : "")));
    if (m.reasoning) {  // the model's reasoning, apart from its answer: collapsed
      var thought = el("details", "reasoning");
      var size = m.reasoning_tokens ? m.reasoning_tokens.toLocaleString("en-US") + " tokens"
        : m.reasoning.split(/\s+/).length.toLocaleString("en-US") + " words";
      thought.appendChild(el("summary", null, "reasoning · " + size));
      thought.appendChild(el("pre", null, m.reasoning));
      box.appendChild(thought);
    }
    if (m.content) box.appendChild(document.createTextNode(m.content));
    (m.tool_calls || []).forEach(function (call) {
      box.appendChild(el("div", "call", "→ " + call.name + "(" + call.arguments + ")"));
    });
    return box;
  }
  function sharedSystem(row) {
    var found = null, every = true;
    row.cells.forEach(function (cell) {
      if (!cell) return;
      cell.attempts.forEach(function (a) {
        var first = a.messages && a.messages[0];
        if (!a.messages) return;
        if (!first || first.role !== "system") { every = false; return; }
        if (found === null) found = first.content;
        else if (found !== first.content) every = false;
      });
    });
    return every ? found : null;
  }
  function attemptStatus(a) {
    if (a.skip) return "skipped";
    if (!a.ok) return "error";
    return a.pass && a.pass[state.fn] ? "passed" : "failed";
  }
  function attemptBox(a, i, system) {
    var box = el("div", "attempt " + attemptStatus(a));
    box.style.borderLeft = "4px solid " + runs[i].colour;
    var scores = Object.keys(a.scores).map(function (k) { return k + " = " + fmt(a.scores[k]); }).join(", ");
    var title = runs[i].label + " · attempt " + a.run + (a.tag ? " (" + a.tag + ")" : "") +
      " · " + attemptStatus(a) + " · " + (scores || "no score") +
      " · " + (a.ms / 1000).toFixed(3) + "s · " + (a.usage ? usageText(a.usage) : a.tokens + " tokens");
    var head = el("h4", null, title + " ");
    var own = el("a", "attempt-link", "#");  // this attempt's own address
    own.href = "#row=" + a._row + "&attempt=" + a.run;
    own.title = "link to this attempt";
    head.appendChild(own);
    box.appendChild(head);
    box.dataset.attempt = String(a.run);
    (runs[i].reviews || []).forEach(function (r) {  // what reviewers said of this attempt
      if (r.row === a._row && (r.attempt === a.run || r.attempt === undefined)) {
        box.appendChild(el("div", "review", reviewText(r)));
      }
    });
    if (data.review && runs.length === 1) box.appendChild(reviewForm(a, i));
    if (a.error) box.appendChild(errorLine(a.error));
    if (a.fn_errors) {
      Object.keys(a.fn_errors).forEach(function (k) { box.appendChild(errorLine("eval fn " + k + ": " + a.fn_errors[k])); });
    }
    if (a.explanations) {  // what a grader said besides its score
      Object.keys(a.explanations).forEach(function (k) {
        box.appendChild(el("div", "explanation", k + " says: " + a.explanations[k]));
      });
    }
    if ((a.calls && a.calls.length) || a.grading) box.appendChild(timeline(a));
    tabs(box, [
      ["transcript", function (panel) {
        if (a.messages) {  // (rows beyond the transcripts kept have none: said below)
          a.messages.forEach(function (m, j) {
            if (j === 0 && system !== null && m.role === "system") return;  // shown once above
            panel.appendChild(message(m));
          });
        } else {
          panel.appendChild(el("p", "muted", "answer: " + (a.answer || "(none)") +
            " — the transcript is not in this report (it is in the results document)"));
        }
      }],
      ["model calls", function (panel) {
        if (a.calls && a.calls.length) panel.appendChild(modelCalls(a.calls));
        else panel.appendChild(el("p", "muted", "no model call kept (transcripts off, or none made)"));
      }],
      ["scoring", function (panel) { scoring(panel, a); }],
      ["metadata", function (panel) {
        [["attempt", a.run], ["model", a.tag || "primary"], ["took", (a.ms / 1000).toFixed(3) + "s"],
         ["tokens", a.usage ? usageText(a.usage) : a.tokens], ["status", attemptStatus(a)]]
          .forEach(function (kv) { panel.appendChild(el("div", "kv", kv[0] + ": " + kv[1])); });
      }],
      ["raw JSON", function (panel) {
        var copy = {};
        Object.keys(a).forEach(function (k) { if (k.charAt(0) !== "_") copy[k] = a[k]; });
        panel.appendChild(el("pre", "raw-attempt", JSON.stringify(copy, null, 2)));
      }]
    ]);
    return box;
  }
  // an attempt's views as tabs; the tab chosen last is every attempt's (a reader comparing
  // model calls sees them all), and each panel is built when first shown
  function tabs(box, specs) {
    var bar = el("div", "tabs"), panels = {};
    bar.setAttribute("role", "tablist");
    specs.forEach(function (spec) {
      var button = el("button", "tab", spec[0]);
      button.type = "button";
      button.setAttribute("role", "tab");
      button.dataset.tab = spec[0];
      button.addEventListener("click", function (event) {
        event.stopPropagation();
        state.tab = spec[0];  // every attempt shown turns to it, and every one shown later
        Array.prototype.forEach.call(document.querySelectorAll(".attempt"), function (other) {
          if (other._show) other._show(spec[0]);
        });
      });
      bar.appendChild(button);
    });
    box.appendChild(bar);
    function show(name) {
      specs.forEach(function (spec) {
        var panel = panels[spec[0]];
        if (spec[0] === name && !panel) {
          panel = panels[spec[0]] = el("div", "panel");
          panel.dataset.panel = spec[0];
          spec[1](panel);
          box.appendChild(panel);
        }
        if (panel) panel.hidden = spec[0] !== name;
      });
      Array.prototype.forEach.call(bar.children, function (b) {
        b.setAttribute("aria-selected", b.dataset.tab === name ? "true" : "false");
      });
    }
    box._show = show;
    show(state.tab || "transcript");
  }
  function scoring(panel, a) {
    Object.keys(a.scores || {}).forEach(function (fn) {
      var line = fn + ": " + fmt(a.scores[fn]) + " · " + (a.pass && a.pass[fn] ? "passed" : "did not pass");
      panel.appendChild(el("div", "kv", line));
      if (a.explanations && a.explanations[fn]) panel.appendChild(el("div", "explanation", fn + " says: " + a.explanations[fn]));
      if (a.fn_errors && a.fn_errors[fn]) panel.appendChild(errorLine("eval fn " + fn + ": " + a.fn_errors[fn]));
    });
    if (!Object.keys(a.scores || {}).length) panel.appendChild(el("p", "muted", "no score (" + attemptStatus(a) + ")"));
  }
  // where the attempt's time went: each model call placed on the attempt's span (failed
  // tries said), the time between calls (tool calls and the rollout's own work), and the
  // grading; a line under it sums each
  function timeline(a) {
    var box = el("div", "timeline-box"), bar = el("div", "timeline"), span = Math.max(a.ms || 0, 1);
    var calls = a.calls || [], spent = { calls: 0, between: 0 };
    box.dataset.testid = "timeline";
    bar.title = "the attempt's " + secs(span) + ": model calls, time between them, grading";
    function place(kind, at, took, title) {
      var seg = el("span", "seg " + kind);
      seg.style.left = Math.min(100, 100 * at / span) + "%";
      seg.style.width = Math.max(0.5, 100 * took / span) + "%";
      seg.title = title;
      bar.appendChild(seg);
    }
    calls.forEach(function (c, i) {
      var at = c.at_ms || 0, took = c.duration_ms || 0, next = calls[i + 1];
      spent.calls += took;
      place("model" + (c.error ? " failed" : "") + ((c.retries || []).length ? " retried" : ""), at, took,
        "call #" + (i + 1) + ": +" + secs(at) + ", " + secs(took) +
        ((c.retries || []).length ? ", " + (c.retries.length + 1) + " tries (" + c.retries.join(", ") + ")" : "") +
        (c.error ? ", failed: " + c.error : ""));
      if (next && (next.at_ms || 0) > at + took) {  // tools ran, or the rollout worked
        var gap = (next.at_ms || 0) - at - took;
        spent.between += gap;
        place("between", at + took, gap, "between calls #" + (i + 1) + " and #" + (i + 2) +
          ": " + secs(gap) + " (tool calls, the rollout's own work)");
      }
    });
    var g = a.grading;
    if (g) place("grading", g.at_ms || 0, g.duration_ms || 0, "grading: +" + secs(g.at_ms || 0) + ", " + secs(g.duration_ms || 0));
    box.appendChild(bar);
    var parts = [calls.length + " model call" + (calls.length === 1 ? "" : "s") + " " + secs(spent.calls)];
    if (spent.between) parts.push("between calls " + secs(spent.between));
    if (g) parts.push("grading " + secs(g.duration_ms || 0));
    parts.push("attempt " + secs(span));
    box.appendChild(el("div", "timeline-legend muted", parts.join(" · ")));
    return box;
  }
  function secs(ms) { return (ms / 1000).toFixed(3) + "s"; }
  // ----- review: a person's verdict on an attempt (the grader was wrong), a comment, a tag
  function reviewText(r) {
    var what = r.verdict ? "reviewed: " + r.verdict : typeof r.score === "number" ?
      "reviewed: score " + r.score : r.tag && !r.comment ? "tag" : "comment";
    var said = [r.reason, r.comment].filter(Boolean).join(" — ");
    return what + (r.tag ? " [" + r.tag + "]" : "") + (said ? " — " + said : "") +
      " (" + r.author + ", " + r.at + ")";
  }
  function reviewForm(a, i) {
    var form = el("div", "review-form");
    form.dataset.testid = "review-form";
    var verdict = el("select");
    verdict.setAttribute("aria-label", "verdict");
    [["", "no verdict"], ["pass", "mark pass"], ["fail", "mark fail"]].forEach(function (v) {
      var option = el("option", null, v[1]);
      option.value = v[0];
      verdict.appendChild(option);
    });
    var text = el("input"), tag = el("input"), save = el("button", null, "save review"), note = el("span", "muted");
    text.placeholder = "why (or a comment)";
    text.setAttribute("aria-label", "reason or comment");
    tag.placeholder = "tag";
    tag.setAttribute("aria-label", "tag");
    save.type = "button";
    save.addEventListener("click", function () {
      var body = { row: a._row, attempt: a.run };
      if (verdict.value) body.verdict = verdict.value;
      if (text.value) body[verdict.value ? "reason" : "comment"] = text.value;
      if (tag.value) body.tag = tag.value;
      fetch(data.review.url, {
        method: "POST", credentials: "same-origin", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json", "X-Osmosis-Key": data.review.key }
      }).then(function (answer) {
        return answer.ok ? answer.json() : answer.text().then(function (t) { throw new Error(t); });
      }).then(function (saved) {
        runs[i].reviews = (runs[i].reviews || []).concat([saved]);
        tagChoices();
        render();
      }).catch(function (e) { note.textContent = String(e.message || e).trim(); });
    });
    [verdict, text, tag, save, note].forEach(function (n) { form.appendChild(n); });
    return form;
  }
  // tokens by kind, the finish reason, truncation and cost of an attempt or a call
  function usageText(u) {
    var n = function (v) { return (v || 0).toLocaleString("en-US"); };
    var text = n(u.input_tokens) + " in" + (u.cache_read_tokens ? " (" + n(u.cache_read_tokens) + " cached)" : "") +
      " · " + n(u.output_tokens) + " out" + (u.reasoning_tokens ? " (" + n(u.reasoning_tokens) + " reasoning)" : "");
    if (u.truncated || u.truncated_calls) text += " · truncated";
    if (u.finish_reason && u.finish_reason !== "stop") text += " · " + u.finish_reason;
    if (typeof u.cost_usd === "number") text += " · $" + u.cost_usd.toFixed(4);
    return text;
  }
  // an error's stage is its first words ("workflow: …", "grader timed out …")
  function errorLine(text) {
    var line = el("div", "err");
    var found = /^([A-Za-z][\w .-]{0,40}?)(:| timed out)/.exec(text);
    if (found) line.appendChild(el("span", "stage", found[1]));
    line.appendChild(document.createTextNode(text));
    return line;
  }
  // every model call of the attempt: when, how long, what was sent; raw JSON on demand
  function modelCalls(calls) {
    var holder = el("details", "calls");
    var total = calls.reduce(function (t, c) { return t + (c.duration_ms || 0); }, 0);
    var retried = calls.reduce(function (t, c) { return t + (c.retries || []).length; }, 0);
    holder.appendChild(el("summary", null, calls.length + " model call" +
      (calls.length === 1 ? "" : "s") + (retried ? " · " + (calls.length + retried) + " tries" : "") +
      " · " + (total / 1000).toFixed(3) + "s in calls"));
    calls.forEach(function (c, i) {
      var item = el("div", "call-item" + (c.error ? " failed" : ""));
      var tries = (c.retries || []).length;
      item.appendChild(el("span", "call-head", "#" + (i + 1) + (c.cached ? " · from " + c.cached : "") + " at +" +
        ((c.at_ms || 0) / 1000).toFixed(3) + "s · took " + ((c.duration_ms || 0) / 1000).toFixed(3) +
        "s" + (tries ? " over " + (tries + 1) + " tries" : "") + " · sent " + c.sent + " message" +
        (c.sent === 1 ? "" : "s") + (c.usage ? " · " + usageText(c.usage) : "")));
      if (tries) item.appendChild(errorLine("retried after: " + c.retries.join(", ")));
      if (c.error) item.appendChild(errorLine("model call: " + c.error));
      (c.wire || []).forEach(function (t, k) { item.appendChild(wireTry(t, k, c.wire.length)); });
      var raw = el("details", "raw");
      raw.appendChild(el("summary", null, c.wire && c.wire.length ? "as the rollout got it" : "raw JSON"));
      var request = c.request ? c.request : "{}";
      var whole = /"messages":/.test(request);  // sent messages kept: not the transcript's start
      raw.appendChild(el("pre", null, (whole ? "request:\n" : "request (its messages: the first " +
        c.sent + " of the transcript above):\n") + pretty(request)));
      if (c.response) raw.appendChild(el("pre", null, "answer:\n" + pretty(c.response)));
      item.appendChild(raw);
      holder.appendChild(item);
    });
    return holder;
  }
  // one try as it went over the wire: the request exactly as sent, the answer as received
  function wireTry(t, k, count) {
    var box = el("details", "raw wire");
    box.appendChild(el("summary", null, (count > 1 ? "try " + (k + 1) + ": " : "") +
      "what was sent / what came back · POST " + (t.url || "") + " → " +
      (t.status == null ? (t.error || "no answer") : t.status)));
    var headers = Object.keys(t.headers || {}).map(function (name) {
      return name + ": " + t.headers[name];
    });
    box.appendChild(el("pre", null, "sent (" + (t.sent_bytes || 0) + " bytes):\n" +
      (t.sent != null ? pretty(t.sent) : "(too large to keep: its digest is in the results)")));
    if (t.received != null || t.received_bytes) {
      box.appendChild(el("pre", null, "came back (" + (t.received_bytes || 0) + " bytes" +
        (headers.length ? "; " + headers.join("; ") : "") + "):\n" +
        (t.received != null ? pretty(t.received) : "(too large to keep: its digest is in the results)")));
    }
    if (t.error) box.appendChild(errorLine("try: " + t.error));
    return box;
  }
  function pretty(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }
  function strip(cell, i, boxes) {
    var holder = el("div", "strip");
    holder.appendChild(el("span", "strip-label", runs[i].label));
    cell.attempts.forEach(function (a, j) {
      var dot = el("button", "dot " + attemptStatus(a));
      dot.type = "button";
      dot.title = "attempt " + a.run + ": " + attemptStatus(a);
      dot.setAttribute("aria-label", dot.title);
      dot.addEventListener("click", function (event) {
        event.stopPropagation();
        if (boxes[j] && boxes[j].scrollIntoView) boxes[j].scrollIntoView({ block: "nearest" });
      });
      holder.appendChild(dot);
    });
    return holder;
  }
  function key(a) { return (a.tag || "") + "#" + a.run; }
  function sideBySide(row, holder, system) {
    var a = row.cells[0], b = row.cells[1];
    var keys = [];
    [a, b].forEach(function (cell) {
      cell.attempts.forEach(function (t) { if (keys.indexOf(key(t)) < 0) keys.push(key(t)); });
    });
    var byKey = [{}, {}];
    [a, b].forEach(function (cell, i) { cell.attempts.forEach(function (t) { byKey[i][key(t)] = t; }); });
    var boxes = [[], []];
    var grid = el("div", "side-by-side");
    keys.forEach(function (k) {
      var ta = byKey[0][k], tb = byKey[1][k];
      var differs = ta && tb && (ta.answer || "").trim() !== (tb.answer || "").trim();
      [ta, tb].forEach(function (t, i) {
        if (!t) { grid.appendChild(el("div", "attempt missing", "no attempt " + k.split("#")[1])); return; }
        var box = attemptBox(t, i, system);
        if (differs) { box.classList.add("differs"); box.title = "the answers differ"; }
        boxes[i].push(box);
        grid.appendChild(box);
      });
    });
    var strips = el("div", "side-by-side strips");
    strips.appendChild(strip(a, 0, boxes[0]));
    strips.appendChild(strip(b, 1, boxes[1]));
    holder.appendChild(strips);
    holder.appendChild(grid);
  }
  function detail(row) {
    var tr = el("tr", "detail"), td = el("td");
    td.colSpan = columns.length;
    var holder = el("div", "transcript");
    holder.addEventListener("click", function (event) { event.stopPropagation(); });
    holder.appendChild(neighbours(row));
    if (row.expected !== null) holder.appendChild(el("div", "expected-line", "expected: " + row.expected));
    var system = sharedSystem(row);
    if (system !== null) {
      var shared = message({ role: "system", content: system });
      shared.classList.add("shared");
      shared.insertBefore(el("span", "role", "shared by every attempt"), shared.firstChild.nextSibling);
      holder.appendChild(shared);
    }
    if (two && row.cells[0] && row.cells[1]) {
      sideBySide(row, holder, system);
    } else {
      row.cells.forEach(function (cell, i) {
        if (!cell) return;
        var boxes = cell.attempts.map(function (a) { return attemptBox(a, i, system); });
        holder.appendChild(strip(cell, i, boxes));
        boxes.forEach(function (box) { holder.appendChild(box); });
      });
    }
    td.appendChild(holder);
    tr.appendChild(td);
    return tr;
  }

  // ----- slices
  var sliceBy = document.getElementById("slice-by"), sliceValue = document.getElementById("slice-value");
  var sliceTable = document.getElementById("slice-table");
  var none = el("option", null, "(none)");
  none.value = "";
  sliceBy.appendChild(none);
  data.columns.forEach(function (column) { sliceBy.appendChild(el("option", null, column)); });
  function sliceValues() {
    var s = data.slices[state.slice], seen = [];
    (s ? s.runs : []).forEach(function (run) {
      run.values.forEach(function (v) { if (seen.indexOf(v.value) < 0) seen.push(v.value); });
    });
    return seen;
  }
  function renderSlices() {
    sliceBy.value = state.slice;
    Array.prototype.forEach.call(document.querySelectorAll(".slice-chart"), function (figure) {
      figure.hidden = figure.dataset.column !== state.slice;
    });
    sliceTable.textContent = "";
    sliceValue.textContent = "";
    var all = el("option", null, "all");
    all.value = "";
    sliceValue.appendChild(all);
    document.getElementById("slice-value-label").style.display = state.slice ? "" : "none";
    var note = document.getElementById("slice-note");
    if (!data.columns.length) {
      note.textContent = "No dataset column has between 2 and 50 values to slice by.";
      sliceBy.disabled = true;
      return;
    }
    note.textContent = state.slice ? "statistics of the rows with each value; click a value to list its rows" : "";
    if (!state.slice) return;
    var s = data.slices[state.slice];
    var values = sliceValues();
    values.forEach(function (value) {
      var option = el("option", null, value);
      option.value = value;
      sliceValue.appendChild(option);
    });
    sliceValue.value = state.value === null ? "" : state.value;
    var table = el("table", "slice-table");
    table.dataset.testid = "slice-table";
    var tr = el("tr");
    tr.appendChild(el("th", null, state.slice));
    runs.forEach(function (run) {
      var ks = "pass@" + run.n;
      [run.label + " rows", "mean", "pass@1"].concat(run.n > 1 ? [ks] : []).forEach(function (name) {
        var th = el("th", null, name);
        th.style.borderBottom = "3px solid " + run.colour;
        tr.appendChild(th);
      });
    });
    if (s.compare) { tr.appendChild(el("th", null, runs[1].label + " − " + runs[0].label)); tr.appendChild(el("th", null, "95% CI")); }
    var thead = el("thead");
    thead.appendChild(tr);
    table.appendChild(thead);
    var tbody = el("tbody");
    values.forEach(function (value) {
      var line = el("tr", "slice-row" + (state.value === value ? " chosen" : ""));
      line.dataset.value = value;
      line.appendChild(el("td", null, value));
      s.runs.forEach(function (run, i) {
        var found = run.values.filter(function (v) { return v.value === value; })[0];
        var stats = found && found.eval_fns[state.fn] || {};
        line.appendChild(el("td", null, found ? found.rows : 0));
        line.appendChild(el("td", null, fmt(stats.mean)));
        line.appendChild(el("td", null, fmt(stats.pass_at_1)));
        if (runs[i].n > 1) line.appendChild(el("td", null, fmt(stats["pass_at_" + runs[i].n])));
      });
      if (s.compare) {
        var compared = s.compare.values.filter(function (v) { return v.value === value; })[0];
        var c = compared && compared.eval_fns[state.fn] || {};
        line.appendChild(el("td", "diff" + (c.diff < 0 ? " worse" : c.diff > 0 ? " better" : ""), fmt(c.diff, true)));
        line.appendChild(el("td", null, typeof c.ci_low === "number" ? "[" + fmt(c.ci_low, true) + ", " + fmt(c.ci_high, true) + "]" : "–"));
      }
      line.tabIndex = 0;
      function choose() {
        state.value = state.value === value ? null : value;
        state.page = 0;
        renderSlices();
        render();
      }
      line.addEventListener("click", choose);
      line.addEventListener("keydown", function (event) { if (event.key === "Enter") choose(); });
      tbody.appendChild(line);
    });
    table.appendChild(tbody);
    sliceTable.appendChild(table);
  }

  // ----- wiring
  fnSelect.addEventListener("change", function () { state.fn = fnSelect.value; state.page = 0; renderSlices(); render(); });
  runSelect.addEventListener("change", function () { state.run = +runSelect.value; state.page = 0; render(); });
  sliceBy.addEventListener("change", function () { state.slice = sliceBy.value; state.value = null; state.page = 0; renderSlices(); render(); });
  sliceValue.addEventListener("change", function () {
    state.value = sliceValue.value === "" ? null : sliceValue.value;
    state.page = 0;
    renderSlices();
    render();
  });
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
  function fromHash() {  // #row=N opens a row; #row=N&attempt=K also brings its attempt into view
    var found = /^#row=(\d+)(?:&attempt=(\d+))?$/.exec(location.hash);
    if (!found) return;
    openRow(+found[1], false);
    if (found[2] !== undefined) {
      var box = body.querySelector('.attempt[data-attempt="' + found[2] + '"]');
      if (box && box.scrollIntoView) { box.scrollIntoView({ block: "start" }); box.classList.add("linked"); }
    }
  }
  window.addEventListener("hashchange", fromHash);
  document.getElementById("tag").addEventListener("change", function (event) {
    state.tag = event.target.value || null;
    state.page = 0;
    render();
  });
  tagChoices();
  // page-wide keys: / searches, Esc closes the open row (or leaves the search), j/k from
  // nowhere start at the first row
  document.addEventListener("keydown", function (event) {
    var typing = event.target && /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName);
    if (event.key === "/" && !typing) {
      event.preventDefault();
      document.getElementById("search").focus();
    } else if (event.key === "Escape") {
      if (typing) { event.target.blur(); return; }
      var open = Object.keys(state.open).filter(function (k) { return state.open[k]; });
      if (open.length) { toggle(+open[0]); }
    } else if ((event.key === "j" || event.key === "k") && !typing &&
               !(event.target && event.target.classList && event.target.classList.contains("row"))) {
      var first = body.querySelector("tr.row");
      if (first) { event.preventDefault(); first.focus(); }
    }
  });

  // ----- a live page (a running run in the viewer): rows and cards updated in place;
  // the reader's search, filters, sort, open rows, page, focus and scroll are kept
  var LIVE_MS = 2000;
  function refresh(fresh) {
    var active = document.activeElement, focused = active && active.dataset ? active.dataset.index : null;
    var y = window.scrollY;
    rows = fresh.rows;
    annotate(rows);
    data.total_rows = fresh.total_rows;
    var cards = document.querySelector(".cards");
    if (cards) cards.innerHTML = fresh.cards;  // built and escaped by osmosis, as the page's were
    render();
    if (focused !== null && focused !== undefined) focusRow(focused);
    window.scrollTo(0, y);
    document.body.dataset.updates = String((+document.body.dataset.updates || 0) + 1);
  }
  function poll() {
    fetch(data.live, { credentials: "same-origin", cache: "no-store" })
      .then(function (answer) { return answer.ok ? answer.json() : null; })
      .then(function (fresh) {
        if (!fresh) { setTimeout(poll, LIVE_MS * 2); return; }
        refresh(fresh);
        if (fresh.running) setTimeout(poll, LIVE_MS);
        else document.body.dataset.live = "ended";
      })
      .catch(function () { setTimeout(poll, LIVE_MS * 2); });
  }
  if (data.live) { document.body.dataset.live = "on"; setTimeout(poll, LIVE_MS); }
  header();
  renderSlices();
  render();
  fromHash();
  document.body.dataset.ready = "1";
})();
