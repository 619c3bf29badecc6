// assets/try-it.js: the "Try it" panel of every method page, a classic script (no modules, no network but the call the
// user makes, nothing from a CDN) so pages work opened from disk. The page carries its data in
// <script type="application/json" id="try-it-data">: method, params, servers, declared error codes. The panel builds the
// URL from the chosen server and its variables (or any URL typed in), POSTs one JSON-RPC 2.0 call, shows the answer, and
// validates a result with the method's validator from assets/validators.js (compiled at generate time).
// Server suggestions: when the docs folder ships assets/servers.js (an optional input of the writer), its function
// `window.RPCGATE_DOCS_SERVERS()` may resolve to more { label, url } entries, offered under their own group; a failure
// there is silent (the panel works without it).
// Plain ES2017 kept as text: what runs in the browser is exactly what is written here.
export const TRY_IT_JS = String.raw`(function () {
  'use strict';
  var dataEl = document.getElementById('try-it-data');
  if (!dataEl) return;
  var data = JSON.parse(dataEl.textContent);
  function $(id) { return document.getElementById(id); }
  var serverEl = $('try-server'), varsEl = $('try-vars'), urlEl = $('try-url'), sendEl = $('try-send');
  var statusEl = $('try-status'), requestEl = $('try-request'), answerEl = $('try-answer'), verdictEl = $('try-verdict');
  var STORE = 'rpcgate-docs:' + data.document + ':';
  function remember(k, v) { try { localStorage.setItem(STORE + k, v); } catch (e) { /* storage off: nothing to keep */ } }
  function recall(k) { try { return localStorage.getItem(STORE + k); } catch (e) { return null; } }

  // Code samples say {{RPC_URL}}: show the chosen URL in them.
  var samples = Array.prototype.map.call(document.querySelectorAll('pre[data-rpc-url] code'), function (el) {
    return { el: el, text: el.textContent };
  });
  function setUrl(url) {
    urlEl.value = url;
    samples.forEach(function (s) { s.el.textContent = s.text.split('{{RPC_URL}}').join(url || '{{RPC_URL}}'); });
  }
  // OpenRPC server URLs are templates: {name} (and \${name}, as some documents write it).
  function expand(server, values) {
    return server.url.replace(/\$?\{([^}]+)\}/g, function (all, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? values[name] : all;
    });
  }
  var suggested = [];
  function showVars(server) {
    varsEl.textContent = '';
    if (!server) return;
    var values = {};
    server.variables.forEach(function (v, i) {
      var saved = recall('var:' + server.url + ':' + v.name);
      values[v.name] = saved !== null && (!v.enum || v.enum.indexOf(saved) >= 0) ? saved : v.default;
      var wrap = document.createElement('div');
      var label = document.createElement('label');
      var id = 'try-var-' + i;
      label.htmlFor = id;
      label.textContent = v.name;
      if (v.description) label.title = v.description;
      var input;
      if (v.enum) {
        input = document.createElement('select');
        v.enum.forEach(function (e) {
          var o = document.createElement('option');
          o.value = o.textContent = e;
          input.appendChild(o);
        });
      } else {
        input = document.createElement('input');
        input.type = 'text';
        input.spellcheck = false;
      }
      input.id = id;
      input.value = values[v.name];
      input.addEventListener('input', function () {
        values[v.name] = input.value;
        remember('var:' + server.url + ':' + v.name, input.value);
        setUrl(expand(server, values));
      });
      wrap.appendChild(label);
      wrap.appendChild(input);
      if (v.description) {
        var hint = document.createElement('small');
        hint.className = 'muted';
        hint.textContent = v.description.replace(/\x60/g, '');
        wrap.appendChild(hint);
      }
      varsEl.appendChild(wrap);
    });
    setUrl(expand(server, values));
  }
  // byUser: a choice to keep for the next page (the initial pick and suggestions arriving are not).
  function choose(value, byUser) {
    serverEl.value = value;
    if (byUser) remember('server', value);
    if (value.charAt(0) === 's') showVars(data.servers[Number(value.slice(1))]);
    else {
      showVars(undefined);
      if (value.charAt(0) === 'k') setUrl(suggested[Number(value.slice(1))].url);
      else setUrl(recall('url') || urlEl.value);
    }
  }
  serverEl.addEventListener('change', function () { choose(serverEl.value, true); });
  urlEl.addEventListener('input', function () {
    serverEl.value = 'custom';
    remember('server', 'custom');
    remember('url', urlEl.value);
    showVars(undefined);
    samples.forEach(function (s) { s.el.textContent = s.text.split('{{RPC_URL}}').join(urlEl.value || '{{RPC_URL}}'); });
  });
  var saved = recall('server');
  choose(saved && saved.charAt(0) !== 'k' && Array.prototype.some.call(serverEl.options, function (o) { return o.value === saved; }) ? saved : data.servers.length ? 's0' : 'custom', false);

  // Suggestions (e.g. the signed-in user's key URLs when rpcgate serves these pages): optional, silent on failure.
  if (typeof window.RPCGATE_DOCS_SERVERS === 'function') {
    Promise.resolve()
      .then(function () { return window.RPCGATE_DOCS_SERVERS(); })
      .then(function (list) {
        if (!Array.isArray(list) || !list.length) return;
        var group = document.createElement('optgroup');
        group.label = window.RPCGATE_DOCS_SERVERS_LABEL || 'Suggested';
        list.forEach(function (s) {
          if (!s || typeof s.url !== 'string') return;
          var o = document.createElement('option');
          o.value = 'k' + suggested.length;
          o.textContent = (s.label || s.url);
          suggested.push(s);
          group.appendChild(o);
        });
        serverEl.insertBefore(group, serverEl.firstChild);
        // A user who has keys most likely wants one of them, unless they picked something themselves.
        var kept = recall('server');
        if (kept === null || kept.charAt(0) === 'k') choose(kept && suggested[Number(kept.slice(1))] ? kept : 'k0', false);
      })
      .catch(function () { /* not served by a deployment that knows the user: no suggestions */ });
  }

  function status(text, bad) {
    statusEl.textContent = text;
    statusEl.className = 'status' + (bad ? ' bad' : '');
  }
  function verdict(text, kind) {
    verdictEl.textContent = text;
    verdictEl.className = 'verdict ' + kind;
  }
  function readParams() {
    var values = data.params.map(function (p, i) {
      var text = $('try-p-' + i).value.trim();
      if (text === '') {
        if (p.required) throw new Error('param ' + p.name + ' is required');
        return undefined;
      }
      try { return JSON.parse(text); } catch (e) { throw new Error('param ' + p.name + ' is not JSON: ' + e.message); }
    });
    if (data.byName) {
      var named = {};
      values.forEach(function (v, i) { if (v !== undefined) named[data.params[i].name] = v; });
      return named;
    }
    var last = -1;
    values.forEach(function (v, i) { if (v !== undefined) last = i; });
    var list = [];
    for (var i = 0; i <= last; i++) {
      if (values[i] === undefined) throw new Error('param ' + data.params[i].name + ' is empty but a later param is set (positional params)');
      list.push(values[i]);
    }
    return list;
  }
  function check(answer, id) {
    if (!answer || typeof answer !== 'object' || Array.isArray(answer) || answer.jsonrpc !== '2.0') return verdict('invalid: not a JSON-RPC 2.0 response object', 'invalid');
    if (answer.id !== id) return verdict('invalid: response id ' + JSON.stringify(answer.id) + ' is not the request id ' + id, 'invalid');
    var hasResult = Object.prototype.hasOwnProperty.call(answer, 'result');
    if (answer.error !== undefined) {
      var e = answer.error;
      if (hasResult || !e || typeof e.code !== 'number' || Math.floor(e.code) !== e.code || typeof e.message !== 'string') return verdict('invalid: malformed error object', 'invalid');
      var declared = data.errors.indexOf(e.code) >= 0 ? 'declared by this method' : [-32700, -32600, -32601, -32602, -32603].indexOf(e.code) >= 0 ? 'a JSON-RPC error' : 'not declared by this method';
      return verdict('error ' + e.code + ': ' + e.message + ' (' + declared + ')', 'error');
    }
    if (!hasResult) return verdict('invalid: neither result nor error', 'invalid');
    var validators = window.RPCGATE_DOCS_VALIDATORS;
    var validate = validators && validators[data.method];
    if (typeof validate !== 'function') return verdict('not validated: assets/validators.js did not load', 'error');
    if (validate(answer.result)) return verdict('valid', 'valid');
    var err = (validate.errors && validate.errors[0]) || { instancePath: '', message: 'does not match the result schema', params: {} };
    var detail = err.params && err.params.additionalProperty !== undefined ? ' (' + JSON.stringify(err.params.additionalProperty) + ')' : '';
    verdict('invalid: ' + (err.instancePath || '/') + ' ' + err.message + detail, 'invalid');
  }
  var nextId = 1;
  sendEl.addEventListener('click', function () {
    var url = urlEl.value.trim();
    answerEl.textContent = '';
    verdict('', '');
    if (!/^https?:\/\//i.test(url)) return status('Set an http(s) server URL first.', true);
    var params;
    try { params = readParams(); } catch (e) { return status(e.message, true); }
    var id = nextId++;
    var body = { jsonrpc: '2.0', id: id, method: data.method };
    if (!Array.isArray(params) || params.length || data.params.length) body.params = params;
    requestEl.textContent = JSON.stringify(body, null, 2);
    status('Sending…');
    sendEl.disabled = true;
    var t0 = Date.now();
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (res) { return res.text().then(function (text) { return { res: res, text: text }; }); })
      .then(function (r) {
        status('HTTP ' + r.res.status + ' in ' + (Date.now() - t0) + ' ms');
        var answer;
        try { answer = JSON.parse(r.text); } catch (e) {
          answerEl.textContent = r.text;
          return verdict('invalid: the answer is not JSON', 'invalid');
        }
        answerEl.textContent = JSON.stringify(answer, null, 2);
        check(answer, id);
      }, function (e) {
        status('Request failed: ' + e.message + ' (is the server up, and does it allow CORS from this page?)', true);
      })
      .then(function () { sendEl.disabled = false; });
  });
})();
`;
