// SPDX-License-Identifier: MPL-2.0
// flaky.js - what JavaScript adds to the flaky-test page of `retrig report`: sorting by each
// column, the search box, pages of 50 rows, and the URL remembering the scope, the sort, the
// search and the page. The page reads without it: every row and chart is in the HTML, and
// the scope toggle ("all branches" / "main only") is CSS.
(function () {
  'use strict';
  var PAGE = 50;
  var DEFAULT_DIR = { rank: 'asc', test: 'asc', rate: 'desc', breadth: 'desc', chance: 'desc',
                      first: 'asc', runs: 'desc' };
  var table = document.getElementById('tests');
  if (!table) return;
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var names = new Map(); // row -> its test, as the page shows it
  rows.forEach(function (r) { names.set(r, r.querySelector('.name').textContent); });
  var search = document.getElementById('search');
  var count = document.getElementById('count');
  var prev = document.getElementById('prev');
  var next = document.getElementById('next');
  var where = document.getElementById('where');
  var radios = { all: document.getElementById('scope-all'), main: document.getElementById('scope-main') };
  var state = { scope: 'all', sort: 'rank', dir: 'asc', q: '', page: 0 };

  function cap(s) { return s.charAt(0).toUpperCase() + s.slice(1); }

  // The state from the URL's fragment (scope=main&sort=rate&dir=desc&q=...&page=2); a
  // fragment naming a row (t-12) is returned for the caller to show that row.
  function readHash() {
    var h = location.hash.replace(/^#/, '');
    if (/^t-\d+$/.test(h)) return h;
    h.split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i < 0) return;
      var k = kv.slice(0, i), v;
      try { v = decodeURIComponent(kv.slice(i + 1)); } catch (e) { return; }
      if (k === 'scope' && (v === 'main' || v === 'all')) state.scope = v;
      else if (k === 'sort' && Object.prototype.hasOwnProperty.call(DEFAULT_DIR, v)) state.sort = v;
      else if (k === 'dir' && (v === 'asc' || v === 'desc')) state.dir = v;
      else if (k === 'q') state.q = v;
      else if (k === 'page' && /^\d+$/.test(v)) state.page = Math.max(0, parseInt(v, 10) - 1);
    });
    return null;
  }

  function writeHash() {
    var parts = ['scope=' + state.scope];
    if (state.sort !== 'rank') parts.push('sort=' + state.sort, 'dir=' + state.dir);
    if (state.q) parts.push('q=' + encodeURIComponent(state.q));
    if (state.page) parts.push('page=' + (state.page + 1));
    history.replaceState(null, '', '#' + parts.join('&'));
  }

  function value(row, sort) {
    var d = row.dataset, s = cap(state.scope);
    if (sort === 'test') return names.get(row).toLowerCase();
    if (sort === 'first') return d.first || '\uffff';
    return parseFloat(d[sort + s]) || 0;
  }

  function apply() {
    radios[state.scope].checked = true;
    var s = cap(state.scope), q = state.q.toLowerCase();
    var sign = state.dir === 'asc' ? 1 : -1;
    var listed = [], others = [];
    rows.forEach(function (r) {
      var shown = r.dataset['rank' + s] !== undefined && (!q || names.get(r).toLowerCase().indexOf(q) >= 0);
      (shown ? listed : others).push(r);
    });
    listed.sort(function (a, b) {
      var x = value(a, state.sort), y = value(b, state.sort);
      if (x < y) return -sign;
      if (x > y) return sign;
      return value(a, 'rank') - value(b, 'rank');
    });
    var pages = Math.max(1, Math.ceil(listed.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    var first = state.page * PAGE, last = Math.min(listed.length, first + PAGE);
    var fragment = document.createDocumentFragment();
    listed.forEach(function (r, i) { r.hidden = i < first || i >= last; fragment.appendChild(r); });
    others.forEach(function (r) { r.hidden = true; fragment.appendChild(r); });
    tbody.appendChild(fragment);
    var scope = state.scope === 'main' ? 'main branches only' : 'all branches';
    count.textContent = listed.length ? (first + 1) + '\u2013' + last + ' of ' + listed.length +
      ' tests (' + scope + (q ? ', matching \u201c' + state.q + '\u201d' : '') + ')'
      : 'no test ' + (q ? 'matches \u201c' + state.q + '\u201d' : 'failed') + ' (' + scope + ')';
    where.textContent = 'page ' + (state.page + 1) + ' of ' + pages;
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
    Array.prototype.forEach.call(table.tHead.querySelectorAll('th[data-sort]'), function (th) {
      th.setAttribute('aria-sort', th.dataset.sort !== state.sort ? 'none'
        : state.dir === 'asc' ? 'ascending' : 'descending');
    });
    writeHash();
  }

  // Shows the row with that id: a search for its test, on the first page.
  function show(id) {
    var row = document.getElementById(id);
    if (!row || !names.has(row)) return;
    if (row.dataset['rank' + cap(state.scope)] === undefined) state.scope = 'all';
    state.q = names.get(row);
    search.value = state.q;
    state.page = 0;
    apply();
    rows.forEach(function (r) { r.classList.toggle('target', r === row); });
    row.scrollIntoView({ block: 'center' });
  }

  Array.prototype.forEach.call(document.querySelectorAll('.js-only'), function (e) { e.hidden = false; });
  ['all', 'main'].forEach(function (scope) {
    radios[scope].addEventListener('change', function () {
      if (!radios[scope].checked) return;
      state.scope = scope;
      state.page = 0;
      apply();
    });
  });
  search.addEventListener('input', function () { state.q = search.value.trim(); state.page = 0; apply(); });
  prev.addEventListener('click', function () { state.page--; apply(); });
  next.addEventListener('click', function () { state.page++; apply(); });
  Array.prototype.forEach.call(table.tHead.querySelectorAll('th[data-sort] button'), function (b) {
    b.addEventListener('click', function () {
      var sort = b.parentNode.dataset.sort;
      if (state.sort === sort) state.dir = state.dir === 'asc' ? 'desc' : 'asc';
      else { state.sort = sort; state.dir = DEFAULT_DIR[sort]; }
      state.page = 0;
      apply();
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll('a[href^="#t-"]'), function (a) {
    a.addEventListener('click', function (e) { e.preventDefault(); show(a.getAttribute('href').slice(1)); });
  });

  var target = readHash();
  search.value = state.q;
  apply();
  if (target) show(target);
})();
