// opcheck's HTML report script: fixed text, never run data (the page's Content-Security-Policy allows it by its hash).
// Sorting: click a column heading (again to reverse); numeric columns sort by data-sort, blanks last.
// Filtering: a text box matches anywhere in a row (its folded details included); selects match a row attribute.
(function () {
  'use strict';
  function key(row, i) {
    var c = row.cells[i];
    if (!c) return '';
    return c.hasAttribute('data-sort') ? c.getAttribute('data-sort') : c.textContent.trim();
  }
  function sortBy(table, th) {
    var col = th.cellIndex, numeric = th.getAttribute('data-type') === 'num';
    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, col), y = key(b, col);
      if (numeric) {
        var nx = parseFloat(x), ny = parseFloat(y), bx = isNaN(nx), by = isNaN(ny);
        if (bx || by) return bx === by ? 0 : (bx ? 1 : -1);
        return (nx < ny ? -1 : nx > ny ? 1 : 0) * dir;
      }
      return x.localeCompare(y, undefined, { numeric: true }) * dir;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function filter(table) {
    var q = '', picks = [];
    document.querySelectorAll('[data-filter-table="' + table.id + '"]').forEach(function (el) {
      if (el.tagName === 'INPUT') q = el.value.trim().toLowerCase();
      else if (el.value) picks.push([el.getAttribute('data-filter-attr'), el.value]);
    });
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i], ok = !q || r.textContent.toLowerCase().indexOf(q) >= 0;
      for (var j = 0; j < picks.length && ok; j++) ok = r.getAttribute(picks[j][0]) === picks[j][1];
      r.hidden = !ok;
      if (ok) shown++;
    }
    var count = document.querySelector('[data-count-for="' + table.id + '"]');
    if (count) count.textContent = shown === rows.length ? String(rows.length) : shown + ' of ' + rows.length;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.tabIndex = 0;
      th.addEventListener('click', function () { sortBy(table, th); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(table, th); }
      });
    });
  });
  document.querySelectorAll('[data-filter-table]').forEach(function (el) {
    var table = document.getElementById(el.getAttribute('data-filter-table'));
    if (!table) return;
    el.addEventListener(el.tagName === 'INPUT' ? 'input' : 'change', function () { filter(table); });
    filter(table);
  });
  document.querySelectorAll('[data-js-controls]').forEach(function (el) { el.hidden = false; });
  document.documentElement.setAttribute('data-js', 'ready');
})();
