// The course's interactive attention view (utils/views.py writes one per notebook output).
// Vanilla JavaScript and SVG: no library, no request of any kind. The data sits in the output itself,
// in <script type="application/json">: examples (a sentence picker), each with one or more kinds of
// attention (encoder self-attention, masked decoder self-attention, cross-attention, ...), each with its
// query tokens, key tokens and weights[layer][head][i][j] in thousandths.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var WORDS = {
    en: {example: "Sentence", kind: "Attention", layer: "Layer", heads: "Heads", head: "head",
         headView: "Head view", modelView: "Model view", queries: "queries", keys: "keys",
         masked: "masked", attendsTo: "attends to", attendedBy: "is attended to by",
         hint: "Hover, click or Tab to a token; arrow keys move between tokens.",
         modelHint: "Every layer (rows) and head (columns). Click a map to see it large, with its tokens.",
         of: "of", none: "Select at least one head.", colon: ": ", sep: "; ",
         kinds: {encoder: "Encoder self-attention", decoder_self: "Masked decoder self-attention",
                 cross: "Cross-attention", self: "Self-attention",
                 causal: "Causal self-attention", rnn: "RNN attention"},
         explore: {
           softmax_scale: {slider: "d_k", x: "key j", y: "weight", largest: "largest weight",
                           series: {unscaled: "softmax(q \u00b7 k)", scaled: "softmax(q \u00b7 k / \u221ad_k)"}},
           pe_offset: {slider: "position p", x: "offset k", y: "PE(p) \u00b7 PE(p + k)", largest: "largest",
                       series: {dot: "PE(p) \u00b7 PE(p + k)"}}}},
    zh_CN: {example: "句子", kind: "注意力", layer: "层", heads: "头", head: "头",
            headView: "头视图", modelView: "模型视图", queries: "查询", keys: "键",
            masked: "被遮住", attendsTo: "关注", attendedBy: "被这些查询关注",
            hint: "把鼠标移到词元上，或点击、按 Tab 选中；方向键在词元之间移动。",
            modelHint: "每行一层，每列一个头。点击一张小图，放大查看它的词元和权重。",
            of: "/", none: "请至少选一个头。", colon: "：", sep: "；",
            kinds: {encoder: "编码器自注意力", decoder_self: "解码器掩码自注意力",
                    cross: "交叉注意力", self: "自注意力", causal: "因果自注意力",
                    rnn: "RNN 注意力"},
            explore: {
              softmax_scale: {slider: "d_k", x: "键 j", y: "权重", largest: "最大权重",
                              series: {unscaled: "softmax(q \u00b7 k)", scaled: "softmax(q \u00b7 k / \u221ad_k)"}},
              pe_offset: {slider: "位置 p", x: "偏移 k", y: "PE(p) \u00b7 PE(p + k)", largest: "最大值",
                          series: {dot: "PE(p) \u00b7 PE(p + k)"}}}},
    zh_TW: {example: "句子", kind: "注意力", layer: "層", heads: "頭", head: "頭",
            headView: "頭檢視", modelView: "模型檢視", queries: "查詢", keys: "鍵",
            masked: "被遮住", attendsTo: "關注", attendedBy: "被這些查詢關注",
            hint: "把滑鼠移到詞元上，或點擊、按 Tab 選取；方向鍵在詞元之間移動。",
            modelHint: "每列一層，每欄一個頭。點擊一張小圖，放大檢視它的詞元和權重。",
            of: "/", none: "請至少選一個頭。", colon: "：", sep: "；",
            kinds: {encoder: "編碼器自注意力", decoder_self: "解碼器遮罩自注意力",
                    cross: "交叉注意力", self: "自注意力", causal: "因果自注意力",
                    rnn: "RNN 注意力"},
            explore: {
              softmax_scale: {slider: "d_k", x: "鍵 j", y: "權重", largest: "最大權重",
                              series: {unscaled: "softmax(q \u00b7 k)", scaled: "softmax(q \u00b7 k / \u221ad_k)"}},
              pe_offset: {slider: "位置 p", x: "偏移 k", y: "PE(p) \u00b7 PE(p + k)", largest: "最大值",
                          series: {dot: "PE(p) \u00b7 PE(p + k)"}}}}
  };
  // One colour per head.
  var COLOURS = ["#1f5fa8", "#c0392b", "#1e7145", "#8e44ad", "#b34700", "#006e78", "#6d4c41",
                 "#5d6566"];  // each at least 4.5:1 against white, for a pressed head button's number

  function language(root) {
    var chosen = root.getAttribute("data-lang") || "en";
    var page = (document.documentElement.lang || "").toLowerCase();
    if (chosen === "en" && page.indexOf("zh") === 0) {
      chosen = (page.indexOf("tw") >= 0 || page.indexOf("hant") >= 0) ? "zh_TW" : "zh_CN";
    }
    return WORDS[chosen] ? chosen : "en";
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var name in attrs || {}) { node.setAttribute(name, attrs[name]); }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    for (var name in attrs || {}) { node.setAttribute(name, attrs[name]); }
    return node;
  }

  function svgText(x, y, text, anchor, cls) {
    var node = svg("text", {x: x, y: y, "text-anchor": anchor, "class": cls});
    node.textContent = text;
    return node;
  }

  function select(label, options, onChange) {
    var wrap = el("label", {"class": "course-attn-control"}, label + " ");
    var box = el("select");
    options.forEach(function (text, index) { box.appendChild(el("option", {value: index}, text)); });
    box.addEventListener("change", function () { onChange(Number(box.value)); });
    wrap.appendChild(box);
    return {wrap: wrap, box: box};
  }

  function dropFallback(root) {  // the paragraph shown where the script does not run
    var fallback = root.querySelector(".course-attn-fallback");
    if (fallback) { fallback.parentNode.removeChild(fallback); }
  }

  function build(root) {
    var data = JSON.parse(root.querySelector("script.course-attn-data").textContent);
    dropFallback(root);
    var words = WORDS[language(root)];
    var hatch = (root.id || "course-attn") + "-hatch";
    var state = {example: 0, kind: 0, layer: 0, heads: null, focus: null, view: "head"};
    var ui = el("div", {"class": "course-attn-ui"});
    root.appendChild(ui);
    var controls = el("div", {"class": "course-attn-controls"});
    var tabs = el("div", {"class": "course-attn-tabs", role: "tablist"});
    var body = el("div", {"class": "course-attn-body"});
    var status = el("p", {"class": "course-attn-status", "aria-live": "polite"});
    ui.appendChild(controls);
    var notes = Array.prototype.slice.call(root.querySelectorAll(".course-attn-note"));
    notes.forEach(function (note) { ui.appendChild(note); });  // the picked sentence's line
    ui.appendChild(tabs);
    ui.appendChild(body);
    ui.appendChild(status);

    function current() {
      var example = data.examples[state.example];
      return example.maps[Math.min(state.kind, example.maps.length - 1)];
    }

    function weight(map, layer, head, i, j) { return map.weights[layer][head][i][j] / 1000; }

    function isMasked(map, i, j) { return !!map.causal && j > i; }

    // --- the controls: sentence, kind, layer, heads ---------------------------------------------
    var exampleSelect = null;
    if (data.examples.length > 1) {
      exampleSelect = select(words.example, data.examples.map(function (e) { return e.label; }),
        function (value) {
          state.example = value;
          state.focus = null;
          notes.forEach(function (note) { note.hidden = note.getAttribute("data-example") !== String(value); });
          refreshControls();
          draw();
        });
      controls.appendChild(exampleSelect.wrap);
    }
    var kindSelect = select(words.kind, [], function (value) {
      state.kind = value; state.focus = null; refreshControls(); draw();
    });
    var layerSelect = select(words.layer, [], function (value) { state.layer = value; draw(); });
    var headBox = el("div", {"class": "course-attn-heads", role: "group", "aria-label": words.heads});
    controls.appendChild(kindSelect.wrap);
    controls.appendChild(layerSelect.wrap);
    controls.appendChild(headBox);

    function refreshControls() {
      var example = data.examples[state.example];
      kindSelect.box.innerHTML = "";
      example.maps.forEach(function (map, index) {
        kindSelect.box.appendChild(el("option", {value: index}, words.kinds[map.kind] || map.kind));
      });
      state.kind = Math.min(state.kind, example.maps.length - 1);
      kindSelect.box.value = state.kind;
      kindSelect.wrap.style.display = example.maps.length > 1 ? "" : "none";
      var map = current();
      var layers = map.weights.length, heads = map.weights[0].length;
      layerSelect.box.innerHTML = "";
      for (var l = 0; l < layers; l++) {
        layerSelect.box.appendChild(el("option", {value: l}, (map.layerNames || [])[l] || String(l + 1)));
      }
      state.layer = Math.min(state.layer, layers - 1);
      layerSelect.box.value = state.layer;
      layerSelect.wrap.style.display = layers > 1 ? "" : "none";
      if (!state.heads || state.heads.length !== heads) {
        state.heads = [];
        for (var h = 0; h < heads; h++) { state.heads.push(true); }
      }
      headBox.innerHTML = "";
      if (heads > 1) {
        headBox.appendChild(el("span", {}, words.heads + " "));
        state.heads.forEach(function (on, h) {
          var button = el("button", {type: "button", "class": "course-attn-head", "data-head": h,
                                     "aria-pressed": on ? "true" : "false",
                                     "aria-label": words.head + " " + h}, String(h));
          button.style.borderColor = COLOURS[h % COLOURS.length];
          button.style.background = on ? COLOURS[h % COLOURS.length] : "transparent";
          button.style.color = on ? "#fff" : "inherit";
          button.addEventListener("click", function (event) {
            if (event.shiftKey || event.altKey) {  // this head alone
              state.heads = state.heads.map(function (_, k) { return k === h; });
            } else {
              state.heads[h] = !state.heads[h];
            }
            refreshControls();
            draw();
          });
          headBox.appendChild(button);
        });
      }
    }

    // --- head view / model view tabs ------------------------------------------------------------
    var tabButtons = {};
    [["head", words.headView], ["model", words.modelView]].forEach(function (pair) {
      var button = el("button", {type: "button", role: "tab", "class": "course-attn-tab",
                                 "data-view": pair[0]}, pair[1]);
      button.addEventListener("click", function () { state.view = pair[0]; draw(); });
      tabs.appendChild(button);
      tabButtons[pair[0]] = button;
    });

    function chosenHeads() {
      var list = [];
      state.heads.forEach(function (on, h) { if (on) { list.push(h); } });
      return list;
    }

    function describe(map, side, index) {
      // The focused token's strongest weights, as text (read out by screen readers).
      var heads = chosenHeads();
      if (!heads.length) { return words.none; }
      var own = side === "q" ? map.queries[index] : map.keys[index];
      var parts = heads.map(function (h) {
        var pairs = [];
        var n = side === "q" ? map.keys.length : map.queries.length;
        for (var k = 0; k < n; k++) {
          var i = side === "q" ? index : k, j = side === "q" ? k : index;
          if (!isMasked(map, i, j)) {
            pairs.push([side === "q" ? map.keys[k] : map.queries[k], weight(map, state.layer, h, i, j)]);
          }
        }
        pairs.sort(function (a, b) { return b[1] - a[1]; });
        var top = pairs.slice(0, 3).map(function (p) { return "\u201c" + p[0] + "\u201d " + p[1].toFixed(3); });
        var prefix = map.weights[0].length > 1 ? words.head + " " + h + words.colon : "";
        return prefix + top.join(", ");
      });
      var verb = side === "q" ? words.attendsTo : words.attendedBy;
      var layerName = (map.layerNames || [])[state.layer] || String(state.layer + 1);
      var where = map.weights.length > 1 ? " (" + words.layer + " " + layerName + ")" : "";
      return "\u201c" + own + "\u201d" + where + " " + verb + words.colon + parts.join(words.sep);
    }

    // --- the head view: queries on the left, keys on the right, one line per weight -------------
    function drawHeadView(map) {
      var rowHeight = 24, width = 380, left = 120, right = 260;
      var rows = Math.max(map.queries.length, map.keys.length);
      var wrap = el("div", {"class": "course-attn-head-view"});
      wrap.appendChild(el("p", {"class": "course-attn-hint"}, words.hint));
      var figure = svg("svg", {viewBox: "0 0 " + width + " " + (rows * rowHeight + 24),
                               width: width, role: "group", "class": "course-attn-fit",
                               "aria-label": (words.kinds[map.kind] || map.kind)});
      figure.appendChild(svgText(left - 6, 14, words.queries, "end", "course-attn-axis"));
      figure.appendChild(svgText(right + 6, 14, words.keys, "start", "course-attn-axis"));
      var lines = svg("g", {"class": "course-attn-lines"});
      figure.appendChild(lines);
      var tokens = {q: [], k: []}, labels = {q: [], k: []};
      var numbers = svg("g", {"aria-hidden": "true"});  // each token's weight, shown beside it
      function y(index) { return 24 + index * rowHeight + rowHeight / 2; }

      function paint() {
        while (lines.firstChild) { lines.removeChild(lines.firstChild); }
        var focus = state.focus, heads = chosenHeads();
        [].concat(labels.q, labels.k).forEach(function (node) { node.textContent = ""; });
        [].concat(tokens.q, tokens.k).forEach(function (node) {
          node.classList.remove("course-attn-masked");
          node.classList.remove("course-attn-active");
        });
        heads.forEach(function (h) {
          for (var i = 0; i < map.queries.length; i++) {
            for (var j = 0; j < map.keys.length; j++) {
              if (focus && ((focus.side === "q" && focus.index !== i) ||
                            (focus.side === "k" && focus.index !== j))) { continue; }
              if (isMasked(map, i, j)) { continue; }
              var w = weight(map, state.layer, h, i, j);
              if (w < 0.005) { continue; }
              lines.appendChild(svg("line", {x1: left, y1: y(i), x2: right, y2: y(j),
                "stroke": COLOURS[h % COLOURS.length], "stroke-width": focus ? 1 + 4 * w : 1 + 2 * w,
                "stroke-opacity": focus ? Math.max(0.15, w) : 0.08 + 0.5 * w,
                "data-head": h, "data-i": i, "data-j": j, "data-weight": w.toFixed(3)}));
            }
          }
        });
        if (focus) {
          var node = tokens[focus.side][focus.index];
          node.classList.add("course-attn-active");
          var others = focus.side === "q" ? tokens.k : tokens.q;
          others.forEach(function (other, k) {
            var i = focus.side === "q" ? focus.index : k, j = focus.side === "q" ? k : focus.index;
            var label = labels[focus.side === "q" ? "k" : "q"][k];
            if (isMasked(map, i, j)) {
              other.classList.add("course-attn-masked");
              label.textContent = words.masked;
            } else if (heads.length === 1) {
              label.textContent = weight(map, state.layer, heads[0], i, j).toFixed(3);
            }
          });
          status.textContent = describe(map, focus.side, focus.index);
        } else {
          status.textContent = "";
        }
      }

      function tokenNode(side, index, text) {
        var x = side === "q" ? left - 6 : right + 6;
        var group = svg("g", {"class": "course-attn-token course-attn-" + side, tabindex: "0",
                              role: "button", "data-side": side, "data-index": index,
                              "aria-label": (side === "q" ? words.queries : words.keys) + " " +
                                (index + 1) + " " + words.of + " " +
                                (side === "q" ? map.queries.length : map.keys.length) + ": " + text});
        group.appendChild(svg("rect", {x: side === "q" ? 4 : right + 2, y: y(index) - rowHeight / 2 + 2,
                                       width: left - 8, height: rowHeight - 4, rx: 3,
                                       "class": "course-attn-box"}));
        group.appendChild(svgText(x, y(index) + 4, text, side === "q" ? "end" : "start", "course-attn-word"));
        var number = svgText(side === "q" ? 6 : width - 4, y(index) + 4, "",
                             side === "q" ? "start" : "end", "course-attn-w");
        number.setAttribute("data-side", side);
        number.setAttribute("data-index", index);
        labels[side].push(number);
        numbers.appendChild(number);
        function show() { state.focus = {side: side, index: index}; paint(); }
        group.addEventListener("mouseenter", show);
        group.addEventListener("focus", show);
        group.addEventListener("click", show);
        group.addEventListener("keydown", function (event) {
          var list = tokens[side], next = null;
          if (event.key === "ArrowDown") { next = list[Math.min(index + 1, list.length - 1)]; }
          if (event.key === "ArrowUp") { next = list[Math.max(index - 1, 0)]; }
          if (event.key === "ArrowRight" && side === "q") {
            next = tokens.k[Math.min(index, tokens.k.length - 1)];
          }
          if (event.key === "ArrowLeft" && side === "k") {
            next = tokens.q[Math.min(index, tokens.q.length - 1)];
          }
          if (event.key === "Escape") { state.focus = null; paint(); group.blur(); }
          if (next) { event.preventDefault(); next.focus(); }
        });
        return group;
      }
      map.queries.forEach(function (text, i) { var n = tokenNode("q", i, text); tokens.q.push(n); figure.appendChild(n); });
      map.keys.forEach(function (text, j) { var n = tokenNode("k", j, text); tokens.k.push(n); figure.appendChild(n); });
      figure.addEventListener("mouseleave", function () {
        if (!figure.contains(document.activeElement)) { state.focus = null; paint(); }
      });
      figure.appendChild(numbers);
      if (state.focus && !tokens[state.focus.side][state.focus.index]) { state.focus = null; }
      wrap.appendChild(figure);
      paint();
      return wrap;
    }

    // --- the model view: every layer x head as a small heatmap, masked cells hatched ------------
    function heatmap(map, layer, head, cell, labels) {
      var nq = map.queries.length, nk = map.keys.length;
      var pad = labels ? 70 : 0, top = labels ? 60 : 0;
      var room = labels ? 40 : 2;  // the last key's slanted label
      var figure = svg("svg", {viewBox: "0 0 " + (pad + nk * cell + room) + " " + (top + nq * cell + 2),
                               width: pad + nk * cell + room, "aria-hidden": "true"});
      var colour = COLOURS[head % COLOURS.length];
      for (var i = 0; i < nq; i++) {
        for (var j = 0; j < nk; j++) {
          var masked = isMasked(map, i, j);
          var rect = svg("rect", {x: pad + j * cell + 1, y: top + i * cell + 1, width: cell, height: cell,
                                  fill: masked ? "url(#" + hatch + ")" : colour,
                                  "fill-opacity": masked ? 1 : weight(map, layer, head, i, j),
                                  "class": masked ? "course-attn-mask-cell" : "course-attn-cell"});
          if (labels) {
            var title = svg("title");
            title.textContent = map.queries[i] + " \u2192 " + map.keys[j] + ": " +
              (masked ? words.masked : weight(map, layer, head, i, j).toFixed(3));
            rect.appendChild(title);
          }
          figure.appendChild(rect);
        }
      }
      figure.appendChild(svg("rect", {x: pad + 1, y: top + 1, width: nk * cell, height: nq * cell,
                                      fill: "none", stroke: "currentColor", "stroke-width": 0.5}));
      if (labels) {
        map.queries.forEach(function (text, i) {
          figure.appendChild(svgText(pad - 4, top + i * cell + cell * 0.75, text, "end", "course-attn-small"));
        });
        map.keys.forEach(function (text, j) {
          var node = svgText(0, 0, text, "start", "course-attn-small");
          node.setAttribute("transform", "translate(" + (pad + j * cell + cell * 0.75) + "," + (top - 4) +
                            ") rotate(-60)");
          figure.appendChild(node);
        });
      }
      return figure;
    }

    function drawModelView(map) {
      var wrap = el("div", {"class": "course-attn-model-view"});
      wrap.appendChild(el("p", {"class": "course-attn-hint"}, words.modelHint));
      var grid = el("div", {"class": "course-attn-grid"});
      var layers = map.weights.length, heads = map.weights[0].length;
      grid.style.gridTemplateColumns = "repeat(" + heads + ", auto)";
      var cell = Math.max(3, Math.floor(84 / Math.max(map.queries.length, map.keys.length)));
      for (var l = 0; l < layers; l++) {
        for (var h = 0; h < heads; h++) {
          var name = words.layer + " " + ((map.layerNames || [])[l] || (l + 1)) + ", " + words.head + " " + h;
          var chosen = l === state.layer && chosenHeads().length === 1 && chosenHeads()[0] === h;
          var button = el("button", {type: "button", "class": "course-attn-thumb", "data-layer": l,
                                     "data-head": h, "aria-label": name, title: name,
                                     "aria-pressed": chosen ? "true" : "false"});
          button.appendChild(heatmap(map, l, h, cell, false));
          (function (layer, head) {
            button.addEventListener("click", function () {
              state.layer = layer;
              state.heads = state.heads.map(function (_, k) { return k === head; });
              state.focus = null;
              refreshControls();
              draw();
            });
          })(l, h);
          grid.appendChild(button);
        }
      }
      wrap.appendChild(grid);
      var heads1 = chosenHeads();
      if (heads1.length === 1) {  // the chosen head, large, with its tokens
        wrap.appendChild(heatmap(map, state.layer, heads1[0], 18, true));
      }
      return wrap;
    }

    function draw() {
      var map = current();
      body.innerHTML = "";
      Object.keys(tabButtons).forEach(function (name) {
        tabButtons[name].setAttribute("aria-selected", state.view === name ? "true" : "false");
      });
      body.appendChild(state.view === "head" ? drawHeadView(map) : drawModelView(map));
      root.setAttribute("data-state", JSON.stringify({example: state.example, kind: map.kind,
                                                      layer: state.layer, heads: chosenHeads()}));
    }

    var defs = svg("svg", {width: 0, height: 0, "aria-hidden": "true", style: "position:absolute"});
    var pattern = svg("pattern", {id: hatch, width: 4, height: 4, patternUnits: "userSpaceOnUse",
                                  patternTransform: "rotate(45)"});
    pattern.appendChild(svg("rect", {width: 4, height: 4, fill: "#eeeeee"}));
    pattern.appendChild(svg("line", {x1: 0, y1: 0, x2: 0, y2: 4, stroke: "#999999", "stroke-width": 1.5}));
    defs.appendChild(pattern);
    ui.appendChild(defs);
    refreshControls();
    draw();
    root.classList.add("course-attn-ready");
  }

  // --- explorables: a slider over precomputed frames of a small chart ----------------------------
  function buildExplorable(root) {
    var data = JSON.parse(root.querySelector("script.course-attn-data").textContent);
    dropFallback(root);
    var words = WORDS[language(root)].explore[data.explorable];
    var ui = el("div", {"class": "course-attn-ui"});
    root.appendChild(ui);
    var id = root.id + "-slider";
    var row = el("div", {"class": "course-attn-controls"});
    var label = el("label", {"for": id}, words.slider + " = " + data.values[0]);
    var slider = el("input", {type: "range", id: id, min: 0, max: data.values.length - 1, step: 1,
                              value: data.start || 0});
    row.appendChild(label);
    row.appendChild(slider);
    ui.appendChild(row);
    var width = 420, height = 230, left = 46, right = 10, top = 28, bottom = 40;
    var chart = svg("svg", {viewBox: "0 0 " + width + " " + height, width: width, role: "img",
                            "class": "course-attn-chart course-attn-fit"});
    var body = el("div", {"class": "course-attn-body"});
    body.appendChild(chart);
    ui.appendChild(body);
    var status = el("p", {"class": "course-attn-status", "aria-live": "polite"});
    ui.appendChild(status);
    var xs = data.x, n = xs.length, lo = data.yMin, hi = data.yMax;
    function X(index) { return left + (index + 0.5) * (width - left - right) / n; }
    function Y(value) { return top + (hi - value) / (hi - lo) * (height - top - bottom); }

    function draw() {
      var frame = Number(slider.value);
      while (chart.firstChild) { chart.removeChild(chart.firstChild); }
      label.textContent = words.slider + " = " + data.values[frame];
      slider.setAttribute("aria-valuetext", words.slider + " = " + data.values[frame]);
      chart.appendChild(svg("line", {x1: left, y1: Y(lo), x2: width - right, y2: Y(lo), stroke: "currentColor"}));
      chart.appendChild(svg("line", {x1: left, y1: top, x2: left, y2: Y(lo), stroke: "currentColor"}));
      if (lo < 0) {
        chart.appendChild(svg("line", {x1: left, y1: Y(0), x2: width - right, y2: Y(0), stroke: "currentColor",
                                       "stroke-dasharray": "3 3", "stroke-opacity": 0.6}));
      }
      data.yTicks.forEach(function (value) {
        chart.appendChild(svgText(left - 4, Y(value) + 4, String(value), "end", "course-attn-small"));
      });
      data.xTicks.forEach(function (index) {
        chart.appendChild(svgText(X(index), Y(lo) + 14, String(xs[index]), "middle", "course-attn-small"));
      });
      chart.appendChild(svgText((left + width - right) / 2, height - 6, words.x, "middle", "course-attn-small"));
      var yLabel = svgText(0, 0, words.y, "middle", "course-attn-small");
      yLabel.setAttribute("transform", "translate(11," + ((top + Y(lo)) / 2) + ") rotate(-90)");
      chart.appendChild(yLabel);
      var parts = [];
      data.series.forEach(function (series, s) {
        var values = series.frames[frame], colour = COLOURS[s % COLOURS.length];
        var name = words.series[series.key] || series.key;
        chart.appendChild(svg("rect", {x: left + 8 + s * 200, y: 6, width: 12, height: 12, fill: colour}));
        chart.appendChild(svgText(left + 24 + s * 200, 16, name, "start", "course-attn-small"));
        if (data.bars) {
          var slot = (width - left - right) / n, bar = slot * 0.8 / data.series.length;
          values.forEach(function (value, i) {
            if (value === null) { return; }
            chart.appendChild(svg("rect", {x: X(i) - slot * 0.4 + s * bar, y: Y(Math.max(value, 0)), width: bar,
                                           height: Math.abs(Y(value) - Y(0)), fill: colour,
                                           "data-series": series.key, "data-x": xs[i], "data-value": value}));
          });
        } else {
          var path = "";
          values.forEach(function (value, i) {
            if (value === null) { return; }
            path += (path && values[i - 1] !== null ? " L" : " M") + X(i).toFixed(1) + " " + Y(value).toFixed(1);
          });
          chart.appendChild(svg("path", {d: path, fill: "none", stroke: colour, "stroke-width": 2,
                                         "data-series": series.key}));
        }
        var shown = values.filter(function (v) { return v !== null; });
        parts.push(name + ": " + words.largest + " " + Math.max.apply(null, shown).toFixed(data.digits));
      });
      chart.setAttribute("aria-label", label.textContent + "; " + parts.join("; "));
      status.textContent = label.textContent + ": " + parts.join("; ");
    }
    slider.addEventListener("input", draw);
    draw();
    root.classList.add("course-attn-ready");
  }

  window.courseAttentionView = build;
  var roots = document.querySelectorAll(".course-attn:not(.course-attn-ready)");
  for (var r = 0; r < roots.length; r++) {
    try {
      (roots[r].classList.contains("course-explore") ? buildExplorable : build)(roots[r]);
    } catch (error) {
      roots[r].appendChild(el("p", {}, "attention view: " + error));
    }
  }
})();
