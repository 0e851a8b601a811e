// SPDX-License-Identifier: MPL-2.0
// decisions.js - what JavaScript adds to the sheriffs' page of `retrig report --decisions`:
// filters by verdict, project and platform, remembered in the URL, and "expand all". The
// page reads without it: every verdict is listed and each expands on its own (<details>).
(function () {
  'use strict';
  var list = document.getElementById('decisions');
  if (!list) return;
  var items = Array.prototype.slice.call(list.querySelectorAll('details.decision'));
  var names = ['verdict', 'project', 'platform'];
  var selects = {};
  names.forEach(function (n) { selects[n] = document.getElementById('f-' + n); });
  var shown = document.getElementById('shown');
  var expand = document.getElementById('expand-all');

  function readHash() {
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i < 0) return;
      var k = kv.slice(0, i), v;
      try { v = decodeURIComponent(kv.slice(i + 1)); } catch (e) { return; }
      var s = selects[k];
      if (!s) return;
      for (var j = 0; j < s.options.length; j++) if (s.options[j].value === v) s.selectedIndex = j;
    });
  }

  function apply() {
    var n = 0, parts = [];
    names.forEach(function (k) { if (selects[k].value) parts.push(k + '=' + encodeURIComponent(selects[k].value)); });
    items.forEach(function (d) {
      var ok = names.every(function (k) { return !selects[k].value || d.dataset[k] === selects[k].value; });
      d.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n + ' of ' + items.length + ' verdicts';
    history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname + location.search);
  }

  Array.prototype.forEach.call(document.querySelectorAll('.js-only'), function (e) { e.hidden = false; });
  names.forEach(function (k) { selects[k].addEventListener('change', apply); });
  expand.addEventListener('click', function () {
    var open = expand.textContent === 'expand all';
    items.forEach(function (d) { if (!d.hidden) d.open = open; });
    expand.textContent = open ? 'collapse all' : 'expand all';
  });
  readHash();
  apply();
})();
