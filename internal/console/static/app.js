// Warden console. Everything shown comes from the server and is
// untrusted: it is put in the page with textContent only, never as HTML.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const state = { user: "", node: null, fmt: "text", view: "tree", statsTimer: 0, selectedEl: null };

  // el makes an element with text content and classes.
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  // api calls the console's JSON API. Writes carry the header the server
  // requires against cross-site requests. Resolves to the parsed body;
  // rejects with an Error carrying status and the server's message.
  async function api(method, path, body) {
    const opts = { method: method, headers: { "X-Warden-Console": "1" }, credentials: "same-origin" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const r = await fetch("api/" + path, opts);
    let data = null;
    if (r.status !== 204) {
      try { data = await r.json(); } catch (e) { data = null; }
    }
    if (!r.ok) {
      const err = new Error((data && data.error) || ("HTTP " + r.status));
      err.status = r.status;
      throw err;
    }
    return data;
  }

  let bannerTimer = 0;
  function banner(msg, isError) {
    $("banner-text").textContent = msg;
    $("banner").className = "banner" + (isError ? " error" : "");
    $("banner").hidden = false;
    clearTimeout(bannerTimer);
    if (!isError) bannerTimer = setTimeout(() => { $("banner").hidden = true; }, 4000);
  }
  const fail = (e) => banner(e.message, true);

  // ---- who is viewing ----
  function setUser(me) {
    state.user = me.user || "";
    $("who-name").textContent = state.user ? state.user : "read-only";
    $("who-name").className = "badge" + (state.user ? " user" : "");
    $("login-btn").hidden = !!state.user;
    $("logout-btn").hidden = !state.user;
    $("server-info").textContent = (me.server || "") + (me.mode ? " · " + me.mode : "");
    document.body.classList.toggle("writable", !!state.user);
    renderWriteControls();
  }

  function renderWriteControls() {
    const w = !!state.user && !!state.node;
    for (const e of document.querySelectorAll(".writer")) e.hidden = !w;
    $("readonly-note").hidden = !!state.user;
    if (!state.user) { $("editor").hidden = true; $("create").hidden = true; }
  }

  function openLogin() {
    $("login-error").hidden = true;
    $("login-password").value = "";
    $("login-dialog").showModal();
    $("login-user").focus();
  }

  $("login-btn").addEventListener("click", openLogin);
  $("readonly-login").addEventListener("click", openLogin);
  $("login-cancel").addEventListener("click", () => $("login-dialog").close());
  $("login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const me = await api("POST", "login", { user: $("login-user").value, password: $("login-password").value });
      $("login-password").value = "";
      $("login-dialog").close();
      setUser(me);
      banner("Logged in as " + me.user + ". What you may change is decided by each node's ACL.");
      if (state.node) selectNode(state.node.path);
    } catch (e) {
      $("login-error").textContent = e.message;
      $("login-error").hidden = false;
    }
  });
  $("logout-btn").addEventListener("click", async () => {
    try { setUser(await api("POST", "logout", {})); banner("Logged out."); } catch (e) { fail(e); }
  });
  $("banner-close").addEventListener("click", () => { $("banner").hidden = true; });

  // ---- views ----
  function show(view) {
    state.view = view;
    for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.view === view);
    for (const v of ["tree", "sessions", "ensemble", "charts"]) $("view-" + v).hidden = v !== view;
    clearInterval(state.statsTimer);
    if (view === "sessions") loadSessions();
    if (view === "ensemble") loadEnsemble();
    if (view === "charts") { loadStats(); state.statsTimer = setInterval(loadStats, 2000); }
    if (location.hash !== "#" + view) history.replaceState(null, "", "#" + view);
  }
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => show(b.dataset.view));

  // ---- tree ----
  const parentOf = (p) => (p.lastIndexOf("/") <= 0 ? "/" : p.slice(0, p.lastIndexOf("/")));
  const q = (p) => "path=" + encodeURIComponent(p);

  // treeItem is the <li> of one node: a toggle that loads its children,
  // and its name that selects it.
  function treeItem(node) {
    const li = el("li");
    li.dataset.path = node.path;
    const row = el("div", null, "item");
    const expandable = node.numChildren !== 0; // -1: locked, unknown
    const toggle = el("button", expandable ? "▶" : "", "toggle" + (expandable ? "" : " leaf"));
    toggle.type = "button";
    toggle.setAttribute("aria-label", "expand " + node.path);
    const name = el("button", node.name, "name");
    name.type = "button";
    name.title = node.path;
    name.dataset.path = node.path;
    row.append(toggle, name);
    if (node.ephemeral) row.append(el("span", "ephemeral", "tag"));
    if (node.locked) row.append(el("span", "no access", "tag locked"));
    if (node.numChildren > 0) row.append(el("span", String(node.numChildren), "tag count"));
    li.append(row);
    toggle.addEventListener("click", () => toggleItem(li, toggle));
    name.addEventListener("click", () => selectNode(node.path, name));
    return li;
  }

  async function toggleItem(li, toggle) {
    const open = li.querySelector(":scope > ul");
    if (open) { open.remove(); toggle.textContent = "▶"; return; }
    await expand(li, toggle);
  }

  async function expand(li, toggle) {
    try {
      const r = await api("GET", "children?" + q(li.dataset.path));
      const old = li.querySelector(":scope > ul");
      if (old) old.remove();
      const ul = el("ul");
      for (const c of r.children) ul.append(treeItem(c));
      if (r.truncated) ul.append(el("li", "… " + (r.total - r.children.length) + " more (use search)", "more"));
      li.append(ul);
      if (toggle) toggle.textContent = "▼";
      markSelected();
    } catch (e) { fail(e); }
  }

  function itemOf(path) {
    for (const li of document.querySelectorAll("#tree li")) if (li.dataset.path === path) return li;
    return null;
  }

  // refreshItem reloads the children of path, and its own row in its parent.
  async function refreshItem(path) {
    const parent = path === "/" ? null : itemOf(parentOf(path));
    if (parent && parent.querySelector(":scope > ul")) await expand(parent, parent.querySelector(".toggle"));
    const li = itemOf(path);
    if (li) {
      const t = li.querySelector(".toggle");
      t.classList.remove("leaf");
      await expand(li, t);
    }
  }

  function markSelected() {
    for (const b of document.querySelectorAll("#tree .name")) {
      b.classList.toggle("selected", !!state.node && b.dataset.path === state.node.path);
    }
  }

  // reveal opens the tree down to path.
  async function reveal(path) {
    const parts = path.split("/").filter(Boolean);
    let cur = "/";
    for (let i = 0; i < parts.length; i++) {
      const li = itemOf(cur);
      if (!li) return;
      if (!li.querySelector(":scope > ul")) await expand(li, li.querySelector(".toggle"));
      cur = cur === "/" ? "/" + parts[i] : cur + "/" + parts[i];
    }
    markSelected();
  }

  async function initTree() {
    const tree = $("tree");
    tree.textContent = "";
    const root = treeItem({ name: "/", path: "/", numChildren: -1 });
    tree.append(root);
    await expand(root, root.querySelector(".toggle"));
  }

  // ---- node ----
  async function selectNode(path) {
    try {
      const n = await api("GET", "node?" + q(path));
      state.node = n;
      $("node-empty").hidden = true;
      $("node-body").hidden = false;
      $("editor").hidden = true;
      $("create").hidden = true;
      disarmDelete();
      $("node-path").textContent = n.path;
      if (n.data) state.fmt = n.data.format;
      renderData();
      renderStat(n.stat);
      renderACL(n);
      renderWriteControls();
      markSelected();
    } catch (e) { fail(e); }
  }

  function renderData() {
    const n = state.node, d = n.data, pre = $("node-data");
    $("data-error").hidden = !n.dataError;
    $("data-error").textContent = n.dataError || "";
    pre.hidden = !d;
    $("formats").hidden = !d;
    $("data-size").textContent = d ? "· " + d.size + " bytes" + (d.truncated ? " (first 64 KiB shown)" : "") : "";
    if (!d) return;
    for (const b of document.querySelectorAll("#formats button")) {
      const f = b.dataset.fmt;
      b.disabled = (f === "json" && d.json === null) || (f === "text" && d.text === null);
      b.classList.toggle("active", f === state.fmt);
    }
    let text = state.fmt === "json" ? d.json : state.fmt === "hex" ? d.hex : d.text;
    if (text === null) { state.fmt = "hex"; text = d.hex; }
    pre.className = "data" + (state.fmt === "hex" ? " hex" : "");
    if (d.size === 0) { pre.textContent = "(no data)"; pre.className += " empty-data"; return; }
    pre.textContent = text;
  }
  for (const b of document.querySelectorAll("#formats button")) {
    b.addEventListener("click", () => { state.fmt = b.dataset.fmt; renderData(); });
  }

  function renderStat(s) {
    const t = $("stat");
    t.textContent = "";
    const time = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC") : "0");
    const rows = [
      ["czxid", s.czxid], ["ctime", time(s.ctime)], ["mzxid", s.mzxid], ["mtime", time(s.mtime)],
      ["pzxid", s.pzxid], ["version", s.version], ["cversion", s.cversion], ["aversion", s.aversion],
      ["ephemeralOwner", s.ephemeralOwner], ["dataLength", s.dataLength], ["numChildren", s.numChildren],
    ];
    for (const [k, v] of rows) {
      const tr = el("tr");
      tr.append(el("td", k), el("td", v));
      t.append(tr);
    }
  }

  function renderACL(n) {
    const tb = $("acl").querySelector("tbody");
    tb.textContent = "";
    for (const a of n.acl) {
      const tr = el("tr");
      const perms = el("td", a.perms, "mono");
      perms.title = a.names.join(", ");
      tr.append(el("td", a.scheme), el("td", a.id, "mono"), perms);
      tb.append(tr);
    }
    $("acl-error").hidden = !n.aclError;
    $("acl-error").textContent = n.aclError || "";
  }

  // Editing.
  function editing(on) {
    $("editor").hidden = !on;
    $("node-data").hidden = on || !state.node.data;
    $("formats").hidden = on || !state.node.data;
  }
  $("edit-btn").addEventListener("click", () => {
    const d = state.node.data;
    $("edit-text").value = d && d.text !== null ? d.text : "";
    $("edit-version").textContent = "version " + state.node.stat.version + (d && d.text === null ? " · binary data is replaced by the text you save" : "");
    $("create").hidden = true;
    editing(true);
    $("edit-text").focus();
  });
  $("cancel-btn").addEventListener("click", () => editing(false));
  $("editor").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const path = state.node.path;
    try {
      await api("PUT", "node", { path: path, data: $("edit-text").value, version: state.node.stat.version });
      banner("Saved " + path + ".");
      await selectNode(path);
    } catch (e) { fail(e); }
  });

  // Creating.
  $("new-btn").addEventListener("click", () => {
    $("create-parent").textContent = state.node.path;
    $("create-name").value = "";
    $("create-data").value = "";
    editing(false);
    $("create").hidden = false;
    $("create-name").focus();
  });
  $("create-cancel").addEventListener("click", () => { $("create").hidden = true; });
  $("create").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const parent = state.node.path;
    const name = $("create-name").value.replace(/^\/+/, "");
    const path = parent === "/" ? "/" + name : parent + "/" + name;
    try {
      const r = await api("POST", "node", { path: path, data: $("create-data").value, mode: $("create-mode").value, acl: $("create-acl").value });
      banner("Created " + r.path + ".");
      $("create").hidden = true;
      await refreshItem(parent);
      await selectNode(r.path);
    } catch (e) { fail(e); }
  });

  // Deleting: the first click arms the button, the second deletes.
  let armTimer = 0;
  function disarmDelete() {
    clearTimeout(armTimer);
    $("delete-btn").classList.remove("armed");
    $("delete-btn").textContent = "Delete";
  }
  $("delete-btn").addEventListener("click", async () => {
    const b = $("delete-btn");
    if (!b.classList.contains("armed")) {
      b.classList.add("armed");
      b.textContent = "Confirm delete";
      armTimer = setTimeout(disarmDelete, 5000);
      return;
    }
    disarmDelete();
    const path = state.node.path;
    try {
      await api("DELETE", "node?" + q(path) + "&version=" + state.node.stat.version);
      banner("Deleted " + path + ".");
      const parent = parentOf(path);
      await refreshItem(parent);
      await selectNode(parent);
    } catch (e) { fail(e); }
  });

  // Searching.
  $("search-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const box = $("search-results");
    const text = $("search-q").value.trim();
    if (!text) { box.hidden = true; return; }
    try {
      const r = await api("GET", "search?" + q($("search-root").value || "/") + "&q=" + encodeURIComponent(text));
      box.textContent = "";
      const head = el("div", r.matches.length + " match" + (r.matches.length === 1 ? "" : "es") + " · " + r.visited + " nodes searched" + (r.truncated ? " · stopped early: search a smaller subtree" : ""), "muted");
      box.append(head);
      for (const m of r.matches) {
        const b = el("button", m, "hit");
        b.type = "button";
        b.title = m;
        b.addEventListener("click", async () => { await reveal(m); await selectNode(m); });
        box.append(b);
      }
      box.hidden = false;
    } catch (e) { fail(e); }
  });

  // ---- sessions ----
  function plist(groups) {
    const ul = el("ul", null, "plist");
    for (const [kind, paths] of groups) {
      for (const p of paths) {
        const li = el("li");
        if (kind) li.append(el("span", kind, "kind"));
        li.append(document.createTextNode(p));
        ul.append(li);
      }
    }
    return ul;
  }

  async function loadSessions() {
    try {
      const r = await api("GET", "sessions");
      const tb = $("sessions").querySelector("tbody");
      tb.textContent = "";
      $("sessions-count").textContent = r.sessions.length + " session" + (r.sessions.length === 1 ? "" : "s") + " · watches as seen by " + r.member;
      for (const s of r.sessions) {
        const tr = el("tr");
        const eph = el("td");
        eph.append(plist([["", s.ephemerals]]));
        const w = el("td");
        w.append(plist([["data", s.dataWatches], ["child", s.childWatches], ["persistent", s.persistentWatches], ["recursive", s.recursiveWatches]]));
        const remote = el("td", s.remote || "—", "mono");
        if (s.console) remote.append(el("span", " console: " + s.console, "tag"));
        tr.append(el("td", s.id, "mono"), el("td", (s.timeoutMs / 1000) + " s"), el("td", s.owner), remote, el("td", s.expiresInMs === null ? "—" : (s.expiresInMs / 1000).toFixed(1) + " s"), eph, w);
        tb.append(tr);
      }
    } catch (e) { fail(e); }
  }
  $("sessions-refresh").addEventListener("click", loadSessions);

  // ---- ensemble ----
  async function loadEnsemble() {
    try {
      const r = await api("GET", "ensemble");
      const sum = $("ensemble-summary");
      sum.textContent = "";
      sum.append(el("span", r.quorum ? "quorum" : "no quorum", "pill " + (r.quorum ? "ok" : "bad")),
        el("span", r.ok ? "healthy" : "degraded", "pill " + (r.ok ? "ok" : "bad")));
      if (r.leader) sum.append(el("span", "leader " + r.leader, "pill lead"));
      const tb = $("ensemble").querySelector("tbody");
      tb.textContent = "";
      const num = (v) => (v < 0 ? "—" : v);
      for (const m of r.members) {
        const tr = el("tr");
        const addr = el("td", m.addr, "mono");
        if (m.self) addr.append(el("span", " (this server)", "muted"));
        const mode = el("td");
        mode.append(el("span", m.mode, "pill " + (m.state === "serving" ? (m.mode === "leader" || m.mode === "standalone" ? "lead" : "ok") : "bad")));
        tr.append(addr, mode, el("td", m.zxid || "—", "mono"), el("td", m.lag), el("td", num(m.connections)),
          el("td", num(m.outstanding)), el("td", num(m.nodes)), el("td", m.error || m.version.split("-")[0] || "—"));
        tb.append(tr);
      }
    } catch (e) { fail(e); }
  }
  $("ensemble-refresh").addEventListener("click", loadEnsemble);

  // ---- charts ----
  function tile(k, v, cls) {
    const d = el("div", null, "tile");
    d.append(el("div", v, "v" + (cls ? " " + cls : "")), el("div", k, "k"));
    return d;
  }

  async function loadStats() {
    try {
      const r = await api("GET", "stats");
      const m = r.monitor;
      const tiles = $("tiles");
      tiles.textContent = "";
      tiles.append(tile("mode", m.server_state, "small"), tile("znodes", m.znode_count), tile("sessions", m.global_sessions),
        tile("connections", m.num_alive_connections), tile("watches", m.watch_count),
        tile("outstanding", m.outstanding_requests), tile("avg latency", m.avg_latency + " ms"),
        tile("last zxid", "0x" + Number(m.last_processed_zxid).toString(16), "small"));
      const s = r.samples;
      const times = s.map((x) => x.t);
      const every = s.length > 1 ? (times[times.length - 1] - times[0]) / (s.length - 1) : r.intervalMs;
      const spanMs = Math.max(times.length ? times[times.length - 1] - times[0] : 0, 60000);
      $("charts-note").textContent = s.length ? "last " + Math.round(spanMs / 60000) + " min · a point every " + (every / 1000).toFixed(1).replace(/\.0$/, "") + " s" : "collecting the first samples…";
      WardenCharts.line($("chart-rps"), { times: times, spanMs: spanMs, series: [
        { name: "sent", color: "#9aa5b8", values: s.map((x) => x.sps), dash: true },
        { name: "received", color: "#2457c5", values: s.map((x) => x.rps), fill: true }] });
      WardenCharts.line($("chart-latency"), { times: times, spanMs: spanMs, series: [
        { name: "avg", color: "#127a3e", values: s.map((x) => x.avgLatency), fill: true },
        { name: "max", color: "#b45309", values: s.map((x) => x.maxLatency) }] });
      WardenCharts.line($("chart-conns"), { times: times, spanMs: spanMs, series: [
        { name: "connections", color: "#7c3aed", values: s.map((x) => x.connections), fill: true },
        { name: "outstanding", color: "#b42318", values: s.map((x) => x.outstanding) }] });
    } catch (e) { fail(e); }
  }

  // ---- start ----
  async function start() {
    try { setUser(await api("GET", "me")); } catch (e) { fail(e); }
    await initTree();
    const v = location.hash.replace("#", "");
    show(["tree", "sessions", "ensemble", "charts"].includes(v) ? v : "tree");
    document.body.dataset.ready = "1";
  }
  start();
})();
