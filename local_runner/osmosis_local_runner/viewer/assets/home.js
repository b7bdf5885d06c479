// The viewer's home: every run of the project, sortable and filterable, refreshed every
// two seconds (running runs move without a reload). Text is set with textContent only.
(function () {
  "use strict";
  var COLUMNS = [
    ["name", "run"], ["status", "status"], ["series", "series · step"], ["model", "model"],
    ["rows", "rows"],
    ["attempts", "attempts"], ["mean", "mean"], ["pass_at_1", "pass@1"],
    ["started", "started"], ["duration_ms", "duration"], ["cost_usd", "cost"]
  ];
  var state = { runs: [], sort: "started", desc: true, filter: "", picked: [], group: null };

  function el(tag, text) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function shown(key, value, run) {
    if (key === "series") return value ? value + (typeof run.step === "number" ? " · " + run.step : "") : "–";
    if (value === null || value === undefined) return "–";
    // a run that stopped (or is still going) short of its plan: done of total
    if (key === "attempts" && run && run.total_attempts && value < run.total_attempts) {
      return value + " / " + run.total_attempts;
    }
    if (key === "mean" || key === "pass_at_1") return value.toFixed(3);
    if (key === "duration_ms") return took(value / 1000);
    if (key === "cost_usd") return money(value);
    if (key === "rows") return value.toLocaleString("en-US");
    if (key === "truncation_rate") return (value * 100).toFixed(1) + "%";
    if (key === "output_tokens" || key === "reasoning_tokens") return value.toLocaleString("en-US");
    if (key === "started") return when(value);
    return value;
  }
  // the CLI's forms (osmosis_cli/terminal/times.py, numbers.py): one style everywhere
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function when(value) {
    var d = new Date(value);
    if (isNaN(d.getTime())) return String(value);
    var h = d.getUTCHours();
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) +
      " " + (h % 12 || 12) + ":" + pad(d.getUTCMinutes()) + " " + (h < 12 ? "AM" : "PM") + " UTC";
  }
  function took(seconds) {
    if (seconds < 10) return seconds.toFixed(1) + "s";
    var s = Math.floor(seconds), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    if (h) return h + "h " + m + "m";
    return m ? m + "m " + (s % 60) + "s" : (s % 60) + "s";
  }
  function money(value) {
    if (Math.abs(value) >= 0.01 || value === 0) {
      return "$" + value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    }
    return Math.abs(value) >= 0.0001 ? "$" + value.toFixed(4) : "<$0.0001";
  }
  function compare(a, b) {
    var x = a[state.sort], y = b[state.sort];
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * (state.desc ? -1 : 1);
  }
  function draw() {
    var head = document.getElementById("head"), body = document.getElementById("body");
    head.textContent = "";
    head.appendChild(el("th", ""));
    COLUMNS.forEach(function (column) {
      var th = el("th", column[1] + (state.sort === column[0] ? (state.desc ? " ▼" : " ▲") : ""));
      th.dataset.key = column[0];
      th.addEventListener("click", function () {
        state.desc = state.sort === column[0] ? !state.desc : false;
        state.sort = column[0];
        draw();
      });
      head.appendChild(th);
    });
    body.textContent = "";
    var needle = state.filter.toLowerCase();
    var runs = state.runs.filter(function (run) {
      // config and people's tags too ("reviewed" finds the runs people said something of)
      var said = [run.name, run.model || "", run.status, run.group || "", run.series || "",
                  (run.tags || []).join(" "), run.reviews ? "reviewed" : ""].join(" ");
      return !needle || said.toLowerCase().indexOf(needle) >= 0;
    }).sort(compare);
    runs.forEach(function (run) {
      var tr = el("tr");
      tr.dataset.name = run.name;
      tr.dataset.status = run.status;
      var pick = el("input");
      pick.type = "checkbox";
      pick.checked = state.picked.indexOf(run.name) >= 0;
      pick.title = "pick two runs to compare";
      pick.addEventListener("change", function () {
        state.picked = state.picked.filter(function (n) { return n !== run.name; });
        if (pick.checked) state.picked = state.picked.concat([run.name]).slice(-2);
        draw();
      });
      var td = el("td");
      td.appendChild(pick);
      tr.appendChild(td);
      COLUMNS.forEach(function (column) {
        var cell = el("td");
        if (column[0] === "name") {
          var link = el("a", run.name);
          link.href = "runs/" + encodeURIComponent(run.name);
          cell.appendChild(link);
          (run.tags || []).forEach(function (tag) {  // people's tags, beside the name
            var badge = el("span", tag);
            badge.className = "tag";
            cell.appendChild(document.createTextNode(" "));
            cell.appendChild(badge);
          });
        } else {
          cell.textContent = String(shown(column[0], run[column[0]], run));
          // why a run stopped (its budget, deadline…) or why it cannot be read
          if (column[0] === "status" && (run.stopped_reason || run.problem)) {
            cell.textContent += " (" + (run.stopped_reason || "unreadable") + ")";
            cell.title = run.problem || "";
          }
        }
        cell.className = column[0];
        tr.appendChild(cell);
      });
      body.appendChild(tr);
    });
    document.getElementById("count").textContent = runs.length + " of " + state.runs.length + " runs";
    chart(runs);
    var link = document.getElementById("compare");
    if (state.picked.length === 2) {
      // A is the older run (the baseline), B the newer: a gain reads as a gain
      var started = {};
      state.runs.forEach(function (r) { started[r.name] = r.started || ""; });
      var pair = state.picked.slice().sort(function (x, y) {
        return started[x] < started[y] ? -1 : started[x] > started[y] ? 1 : 0;
      });
      link.href = "compare/" + pair.map(encodeURIComponent).join("/");
      link.textContent = "compare " + pair[0] + " (A, older) vs " + pair[1] + " (B)";
      link.hidden = false;
    } else {
      link.hidden = true;
    }
  }
  // a chosen statistic across the shown runs, oldest first (checkpoints along training)
  var SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }
  // a series: the runs of one training's checkpoints, each at the step it recorded (never
  // read from a name); runs in no series are never plotted together
  function groups(runs) {
    var select = document.getElementById("group"), counts = {}, newest = {}, loose = 0;
    runs.forEach(function (r) {
      if (!r.series || typeof r.step !== "number") { loose += 1; return; }
      counts[r.series] = (counts[r.series] || 0) + 1;
      if (!(r.series in newest) || (r.started || "") > newest[r.series]) newest[r.series] = r.started || "";
    });
    var names = Object.keys(counts).sort(function (a, b) { return newest[a] < newest[b] ? 1 : -1; });
    var chosen = state.group && counts[state.group] ? state.group : names[0];
    select.textContent = "";
    names.forEach(function (g) {
      var option = el("option", g + " (" + counts[g] + ")");
      option.value = g;
      option.selected = g === chosen;
      select.appendChild(option);
    });
    state.group = chosen || null;
    // one run a step: the newest, should a step have been run twice
    var byStep = {};
    runs.filter(function (r) { return r.series === chosen && typeof r.step === "number"; })
      .sort(function (a, b) { return (a.started || "") < (b.started || "") ? -1 : 1; })
      .forEach(function (r) { byStep[r.step] = r; });
    var members = Object.keys(byStep).map(function (s) { return byStep[s]; })
      .sort(function (a, b) { return a.step - b.step; });
    var link = document.getElementById("sweep");
    link.hidden = members.length < 2;
    link.href = "sweep?runs=" + members.map(function (r) { return encodeURIComponent(r.name); }).join(",");
    link.textContent = "open " + chosen + " as a sweep (" + members.length + " steps)";
    var others = runs.length - (counts[chosen] || 0) - loose;
    var note = [];
    if (others) note.push(others + " run" + (others === 1 ? "" : "s") + " of other series");
    if (loose) note.push(loose + " in no series (give them --series and --step)");
    document.getElementById("group-note").textContent = note.length ? "not plotted: " + note.join(", ") : "";
    return members;
  }
  // totals grow with the rows a run chose: tokens and cost are plotted per attempt
  var PER_ATTEMPT = { output_tokens: 1, reasoning_tokens: 1, cost_usd: 1 };
  function value(r, key) {
    var v = r[key];
    if (typeof v !== "number") return null;
    if (PER_ATTEMPT[key]) return r.attempts ? v / r.attempts : null;
    return v;
  }
  function chart(runs) {
    var key = document.getElementById("stat").value, box = document.getElementById("chart");
    box.textContent = "";
    var points = groups(runs).filter(function (r) { return value(r, key) !== null; });
    box.dataset.points = String(points.length);
    if (points.length < 2) return;
    var W = 640, H = 160, P = 20, L = 52;
    var values = points.map(function (r) { return value(r, key); });
    // from 0 (a rise reads as one); scores up to at least 1
    var lo = Math.min(0, Math.min.apply(null, values)), hi = Math.max.apply(null, values);
    if (key === "mean" || key === "pass_at_1") hi = Math.max(hi, 1);
    if (hi === lo) { hi = lo + 1; }
    var first = points[0].step, span = (points[points.length - 1].step - first) || 1;
    var x = function (r) { return L + (r.step - first) * (W - L - P) / span; };
    var y = function (v) { return H - P - (v - lo) * (H - 2 * P) / (hi - lo); };
    box.appendChild(svg("polyline", {
      points: points.map(function (r) { return x(r) + "," + y(value(r, key)); }).join(" "),
      fill: "none", stroke: "#3b6fd4", "stroke-width": 2
    }));
    points.forEach(function (r) {
      var dot = svg("circle", { cx: x(r), cy: y(value(r, key)), r: 4, fill: "#3b6fd4" });
      var tip = svg("title", {});
      tip.textContent = "step " + r.step + " (" + r.name + "): " + shown(key, value(r, key));
      dot.appendChild(tip);
      var anchor = svg("a", { href: "runs/" + encodeURIComponent(r.name) });
      anchor.appendChild(dot);
      box.appendChild(anchor);
    });
    [[lo, H - P], [hi, P]].forEach(function (mark) {
      var text = svg("text", { x: 2, y: mark[1] + 4, "font-size": 11, fill: "#667" });
      text.textContent = String(shown(key, mark[0]));
      box.appendChild(text);
    });
    // the x axis: each run's recorded step (at most ~10 labels, evenly)
    var every = Math.max(1, Math.ceil(points.length / 10));
    points.forEach(function (r, i) {
      if (i % every && i !== points.length - 1) return;
      var label = svg("text", { x: x(r), y: H + 2, "font-size": 11, fill: "#667", "text-anchor": "middle" });
      label.setAttribute("class", "xtick");
      label.textContent = String(r.step);
      box.appendChild(label);
    });
    var axis = svg("text", { x: W / 2, y: H + 22, "font-size": 11, fill: "#667", "text-anchor": "middle" });
    axis.textContent = "step (as each run recorded it)" + (PER_ATTEMPT[key] ? " · per attempt" : "");
    box.appendChild(axis);
  }
  // suite runs: a line each, linking to the suite's page (its entries compared)
  function drawSuites(suites) {
    var body = document.getElementById("suites");
    body.textContent = "";
    document.getElementById("suites-section").hidden = suites.length === 0;
    suites.forEach(function (suite) {
      var tr = el("tr");
      tr.dataset.name = suite.name;
      tr.dataset.status = suite.status;
      var cell = el("td"), link = el("a", suite.name);
      link.href = "suites/" + encodeURIComponent(suite.name);
      cell.appendChild(link);
      tr.appendChild(cell);
      tr.appendChild(el("td", suite.suite));
      var status = el("td", suite.status);
      status.className = "status";
      tr.appendChild(status);
      tr.appendChild(el("td", suite.finished + " of " + suite.entries));
      body.appendChild(tr);
    });
  }
  function refresh() {
    fetch("api/runs", { credentials: "same-origin" })
      .then(function (answer) { return answer.ok ? answer.json() : null; })
      .then(function (data) { if (data) { state.runs = data.runs; draw(); } })
      .catch(function () { /* the viewer stopped: keep what is shown */ });
    fetch("api/suites", { credentials: "same-origin" })
      .then(function (answer) { return answer.ok ? answer.json() : null; })
      .then(function (data) { if (data) { drawSuites(data.suites); } })
      .catch(function () { /* as above */ });
  }
  document.getElementById("stat").addEventListener("change", draw);
  document.getElementById("group").addEventListener("change", function (event) {
    state.group = event.target.value;
    draw();
  });
  document.getElementById("filter").addEventListener("input", function (event) {
    state.filter = event.target.value;
    draw();
  });
  refresh();
  setInterval(refresh, 2000);
})();
