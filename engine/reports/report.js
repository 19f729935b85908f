// brittle's HTML pages (attack's report.html, perturb's --html page): the sentence
// table (sort, filter) and the sentence view, drawn on demand from the JSON data block.
// The table's columns are read from its headings; DATA.page picks the sentence view.
// No libraries, no network.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("report-data").textContent);
  var ROWS = DATA.rows;
  var LABELS = DATA.labels;
  var TASKS = DATA.tasks;
  var RESULT = DATA.outcomes;
  var PAGE = DATA.page || "attack";
  var tbody = document.querySelector("#sentence-table tbody");
  var heads = document.querySelectorAll("#sentence-table th[data-key]");
  var view = document.getElementById("sentence-view");
  var body = document.getElementById("sv-body");
  var COLUMNS = Array.prototype.map.call(
    document.querySelectorAll("#sentence-table thead th"),
    function (th) { return { key: th.dataset.key, fmt: th.dataset.fmt, css: th.className }; });
  var state = { key: "i", dir: 1, text: "", show: "", order: [], open: -1 };
  // Rows off screen are neither laid out nor painted: sorting 10,000 rows stays fast.
  // (Set here rather than in the style sheet, whose checkers may not know the property.)
  document.styleSheets[0].insertRule(
    "#sentence-table tbody tr { content-visibility: auto; contain-intrinsic-size: auto 29px; }",
    document.styleSheets[0].cssRules.length);

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function fmt(x, d) {
    return x === null || x === undefined ? "–" : Number(x).toFixed(d === undefined ? 3 : d);
  }
  function perturbedWords(r) {
    var w = r.w.slice();
    r.c.forEach(function (c) { w[c[0]] = c[1]; });
    return w;
  }
  function changedSet(r) {
    var s = {};
    r.c.forEach(function (c) { s[c[0]] = true; });
    return s;
  }
  // Highlighted text: changed words in <mark>, the other version's form on hover.
  function markedText(words, other, changed) {
    return words.map(function (w, k) {
      if (!changed[k]) return esc(w);
      return '<mark title="' + esc("was: " + other[k]) + '">' + esc(w) + "</mark>";
    }).join(" ");
  }

  // ------------------------------------------------------------------ table
  ROWS.forEach(function (r, k) {
    r.k = k;
    r.pw = perturbedWords(r);
    r.hay = (r.id + " " + r.w.join(" ") + " " + r.pw.join(" ")).toLowerCase();
  });

  function value(r, key) {
    return r[key];
  }
  function compare(a, b) {
    var x = value(a, state.key), y = value(b, state.key);
    var nx = x === null || x === undefined, ny = y === null || y === undefined;
    if (nx || ny) return nx === ny ? a.k - b.k : (nx ? 1 : -1);  // missing values last
    if (x < y) return -state.dir;
    if (x > y) return state.dir;
    return a.k - b.k;
  }
  function shown(r) {
    if (state.show !== "" && r.ok !== Number(state.show)) return false;
    return !state.text || r.hay.indexOf(state.text) >= 0;
  }
  // One cell per column, as its heading's data-fmt says.
  function cellHtml(r, col) {
    var v = col.key ? r[col.key] : null;
    if (col.fmt === "text") {
      return '<td class="' + col.css + '">' + markedText(r.pw, r.w, changedSet(r)) + "</td>";
    }
    if (col.fmt === "ok") return '<td class="' + col.css + " res-" + r.ok + '">' + RESULT[r.ok] + "</td>";
    if (col.fmt === "id") {
      var shown = v === null || v === undefined ? "–" : v;
      return '<td class="' + col.css + '" title="' + esc(shown) + '">' + esc(shown) + "</td>";
    }
    if (col.fmt === "int") return '<td class="' + col.css + '">' + (v === null || v === undefined ? "–" : v) + "</td>";
    return '<td class="' + col.css + '">' + fmt(v, Number(col.fmt)) + "</td>";
  }
  function rowHtml(r) {
    if (r.html) return r.html;
    r.html = '<tr tabindex="0" data-k="' + r.k + '">' +
      COLUMNS.map(function (col) { return cellHtml(r, col); }).join("") + "</tr>";
    return r.html;
  }
  function renderTable() {
    var rows = ROWS.filter(shown);
    rows.sort(compare);
    state.order = rows.map(function (r) { return r.k; });
    var parts = new Array(rows.length);
    for (var k = 0; k < rows.length; k++) parts[k] = rowHtml(rows[k]);
    tbody.innerHTML = parts.join("");
    document.getElementById("row-count").textContent =
      rows.length + " of " + ROWS.length + " sentences";
    heads.forEach(function (th) {
      if (th.dataset.key === state.key) {
        th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
      } else {
        th.removeAttribute("aria-sort");
      }
    });
  }
  heads.forEach(function (th) {
    th.querySelector("button").addEventListener("click", function () {
      var key = th.dataset.key;
      if (state.key === key) {
        state.dir = -state.dir;
      } else {
        state.key = key;
        // damage, distance, words and queries: the largest first
        state.dir = key === "i" || key === "id" ? 1 : -1;
      }
      renderTable();
    });
  });
  document.getElementById("filter-success").addEventListener("change", function (e) {
    state.show = e.target.selectedOptions[0].dataset.ok || "";
    renderTable();
  });
  var typing = null;
  document.getElementById("filter-text").addEventListener("input", function (e) {
    clearTimeout(typing);
    typing = setTimeout(function () {
      state.text = e.target.value.trim().toLowerCase();
      renderTable();
    }, 120);
  });
  tbody.addEventListener("click", function (e) {
    var tr = e.target.closest("tr");
    if (tr) openSentence(Number(tr.dataset.k));
  });
  tbody.addEventListener("keydown", function (e) {
    var tr = e.target.closest("tr");
    if (tr && e.key === "Enter") openSentence(Number(tr.dataset.k));
  });

  // ------------------------------------------------------------------ trees
  var measure = document.createElement("canvas").getContext("2d");
  function textWidth(s, px) {
    measure.font = px + 'px system-ui, -apple-system, "Segoe UI", sans-serif';
    return measure.measureText(s).width;
  }
  // x centre of every word, and the width of the whole line
  function layout(words) {
    var xs = [], x = 14;
    words.forEach(function (w) {
      var width = Math.max(textWidth(w, 14) + (w.length > 12 ? 10 : 14), 30);
      xs.push(x + width / 2);
      x += width + 8;
    });
    return { xs: xs, width: x + 6 };
  }
  function edgeKey(a, b) {
    return a < b ? a + "-" + b : b + "-" + a;
  }
  // Undirected gold edges (original word indices) between non-punctuation words.
  function goldEdges(r) {
    var out = {};
    if (!r.hd) return out;
    r.hd.forEach(function (h, c) {
      if (h > 0 && !isPunct(r, c) && !isPunct(r, h - 1)) out[edgeKey(c, h - 1)] = true;
    });
    return out;
  }
  function isPunct(r, k) {
    return r.u ? LABELS[r.u[k]] === "PUNCT" : false;
  }
  // Edges of a predicted heads array in original word indices (toOrig: position map).
  function predictedEdges(heads, toOrig) {
    var out = {};
    heads.forEach(function (h, c) {
      if (h > 0) out[edgeKey(toOrig[c], toOrig[h - 1])] = true;
    });
    return out;
  }
  /* One tree as SVG: one path.arc per word that has a head (the root's is a vertical
     line). opts: words, heads, changed (set), others (forms shown on hover), tags,
     rels, classOf(child, head) -> "ok" | "bad" | "lost" | "", arrows, name. */
  function treeSvg(opts) {
    var lay = layout(opts.words), xs = lay.xs;
    var n = opts.words.length, maxSpan = 1;
    opts.heads.forEach(function (h, c) {
      if (h > 0) maxSpan = Math.max(maxSpan, Math.abs(h - 1 - c));
    });
    function lift(span) { return Math.min(18 + span * 20, 260); }
    var top = Math.max(lift(maxSpan), 40) + 22;
    var base = top + 6;
    var height = base + (opts.tags ? 40 : 26);
    var out = ['<svg xmlns="http://www.w3.org/2000/svg" width="' + Math.ceil(lay.width) +
      '" height="' + height + '" data-tree="' + esc(opts.name) + '" role="img" aria-label="' +
      esc(opts.name) + ' tree">'];
    var arcs = [], labels = [];
    opts.heads.forEach(function (h, c) {
      if (h < 0) return;
      var cls = opts.classOf ? opts.classOf(c, h - 1) : "";
      var title = h === 0 ? opts.words[c] + " is the root" :
        opts.words[h - 1] + " \u2192 " + opts.words[c] + (opts.rels ? " (" + opts.rels[c] + ")" : "");
      if (h === 0) {
        arcs.push('<path class="arc root ' + cls + '" data-child="' + c + '" d="M' +
          xs[c].toFixed(1) + " 4 V" + (base - 12) + '"><title>' + esc(title) + "</title></path>");
        labels.push('<text class="rel" x="' + (xs[c] + 4).toFixed(1) + '" y="12">root</text>');
        return;
      }
      var a = xs[c], b = xs[h - 1];
      var x1 = Math.min(a, b) + 3, x2 = Math.max(a, b) - 3, y = base - 12;
      var up = lift(Math.abs(h - 1 - c));
      var d = "M" + x1.toFixed(1) + " " + y + " C" + x1.toFixed(1) + " " + (y - up * 1.33).toFixed(1) +
        " " + x2.toFixed(1) + " " + (y - up * 1.33).toFixed(1) + " " + x2.toFixed(1) + " " + y;
      arcs.push('<path class="arc ' + cls + '" data-child="' + c + '" d="' + d + '"><title>' +
        esc(title) + "</title></path>");
      if (opts.arrows) {
        var tip = a < b ? x1 : x2;
        arcs.push('<path class="head" d="M' + (tip - 3.5).toFixed(1) + " " + (y - 6) + " L" +
          (tip + 3.5).toFixed(1) + " " + (y - 6) + " L" + tip.toFixed(1) + " " + y + ' Z"/>');
      }
      if (opts.rels) {
        labels.push('<text class="rel" text-anchor="middle" x="' + ((x1 + x2) / 2).toFixed(1) +
          '" y="' + (y - up - 3).toFixed(1) + '">' + esc(opts.rels[c]) + "</text>");
      }
    });
    out.push(arcs.join(""), labels.join(""));
    for (var k = 0; k < n; k++) {
      var w = opts.words[k], x = xs[k].toFixed(1);
      if (opts.changed[k]) {
        var bw = textWidth(w, 14) + 6;
        out.push('<rect class="wordbg" x="' + (xs[k] - bw / 2).toFixed(1) + '" y="' + (base - 8) +
          '" width="' + bw.toFixed(1) + '" height="20" rx="2"/>');
      }
      out.push('<text class="word' + (opts.changed[k] ? " changed" : "") +
        '" text-anchor="middle" x="' + x + '" y="' + (base + 7) + '">' + esc(w) +
        (opts.changed[k] ? "<title>" + esc("was: " + opts.others[k]) + "</title>" : "") + "</text>");
      if (opts.tags) {
        out.push('<text class="tag" text-anchor="middle" x="' + x + '" y="' + (base + 24) + '">' +
          esc(opts.tags[k]) + "</text>");
      }
    }
    out.push("</svg>");
    return '<div class="tree">' + out.join("") + "</div>";
  }

  // Per-row geometry of the perturbed sentence: toOrig[j] = original index of word j.
  function positions(r) {
    var n = r.w.length, toOrig = [], toPert = [];
    for (var j = 0; j < n; j++) toOrig.push(r.o ? r.o[j] : j);
    toOrig.forEach(function (orig, j) { toPert[orig] = j; });
    return { toOrig: toOrig, toPert: toPert };
  }
  function kindOf(entry) {
    var v = entry.clean;
    if (!v || typeof v !== "object") return "";
    if (v.heads) return "heads";
    if (v.depths) return "depths";
    if (v.ti) return "tags";
    if (v.root !== undefined) return "root";
    if (v.tree_depth !== undefined) return "tree_depth";
    return "";
  }

  function legend(items) {
    return '<div class="legend">' + items.map(function (it) {
      return '<span class="sw" style="border-color:' + it[0] + "; border-top-style:" +
        (it[2] || "solid") + '"></span>' + esc(it[1]);
    }).join("") + "</div>";
  }

  function depthChart(r, name, entry, pos) {
    var n = r.w.length, gold = r.hd ? depthsOf(r.hd) : null;
    var clean = entry.clean.depths;
    var pert = entry.perturbed ? reorderToOrig(entry.perturbed.depths, pos) : null;
    var lay = layout(r.w), xs = lay.xs;
    var all = clean.concat(pert || [], gold || [], [1]);
    var top = Math.max.apply(null, all.filter(isFinite));
    var h = 150, y0 = 160;
    function y(v) { return (y0 - (v / top) * h).toFixed(1); }
    var out = ['<svg xmlns="http://www.w3.org/2000/svg" width="' + Math.ceil(lay.width) + '" height="' +
      (y0 + 26) + '" data-depths="' + esc(name) + '" role="img" aria-label="' + esc(name) + ' depths">'];
    out.push('<line class="d-axis" x1="0" x2="' + lay.width.toFixed(1) + '" y1="' + y0 + '" y2="' + y0 + '"/>');
    for (var g = 1; g <= Math.floor(top); g++) {
      out.push('<line class="d-axis" stroke-dasharray="2 4" x1="0" x2="' + lay.width.toFixed(1) +
        '" y1="' + y(g) + '" y2="' + y(g) + '"/><text class="tag" x="2" y="' + (Number(y(g)) - 2) + '">' + g + "</text>");
    }
    if (gold) {
      gold.forEach(function (v, k) {
        out.push('<rect class="d-gold" x="' + (xs[k] - 9).toFixed(1) + '" y="' + y(v) + '" width="18" height="' +
          (y0 - Number(y(v))).toFixed(1) + '"><title>' + esc(r.w[k] + ": gold depth " + v) + "</title></rect>");
      });
    }
    function line(values, cls, label) {
      var pts = values.map(function (v, k) { return xs[k].toFixed(1) + "," + y(v); }).join(" ");
      var dots = values.map(function (v, k) {
        return '<circle class="' + cls + '" cx="' + xs[k].toFixed(1) + '" cy="' + y(v) + '" r="2.5"><title>' +
          esc(r.w[k] + ": " + label + " " + fmt(v, 2)) + "</title></circle>";
      }).join("");
      return '<polyline class="' + cls + '" points="' + pts + '"/>' + dots;
    }
    out.push(line(clean, "d-clean", "predicted (clean)"));
    if (pert) out.push(line(pert, "d-pert", "predicted (perturbed)"));
    var changed = changedSet(r);
    for (var k = 0; k < n; k++) {
      out.push('<text class="word' + (changed[k] ? " changed" : "") + '" text-anchor="middle" x="' +
        xs[k].toFixed(1) + '" y="' + (y0 + 18) + '">' + esc(r.w[k]) + "</text>");
    }
    out.push("</svg>");
    return '<div class="tree">' + out.join("") + "</div>" +
      legend([["#d0d7de", "gold depth (bars)"], ["#0969da", "predicted, clean"],
        ["#cf222e", "predicted, perturbed (values at the original words)", "dashed"]]);
  }
  function reorderToOrig(values, pos) {
    var out = [];
    values.forEach(function (v, j) { out[pos.toOrig[j]] = v; });
    return out;
  }
  function depthsOf(hd) {
    return hd.map(function (_, k) {
      var d = 0, h = hd[k], guard = 0;
      while (h > 0 && guard++ < hd.length) { d++; h = hd[h - 1]; }
      return d;
    });
  }

  function tagFlips(r, name, entry, pos) {
    var clean = entry.clean.ti, pert = entry.perturbed ? reorderToOrig(entry.perturbed.ti, pos) : clean;
    var pw = r.pw, rows = [];
    clean.forEach(function (t, k) {
      if (t !== pert[k]) {
        rows.push("<tr><td>" + esc(r.w[k]) + (pw[pos.toPert[k]] !== r.w[k] ? " \u2192 <mark>" +
          esc(pw[pos.toPert[k]]) + "</mark>" : "") + "</td><td>" + esc(r.u ? LABELS[r.u[k]] : "?") +
          "</td><td>" + esc(LABELS[t]) + "</td><td>" + esc(LABELS[pert[k]]) + "</td></tr>");
      }
    });
    var wrongBefore = 0, wrongAfter = 0;
    if (r.u) {
      clean.forEach(function (t, k) {
        if (LABELS[t] !== LABELS[r.u[k]]) wrongBefore++;
        if (LABELS[pert[k]] !== LABELS[r.u[k]]) wrongAfter++;
      });
    }
    var head = "<p>" + (rows.length ? rows.length + " tag" + (rows.length > 1 ? "s" : "") + " flipped" :
      "No predicted tag flipped") + (r.u ? "; words tagged unlike gold: " + wrongBefore + " clean, " +
      wrongAfter + " perturbed" : "") + ".</p>";
    if (!rows.length) return head;
    return head + '<table data-flips="' + esc(name) + '"><thead><tr><th>word</th><th>gold</th>' +
      "<th>clean</th><th>perturbed</th></tr></thead><tbody>" + rows.join("") + "</tbody></table>";
  }

  // ------------------------------------------------------------------ sentence view
  function sentenceHtml(r) {
    var pos = positions(r), changed = changedSet(r);
    var out = [];
    out.push('<h2 id="sv-title">Sentence ' + r.i + ": " + esc(r.id) + ' <span class="res-' + r.ok +
      '">(' + RESULT[r.ok] + ")</span></h2>");
    out.push('<div class="texts"><p><span class="label">original</span>' +
      markedText(r.w, r.pw, changed) + '</p><p><span class="label">adversarial</span>' +
      markedText(r.pw, r.w, changed) + "</p></div>");
    out.push('<div class="stats"><span>damage <b>' + fmt(r.d) + "</b></span><span>syntax distance <b>" +
      fmt(r.sd) + "</b></span><span>words changed <b>" + r.h + "</b></span><span>epsilon L2 <b>" +
      fmt(r.l2) + "</b></span><span>epsilon cosine <b>" + fmt(r.cos) + "</b></span><span>queries <b>" +
      r.q + "</b></span></div>");
    out.push("<h3>Metrics before and after</h3><table><thead><tr><th>task</th><th class=\"num\">clean</th>" +
      '<th class="num">perturbed</th><th class="num">drop</th></tr></thead><tbody>');
    TASKS.forEach(function (t, k) {
      var v = r.t[k];
      if (!v) return;
      out.push("<tr><td>" + esc(t) + '</td><td class="num">' + fmt(v[0]) + '</td><td class="num">' +
        fmt(v[1]) + '</td><td class="num">' + fmt(v[2]) + "</td></tr>");
    });
    out.push("</tbody></table>");

    var preds = r.p || {}, names = Object.keys(preds);
    var gold = goldEdges(r);
    var identity = r.w.map(function (_, k) { return k; });
    // Gold edges the attacked parser (else the first distance-type probe) found on the
    // clean sentence and lost on the perturbed one.
    var lost = {}, lostCount = 0, gained = 0;
    var trees = names.filter(function (nm) { return kindOf(preds[nm]) === "heads"; });
    var firstTree = trees.indexOf("parser") >= 0 ? "parser" : trees[0];
    if (firstTree && preds[firstTree].perturbed) {
      var before = predictedEdges(preds[firstTree].clean.heads, identity);
      var after = predictedEdges(preds[firstTree].perturbed.heads, pos.toOrig);
      Object.keys(gold).forEach(function (e) {
        if (before[e] && !after[e]) { lost[e] = true; lostCount++; }
        if (!before[e] && after[e]) gained++;
      });
    }
    out.push("<h3>Trees</h3>");
    if (r.hd) {
      out.push('<div class="tree-title">Gold tree</div>');
      out.push(treeSvg({
        name: "gold", words: r.w, heads: r.hd, changed: changed, others: r.pw, arrows: true,
        tags: r.u.map(function (u) { return LABELS[u]; }),
        rels: r.r.map(function (x) { return LABELS[x]; }),
        classOf: function (c, h) { return h >= 0 && lost[edgeKey(c, h)] ? "lost" : ""; }
      }));
      if (firstTree && preds[firstTree].perturbed) {
        out.push(legend([["#57606a", "gold dependency"], ["#d97706", "found by " + firstTree +
          " on the clean sentence, lost on the perturbed one (" + lostCount + " lost, " + gained +
          " gained)"]]));
      }
    } else {
      out.push('<p class="hint">The treebank sentence was not available: no gold tree.</p>');
    }
    names.forEach(function (nm) {
      if (kindOf(preds[nm]) !== "heads") return;
      var entry = preds[nm];
      var versions = [["clean", entry.clean.heads, r.w, identity, r.pw]];
      if (entry.perturbed) versions.push(["perturbed", entry.perturbed.heads, r.pw, pos.toOrig, r.w]);
      versions.forEach(function (v) {
        var heads = v[1], words = v[2], map = v[3], right = 0, total = 0;
        heads.forEach(function (h, c) {
          if (h > 0) { total++; if (gold[edgeKey(map[c], map[h - 1])]) right++; }
        });
        var pchanged = {};
        r.c.forEach(function (c) { pchanged[c[0]] = true; });
        out.push('<div class="tree-title">' + esc(nm) + " probe: spanning tree on the " + v[0] +
          " sentence (" + right + " of " + total + " edges in the gold tree)</div>");
        out.push(treeSvg({
          name: nm + ":" + v[0], words: words, heads: heads, changed: pchanged, others: v[4],
          classOf: function (c, h) {
            if (h < 0) return "";
            return gold[edgeKey(map[c], map[h])] ? "ok" : "bad";
          }
        }));
      });
      out.push(legend([["#1a7f37", "edge of the gold tree"], ["#cf222e", "edge not in the gold tree", "dashed"]]) +
        '<p class="hint">Punctuation is left out of the predicted trees, as UUAS leaves it out.</p>');
    });
    names.forEach(function (nm) {
      var entry = preds[nm], kind = kindOf(entry);
      if (kind === "depths") {
        out.push('<h3>' + esc(nm) + " probe: predicted against gold depths</h3>" + depthChart(r, nm, entry, pos));
      } else if (kind === "tags") {
        out.push('<h3>' + esc(nm) + " probe: tags</h3>" + tagFlips(r, nm, entry, pos));
      } else if (kind === "root") {
        var rc = entry.clean.root, rp = entry.perturbed ? entry.perturbed.root : null;
        var goldRoot = r.hd ? r.hd.indexOf(0) : -1;
        out.push("<h3>" + esc(nm) + " probe</h3><p>Predicted root: <b>" + esc(r.w[rc]) + "</b> (clean)" +
          (rp !== null ? ", <b>" + esc(r.pw[rp]) + "</b> (perturbed)" : "") +
          (goldRoot >= 0 ? "; gold root: <b>" + esc(r.w[goldRoot]) + "</b>" : "") + ".</p>");
      } else if (kind === "tree_depth") {
        out.push("<h3>" + esc(nm) + " probe</h3><p>Predicted tree depth: <b>" + esc(entry.clean.tree_depth) +
          "</b> (clean)" + (entry.perturbed ? ", <b>" + esc(entry.perturbed.tree_depth) + "</b> (perturbed)" : "") +
          (r.hd ? "; gold: <b>" + Math.max.apply(null, depthsOf(r.hd)) + "</b>" : "") + ".</p>");
      }
    });
    if (!names.length) {
      out.push('<p class="hint">This run stored no probe predictions (an older run): only the ' +
        "gold tree is drawn.</p>");
    }
    return out.join("\n");
  }

  // ------------------------------------------------------------------ perturb's view
  /* perturb's sentence: original and perturbed text, the run's numbers, the gold tree,
     then the parser's parse of the original and of the perturbation (the trees the
     syntax constraint compared), edges that differ between the two marked. */
  function perturbHtml(r) {
    var pos = positions(r), changed = changedSet(r), parser = DATA.parser;
    var out = [];
    out.push('<h2 id="sv-title">Sentence ' + r.i + ": " + esc(r.id) + ' <span class="res-' + r.ok +
      '">(' + RESULT[r.ok] + ")</span></h2>");
    out.push('<div class="texts"><p><span class="label">original</span>' +
      markedText(r.w, r.pw, changed) + '</p><p><span class="label">perturbed</span>' +
      markedText(r.pw, r.w, changed) + "</p></div>");
    if (r.pd) out.push('<p class="hint">perturbation: <code>' + esc(r.pd) + "</code></p>");
    var stats = [["words changed", r.h, -1], ["syntax distance", r.sd, 4],
      ["surprisal increase (bits/word)", r.si, 3], ["similarity", r.sim, 3], ["re-tag agreement", r.rt, 3],
      ["DND", r.dnd, 3], ["IDC", r.idc, 3], ["candidates drawn", r.dr, -1], ["admissible", r.ad, -1]];
    out.push('<div class="stats">' + stats.filter(function (x) {
      return x[1] !== null && x[1] !== undefined;
    }).map(function (x) {
      return "<span>" + esc(x[0]) + " <b>" + (x[2] < 0 ? x[1] : fmt(x[1], x[2])) + "</b></span>";
    }).join("") + "</div>");
    if (r.dr) {
      out.push('<p class="hint">Candidates rejected by ' + DATA.constraints.map(function (c, k) {
        return esc(c) + " " + r.rj[k];
      }).join(", ") + " (a candidate two constraints reject counts for both).</p>");
    }
    out.push("<h3>Trees</h3>");
    if (r.hd) {
      out.push('<div class="tree-title">Gold tree</div>');
      out.push(treeSvg({
        name: "gold", words: r.w, heads: r.hd, changed: changed, others: r.pw, arrows: true,
        tags: r.u.map(function (u) { return LABELS[u]; }),
        rels: r.r.map(function (x) { return LABELS[x]; })
      }));
    }
    if (parser === "gold") {
      out.push('<p class="hint">The run used <code>--parser gold</code>: there is no re-parse. The ' +
        "constraints read the treebank's own tree for the original and the perturbation, so the " +
        "gold tree above is both parses (every substitution has syntax distance 0).</p>");
      return out.join("\n");
    }
    if (!r.po) {
      out.push('<p class="hint">No candidate was drawn for this sentence, so ' + esc(parser) +
        " did not parse it.</p>");
      return out.join("\n");
    }
    var orig = { heads: r.po[0], rels: r.po[1].map(function (x) { return LABELS[x]; }) };
    var pert = r.pp ? { heads: r.pp[0], rels: r.pp[1].map(function (x) { return LABELS[x]; }) } : null;
    // diff[c]: how original word c's edge differs between the parses ("" when equal).
    var diff = [], heads = 0, relabels = 0;
    if (pert && pert.heads.length === orig.heads.length) {
      orig.heads.forEach(function (h, c) {
        var j = pos.toPert[c], hp = pert.heads[j];
        var same = h === 0 ? hp === 0 : hp > 0 && pos.toOrig[hp - 1] === h - 1;
        diff[c] = !same ? "diff" : orig.rels[c] !== pert.rels[j] ? "relabel" : "";
        if (!same) heads++; else if (diff[c]) relabels++;
      });
    }
    out.push('<div class="tree-title">' + esc(parser) + " parse of the original</div>");
    out.push(treeSvg({
      name: "parse:original", words: r.w, heads: orig.heads, rels: orig.rels, changed: changed,
      others: r.pw, arrows: true, classOf: function (c) { return diff[c] || ""; }
    }));
    if (!pert) {
      out.push('<p class="hint">No candidate passed the constraints: the sentence was written ' +
        "unchanged, and there is no perturbation to parse.</p>");
      return out.join("\n");
    }
    var pchanged = {};
    r.c.forEach(function (c) { pchanged[c[0]] = true; });
    out.push('<div class="tree-title">' + esc(parser) + " parse of the perturbation</div>");
    out.push(treeSvg({
      name: "parse:perturbed", words: r.pw, heads: pert.heads, rels: pert.rels, changed: pchanged,
      others: r.w, arrows: true, classOf: function (c) { return diff[pos.toOrig[c]] || ""; }
    }));
    out.push(legend([["#57606a", "the same in both parses"], ["#d97706", "another head (" + heads + ")"],
      ["#d97706", "same head, another relation (" + relabels + ")", "dashed"]]));
    return out.join("\n");
  }

  function openSentence(k) {
    state.open = k;
    body.innerHTML = (PAGE === "perturb" ? perturbHtml : sentenceHtml)(ROWS[k]);
    view.hidden = false;
    view.scrollTop = 0;
    document.getElementById("sv-close").focus();
    var hash = "#sentence-" + ROWS[k].i;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }
  function closeSentence() {
    view.hidden = true;
    body.innerHTML = "";
    var k = state.open;
    state.open = -1;
    history.replaceState(null, "", "#sentences");
    var tr = tbody.querySelector('tr[data-k="' + k + '"]');
    if (tr) tr.focus();
  }
  function step(delta) {
    var at = state.order.indexOf(state.open);
    var next = state.order[at + delta];
    if (at >= 0 && next !== undefined) openSentence(next);
  }
  document.getElementById("sv-close").addEventListener("click", closeSentence);
  document.getElementById("sv-prev").addEventListener("click", function () { step(-1); });
  document.getElementById("sv-next").addEventListener("click", function () { step(1); });
  view.addEventListener("click", function (e) { if (e.target === view) closeSentence(); });
  document.addEventListener("keydown", function (e) {
    if (view.hidden) return;
    if (e.key === "Escape") closeSentence();
    else if (e.key === "ArrowLeft") step(-1);
    else if (e.key === "ArrowRight") step(1);
  });

  renderTable();
  var m = /^#sentence-(\d+)$/.exec(location.hash);
  if (m) {
    var wanted = Number(m[1]);
    ROWS.forEach(function (r, k) { if (r.i === wanted) openSentence(k); });
  }
  document.body.dataset.ready = "true";
})();
