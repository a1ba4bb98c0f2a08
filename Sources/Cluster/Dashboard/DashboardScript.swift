/// The dashboard's script (`/dashboard.js`): renders the events of `/api/events` (the first one is
/// embedded in the page) and reconnects after the coordinator restarts.
///
/// Every string from the network (worker IDs, hosts, versions, sources, errors, batch IDs) is set as
/// text (`textContent`, `createTextNode`), never as markup: a hostile worker ID shows as what it is.
enum DashboardScript {
    static let javascript = #"""
        'use strict';
        (() => {
          const $ = (id) => document.getElementById(id);
          const match = location.pathname.match(/^\/batches\/([^/]+)\/?$/);
          const batchID = match ? decodeURIComponent(match[1]) : null;
          let filter = 'all';
          let lastEvent = null;

          /** An element with attributes and children; strings become text nodes, never markup. */
          function el(tag, attributes, ...children) {
            const element = document.createElement(tag);
            for (const [name, value] of Object.entries(attributes || {})) {
              if (value === undefined || value === null) continue;
              if (name === 'class') element.className = value;
              else if (name === 'text') element.textContent = String(value);
              else if (name === 'style') element.style.cssText = value;  // CSSOM: allowed by the CSP, unlike a style attribute
              else element.setAttribute(name, String(value));
            }
            for (const child of children) {
              if (child === undefined || child === null) continue;
              element.append(child instanceof Node ? child : document.createTextNode(String(child)));
            }
            return element;
          }
          const number = (value) => Number(value || 0).toLocaleString('en-US');
          function ago(ms) {
            if (ms < 1000) return `${ms} ms ago`;
            if (ms < 60000) return `${(ms / 1000).toFixed(1)} s ago`;
            return `${Math.round(ms / 60000)} min ago`;
          }
          function card(key, label, value, bad) {
            return el('div', { class: bad ? 'card bad' : 'card', 'data-key': key },
              el('div', { class: 'value', text: value }), el('div', { class: 'label', text: label }));
          }
          function progress(batch, big) {
            const total = Math.max(1, Number(batch.items));
            const bar = el('div', { class: big ? 'progress big' : 'progress', role: 'img',
              'aria-label': `${batch.succeeded} succeeded, ${batch.failed} failed, ${batch.cancelled} cancelled of ${batch.items}` });
            for (const part of ['succeeded', 'failed', 'cancelled']) {
              const share = Number(batch[part]) / total * 100;
              if (share > 0) bar.append(el('span', { class: `seg-${part}`, style: `width:${share}%` }));
            }
            return bar;
          }
          function table(target, columns, rows, emptyText) {
            const head = el('tr', {}, ...columns.map((c) => el('th', { class: c.class, text: c.title })));
            const body = rows.length ? rows : [el('tr', {}, el('td', { class: 'empty', colspan: columns.length, text: emptyText }))];
            target.replaceChildren(el('thead', {}, head), el('tbody', {}, ...body));
          }

          // MARK: Cluster

          const workerColumns = [
            { title: 'Worker', class: 'id', cell: (w) => w.id },
            { title: 'Host', class: 'wide', cell: (w) => w.hostname },
            { title: 'Load', cell: (w) => el('div', { class: 'load' },
                el('div', { class: 'progress' }, el('span', { class: 'seg-running', style: `width:${w.slots ? w.running / w.slots * 100 : 0}%` })),
                `${w.running}/${w.slots}`) },
            { title: 'Done', class: 'num', cell: (w) => number(w.completed) },
            { title: 'Failed', class: 'num', cell: (w) => number(w.failed) },
            { title: 'Version', class: 'wide', cell: (w) => w.version || '–' },
            { title: 'Last seen', class: 'wide', cell: (w) => ago(Number(w.last_seen_ms_ago)) },
          ];
          const batchColumns = [
            { title: 'Batch', class: 'id nowrap', cell: (b) => el('a', { href: `/batches/${encodeURIComponent(b.id)}`, text: b.id }) },
            { title: 'Progress', cell: (b) => progress(b, false) },
            { title: 'Items', class: 'num wide', cell: (b) => number(b.items) },
            { title: 'Succeeded', class: 'num', cell: (b) => number(b.succeeded) },
            { title: 'Failed', class: 'num', cell: (b) => number(b.failed) },
            { title: 'Cancelled', class: 'num wide', cell: (b) => number(b.cancelled) },
          ];
          function row(columns, value, attributes) {
            return el('tr', attributes, ...columns.map((c) => {
              const cell = c.cell(value);
              return el('td', { class: c.class }, cell instanceof Node ? cell : String(cell ?? ''));
            }));
          }

          function renderCluster(event) {
            const status = event.status;
            if (!status) return;
            const slots = status.workers.reduce((sum, w) => sum + Number(w.slots), 0);
            const busy = status.workers.reduce((sum, w) => sum + Number(w.running), 0);
            $('cluster-cards').replaceChildren(
              card('workers', 'Workers', number(status.workers.length)),
              card('slots', 'Slots busy', `${busy} / ${slots}`),
              card('queued_tasks', 'Queued tasks', number(status.queued_tasks)),
              card('running_tasks', 'Running', number(status.running_tasks)),
              card('completed_tasks', 'Completed', number(status.completed_tasks)),
              card('failed_tasks', 'Failed', number(status.failed_tasks), Number(status.failed_tasks) > 0),
              card('tasks_per_second', 'Tasks/s', Number(status.tasks_per_second).toFixed(1)));
            $('worker-count').textContent = `${status.workers.length} connected`;
            table($('workers'), workerColumns,
              status.workers.map((w) => row(workerColumns, w, { 'data-worker-id': w.id })), 'No worker is connected.');
            $('batch-count').textContent = `${status.batches.length} kept`;
            table($('batches'), batchColumns,
              status.batches.map((b) => row(batchColumns, b, { 'data-batch-id': b.id })), 'No batch yet: submit one with shiftwork submit.');
            renderChart(event.history || []);
          }

          function renderChart(history) {
            const ns = 'http://www.w3.org/2000/svg';
            const svg = (tag, attributes) => {
              const element = document.createElementNS(ns, tag);
              for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
              return element;
            };
            const width = 900, height = 200, left = 40, right = 40, top = 10, bottom = 24;
            const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img',
                                       'aria-label': 'tasks per second and queued tasks over the last 10 minutes' });
            const now = history.length ? history[history.length - 1].t : Date.now();
            // The time axis spans what the coordinator has sampled: one minute at least, ten at most.
            const span = Math.min(10 * 60 * 1000, Math.max(60 * 1000, history.length ? now - history[0].t : 0));
            const spanLabel = (ms) => ms >= 120000 && ms % 60000 === 0 ? `−${ms / 60000} min` : ms >= 120000
              ? `−${(ms / 60000).toFixed(1)} min` : `−${Math.round(ms / 1000)} s`;
            const maxTps = Math.max(1, ...history.map((s) => s.tps));
            const maxQueue = Math.max(1, ...history.map((s) => s.queued));
            const x = (t) => left + (width - left - right) * (1 - (now - t) / span);
            const y = (value, max) => top + (height - top - bottom) * (1 - value / max);
            for (let i = 0; i <= 4; i++) {
              const gy = top + (height - top - bottom) * i / 4;
              chart.append(svg('line', { class: 'grid', x1: left, x2: width - right, y1: gy, y2: gy }));
            }
            const label = (text, lx, ly, anchor) => {
              const t = svg('text', { x: lx, y: ly, 'text-anchor': anchor });
              t.textContent = text;
              chart.append(t);
            };
            label(maxTps.toFixed(maxTps < 10 ? 1 : 0), left - 4, top + 4, 'end');
            label('0', left - 4, height - bottom + 4, 'end');
            label(String(maxQueue), width - right + 4, top + 4, 'start');
            label(spanLabel(span), left, height - 6, 'start');
            label(spanLabel(span / 2), (left + width - right) / 2, height - 6, 'middle');
            label('now', width - right, height - 6, 'end');
            const points = history.filter((s) => now - s.t <= span);
            if (points.length > 1) {
              const line = points.map((s) => `${x(s.t).toFixed(1)},${y(s.tps, maxTps).toFixed(1)}`).join(' ');
              const first = x(points[0].t).toFixed(1), last = x(points[points.length - 1].t).toFixed(1), base = height - bottom;
              chart.append(svg('polygon', { class: 'tps-area', points: `${first},${base} ${line} ${last},${base}` }));
              chart.append(svg('polyline', { class: 'tps', points: line }));
              chart.append(svg('polyline', { class: 'queue',
                points: points.map((s) => `${x(s.t).toFixed(1)},${y(s.queued, maxQueue).toFixed(1)}`).join(' ') }));
            }
            const legend = el('div', { class: 'legend' },
              el('span', {}, el('i', { style: 'background:var(--accent)' }), 'tasks/s (left)'),
              el('span', {}, el('i', { style: 'background:var(--warn)' }), 'queued tasks (right)'));
            $('chart').replaceChildren(chart, legend);
          }

          // MARK: One batch

          const itemColumns = [
            { title: '#', class: 'num', cell: (item) => item.index },
            { title: 'Preview', class: 'wide', when: (event) => event.previews, cell: (item) => item.state === 'succeeded'
                ? el('img', { class: 'thumb', loading: 'lazy', alt: '', src: `/api/batches/${encodeURIComponent(batchID)}/items/${item.index}/preview` })
                : '' },
            { title: 'Source', class: 'source', cell: (item) => item.source },
            { title: 'State', cell: (item) => el('span', { class: `badge ${item.state}`, text: item.state }) },
            // Shown once the coordinator reports attempts per item.
            { title: 'Attempts', class: 'num', when: (event, items) => items.some((i) => i.attempts !== undefined), cell: (item) => item.attempts ?? '' },
            { title: 'Error', class: 'error', cell: (item) => item.error },
          ];
          const filters = ['all', 'failed', 'running', 'queued', 'succeeded', 'cancelled'];
          const rowCache = new Map();
          // The batch's items as the events told them, by index (in index order: they come in that order).
          const itemsByIndex = new Map();
          const maxRows = 2000;

          function renderBatch(event) {
            $('batch-title').textContent = `Batch ${batchID}`;
            document.title = `${batchID} · Shiftwork`;
            const error = $('batch-error');
            error.hidden = !event.batch_error;
            error.textContent = event.batch_error || '';
            const batch = event.batch;
            if (!batch) return;
            $('batch-progress').replaceWith(Object.assign(progress(batch, true), { id: 'batch-progress' }));
            // An event carries the items that changed since the one before; all of them when complete.
            if (batch.item_states_complete !== false) itemsByIndex.clear();
            for (const item of batch.item_states || []) itemsByIndex.set(item.index, item);
            const items = Array.from(itemsByIndex.values());
            const counts = { all: items.length };
            for (const item of items) counts[item.state] = (counts[item.state] || 0) + 1;
            $('batch-cards').replaceChildren(
              card('items', 'Items', number(batch.items)),
              card('succeeded', 'Succeeded', number(batch.succeeded)),
              card('failed', 'Failed', number(batch.failed), Number(batch.failed) > 0),
              card('cancelled', 'Cancelled', number(batch.cancelled)),
              card('unfinished', 'Unfinished', number(batch.items - batch.succeeded - batch.failed - batch.cancelled)));
            $('filters').replaceChildren(...filters.filter((f) => f === 'all' || counts[f]).map((f) => {
              const button = el('button', { type: 'button', 'aria-pressed': f === filter, 'data-filter': f }, `${f} ${counts[f] || 0}`);
              button.addEventListener('click', () => { filter = f; renderBatch(lastEvent); });
              return button;
            }));
            const columns = itemColumns.filter((c) => !c.when || c.when(event, items));
            const signature = columns.map((c) => c.title).join('|');
            const shown = items.filter((item) => filter === 'all' || item.state === filter);
            const rows = shown.slice(0, maxRows).map((item) => {
              const key = `${signature}#${item.index}`;
              const json = JSON.stringify(item);
              const cached = rowCache.get(key);
              if (cached && cached.json === json) return cached.row;
              const fresh = row(columns, item, { 'data-index': item.index, 'data-state': item.state });
              rowCache.set(key, { json, row: fresh });
              return fresh;
            });
            $('item-count').textContent = `${number(items.length)} in all`;
            table($('items'), columns, rows, 'No item in this state.');
            const more = $('items-more');
            more.hidden = shown.length <= maxRows;
            more.textContent = `Showing the first ${maxRows} of ${shown.length}; /api/batches/${batchID} has them all.`;
          }

          // MARK: Events

          function render(event) {
            lastEvent = event;
            $('coordinator').textContent = event.coordinator || '';
            if (batchID) renderBatch(event); else renderCluster(event);
          }
          function setConnection(state, text) {
            const pill = $('connection');
            pill.dataset.state = state;
            pill.textContent = text;
          }
          function connect() {
            const source = new EventSource(batchID ? `/api/events?batch=${encodeURIComponent(batchID)}` : '/api/events');
            source.onopen = () => setConnection('live', 'live');
            source.onmessage = (message) => {
              setConnection('live', 'live');
              try { render(JSON.parse(message.data)); } catch (error) { console.error(error); }
            };
            source.onerror = () => {
              setConnection('reconnecting', 'reconnecting…');
              if (source.readyState !== EventSource.CLOSED) return;  // the browser retries by itself
              source.close();
              // Closed for good (an HTTP error): signed out, or the coordinator is not back yet.
              fetch('/api/status', { cache: 'no-store' }).then((response) => {
                if (response.status === 401 || response.status === 403) location.reload();
                else setTimeout(connect, 1000);
              }).catch(() => setTimeout(connect, 2000));
            };
          }

          $(batchID ? 'batch-view' : 'cluster-view').hidden = false;
          const initial = $('initial-event');
          if (initial) {
            try { render(JSON.parse(initial.textContent)); } catch (error) { console.error(error); }
          }
          connect();
        })();
        """#
}
